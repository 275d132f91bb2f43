package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"payouts/rules"
)

// errBalanceMoved fails a lifecycle round one of whose steps the balance refused, when more
// money arrived between the round's read of the balance and its lock: nothing is stored,
// and the next round runs the steps again on the new balance.
var errBalanceMoved = errors.New("store: a balance grew under a step it refused; nothing was stored")

// UpdatePayouts runs step on each payout in one transaction: the payouts, their queue times,
// the balances and the events the steps enqueue are written together, under the ledger
// invariant, and this instance's claims on all of ids are released. A step that returns
// ErrNoChange leaves its payout untouched; any other error aborts the transaction. A missing
// id is skipped. step runs once; if the transaction fails, UpdatePayouts fails with nothing
// stored, and the claims are released so that the next round retries them at once, as
// store/bolt would.
//
// A round of N steps costs two round trips: BEGIN, the payouts locked and read (in id order,
// so that two transactions never wait on each other's) and their balances read without a
// lock, in one; the payouts, their events, one UPDATE per balance adding the steps' changes,
// last, and COMMIT in the second. The balance rows are locked for their UPDATE and the
// commit only, as a create group's (creates.go). A step the balance refused (one more money could
// change) locks its balance before the writes and checks that it did not grow meanwhile.
func (s *DB) UpdatePayouts(ctx context.Context, ids []int64, step rules.Step) (err error) {
	if len(ids) == 0 {
		return nil
	}
	select {
	case <-s.writer.quit:
		return errClosed
	default:
	}
	if s.trace != nil {
		end := s.traceSteps(ctx, len(ids))
		defer func() { end(err) }()
	}
	err = s.updatePayouts(ids, roundReads(rules.RoundReadsOf(ctx), ids), step)
	if err != nil {
		s.releaseClaims(ids)
	}
	s.claimedSteps.Add(-int64(s.steps.drop(ids)))
	return err // a step's own error as it returned it
}

func (s *DB) updatePayouts(ids []int64, read map[int64]rules.RoundRead, step rules.Step) error {
	ctx, cancel := context.WithTimeout(context.Background(), groupTimeout)
	defer cancel()
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("store: update payouts: %w", err)
	}
	defer conn.Release()
	defer rollback(ctx, conn) // after the commit, nothing to do
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	var docs map[int64][]byte
	// A row still at the version the round's claim read: its document is not sent again (NULL).
	vids, versions := make([]int64, 0, len(read)), make([]int64, 0, len(read))
	for id, r := range read {
		if r.Version != 0 {
			vids, versions = append(vids, id), append(versions, r.Version)
		}
	}
	b.Queue(`SELECT p.id, CASE WHEN p.xmin::text::bigint = k.v THEN NULL ELSE p.doc END
		FROM payouts p LEFT JOIN unnest($2::bigint[], $3::bigint[]) AS k(id, v) ON k.id = p.id
		WHERE p.id = ANY($1) ORDER BY p.id FOR UPDATE OF p`, ids, vids, versions).Query(func(rows pgx.Rows) error {
		var err error
		docs, err = collectDocs(rows)
		return err
	})
	held := &heldBalances{held: map[balanceKey]heldBalance{}}
	queueReadBalances(b, held.held, `(merchant_id, country, currency) IN (SELECT merchant_id, country, currency FROM payouts WHERE id = ANY($1))`,
		ids)
	if err := conn.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("store: update payouts: lock: %w", err)
	}
	l := newLedger(withHeldBalances(ctx, held), nil)
	w := newPayoutWrites(len(ids))
	if err := runSteps(ids, docs, read, step, l, w); err != nil {
		return err
	}
	if err := l.lt.Check(); err != nil { // the ledger invariant, on the balances read
		return err
	}
	if err := checkRefused(ctx, conn, l); err != nil {
		return err
	}
	deltas := balanceDeltas{}
	l.deltas = deltas
	if err := l.lt.Commit(); err != nil { // adds the changes to deltas
		return err
	}
	if err := deltas.checkChange(); err != nil { // and on the changes applied (deltas.go)
		return err
	}
	wb := &pgx.Batch{}
	if err := queueEvents(wb, l.events); err != nil {
		return err
	}
	w.queue(wb, ids, s.queueLease())
	deltas.queue(wb, nil)
	queueCommit(wb)
	if err := conn.SendBatch(ctx, wb).Close(); err != nil {
		if ledgerRow(err) {
			return fmt.Errorf("%w: %w", rules.ErrLedger, err)
		}
		return fmt.Errorf("store: update payouts: write: %w", err)
	}
	return nil
}

// runSteps runs step on each payout of ids, in their order, on the documents locked (decoded
// unless the round read the same just before, roundreads.go; nil: the row is at the version
// the round read), and notes what the steps changed in w.
func runSteps(ids []int64, docs map[int64][]byte, read map[int64]rules.RoundRead, step rules.Step, l *ledger, w *payoutWrites) error {
	for _, id := range ids {
		doc, ok := docs[id]
		if !ok {
			continue
		}
		p, err := readPayout(id, doc, read)
		if err != nil {
			return err
		}
		next, changed, err := l.lt.Apply(p, step)
		if err != nil {
			return err
		}
		if !changed {
			continue
		}
		if docs[id], err = w.add(p, next); err != nil {
			return err
		}
	}
	return nil
}

// checkRefused locks the balances that refused a step (in key order) and fails the round
// when one has more available than the steps saw: with it, they might have gone otherwise.
// Less is fine: what was refused stays refused, and the rows' CHECKs guard what was taken.
func checkRefused(ctx context.Context, tx querier, l *ledger) error {
	keys := l.lt.Refused()
	if len(keys) == 0 {
		return nil
	}
	slices.SortFunc(keys, compareBalanceKeys)
	for _, k := range keys {
		b, _, err := lockBalance(ctx, tx, k)
		if err != nil {
			return fmt.Errorf("store: update payouts: lock balance: %w", err)
		}
		if b.Available > l.lt.Change(k).Before.Available {
			return errBalanceMoved
		}
	}
	return nil
}
