package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	gojson "github.com/goccy/go-json"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"payouts/rules"
)

// The creates of a group, set-based: a constant number of round trips whatever the group's
// size (two), and the merchant's balance row locked for the last statement and the commit only.
//
//  1. One round trip, outside any transaction and holding no lock: the orderIds looked up
//     (with the next payout id for each one not stored) and the balances read.
//  2. In memory: a replay is answered with its stored payout at once; each new payout is
//     admitted on the balances as the creates before it in the group left them (a failed
//     admit fails alone, its changes forgotten), and the ledger invariant checked.
//  3. One round trip: BEGIN, the payouts inserted in one statement, their events in one,
//     then each balance changed by the group's sum in one UPDATE (in key order, so that two
//     instances' groups never deadlock), its row's CHECKs refusing an overdraft and the
//     statement checking the ledger's totals on the new row, and COMMIT, all pipelined: the
//     balance row is locked for its UPDATE and the commit, no client round trip between.
//
// The balances were read without a lock: another instance (or a funding) may change them
// before the UPDATE. A change in the group's favour leaves every reservation made valid,
// and the sums apply on top of it; a change against it that leaves too little fails the
// row's CHECK. Only a decision the balance refused (the payout waits for the balance or is
// rejected NO_BALANCE) could go the other way with the money that arrived meanwhile: such a
// create, and every create of a group whose balance statements failed (an overdraft, a row
// that a concurrent write created first), fall back to the write-by-write path (group.go's
// run), which locks the balances first.

// createWrite is one create of a group: what CreatePayout asked, and its answer (existing
// or stored) once its op is done.
type createWrite struct {
	p      *rules.Payout
	due    time.Time
	events []rules.Event
	admit  rules.Step

	existing, stored *rules.Payout
	first            *groupOp // the create of the same order earlier in the group
}

// answerAgain answers the later creates of an order in a group after the first create of
// it has its answer: the payout it stored or found, as for a replay; when it failed, they
// run again (errOrderTaken) and find what is stored then.
func answerAgain(ops []*groupOp) {
	for _, op := range ops {
		c, f := op.create, op.create.first
		if f.err != nil {
			op.answer(errOrderTaken)
			continue
		}
		c.existing = cmp.Or(f.create.stored, f.create.existing)
		op.answer(nil)
	}
}

// errFallBack is a create that the set-based path hands to the write-by-write path.
var errFallBack = errors.New("store: decided write by write")

// orderKey names one order of one merchant.
type orderKey struct{ merchantID, orderID string }

// createsAhead is what the first round trip read.
type createsAhead struct {
	found    map[orderKey]*rules.Payout // the stored payout of each order that has one
	ids      []int64                    // the new ids, ascending, for the orders that have none
	balances map[balanceKey]heldBalance
}

// createSetBased runs the creates of a group as above and returns those it hands to the
// write-by-write path, and the later creates of an order already in the group, to be
// answered once the group is written (answerAgain); every other op is answered.
func (w *groupWriter) createSetBased(ops []*groupOp) (fallback, again []*groupOp) {
	ctx, cancel := context.WithTimeout(context.Background(), groupTimeout)
	defer cancel()
	first := make(map[orderKey]*groupOp, len(ops))
	look := make([]*groupOp, 0, len(ops))
	for _, op := range ops {
		k := orderKey{op.create.p.MerchantID, op.create.p.OrderID}
		if f := first[k]; f != nil {
			op.create.first = f
			again = append(again, op)
			continue
		}
		first[k] = op
		look = append(look, op)
	}
	ahead, err := readAhead(ctx, w.pool, look)
	if err != nil {
		for _, op := range look {
			op.answer(err)
		}
		return nil, again
	}
	if w.afterReadAhead != nil {
		w.afterReadAhead()
	}
	g := &setGroup{held: &heldBalances{held: ahead.balances}, deltas: balanceDeltas{}}
	ids := ahead.ids
	for _, op := range look {
		c := op.create
		if p := ahead.found[orderKey{c.p.MerchantID, c.p.OrderID}]; p != nil {
			c.existing = p
			op.answer(nil)
			continue
		}
		id := ids[0]
		ids = ids[1:]
		switch err := g.admit(ctx, op, id); {
		case errors.Is(err, errFallBack):
			fallback = append(fallback, op)
		case err != nil:
			op.answer(err)
		}
	}
	if len(g.ops) == 0 {
		return fallback, again
	}
	switch err := g.write(ctx, w.pool); {
	case errors.Is(err, errFallBack):
		return append(fallback, g.ops...), again
	case err != nil:
		for _, op := range g.ops {
			op.answer(err)
		}
	default:
		for _, op := range g.ops {
			op.answer(nil)
		}
	}
	return fallback, again
}

