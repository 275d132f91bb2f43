package postgres

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"payouts/rules"
	"payouts/store/postgres/pgtest"
)

// roundTrips counts what a DB sends to the server: each query or statement on its own, and
// each batch (its statements pipelined: one round trip).
type roundTrips struct{ n atomic.Int64 }

func (r *roundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	r.n.Add(1)
	return ctx
}
func (r *roundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (r *roundTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	r.n.Add(1)
	return ctx
}
func (r *roundTrips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (r *roundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

// createOps are n creates of new orders of m1, each reserving its amount, as one group.
func createOps(prefix string, n int, amount int64) ([]*groupOp, []*createWrite) {
	ops, cs := make([]*groupOp, n), make([]*createWrite, n)
	for i := range n {
		p := newPayout(fmt.Sprintf("%s-%d", prefix, i), amount)
		c := &createWrite{p: p, due: time.Now(), admit: reserve,
			events: []rules.Event{{ID: fmt.Sprintf("%s-ev-%d", prefix, i), Kind: "payout.mail", MerchantID: "m1", NextAt: time.Now()}}}
		cs[i] = c
		ops[i] = &groupOp{create: c, keys: []balanceKey{{MerchantID: "m1", Country: "PER", Currency: "PEN"}}, rerun: true, done: make(chan error, 1),
			fn: func(ctx context.Context, tx pgx.Tx) error {
				var err error
				c.existing, c.stored, err = createPayout(ctx, tx, p, c.due, c.events, c.admit, queueLease{})
				return err
			}}
	}
	return ops, cs
}

// A group's creates cost the same two round trips whatever its size (read ahead; BEGIN,
// payouts, events, balance and COMMIT pipelined), and so does a lifecycle round of any number
// of steps: at 0.5 ms a round trip, the size of the work no longer multiplies the wait.
func TestRoundTripsDoNotGrowWithTheWork(t *testing.T) {
	trips := &roundTrips{}
	db := openDB(t, pgtest.Database(t), Options{Tracer: trips})
	if _, err := db.Fund(context.Background(), "m1", "PER", "PEN", 1_000_000, time.Now()); err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, n := range []int{1, 64} {
		ops, cs := createOps(fmt.Sprint("G", n), n, 100)
		before := trips.n.Load()
		db.writer.commit(ops)
		for i, err := range answers(ops) {
			if err != nil || cs[i].stored == nil {
				t.Fatalf("create %d of %d: %v", i, n, err)
			}
			ids = append(ids, cs[i].stored.ID)
		}
		if got := trips.n.Load() - before; got != 2 {
			t.Errorf("a group of %d creates: %d round trips, want 2", n, got)
		}
	}
	if n := count(t, db, `SELECT count(*) FROM outbox`); n != 65 {
		t.Errorf("%d events stored, want 65", n)
	}
	if bs, _ := db.Balances(context.Background(), "m1"); len(bs) != 1 || bs[0].Available != 1_000_000-65*100 {
		t.Errorf("balances %+v, want 6500 reserved", bs)
	}
	moveOn := func(p *rules.Payout, l rules.Ledger) (time.Time, error) {
		b, err := l.Balance(p.MerchantID, p.Country, p.Currency)
		if err != nil {
			return time.Time{}, err
		}
		b.Balance -= p.Reserved
		b.Processed += p.Reserved
		p.Reserved = 0
		p.Move(rules.StatusProcessed, time.Now(), "", "")
		if err := l.Enqueue(rules.Event{ID: fmt.Sprint("done-", p.ID), Kind: "payout.mail", MerchantID: p.MerchantID, PayoutID: p.ID, NextAt: time.Now()}); err != nil {
			return time.Time{}, err
		}
		return time.Time{}, l.PutBalance(p.MerchantID, b)
	}
	for _, batch := range [][]int64{ids[:1], ids[1:]} {
		before := trips.n.Load()
		if err := db.UpdatePayouts(context.Background(), batch, moveOn); err != nil {
			t.Fatal(err)
		}
		if got := trips.n.Load() - before; got != 2 {
			t.Errorf("a lifecycle round of %d steps: %d round trips, want 2", len(batch), got)
		}
	}
	if bs, _ := db.Balances(context.Background(), "m1"); len(bs) != 1 || bs[0].Available != 1_000_000-6500 || bs[0].Balance != 1_000_000-6500 || bs[0].Processed != 6500 {
		t.Errorf("balances %+v, want 6500 processed", bs)
	}
	// The ledger entries went in the same round trips: a funding, 65 reservations, 65 debits.
	if n := count(t, db, `SELECT count(*) FROM ledger_entries`); n != 131 {
		t.Errorf("%d ledger entries, want 131", n)
	}
	if err := db.CheckAllLedgers(context.Background()); err != nil {
		t.Error(err)
	}
}

// A group decided on a balance that another instance drew down before the group's write
// would overdraw it: the row's CHECK refuses the UPDATE, nothing of the group is stored, and
// its creates are decided again write by write on the balance as it is: those it covers
// reserve, the rest are refused, and the ledger holds.
func TestGroupThatWouldOverdrawFallsBackWriteByWrite(t *testing.T) {
	url := pgtest.Database(t)
	db, other := openDB(t, url, Options{}), openDB(t, url, Options{})
	if _, err := db.Fund(context.Background(), "m1", "PER", "PEN", 1000, time.Now()); err != nil {
		t.Fatal(err)
	}
	drawn := false
	db.writer.afterReadAhead = func() {
		if !drawn { // the first read only: the fallback's lock then reads the new balance
			drawn = true
			if _, err := other.Fund(context.Background(), "m1", "PER", "PEN", -600, time.Now()); err != nil {
				t.Error(err)
			}
		}
	}
	ops, cs := createOps("OVER", 3, 300) // 900 of the 1000 read ahead; 400 left when written
	db.writer.commit(ops)
	reserved := 0
	for i, err := range answers(ops) {
		if err != nil || cs[i].stored == nil {
			t.Fatalf("create %d: %v", i, err)
		}
		if cs[i].stored.Reserved == 300 {
			reserved++
		}
	}
	if reserved != 1 {
		t.Errorf("%d creates reserved 300 of the 400 left, want 1", reserved)
	}
	if bs, _ := db.Balances(context.Background(), "m1"); len(bs) != 1 || bs[0].Available != 100 || bs[0].Balance != 400 {
		t.Errorf("balances %+v, want 400 with 300 held", bs)
	}
	if n := count(t, db, `SELECT count(*) FROM payouts`); n != 3 {
		t.Errorf("%d payouts stored, want 3", n)
	}
	if err := db.CheckAllLedgers(context.Background()); err != nil {
		t.Error(err)
	}
}

// A balance change that would break the ledger's totals on the row as it is (balance =
// funded − processed + reversed) is refused by its own statement, inside the transaction:
// nothing of the transaction is stored.
func TestBalanceStatementChecksTheLedgerTotals(t *testing.T) {
	db := newDB(t)
	if _, err := db.Fund(context.Background(), "m1", "PER", "PEN", 1000, time.Now()); err != nil {
		t.Fatal(err)
	}
	k := balanceKey{MerchantID: "m1", Country: "PER", Currency: "PEN"}
	ds := balanceDeltas{k: {available: -10, balance: -10, stored: true, // money gone, no total says where
		entries: []rules.Entry{rules.FundingEntry(-10, time.Now())}}}
	if err := ds.checkChange(); err != nil {
		t.Fatalf("checkChange: %v (what is held back did not move)", err)
	}
	ctx := context.Background()
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue(`INSERT INTO meta (key, value) VALUES ('with-it', 'v')`)
	ds.queue(b, nil)
	queueCommit(b)
	if err := sendCommitted(ctx, conn, b); !ledgerRow(err) {
		t.Fatalf("err %v, want the balance statement's refusal", err)
	}
	if bs, _ := db.Balances(ctx, "m1"); len(bs) != 1 || bs[0].Available != 1000 || bs[0].Balance != 1000 {
		t.Errorf("balances %+v, want 1000 untouched", bs)
	}
	if n := count(t, db, `SELECT count(*) FROM meta WHERE key = 'with-it'`); n != 0 {
		t.Errorf("the transaction's other write was stored")
	}
	if ds := (balanceDeltas{k: {available: -10, balance: 0, reserved: 0, stored: true}}); ds.checkChange() == nil {
		t.Errorf("checkChange let held back move by 10 with no reservation")
	}
}

// Once the writer knows the balance and holds ids drawn ahead, a group of creates is one
// round trip; an order stored already (a replay) or a balance another instance drew down
// meanwhile fails that write whole, and the group goes the way of a read ahead: the replay
// gets its stored payout, the overdraft is decided on the balance as it is, nothing twice.
func TestWarmGroupOfCreatesIsOneRoundTrip(t *testing.T) {
	url := pgtest.Database(t)
	trips := &roundTrips{}
	db, other := openDB(t, url, Options{Tracer: trips}), openDB(t, url, Options{})
	if _, err := db.Fund(context.Background(), "m1", "PER", "PEN", 1_000_000, time.Now()); err != nil {
		t.Fatal(err)
	}
	group := func(ops []*groupOp, cs []*createWrite) int64 {
		t.Helper()
		before := trips.n.Load()
		db.writer.commit(ops)
		for i, err := range answers(ops) {
			if err != nil || cs[i].stored == nil && cs[i].existing == nil {
				t.Fatalf("create %d: %v", i, err)
			}
		}
		return trips.n.Load() - before
	}
	first, firsts := createOps("A", 8, 100)
	if n := group(first, firsts); n != 2 {
		t.Errorf("the first group: %d round trips, want 2 (the balance read ahead)", n)
	}
	ops, cs := createOps("B", 8, 100)
	if n := group(ops, cs); n != 1 {
		t.Errorf("a warm group: %d round trips, want 1", n)
	}
	for i, c := range cs {
		if c.stored.ID <= firsts[7].stored.ID || i > 0 && c.stored.ID <= cs[i-1].stored.ID {
			t.Errorf("warm group's ids %d after %d: not ascending after the first group's", c.stored.ID, firsts[7].stored.ID)
		}
	}
	// A replay of A-3 among new orders.
	ops, cs = createOps("C", 4, 100)
	replay := newPayout("A-3", 100)
	cs[0].p, ops[0].create.p = replay, replay
	if n := group(ops, cs); n != 4 {
		t.Errorf("a warm group with a replay: %d round trips, want 4 (the failed write and its rollback, then read ahead and write)", n)
	}
	if cs[0].existing == nil || cs[0].existing.ID != firsts[3].stored.ID || cs[0].stored != nil {
		t.Errorf("the replay got %+v / %+v, want the stored A-3 (%d)", cs[0].existing, cs[0].stored, firsts[3].stored.ID)
	}
	// Another instance draws the balance down to 100 behind the writer's back.
	if _, err := other.Fund(context.Background(), "m1", "PER", "PEN", -(1_000_000 - 19*100 - 100), time.Now()); err != nil {
		t.Fatal(err)
	}
	ops, cs = createOps("D", 3, 100)
	group(ops, cs)
	reserved := 0
	for _, c := range cs {
		if c.stored.Reserved == 100 {
			reserved++
		}
	}
	if reserved != 1 {
		t.Errorf("%d creates reserved 100 of the 100 left, want 1", reserved)
	}
	if n := count(t, db, `SELECT count(*) FROM payouts`); n != 22 {
		t.Errorf("%d payouts stored, want 22", n)
	}
	if bs, _ := db.Balances(context.Background(), "m1"); len(bs) != 1 || bs[0].Available != 0 {
		t.Errorf("balances %+v, want nothing available", bs)
	}
	if err := db.CheckAllLedgers(context.Background()); err != nil {
		t.Error(err)
	}
}
