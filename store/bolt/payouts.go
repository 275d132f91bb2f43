package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	bbolt "go.etcd.io/bbolt"

	"payouts/rules"
)

// CreatePayout stores p under a new id, with its indexes, its first lifecycle entry (due)
// and its events, in one transaction shared with concurrent writes (group commit). When
// admit is given it runs on the new payout in that same transaction, with the merchant's
// ledger (the lifecycle's instant steps: authorization and routing need no rail), and its
// answer replaces due. If the merchant already used p.OrderID, nothing is written and the
// stored payout is returned with created false: the caller decides between a replay and a
// conflict. The payout returned for a create is a copy of p as stored; p itself is left as
// it was given.
func (s *DB) CreatePayout(ctx context.Context, p *rules.Payout, due time.Time, events []rules.Event, admit rules.Step) (*rules.Payout, bool, error) {
	var existing, stored *rules.Payout
	orderKey := key(p.MerchantID, p.OrderID)
	err := s.writer.write(ctx, func(tx *bbolt.Tx) error {
		// A failed group runs this again in the next one: start clean, from p untouched.
		existing, stored = nil, nil
		if raw := tx.Bucket(bOrders).Get(orderKey); raw != nil {
			var err error
			existing, _, err = s.buckets(tx).read(int64(binary.BigEndian.Uint64(raw)))
			return err
		}
		q := p.Clone()
		if err := insertPayout(tx, s.due, q, due, events, admit); err != nil {
			return err
		}
		stored = q
		return nil
	}, true)
	if err != nil {
		return nil, false, err
	}
	if stored != nil {
		return stored, true, nil
	}
	return existing, false, nil
}

// insertPayout writes a new payout with the next id, its order and list indexes, its queue
// time (queued in dq once tx commits) and its events, after running admit on it (if given).
func insertPayout(tx *bbolt.Tx, dq *dueQueue, p *rules.Payout, due time.Time, events []rules.Event, admit rules.Step) error {
	pb := payoutBucketsOf(tx)
	appendOnly(tx)
	seq, err := pb.core.NextSequence()
	if err != nil {
		return err
	}
	p.ID = int64(seq)
	l := newLedger(tx)
	if due, err = l.lt.Admit(p, due, events, admit); err != nil {
		return err
	}
	if err := putPayout(tx, dq, p, due); err != nil {
		return err
	}
	return l.lt.Commit() // the ledger invariant (ledger.go)
}

// putPayout writes a payout under its id with everything that finds it: its order and its
// list indexes, and queues it in dq at due (zero: not queued) once tx commits.
func putPayout(tx *bbolt.Tx, dq *dueQueue, p *rules.Payout, due time.Time) error {
	if err := payoutBucketsOf(tx).insert(p, due); err != nil {
		return err
	}
	if err := tx.Bucket(bOrders).Put(key(p.MerchantID, p.OrderID), be64(uint64(p.ID))); err != nil {
		return err
	}
	if err := putIndexes(tx, p); err != nil {
		return err
	}
	if !due.IsZero() {
		dq.onCommit(tx, dueMove{id: p.ID, next: nanos(due), status: p.Status})
	}
	return nil
}

// putPayoutWithID writes a payout built elsewhere under the id it has, queued at due, and
// moves the numbering past it. An id or orderId in use is an error.
func putPayoutWithID(tx *bbolt.Tx, dq *dueQueue, p *rules.Payout, due time.Time) error {
	pb := payoutBucketsOf(tx)
	if p.ID <= 0 {
		return fmt.Errorf("store: payout %d: an id must be positive", p.ID)
	}
	if pb.core.Get(be64(uint64(p.ID))) != nil {
		return fmt.Errorf("store: payout id %d already used", p.ID)
	}
	if tx.Bucket(bOrders).Get(key(p.MerchantID, p.OrderID)) != nil {
		return fmt.Errorf("store: merchant %s: orderId %s already used", p.MerchantID, p.OrderID)
	}
	if uint64(p.ID) > pb.core.Sequence() {
		if err := pb.core.SetSequence(uint64(p.ID)); err != nil {
			return err
		}
	}
	return putPayout(tx, dq, p, due)
}

