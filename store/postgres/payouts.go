package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	gojson "github.com/goccy/go-json"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"payouts/rules"
)

// A payout is one row of payouts: the whole rules.Payout as JSON (doc), with the columns its
// indexes and the lifecycle queue read mirrored from it. The rows are written with the
// semantics of store/bolt (payouts.go there), which the tests hold this engine to.

// customPlan, passed before a query's arguments, has PostgreSQL plan the query for these
// arguments each time it runs. A statement prepared once and run many times gets a generic
// plan, chosen with the statistics of the moment and kept until the table is analyzed: made
// while payouts was still empty, the orderId lookup's walked the merchant's whole status
// index (0.9 ms at 9,000 payouts, growing with them). The queries whose best index depends
// on the data use it; planning them costs a few tens of microseconds.
const customPlan = pgx.QueryExecModeExec

// errOrderTaken is a create that lost the race for its orderId to a create of another
// transaction: its writes are rolled back and it runs again, to answer with the stored payout.
var errOrderTaken = errors.New("store: the orderId was taken meanwhile")

// maxOrderRaces bounds how often one create runs again after losing its orderId's race.
const maxOrderRaces = 3

// CreatePayout stores p under a new id, queued at due, with its events, in a transaction
// shared with concurrent writes (group.go). When admit is given it runs on the new payout in
// that same transaction, with the merchant's ledger, and its answer replaces due; the ledger
// invariant is checked on the balances it touched. If the merchant already used p.OrderID,
// nothing is written and the stored payout is returned with created false: the caller decides
// between a replay and a conflict. The payout returned for a create is a copy of p as stored;
// p itself is left as it was given.
func (s *DB) CreatePayout(ctx context.Context, p *rules.Payout, due time.Time, events []rules.Event, admit rules.Step) (*rules.Payout, bool, error) {
	var keys []balanceKey
	if admit != nil { // only admit draws on the balance
		keys = []balanceKey{{MerchantID: p.MerchantID, Country: p.Country, Currency: p.Currency}}
	}
	for range maxOrderRaces {
		c := &createWrite{p: p, due: due, events: events, admit: admit}
		err := s.writer.send(ctx, &groupOp{create: c, keys: keys, rerun: true, done: make(chan error, 1),
			fn: func(ctx context.Context, tx pgx.Tx) error {
				// A group rolled back runs this again: start clean, from p untouched.
				var err error
				c.existing, c.stored, err = createPayout(ctx, tx, p, due, events, admit, s.writer.lease)
				return err
			}})
		switch {
		case errors.Is(err, errOrderTaken):
			continue
		case err != nil:
			return nil, false, err
		case c.stored != nil:
			return c.stored, true, nil
		default:
			return c.existing, false, nil
		}
	}
	return nil, false, fmt.Errorf("store: create payout of order %s: %w %d times", p.OrderID, errOrderTaken, maxOrderRaces)
}

// createPayout is one create inside tx: the stored payout of p's order if there is one, else
// p stored under the next id (a copy of p, returned as stored).
//
// The orderId is looked up first, so that a replay neither takes an id nor locks a balance.
// A new payout is then admitted and inserted with ON CONFLICT ON CONSTRAINT payouts_order DO
// NOTHING: when a concurrent transaction inserted the same order in between, the insert
// waits for it to commit and inserts nothing, and the create answers errOrderTaken (its
// group rolls it back to its savepoint; CreatePayout runs it again and finds the order).
func createPayout(ctx context.Context, tx pgx.Tx, p *rules.Payout, due time.Time, events []rules.Event, admit rules.Step, ql queueLease) (existing, stored *rules.Payout, err error) {
	var storedID, nextID *int64
	var doc []byte
	err = tx.QueryRow(ctx, `SELECT p.id, p.doc, CASE WHEN p.id IS NULL THEN nextval('payouts_id_seq') END
		FROM (SELECT 1) one LEFT JOIN payouts p ON p.merchant_id = $1 AND p.order_id = $2`, customPlan, p.MerchantID, p.OrderID).
		Scan(&storedID, &doc, &nextID)
	if err != nil {
		return nil, nil, fmt.Errorf("store: create payout: look up order %s: %w", p.OrderID, err)
	}
	if storedID != nil {
		existing, err = decodePayout(*storedID, doc)
		return existing, nil, err
	}
	q := p.Clone()
	q.ID = *nextID
	l := newLedger(ctx, tx)
	if due, err = l.lt.Admit(q, due, events, admit); err != nil {
		return nil, nil, err
	}
	if err := insertPayout(ctx, tx, q, due, l, ql); err != nil {
		return nil, nil, err
	}
	return nil, q, nil
}