// readAhead looks up the orders of the creates, takes an id for each one not stored, and
// reads the balances the creates draw on: three statements, one round trip, no lock.
func readAhead(ctx context.Context, pool pgxBatcher, ops []*groupOp) (*createsAhead, error) {
	merchants, orders := make([]string, len(ops)), make([]string, len(ops))
	var keys []balanceKey
	seen := map[balanceKey]bool{}
	for i, op := range ops {
		merchants[i], orders[i] = op.create.p.MerchantID, op.create.p.OrderID
		for _, k := range op.keys {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	ahead := &createsAhead{found: map[orderKey]*rules.Payout{}, balances: make(map[balanceKey]heldBalance, len(keys))}
	b := &pgx.Batch{}
	b.Queue(`SELECT o.merchant_id, o.order_id, p.id, p.doc, CASE WHEN p.id IS NULL THEN nextval('payouts_id_seq') END
		FROM unnest($1::text[], $2::text[]) AS o(merchant_id, order_id)
		LEFT JOIN payouts p ON p.merchant_id = o.merchant_id AND p.order_id = o.order_id`, merchants, orders).
		Query(func(rows pgx.Rows) error {
			var k orderKey
			var id, next *int64
			var doc []byte
			_, err := pgx.ForEachRow(rows, []any{&k.merchantID, &k.orderID, &id, &doc, &next}, func() error {
				if id == nil {
					ahead.ids = append(ahead.ids, *next)
					return nil
				}
				p, err := decodePayout(*id, doc)
				ahead.found[k] = p
				return err
			})
			return err
		})
	if len(keys) > 0 {
		km, kc, kcur := balanceKeyColumns(keys)
		for _, k := range keys {
			ahead.balances[k] = heldBalance{b: rules.Balance{Country: k.country, Currency: k.currency}}
		}
		queueReadBalances(b, ahead.balances, `(merchant_id, country, currency) IN (SELECT * FROM unnest($1::text[], $2::text[], $3::text[]))`,
			km, kc, kcur)
	}
	if err := pool.SendBatch(ctx, b).Close(); err != nil {
		return nil, fmt.Errorf("store: create payouts: look up orders: %w", err)
	}
	slices.Sort(ahead.ids) // in the order of the group, whatever order the rows came in
	return ahead, nil
}

// pgxBatcher sends a batch: a pool, or a connection.
type pgxBatcher interface {
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// setGroup is the creates of a group decided in memory and not written yet.
type setGroup struct {
	held   *heldBalances // the balances as the admitted creates left them
	deltas balanceDeltas
	ops    []*groupOp
	rows   payoutRows
	events []rules.Event
}

// admit decides one new create in memory under id: nil when it is to be written with the
// group, errFallBack when it must be decided write by write, else its own error (nothing of
// it kept).
func (g *setGroup) admit(ctx context.Context, op *groupOp, id int64) error {
	c := op.create
	q := clonePayout(c.p)
	q.ID = id
	l := newLedger(withHeldBalances(ctx, g.held), nil)
	due, err := admitPayout(q, c.due, c.events, c.admit, l)
	if err == nil {
		err = l.check()
	}
	if err == nil && len(l.refused()) > 0 {
		err = errFallBack
	}
	if err != nil {
		g.held.drop()
		return err
	}
	if err := g.rows.add(q, due); err != nil {
		return err
	}
	g.deltas.add(l)
	for k, ch := range l.touched {
		g.held.put(k, heldBalance{b: ch.now, stored: ch.stored})
	}
	g.held.keep()
	g.events = append(g.events, l.events...)
	c.stored = q
	g.ops = append(g.ops, op)
	return nil
}

// write writes the group in one transaction, in one round trip: BEGIN, the payouts, the
// events, the balances and COMMIT, pipelined. errFallBack when an order was taken meanwhile,
// a balance would overdraw or its row was created meanwhile, or the group deadlocked: nothing
// of it is stored, and its creates are decided again write by write.
func (g *setGroup) write(ctx context.Context, pool *pgxpool.Pool) error {
	if err := g.deltas.checkChange(); err != nil { // the ledger invariant (deltas.go)
		return err
	}
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	g.rows.queue(b)
	if err := queueEvents(b, g.events); err != nil {
		return err
	}
	g.deltas.queue(b)
	queueCommit(b)
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("store: create payouts: %w", err)
	}
	defer conn.Release()
	if err := sendCommitted(ctx, conn, b); err != nil {
		var pgErr *pgconn.PgError
		switch {
		case ledgerRow(err):
			return fmt.Errorf("%w: %w", rules.ErrLedger, err)
		case errors.As(err, &pgErr) && (pgErr.Code == "23514" || pgErr.Code == "23505" || retryable(err)):
			// an overdraft, an order or a balance's row written meanwhile, a deadlock
			return errFallBack
		}
		return fmt.Errorf("store: create payouts: %w", err)
	}
	return nil
}

func compareBalanceKeys(a, b balanceKey) int {
	return cmp.Or(cmp.Compare(a.merchantID, b.merchantID), cmp.Compare(a.country, b.country), cmp.Compare(a.currency, b.currency))
}

// balanceKeyColumns are keys as three arrays, for unnest.
func balanceKeyColumns(keys []balanceKey) (merchants, countries, currencies []string) {
	for _, k := range keys {
		merchants, countries, currencies = append(merchants, k.merchantID), append(countries, k.country), append(currencies, k.currency)
	}
	return merchants, countries, currencies
}

// payoutRows are new payouts as the columns of one INSERT.
type payoutRows struct {
	id, amount                                        []int64
	merchant, order, country, currency, stage, status []string
	doc                                               []string
	createdAt                                         []time.Time
	dueAt                                             []pgtype.Timestamptz
	dueStatus                                         []pgtype.Text
}

func (r *payoutRows) add(p *rules.Payout, due time.Time) error {
	doc, err := gojson.Marshal(p)
	if err != nil {
		return fmt.Errorf("store: encode payout: %w", err)
	}
	r.id, r.amount = append(r.id, p.ID), append(r.amount, p.Amount)
	r.merchant, r.order, r.country, r.currency = append(r.merchant, p.MerchantID), append(r.order, p.OrderID),
		append(r.country, p.Country), append(r.currency, p.Currency)
	r.stage, r.status, r.doc = append(r.stage, string(p.Stage)), append(r.status, string(p.Status)), append(r.doc, string(doc))
	r.createdAt, r.dueAt, r.dueStatus = append(r.createdAt, p.CreatedAt), append(r.dueAt, dueAt(due)), append(r.dueStatus, dueStatus(due, p.Status))
	return nil
}

// queue queues the INSERT of the rows into b: an order a concurrent transaction stored
// first fails it (23505 on payouts_order).
func (r *payoutRows) queue(b *pgx.Batch) {
	b.Queue(`INSERT INTO payouts (id, merchant_id, order_id, country, currency, amount, stage, status, created_at, due_at, due_status, doc)
		SELECT id, merchant_id, order_id, country, currency, amount, stage, status, created_at, due_at, due_status, doc::jsonb
		FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::text[], $8::text[],
			$9::timestamptz[], $10::timestamptz[], $11::text[], $12::text[])
			AS r(id, merchant_id, order_id, country, currency, amount, stage, status, created_at, due_at, due_status, doc)
		ORDER BY id`,
		r.id, r.merchant, r.order, r.country, r.currency, r.amount, r.stage, r.status, r.createdAt, r.dueAt, r.dueStatus, r.doc)
}