// ImportPayouts stores payouts in one transaction without queueing them (bulk loads, such
// as the benchmark's million stored payouts): a payout with an id keeps it, one without
// takes the next number. An id or orderId already used fails the whole import.
func (s *DB) ImportPayouts(ctx context.Context, ps []*rules.Payout) error {
	return s.bdb.Update(func(tx *bbolt.Tx) error {
		appendOnly(tx)
		for _, p := range ps {
			if p.ID != 0 {
				if err := putPayoutWithID(tx, s.due, p, time.Time{}); err != nil {
					return fmt.Errorf("import: %w", err)
				}
				continue
			}
			if tx.Bucket(bOrders).Get(key(p.MerchantID, p.OrderID)) != nil {
				return fmt.Errorf("import: orderId %s already used", p.OrderID)
			}
			if err := insertPayout(tx, s.due, p, time.Time{}, nil, nil); err != nil {
				return err
			}
		}
		return nil
	})
}

// putIndexes writes a payout's entry in the list index.
func putIndexes(tx *bbolt.Tx, p *rules.Payout) error {
	return tx.Bucket(bLists).Put(listKey(p.ID, p.MerchantID, p.Stage, p.Status), nil)
}

// moveIndexes moves a payout's list entry from the stage and status it had, if either
// changed.
func moveIndexes(tx *bbolt.Tx, p *rules.Payout, stage rules.Stage, status rules.Status) error {
	if stage == p.Stage && status == p.Status {
		return nil
	}
	b := tx.Bucket(bLists)
	if err := b.Delete(listKey(p.ID, p.MerchantID, stage, status)); err != nil {
		return err
	}
	return b.Put(listKey(p.ID, p.MerchantID, p.Stage, p.Status), nil)
}

// Payout reads one payout of a merchant; another merchant's payout is not found.
func (s *DB) Payout(ctx context.Context, merchantID string, id int64) (*rules.Payout, error) {
	var p *rules.Payout
	err := s.bdb.View(func(tx *bbolt.Tx) error {
		if id <= 0 {
			return ErrNotFound
		}
		var err error
		p, _, err = s.buckets(tx).read(id)
		return err
	})
	if err != nil {
		return nil, err
	}
	if p.MerchantID != merchantID {
		return nil, ErrNotFound
	}
	return p, nil
}