// insertPayout writes a new payout, with the balances its ledger changed under the ledger
// invariant (ledger.go), in one round trip; errOrderTaken when its order was taken by a concurrent transaction.
func insertPayout(ctx context.Context, tx pgx.Tx, p *rules.Payout, due time.Time, l *ledger, ql queueLease) error {
	doc, err := gojson.Marshal(p)
	if err != nil {
		return fmt.Errorf("store: encode payout: %w", err)
	}
	b := &pgx.Batch{}
	if err := l.queueWrites(b); err != nil {
		return err
	}
	inserted := false
	b.Queue(insertPayoutRow, p.ID, p.MerchantID, p.OrderID, p.Country, p.Currency, p.Amount, string(p.Stage), string(p.Status),
		p.CreatedAt, dueAt(due), dueStatus(due, p.Status), doc, ql.ownerParam(), ql.lease).
		Exec(func(tag pgconn.CommandTag) error {
			inserted = tag.RowsAffected() == 1
			return nil
		})
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("store: insert payout %d: %w", p.ID, err)
	}
	if !inserted {
		return errOrderTaken
	}
	return nil
}

var insertPayoutRow = func() string {
	owner, until := leaseAheadSQL("$10::timestamptz", "$13", "$14")
	return `INSERT INTO payouts (id, merchant_id, order_id, country, currency, amount, stage, status, created_at, due_at, due_status, doc,
			lease_owner, lease_until)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, ` + owner + `, ` + until + `)
		ON CONFLICT ON CONSTRAINT payouts_order DO NOTHING`
}()

// queueLease is the lease a write of this instance gives the lifecycle step it queues: the
// step is this instance's from its due time for one lease, as if claimed then, so that this
// instance's next round takes it without writing a claim (Due). A step queued further ahead
// than one lease from now gets none (any instance claims it when due), nor does any step
// with the zero queueLease.
type queueLease struct {
	owner string
	lease time.Duration
}

// ownerParam is the owner as a parameter: NULL for none.
func (q queueLease) ownerParam() pgtype.Text {
	return pgtype.Text{String: q.owner, Valid: q.owner != ""}
}

// leaseAheadSQL are the lease_owner and lease_until a write stores for a step queued at due
// (an SQL expression, NULL when not queued), owner and lease being its parameters (text,
// interval).
func leaseAheadSQL(due, owner, lease string) (ownerExpr, untilExpr string) {
	ahead := fmt.Sprintf("%s::text IS NOT NULL AND %s <= clock_timestamp() + %s::interval", owner, due, lease)
	return fmt.Sprintf("CASE WHEN %s THEN %s::text END", ahead, owner),
		fmt.Sprintf("CASE WHEN %s THEN %s + %s::interval END", ahead, due, lease)
}

// dueAt is a queue time as the column holds it: NULL when not queued.
func dueAt(t time.Time) pgtype.Timestamptz {
	return pgtype.Timestamptz{Time: t, Valid: !t.IsZero()}
}

// dueStatus is the status a payout is queued in: NULL when not queued.
func dueStatus(due time.Time, status rules.Status) pgtype.Text {
	return pgtype.Text{String: string(status), Valid: !due.IsZero()}
}

func decodePayout(id int64, doc []byte) (*rules.Payout, error) {
	p := &rules.Payout{}
	if err := gojson.Unmarshal(doc, p); err != nil {
		return nil, fmt.Errorf("store: decode payout %d: %w", id, err)
	}
	p.ID = id
	return p, nil
}

// ImportPayouts stores payouts in one transaction without queueing them (bulk loads, such as
// the benchmark's million stored payouts). A payout with an id keeps it, and the payout ids
// continue after the largest; one without takes the next. An orderId already used is an
// error. The ledger is not touched: the balances are the importer's business.
func (s *DB) ImportPayouts(ctx context.Context, ps []*rules.Payout) error {
	if len(ps) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), checkTimeout)
	defer cancel()
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := checkImportOrders(ctx, tx, ps); err != nil {
			return err
		}
		if err := assignImportIDs(ctx, tx, ps); err != nil {
			return err
		}
		if err := copyPayouts(ctx, tx, ps); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `SELECT setval('payouts_id_seq', t.top) FROM (SELECT max(id) AS top FROM payouts) t
			WHERE t.top > (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM payouts_id_seq)`)
		return err
	})
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	return nil
}

