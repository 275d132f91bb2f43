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
//
// Most groups skip step 1 and cost one round trip: the writer remembers each balance as its
// last read or write of it left it, for a second (knownBalance), and draws the ids of the
// next groups' payouts with each write (idStock). A group all of whose balances are known and
// whose ids are in stock is decided on them and written at once, its orders not looked up.
// What could have changed meanwhile is caught as for a read ahead, or by the write itself:
// an order stored already (a replay, or the same order on another instance) fails the
// INSERT, a balance drawn down by another writer fails its CHECK; then nothing of the group
// is stored, and it goes the way above, from step 1. A balance another writer added to only
// makes the known one more prudent: a create it refuses goes the way above, on the balance
// read.

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
	if w.createKnown(ctx, look) {
		return nil, again
	}
	ahead, err := readAhead(ctx, w.pool, look)
	if err != nil {
		for _, op := range look {
			op.answer(err)
		}
		return nil, again
	}
	w.learn(ahead.balances)
	if w.afterReadAhead != nil {
		w.afterReadAhead()
	}
	g := &setGroup{held: &heldBalances{held: ahead.balances}, deltas: balanceDeltas{}, rows: payoutRows{lease: w.lease}}
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
	switch err := w.writeSet(ctx, g, len(look)); {
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

// createKnown tries the creates of a group on the balances known and the ids in stock, in
// one round trip. It reports whether every create got its answer; when not, nothing of them
// is stored and none is answered: they go the way of a read ahead.
func (w *groupWriter) createKnown(ctx context.Context, look []*groupOp) bool {
	if w.alone {
		return false
	}
	now := time.Now()
	held := make(map[balanceKey]heldBalance, 1)
	for _, op := range look {
		for _, k := range op.keys {
			kb, ok := w.known[k]
			if !ok || now.Sub(kb.at) > knownFor {
				return false
			}
			held[k] = kb.heldBalance
		}
	}
	ids, ok := w.stock.take(len(look), now)
	if !ok {
		return false
	}
	g := &setGroup{held: &heldBalances{held: held}, deltas: balanceDeltas{}, rows: payoutRows{lease: w.lease}}
	undo := func() bool {
		for _, op := range look {
			op.create.stored = nil
		}
		w.stock.putBack(ids)
		return false
	}
	for i, op := range look {
		if err := g.admit(ctx, op, ids[i]); err != nil {
			return undo() // a refusal (more money may be there) or the create's own error: read first
		}
	}
	if w.afterReadAhead != nil {
		w.afterReadAhead()
	}
	err := w.writeSet(ctx, g, len(look))
	if errors.Is(err, errFallBack) {
		for k := range g.deltas {
			delete(w.known, k)
		}
		ids = nil // not tried twice: should the write have failed on one of them (an import took it)
		return undo()
	}
	for _, op := range g.ops {
		op.answer(err)
	}
	return true
}

// writeSet writes a group decided in memory (setGroup.write) and learns the balances as it
// left them. When creates come in groups (more than one at a time), it draws ids for the next
// groups with it, about twice this one's size; one at a time, none: ids drawn and not used
// within idsFor are dropped, and a client creating one payout after another sees no gaps.
func (w *groupWriter) writeSet(ctx context.Context, g *setGroup, size int) error {
	if !w.alone {
		if size > 1 {
			g.draw = max(min(2*size, maxGroup)-len(w.stock.ids), 0)
		}
		g.after = make(map[balanceKey]rules.Balance, len(g.deltas))
	}
	err := g.write(ctx, w.pool)
	if len(g.drawn) > 0 {
		w.stock.add(g.drawn, time.Now())
	}
	if err == nil {
		now := time.Now()
		for k, b := range g.after {
			w.known[k] = knownBalance{heldBalance{b: b, stored: true}, now}
		}
	}
	return err
}

// learn notes balances as read.
func (w *groupWriter) learn(bs map[balanceKey]heldBalance) {
	if w.alone {
		return
	}
	now := time.Now()
	for k, hb := range bs {
		if hb.stored {
			w.known[k] = knownBalance{hb, now}
		}
	}
}

// forget forgets the balances of writes decided write by write (their outcome is not known
// here without reading them again).
func (w *groupWriter) forget(ops []*groupOp) {
	for _, op := range ops {
		for _, k := range op.keys {
			delete(w.known, k)
		}
	}
}

// knownFor is how long a balance the writer read or wrote is taken as known: a second, after
// which another writer has probably changed it.
const knownFor = time.Second

// idsFor is how long ids drawn ahead are kept: the ids of payouts grow with their creation
// time, across instances too, to within this.
const idsFor = 100 * time.Millisecond

// knownBalance is a balance as the writer last read or wrote it, and when.
type knownBalance struct {
	heldBalance
	at time.Time
}

// idStock is payout ids drawn from payouts_id_seq ahead of the creates that use them.
type idStock struct {
	ids []int64 // ascending
	at  time.Time
}

// take takes n ids, if there are that many drawn less than idsFor ago.
func (s *idStock) take(n int, now time.Time) ([]int64, bool) {
	if now.Sub(s.at) > idsFor {
		s.ids = s.ids[:0]
	}
	if len(s.ids) < n {
		return nil, false
	}
	ids := slices.Clone(s.ids[:n])
	s.ids = append(s.ids[:0], s.ids[n:]...)
	return ids, true
}

// putBack returns ids taken and not used.
func (s *idStock) putBack(ids []int64) {
	s.ids = append(s.ids, ids...)
	slices.Sort(s.ids)
}

// add adds ids just drawn.
func (s *idStock) add(ids []int64, at time.Time) {
	s.ids = append(s.ids, ids...)
	slices.Sort(s.ids)
	s.at = at
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
			ahead.balances[k] = heldBalance{b: rules.Balance{Country: k.Country, Currency: k.Currency}}
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

	draw  int                          // payout ids to draw with the write, for later groups
	drawn []int64                      // the ids drawn
	after map[balanceKey]rules.Balance // the balances as the write left them, when not nil
}

// admit decides one new create in memory under id: nil when it is to be written with the
// group, errFallBack when it must be decided write by write, else its own error (nothing of
// it kept).
func (g *setGroup) admit(ctx context.Context, op *groupOp, id int64) error {
	c := op.create
	q := c.p.Clone()
	q.ID = id
	l := newLedger(withHeldBalances(ctx, g.held), nil)
	due, err := l.lt.Admit(q, c.due, c.events, c.admit)
	if err == nil {
		err = l.lt.Check() // the ledger invariant
	}
	if err == nil && len(l.lt.Refused()) > 0 {
		err = errFallBack
	}
	if err == nil {
		err = g.rows.add(q, due)
	}
	if err != nil {
		g.held.drop()
		return err
	}
	l.deltas = g.deltas
	if err := l.lt.Commit(); err != nil { // adds to the deltas; checked already
		return err
	}
	g.held.keep()
	g.events = append(g.events, l.events...)
	c.stored = q
	g.ops = append(g.ops, op)
	return nil
}

// write writes the group in one transaction, in one round trip: BEGIN, the ids drawn ahead
// (g.draw; drawn whatever becomes of the transaction), the payouts, the events, the balances
// and COMMIT, pipelined. errFallBack when an order was taken meanwhile,
// a balance would overdraw or its row was created meanwhile, or the group deadlocked: nothing
// of it is stored, and its creates are decided again write by write.
func (g *setGroup) write(ctx context.Context, pool *pgxpool.Pool) error {
	if err := g.deltas.checkChange(); err != nil { // the ledger invariant (deltas.go)
		return err
	}
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	if g.draw > 0 {
		b.Queue(`SELECT nextval('payouts_id_seq') FROM generate_series(1, $1)`, g.draw).Query(func(rows pgx.Rows) error {
			var err error
			g.drawn, err = pgx.CollectRows(rows, pgx.RowTo[int64])
			return err
		})
	}
	g.rows.queue(b)
	if err := queueEvents(b, g.events); err != nil {
		return err
	}
	g.deltas.queue(b, g.after)
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
	return cmp.Or(cmp.Compare(a.MerchantID, b.MerchantID), cmp.Compare(a.Country, b.Country), cmp.Compare(a.Currency, b.Currency))
}

// balanceKeyColumns are keys as three arrays, for unnest.
func balanceKeyColumns(keys []balanceKey) (merchants, countries, currencies []string) {
	for _, k := range keys {
		merchants, countries, currencies = append(merchants, k.MerchantID), append(countries, k.Country), append(currencies, k.Currency)
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
	lease                                             queueLease // given to the steps they queue
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
	b.Queue(insertPayoutRows, r.id, r.merchant, r.order, r.country, r.currency, r.amount, r.stage, r.status, r.createdAt,
		r.dueAt, r.dueStatus, r.doc, r.lease.ownerParam(), r.lease.lease)
}

var insertPayoutRows = func() string {
	owner, until := leaseAheadSQL("r.due_at", "$13", "$14")
	return `INSERT INTO payouts (id, merchant_id, order_id, country, currency, amount, stage, status, created_at, due_at, due_status, doc,
			lease_owner, lease_until)
		SELECT id, merchant_id, order_id, country, currency, amount, stage, status, created_at, due_at, due_status, doc, ` + owner + `, ` + until + `
		FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::text[], $8::text[],
			$9::timestamptz[], $10::timestamptz[], $11::text[], $12::text[])
			AS r(id, merchant_id, order_id, country, currency, amount, stage, status, created_at, due_at, due_status, doc)
		ORDER BY id`
}()