// PayoutByOrder reads a merchant's payout by its orderId.
func (s *DB) PayoutByOrder(ctx context.Context, merchantID, orderID string) (*rules.Payout, error) {
	var p *rules.Payout
	err := s.bdb.View(func(tx *bbolt.Tx) error {
		raw := tx.Bucket(bOrders).Get(key(merchantID, orderID))
		if raw == nil {
			return ErrNotFound
		}
		var err error
		p, _, err = s.buckets(tx).read(int64(binary.BigEndian.Uint64(raw)))
		return err
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// ListPayouts returns one page of a merchant's payouts, newest first, walking the runs of
// the list index that the filter's stage and status select (lists.go).
func (s *DB) ListPayouts(ctx context.Context, merchantID string, f rules.ListFilter) (rules.Page, error) {
	var page rules.Page
	if f.Limit <= 0 {
		f.Limit = 50
	}
	if f.OrderID != "" {
		p, err := s.PayoutByOrder(ctx, merchantID, f.OrderID)
		if errors.Is(err, ErrNotFound) {
			p, err = nil, nil
		}
		return f.OrderPage(p), err
	}
	err := s.bdb.View(func(tx *bbolt.Tx) error {
		payouts := s.buckets(tx)
		m := newListMerge(tx, merchantID, f.Stage, f.Status)
		scanned := 0
		for id, ok := m.last(f.Cursor); ok; id, ok = m.step() {
			if scanned == rules.ListMaxScan {
				// A filter no index serves (country, to) stops here with a cursor rather
				// than reading the whole history in one request.
				page.NextCursor = id + 1
				break
			}
			scanned++
			p, _, err := payouts.read(id)
			if err != nil {
				return err
			}
			if !f.From.IsZero() && p.CreatedAt.Before(f.From) {
				break // ids grow with creation time: nothing older can match
			}
			if !f.Match(p) {
				continue
			}
			if len(page.Items) == f.Limit {
				page.NextCursor = page.Items[len(page.Items)-1].ID
				break
			}
			page.Items = append(page.Items, p)
		}
		return nil
	})
	return page, err
}

// PayoutsByID reads several payouts; missing ids are skipped. A lifecycle round's read
// (rules.RoundReads) keeps what it decoded for the round's UpdatePayouts, which then need
// not decode the payouts that did not change in between again in the writer, which all
// writes wait for.
func (s *DB) PayoutsByID(ctx context.Context, ids []int64) ([]*rules.Payout, error) {
	out := make([]*rules.Payout, 0, len(ids))
	round := rules.RoundReadsOf(ctx)
	err := s.bdb.View(func(tx *bbolt.Tx) error {
		pb := s.buckets(tx)
		pb.fill = false // the lifecycle's reads: each payout twice, then never again
		for _, id := range ids {
			idKey := be64(uint64(id))
			state := pb.getState(idKey)
			p, due, err := pb.decode(id, pb.getCore(idKey), state)
			if errors.Is(err, ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			out = append(out, p)
			if round != nil {
				round.Keep(id, rules.RoundRead{Payout: p, Record: bytes.Clone(state), Due: due})
			}
		}
		return nil
	})
	return out, err
}

// WithStatus lists the ids of a merchant's payouts in one status, oldest first.
func (s *DB) WithStatus(ctx context.Context, merchantID string, status rules.Status, limit int) ([]int64, error) {
	var ids []int64
	err := s.bdb.View(func(tx *bbolt.Tx) error {
		m := newListMerge(tx, merchantID, "", status)
		for id, ok := m.first(); ok && len(ids) < limit; id, ok = m.step() {
			ids = append(ids, id)
		}
		return nil
	})
	return ids, err
}

// Due lists up to limit payouts whose next lifecycle step is due at or before now, oldest
// first, with the status each had when it was queued, and claims them (claims.go): another
// Due leaves them out until UpdatePayouts writes them or their lease ends. The queue is in
// memory (due.go).
func (s *DB) Due(ctx context.Context, now time.Time, limit int) ([]rules.DueEntry, error) {
	return s.due.claim(&s.stepClaims, now, limit), nil
}

// DueRead is Due: the payouts are read where they are stepped, from the same file, at no
// distance.
func (s *DB) DueRead(ctx context.Context, now time.Time, limit int) ([]rules.DueEntry, map[int64]*rules.Payout, error) {
	due, err := s.Due(ctx, now, limit)
	return due, nil, err
}

// NextDue is the time of the earliest queued step, zero when the queue is empty.
func (s *DB) NextDue(ctx context.Context) (time.Time, error) {
	return s.due.next(), nil
}

// UpdatePayouts runs step on each payout in one transaction: the payout, its indexes, its
// queue entry, the balances and the events it enqueues are written together. A step that
// returns ErrNoChange leaves its payout untouched; any other error aborts the transaction.
// The transaction is shared with concurrent writes (group commit); step runs once, and if
// another write of the group fails, UpdatePayouts fails with nothing stored. Once it
// returns, the claims Due gave on ids are released, whatever the outcome.
func (s *DB) UpdatePayouts(ctx context.Context, ids []int64, step rules.Step) error {
	defer s.stepClaims.release(ids...)
	round := rules.RoundReadsOf(ctx)
	return s.writer.write(ctx, func(tx *bbolt.Tx) error {
		l := newLedger(tx)
		pb := s.buckets(tx)
		appendOnly(tx)
		var moves []dueMove
		for _, id := range ids {
			idKey := be64(uint64(id))
			state := pb.getState(idKey)
			var (
				p   *rules.Payout
				due time.Time
				err error
			)
			if r, ok := round.Take(id); ok && state != nil && bytes.Equal(r.Record, state) {
				p, due = r.Payout, r.Due // the round's, handed over: no copy
			} else {
				p, due, err = pb.decode(id, pb.getCore(idKey), state)
			}
			if errors.Is(err, ErrNotFound) {
				moves = append(moves, dueMove{id: id, drop: true})
				continue
			}
			if err != nil {
				return err
			}
			core := coreOf(p)
			stage, status := p.Stage, p.Status
			next, changed, err := l.lt.Apply(p, step)
			if err != nil {
				return err
			}
			if !changed {
				continue
			}
			if err := pb.update(p, core, next); err != nil {
				return err
			}
			if err := moveIndexes(tx, p, stage, status); err != nil {
				return err
			}
			if had, at := nanos(due), nanos(next); had != 0 || at != 0 {
				moves = append(moves, dueMove{id: id, had: had, next: at, status: p.Status})
			}
		}
		if err := l.lt.Commit(); err != nil { // the ledger invariant (ledger.go)
			return err
		}
		s.due.onCommit(tx, moves...)
		return nil
	}, false)
}

// ledger is the engine under a rules.LedgerTx over one write transaction: it reads the
// balances, and writes them with their entries (writeEntries) once the transaction's steps
// are done and the ledger invariant held (ledger.go).
type ledger struct {
	lt rules.LedgerTx
	tx *bbolt.Tx
}

func newLedger(tx *bbolt.Tx) *ledger {
	l := &ledger{tx: tx}
	l.lt.Init(l)
	return l
}

// ReadBalance reads a balance; stored is not used by this engine (a balance is written
// whole, whether it had a record or not).
func (l *ledger) ReadBalance(k rules.BalanceKey) (rules.Balance, bool, error) {
	b, err := readBalance(l.tx, k.MerchantID, k.Country, k.Currency)
	return b, false, err
}

// WriteBalance writes a balance with its entries, if it changed.
func (l *ledger) WriteBalance(k rules.BalanceKey, c *rules.BalanceChange) (rules.Balance, error) {
	return writeEntries(l.tx, k.MerchantID, c.Before, c.Now, c.Entries)
}

func (l *ledger) Enqueue(ev rules.Event) error { return enqueue(l.tx, ev) }

func enqueue(tx *bbolt.Tx, ev rules.Event) error {
	b := tx.Bucket(bOutbox)
	seq, err := b.NextSequence()
	if err != nil {
		return err
	}
	if ev.ID == "" {
		return errors.New("store: an event needs an id")
	}
	if err := putDue(tx, ev, seq); err != nil {
		return err
	}
	return putJSON(b, be64(seq), ev)
}

// Balances lists a merchant's balances.
func (s *DB) Balances(ctx context.Context, merchantID string) ([]rules.Balance, error) {
	out := []rules.Balance{}
	prefix := append([]byte(merchantID), 0)
	err := s.bdb.View(func(tx *bbolt.Tx) error {
		c := tx.Bucket(bBalances).Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			b, err := decodeBalance(v)
			if err != nil {
				return err
			}
			b.Entries = 0 // the store's own bookkeeping: the entries are read with Entries
			out = append(out, b)
		}
		return nil
	})
	return out, err
}

// Fund adds amount (minor units, may be negative to withdraw) to a merchant's balance.
func (s *DB) Fund(ctx context.Context, merchantID, country, currency string, amount int64, at time.Time) (rules.Balance, error) {
	var out rules.Balance
	err := s.bdb.Update(func(tx *bbolt.Tx) error {
		l := newLedger(tx)
		b, err := l.lt.Fund(merchantID, country, currency, amount, at)
		if err != nil {
			return err
		}
		if err := l.lt.Commit(); err != nil { // the ledger invariant (ledger.go)
			return err
		}
		out = b
		out.Entries = 0 // the store's own bookkeeping, as Balances
		return nil
	})
	return out, err
}

// OutboxDepth counts the events waiting in the outbox.
func (s *DB) OutboxDepth(ctx context.Context) int {
	n := 0
	s.bdb.View(func(tx *bbolt.Tx) error {
		n = tx.Bucket(bOutbox).Stats().KeyN
		return nil
	})
	return n
}