// checkImportOrders refuses payouts whose orderId is used, stored or earlier in ps.
func checkImportOrders(ctx context.Context, tx pgx.Tx, ps []*rules.Payout) error {
	seen := make(map[[2]string]bool, len(ps))
	merchants, orders := make([]string, len(ps)), make([]string, len(ps))
	for i, p := range ps {
		k := [2]string{p.MerchantID, p.OrderID}
		if seen[k] {
			return fmt.Errorf("orderId %s already used", p.OrderID)
		}
		seen[k] = true
		merchants[i], orders[i] = p.MerchantID, p.OrderID
	}
	var used string
	err := tx.QueryRow(ctx, `SELECT p.order_id FROM unnest($1::text[], $2::text[]) AS o(merchant_id, order_id)
		JOIN payouts p ON p.merchant_id = o.merchant_id AND p.order_id = o.order_id LIMIT 1`, merchants, orders).Scan(&used)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil
	case err != nil:
		return err
	}
	return fmt.Errorf("orderId %s already used", used)
}

// assignImportIDs gives the payouts without an id the next ones, in order.
func assignImportIDs(ctx context.Context, tx pgx.Tx, ps []*rules.Payout) error {
	n := 0
	for _, p := range ps {
		if p.ID == 0 {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	rows, err := tx.Query(ctx, `SELECT nextval('payouts_id_seq') FROM generate_series(1, $1)`, n)
	if err != nil {
		return err
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return err
	}
	slices.Sort(ids)
	for _, p := range ps {
		if p.ID == 0 {
			p.ID, ids = ids[0], ids[1:]
		}
	}
	return nil
}

// copyPayouts writes payouts not queued with COPY.
func copyPayouts(ctx context.Context, tx pgx.Tx, ps []*rules.Payout) error {
	rows := make([][]any, len(ps))
	for i, p := range ps {
		doc, err := gojson.Marshal(p)
		if err != nil {
			return fmt.Errorf("encode payout %d: %w", p.ID, err)
		}
		rows[i] = []any{p.ID, p.MerchantID, p.OrderID, p.Country, p.Currency, p.Amount, string(p.Stage), string(p.Status),
			p.CreatedAt, string(doc)}
	}
	_, err := tx.CopyFrom(ctx, pgx.Identifier{"payouts"},
		[]string{"id", "merchant_id", "order_id", "country", "currency", "amount", "stage", "status", "created_at", "doc"},
		pgx.CopyFromRows(rows))
	return err
}

// Payout reads one payout of a merchant; another merchant's payout is not found.
func (s *DB) Payout(ctx context.Context, merchantID string, id int64) (*rules.Payout, error) {
	if id <= 0 {
		return nil, rules.ErrNotFound
	}
	return s.payoutWhere(ctx, `id = $1 AND merchant_id = $2`, id, merchantID)
}

// PayoutByOrder reads a merchant's payout by its orderId.
func (s *DB) PayoutByOrder(ctx context.Context, merchantID, orderID string) (*rules.Payout, error) {
	if !storable(merchantID, orderID) {
		return nil, rules.ErrNotFound
	}
	return s.payoutWhere(ctx, `merchant_id = $1 AND order_id = $2`, merchantID, orderID)
}

// payoutWhere reads the payout a condition selects; rules.ErrNotFound when none.
func (s *DB) payoutWhere(ctx context.Context, cond string, args ...any) (*rules.Payout, error) {
	ctx, cancel := callContext(ctx)
	defer cancel()
	var id int64
	var doc []byte
	err := s.pool.QueryRow(ctx, `SELECT id, doc FROM payouts WHERE `+cond, append([]any{customPlan}, args...)...).Scan(&id, &doc)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, rules.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store: read payout: %w", err)
	}
	return decodePayout(id, doc)
}

// PayoutsByID reads several payouts, in the order of ids; missing ids are skipped. A
// lifecycle round's read (rules.RoundReads) keeps them for the round's UpdatePayouts.
func (s *DB) PayoutsByID(ctx context.Context, ids []int64) ([]*rules.Payout, error) {
	out := make([]*rules.Payout, 0, len(ids))
	round := rules.RoundReadsOf(ctx)
	if len(ids) == 0 {
		return out, nil
	}
	ctx, cancel := callContext(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, `SELECT id, doc FROM payouts WHERE id = ANY($1)`, ids)
	if err != nil {
		return nil, fmt.Errorf("store: read payouts: %w", err)
	}
	docs, err := collectDocs(rows)
	if err != nil {
		return nil, fmt.Errorf("store: read payouts: %w", err)
	}
	for _, id := range ids {
		doc, ok := docs[id]
		if !ok {
			continue
		}
		p, err := decodePayout(id, doc)
		if err != nil {
			return nil, err
		}
		if round != nil {
			round.Keep(id, rules.RoundRead{Payout: p, Record: doc}) // doc is a copy (collectDocs)
		}
		out = append(out, p)
	}
	return out, nil
}

// collectDocs reads rows of (id, doc) into a map.
func collectDocs(rows pgx.Rows) (map[int64][]byte, error) {
	docs := map[int64][]byte{}
	var id int64
	var doc []byte
	_, err := pgx.ForEachRow(rows, []any{&id, &doc}, func() error {
		docs[id] = slices.Clone(doc)
		return nil
	})
	return docs, err
}

// WithStatus lists the ids of a merchant's payouts in one status, oldest first.
func (s *DB) WithStatus(ctx context.Context, merchantID string, status rules.Status, limit int) ([]int64, error) {
	if limit <= 0 {
		return nil, nil
	}
	ctx, cancel := callContext(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, `SELECT id FROM payouts WHERE merchant_id = $1 AND status = $2 ORDER BY id LIMIT $3`,
		customPlan, merchantID, string(status), limit)
	if err != nil {
		return nil, fmt.Errorf("store: payouts of %s in %s: %w", merchantID, status, err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("store: payouts of %s in %s: %w", merchantID, status, err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	return ids, nil
}

// Due claims up to limit payouts whose next lifecycle step is due at or before now, oldest
// first, with the status each had when it was queued. A claimed payout is this instance's
// until UpdatePayouts writes it or its lease ends: no other caller, here or on another
// instance, gets it meanwhile; once the lease ended, any caller may take it over. Leases run
// on the service's clock (now), as in the outbox.
//
// A step this instance queued itself is already its own (queueLease: leased from its due
// time): while at least half of that lease is left, Due hands it out without writing a claim,
// once (not again while a round of this instance holds it). The others, and its own whose
// lease is running out, it claims with a write, as any step. Among them, those claimed come
// first: they are the late ones.
func (s *DB) Due(ctx context.Context, now time.Time, limit int) ([]rules.DueEntry, error) {
	due, _, err := s.claimDue(ctx, now, limit, false)
	return due, err
}

// DueRead is Due that also reads the payouts it claims, in the claim's
// round trip: the lifecycle asks the rails on them without reading them again, and the round
// that steps them (UpdatePayouts) has them decoded already, as of the claim's row version.
func (s *DB) DueRead(ctx context.Context, now time.Time, limit int) ([]rules.DueEntry, map[int64]*rules.Payout, error) {
	return s.claimDue(ctx, now, limit, true)
}

// claimDueSQL claims and selects in one statement: c and u claim (a write), o takes this
// instance's own steps with half a lease left and no round holding them (a read). o takes
// only a lease a write gave (due + lease, queueLease), never one a claim gave (claim time +
// lease, later for a step claimed late): a step claimed by one round of this instance is not
// read by another round's o, even one whose list of held steps ($6) predates the claim; and
// two rounds' o reading the same step are told apart by the set of held steps (claimDue).
const claimDueSQL = `WITH c AS (
		SELECT id, lease_owner FROM payouts
		WHERE due_at <= $1 AND (lease_until IS NULL OR lease_until < $1
			OR (lease_owner = $3 AND lease_until < $5 AND id <> ALL($6)))
		ORDER BY due_at, id LIMIT $2
		FOR UPDATE SKIP LOCKED),
	u AS (
		UPDATE payouts p SET lease_owner = $3, lease_until = $4
		FROM c WHERE p.id = c.id
		RETURNING p.id, p.due_at, coalesce(p.due_status, '') AS due_status, c.lease_owner, p.xmin::text::bigint AS v,
			CASE WHEN $7 THEN p.doc END AS doc, false AS own),
	o AS (
		SELECT p.id, p.due_at, coalesce(p.due_status, '') AS due_status, p.lease_owner, p.xmin::text::bigint AS v,
			CASE WHEN $7 THEN p.doc END AS doc, true AS own
		FROM payouts p
		WHERE p.due_at <= $1 AND p.lease_owner = $3 AND p.lease_until >= $5 AND p.lease_until = p.due_at + $8::interval
			AND p.id <> ALL($6)
		ORDER BY p.due_at, p.id LIMIT greatest($2 - (SELECT count(*) FROM u), 0))
	SELECT * FROM u UNION ALL SELECT * FROM o`

func (s *DB) claimDue(ctx context.Context, now time.Time, limit int, read bool) ([]rules.DueEntry, map[int64]*rules.Payout, error) {
	if limit <= 0 {
		return nil, nil, nil
	}
	ctx, cancel := callContext(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, claimDueSQL, customPlan, now.UTC(), limit, s.instance, now.Add(s.lease).UTC(),
		now.Add(s.lease/2).UTC(), s.steps.list(), read, s.lease)
	if err != nil {
		return nil, nil, fmt.Errorf("store: claim due payouts: %w", err)
	}
	type claim struct {
		rules.DueEntry
		at      time.Time
		prev    *string
		version int64
		doc     []byte
		own     bool // read by o, not claimed
	}
	claims, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (claim, error) {
		var c claim
		err := r.Scan(&c.ID, &c.at, &c.Status, &c.prev, &c.version, &c.doc, &c.own)
		return c, err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("store: claim due payouts: %w", err)
	}
	slices.SortFunc(claims, func(a, b claim) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return int(a.ID - b.ID)
	})
	due := make([]rules.DueEntry, 0, len(claims))
	round := rules.RoundReadsOf(ctx)
	var ps map[int64]*rules.Payout
	if read {
		ps = make(map[int64]*rules.Payout, len(claims))
	}
	for _, c := range claims {
		if s.steps.add(c.ID) {
			s.claimedSteps.Add(1)
		} else if c.own {
			continue // read as well by a round of this instance claiming at the same time: its
		}
		due = append(due, c.DueEntry)
		if c.prev != nil && *c.prev != s.instance {
			s.takenOver.Add(1)
		}
		if read {
			p, err := decodePayout(c.ID, c.doc)
			if err != nil {
				return nil, nil, err
			}
			if round != nil {
				round.Keep(c.ID, rules.RoundRead{Payout: p, Version: c.version})
			}
			ps[c.ID] = p
		}
	}
	return due, ps, nil
}

// NextDue is the time of the earliest queued step that no live claim holds, zero when there
// is none. This instance's own steps (queueLease) count, but for those its rounds hold.
func (s *DB) NextDue(ctx context.Context) (time.Time, error) {
	ctx, cancel := callContext(ctx)
	defer cancel()
	var t pgtype.Timestamptz
	err := s.pool.QueryRow(ctx, `SELECT min(due_at) FROM payouts
		WHERE due_at IS NOT NULL AND (lease_until IS NULL OR lease_until < clock_timestamp()
			OR (lease_owner = $1 AND id <> ALL($2)))`, s.instance, s.steps.list()).Scan(&t)
	if err != nil {
		return time.Time{}, fmt.Errorf("store: next due payout: %w", err)
	}
	if !t.Valid {
		return time.Time{}, nil
	}
	return t.Time, nil
}

// queueLease is what this instance's writes give the steps they queue.
func (s *DB) queueLease() queueLease { return queueLease{owner: s.instance, lease: s.lease} }

// releaseQueued gives up the steps this instance queued for itself and holds no claim on
// (Close), so that another instance takes them as soon as they are due; a failure leaves
// them to their lease's end.
func (s *DB) releaseQueued() {
	ctx, cancel := callContext(context.Background()) // at close or after a round: no caller's context
	defer cancel()
	s.pool.Exec(ctx, `UPDATE payouts SET lease_owner = NULL, lease_until = NULL
		WHERE due_at IS NOT NULL AND lease_owner = $1 AND id <> ALL($2)`, s.instance, s.steps.list())
}

// payoutWrites are the payouts one UpdatePayouts changed, as the columns of one UPDATE.
type payoutWrites struct {
	index      map[int64]int
	id, amount []int64
	doc, stage []string
	status     []string
	country    []string
	currency   []string
	dueAt      []pgtype.Timestamptz
	dueStatus  []pgtype.Text
}

func newPayoutWrites(n int) *payoutWrites { return &payoutWrites{index: make(map[int64]int, n)} }

// add notes p as changed, queued at next (zero: not queued), and returns its document. A
// payout changed twice is written once, as the last step left it.
func (w *payoutWrites) add(p *rules.Payout, next time.Time) ([]byte, error) {
	doc, err := gojson.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("store: encode payout %d: %w", p.ID, err)
	}
	i, ok := w.index[p.ID]
	if !ok {
		i = len(w.id)
		w.index[p.ID] = i
		w.id = append(w.id, p.ID)
		w.amount, w.doc, w.stage, w.status = append(w.amount, 0), append(w.doc, ""), append(w.stage, ""), append(w.status, "")
		w.country, w.currency = append(w.country, ""), append(w.currency, "")
		w.dueAt, w.dueStatus = append(w.dueAt, pgtype.Timestamptz{}), append(w.dueStatus, pgtype.Text{})
	}
	w.amount[i], w.doc[i], w.stage[i], w.status[i] = p.Amount, string(doc), string(p.Stage), string(p.Status)
	w.country[i], w.currency[i] = p.Country, p.Currency
	w.dueAt[i], w.dueStatus[i] = dueAt(next), dueStatus(next, p.Status)
	return doc, nil
}

// queue queues the UPDATE of the changed payouts into b, and the release of this instance's
// claims on every one of ids. A payout changed is queued again as this instance's
// (queueLease), unless another instance holds a claim on it, which stays.
func (w *payoutWrites) queue(b *pgx.Batch, ids []int64, ql queueLease) {
	if len(w.id) > 0 {
		b.Queue(updatePayoutRows, w.id, w.doc, w.stage, w.status, w.country, w.currency, w.amount, w.dueAt, w.dueStatus,
			ql.ownerParam(), ql.lease)
	}
	rest := make([]int64, 0, len(ids))
	for _, id := range ids {
		if _, ok := w.index[id]; !ok {
			rest = append(rest, id)
		}
	}
	if len(rest) > 0 {
		b.Queue(`UPDATE payouts SET lease_owner = NULL, lease_until = NULL WHERE id = ANY($1) AND lease_owner = $2`,
			rest, ql.owner)
	}
}

var updatePayoutRows = func() string {
	owner, until := leaseAheadSQL("u.due_at", "$10", "$11")
	others := "p.lease_owner IS DISTINCT FROM $10::text AND p.lease_owner IS NOT NULL"
	return `UPDATE payouts p SET doc = u.doc, stage = u.stage, status = u.status, country = u.country,
			currency = u.currency, amount = u.amount, due_at = u.due_at, due_status = u.due_status,
			lease_owner = CASE WHEN ` + others + ` THEN p.lease_owner ELSE ` + owner + ` END,
			lease_until = CASE WHEN ` + others + ` THEN p.lease_until ELSE ` + until + ` END
		FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bigint[],
			$8::timestamptz[], $9::text[]) AS u(id, doc, stage, status, country, currency, amount, due_at, due_status)
		WHERE p.id = u.id`
}()

// releaseClaims releases this instance's claims on ids outside any transaction (after a
// failed UpdatePayouts); a failure leaves them to their lease's end.
func (s *DB) releaseClaims(ids []int64) {
	ctx, cancel := callContext(context.Background()) // at close or after a round: no caller's context
	defer cancel()
	s.pool.Exec(ctx, `UPDATE payouts SET lease_owner = NULL, lease_until = NULL WHERE id = ANY($1) AND lease_owner = $2`,
		ids, s.instance)
}

// claimSet is the set of payouts whose lifecycle step this instance claimed and has not
// written yet: claimedSteps counts it.
type claimSet struct {
	mu  sync.Mutex
	ids map[int64]struct{}
}

// add notes a claim and reports whether it is new (a claim of this instance that expired
// and was claimed again is the same claim).
func (c *claimSet) add(id int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ids == nil {
		c.ids = map[int64]struct{}{}
	}
	if _, ok := c.ids[id]; ok {
		return false
	}
	c.ids[id] = struct{}{}
	return true
}

// list is the ids claimed, for a query.
func (c *claimSet) list() []int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	ids := make([]int64, 0, len(c.ids))
	for id := range c.ids {
		ids = append(ids, id)
	}
	return ids
}

// drop forgets the claims on ids and says how many there were.
func (c *claimSet) drop(ids []int64) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, id := range ids {
		if _, ok := c.ids[id]; ok {
			delete(c.ids, id)
			n++
		}
	}
	return n
}

// maxScan bounds the payouts one listing request reads.
const maxScan = rules.ListMaxScan

// ListPayouts returns one page of a merchant's payouts, newest first, as store/bolt does:
// it walks the narrowest index the filter allows (status, then stage, then all of the
// merchant's) below the cursor, stops at the first payout created before From, and reads at
// most maxScan payouts, answering with a cursor where it stopped (a filter no index serves,
// such as country, pages through a long history in bounded requests).
func (s *DB) ListPayouts(ctx context.Context, merchantID string, f rules.ListFilter) (rules.Page, error) {
	var page rules.Page
	if !storable(merchantID, f.OrderID, f.Country, string(f.Stage), string(f.Status)) {
		return rules.Page{Items: []*rules.Payout{}}, nil
	}
	if f.Limit <= 0 {
		f.Limit = 50
	}
	if f.OrderID != "" {
		return s.listOrder(ctx, merchantID, f)
	}
	ctx, cancel := callContext(ctx)
	defer cancel()
	query, args := listQuery(merchantID, f)
	rows, err := s.pool.Query(ctx, query, append([]any{customPlan}, args...)...)
	if err != nil {
		return page, fmt.Errorf("store: list payouts of %s: %w", merchantID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, n int64
		var matched, old bool
		var doc []byte
		if err := rows.Scan(&id, &n, &matched, &old, &doc); err != nil {
			return page, fmt.Errorf("store: list payouts of %s: %w", merchantID, err)
		}
		if n > maxScan {
			page.NextCursor = id + 1
			break
		}
		if old {
			break // ids grow with creation time: nothing older can match
		}
		if len(page.Items) == f.Limit {
			page.NextCursor = page.Items[len(page.Items)-1].ID
			break
		}
		p, err := decodePayout(id, doc)
		if err != nil {
			return page, err
		}
		page.Items = append(page.Items, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return rules.Page{}, fmt.Errorf("store: list payouts of %s: %w", merchantID, err)
	}
	return page, nil
}

// listQuery is the query of a listing: the first maxScan+1 rows of the index range below the
// cursor, numbered, of which it returns, newest first, those that match the filter and those
// where the walk stops (the row past maxScan, a row created before From), up to one past the
// page, so that the server reads no further than the page needs.
func listQuery(merchantID string, f rules.ListFilter) (string, []any) {
	args := []any{merchantID}
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	where := "merchant_id = $1"
	switch {
	case f.Status != "":
		where += " AND status = " + arg(string(f.Status))
	case f.Stage != "":
		where += " AND stage = " + arg(string(f.Stage))
	}
	if f.Cursor > 0 {
		where += " AND id < " + arg(f.Cursor)
	}
	match, old := "true", "false"
	if f.Stage != "" {
		match += " AND stage = " + arg(string(f.Stage))
	}
	if f.Status != "" {
		match += " AND status = " + arg(string(f.Status))
	}
	if f.Country != "" {
		match += " AND country = " + arg(f.Country)
	}
	if !f.From.IsZero() {
		from := arg(f.From)
		match += " AND created_at >= " + from
		old = "created_at < " + from
	}
	if !f.To.IsZero() {
		match += " AND created_at < " + arg(f.To)
	}
	query := `SELECT id, n, matched, old, CASE WHEN matched THEN doc END FROM (
			SELECT id, doc, row_number() OVER (ORDER BY id DESC) AS n, ` + match + ` AS matched, ` + old + ` AS old
			FROM payouts WHERE ` + where + ` ORDER BY id DESC LIMIT ` + arg(maxScan+1) + `
		) w WHERE matched OR old OR n > ` + fmt.Sprint(maxScan) + `
		ORDER BY id DESC LIMIT ` + arg(f.Limit+1)
	return query, args
}

// listOrder is a listing by orderId: the one payout of that order, if it matches the rest of
// the filter and lies below the cursor.
func (s *DB) listOrder(ctx context.Context, merchantID string, f rules.ListFilter) (rules.Page, error) {
	p, err := s.PayoutByOrder(ctx, merchantID, f.OrderID)
	if errors.Is(err, rules.ErrNotFound) {
		p, err = nil, nil
	}
	return f.OrderPage(p), err
}
