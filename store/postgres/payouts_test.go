package postgres

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"payouts/rules"
	"payouts/store/postgres/pgtest"
)

// newPayout is a new payout of merchant m1 in PER/PEN, as the service builds it.
func newPayout(order string, amount int64) *rules.Payout {
	req := &rules.PayoutRequest{Country: "PER", Currency: "PEN", OrderID: order}
	return rules.NewPayout("m1", req, rules.Route{Amount: amount, Channel: rules.ChannelBatch}, time.Now())
}

// reserve is an admit step that holds the payout's amount on the balance and authorizes it,
// due at once.
func reserve(p *rules.Payout, l rules.Ledger) (time.Time, error) {
	b, err := l.Balance(p.MerchantID, p.Country, p.Currency)
	if err != nil {
		return time.Time{}, err
	}
	if b.Available < p.Amount {
		return time.Time{}, rules.ErrNoChange
	}
	b.Available -= p.Amount
	p.Reserved = p.Amount
	p.Move(rules.StatusAuthorized, time.Now(), "", "")
	return time.Now(), l.PutBalance(p.MerchantID, b)
}

func create(t testing.TB, db *DB, p *rules.Payout, due time.Time, admit rules.Step) *rules.Payout {
	t.Helper()
	stored, created, err := db.CreatePayout(context.Background(), p, due, nil, admit)
	if err != nil || !created {
		t.Fatalf("create %s: created %v, err %v", p.OrderID, created, err)
	}
	return stored
}

// The same order twice stores one payout: the second call returns the first as stored, with
// created false, and writes nothing (no events, no id taken).
func TestCreatePayoutIsIdempotent(t *testing.T) {
	db := newDB(t)
	p := newPayout("O-1", 300)
	ev := rules.Event{ID: "ev-1", Kind: rules.EventMerchantNotification, MerchantID: "m1", NextAt: time.Now()}
	stored, created, err := db.CreatePayout(context.Background(), p, time.Now(), []rules.Event{ev}, nil)
	if err != nil || !created || stored.ID != 1 || p.ID != 0 {
		t.Fatalf("first create: id %d, created %v, err %v (p.ID %d must stay 0)", stored.ID, created, err, p.ID)
	}
	again := newPayout("O-1", 999)
	again.Fingerprint = "another request"
	replay, created, err := db.CreatePayout(context.Background(), again, time.Now(), []rules.Event{{ID: "ev-2", Kind: ev.Kind, MerchantID: "m1"}}, reserve)
	if err != nil || created || replay.ID != stored.ID || replay.Amount != 300 || replay.Fingerprint != p.Fingerprint {
		t.Fatalf("replay: %+v, created %v, err %v; want payout %d as stored", replay, created, err, stored.ID)
	}
	sameJSON(t, replay, stored)
	if n := count(t, db, `SELECT count(*) FROM outbox`); n != 1 {
		t.Errorf("%d events in the outbox, want the first create's only", n)
	}
	if n := count(t, db, `SELECT count(*) FROM outbox WHERE payout_id = $1`, stored.ID); n != 1 {
		t.Errorf("the event does not carry the payout's id")
	}
	next := create(t, db, newPayout("O-2", 1), time.Time{}, nil)
	if next.ID != 2 {
		t.Errorf("the next payout got id %d, want 2 (a replay takes no id)", next.ID)
	}
	got, err := db.Payout(context.Background(), "m1", stored.ID)
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, got, stored)
	if _, err := db.Payout(context.Background(), "m2", stored.ID); !errors.Is(err, rules.ErrNotFound) {
		t.Errorf("another merchant's payout: %v, want ErrNotFound", err)
	}
	if _, err := db.Payout(context.Background(), "m1", 0); !errors.Is(err, rules.ErrNotFound) {
		t.Errorf("payout 0: %v, want ErrNotFound", err)
	}
	if got, err := db.PayoutByOrder(context.Background(), "m1", "O-2"); err != nil || got.ID != 2 {
		t.Errorf("by order: %v %v", got, err)
	}
	if _, err := db.PayoutByOrder(context.Background(), "m1", "O-3"); !errors.Is(err, rules.ErrNotFound) {
		t.Errorf("unknown order: %v, want ErrNotFound", err)
	}
}

// Fifty creates of one order at once, on two instances of one database, store one payout:
// one call creates it, every call answers with its id, and its reservation is taken once.
func TestConcurrentCreatesOfOneOrderAcrossInstances(t *testing.T) {
	url := pgtest.Database(t)
	dbs := []*DB{openDB(t, url, Options{}), openDB(t, url, Options{})}
	if _, err := dbs[0].Fund(context.Background(), "m1", "PER", "PEN", 10_000, time.Now()); err != nil {
		t.Fatal(err)
	}
	const n = 50
	ids := make([]int64, n)
	var created sync.Map
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			stored, ok, err := dbs[i%2].CreatePayout(context.Background(), newPayout("SAME", 300), time.Now(), nil, reserve)
			if err != nil {
				t.Errorf("create %d: %v", i, err)
				return
			}
			ids[i] = stored.ID
			if ok {
				created.Store(i, stored.ID)
			}
		})
	}
	wg.Wait()
	winners := 0
	created.Range(func(_, _ any) bool { winners++; return true })
	if winners != 1 {
		t.Fatalf("%d calls created the payout, want 1", winners)
	}
	for i, id := range ids {
		if id != ids[0] {
			t.Fatalf("call %d got payout %d, call 0 got %d", i, id, ids[0])
		}
	}
	if n := count(t, dbs[0], `SELECT count(*) FROM payouts`); n != 1 {
		t.Fatalf("%d payouts stored", n)
	}
	if bs, _ := dbs[1].Balances(context.Background(), "m1"); len(bs) != 1 || bs[0].Available != 9_700 {
		t.Errorf("balances %+v, want 300 of 10000 reserved once", bs)
	}
	if err := dbs[1].CheckAllLedgers(context.Background()); err != nil {
		t.Error(err)
	}
}

// Concurrent creates of different orders each get their own payout; one whose admit fails
// fails alone (its savepoint), the others of its group commit.
func TestConcurrentCreatesFailAlone(t *testing.T) {
	db := newDB(t)
	if _, err := db.Fund(context.Background(), "m1", "PER", "PEN", 1_000_000, time.Now()); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	const n = 200
	ids := make([]int64, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			admit := rules.Step(reserve)
			if i%10 == 3 {
				admit = func(p *rules.Payout, l rules.Ledger) (time.Time, error) {
					if _, err := reserve(p, l); err != nil {
						return time.Time{}, err
					}
					return time.Time{}, boom
				}
			}
			stored, created, err := db.CreatePayout(context.Background(), newPayout("C-"+strconv.Itoa(i), 100), time.Now(), nil, admit)
			switch {
			case i%10 == 3 && !errors.Is(err, boom):
				t.Errorf("create %d: %v, want its own error", i, err)
			case i%10 != 3 && (err != nil || !created):
				t.Errorf("create %d: created %v, err %v", i, created, err)
			case err == nil:
				ids[i] = stored.ID
			}
		})
	}
	wg.Wait()
	seen := map[int64]bool{}
	for i, id := range ids {
		if i%10 == 3 {
			continue
		}
		if seen[id] {
			t.Fatalf("id %d twice", id)
		}
		seen[id] = true
	}
	if got := count(t, db, `SELECT count(*) FROM payouts`); got != n-n/10 {
		t.Errorf("%d payouts stored, want %d", got, n-n/10)
	}
	if bs, _ := db.Balances(context.Background(), "m1"); bs[0].Available != 1_000_000-100*(n-n/10) {
		t.Errorf("balance %+v: the failed creates' reservations must be rolled back", bs[0])
	}
	if err := db.CheckAllLedgers(context.Background()); err != nil {
		t.Error(err)
	}
}

// createDue creates n payouts due at the given time, and returns their ids.
func createDue(t testing.TB, db *DB, prefix string, n int, due time.Time) []int64 {
	t.Helper()
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = create(t, db, newPayout(prefix+strconv.Itoa(i), 100), due.Add(time.Duration(i)*time.Millisecond), nil).ID
	}
	return ids
}

// Two instances claiming the queue at once get each due payout once between them.
func TestDueClaimsDoNotOverlapAcrossInstances(t *testing.T) {
	url := pgtest.Database(t)
	dbs := []*DB{openDB(t, url, Options{}), openDB(t, url, Options{})}
	now := time.Now()
	want := createDue(t, dbs[0], "D-", 60, now.Add(-time.Minute))
	createDue(t, dbs[0], "LATER-", 5, now.Add(time.Hour))
	got := make([][]int64, 4)
	var wg sync.WaitGroup
	for w := range got {
		wg.Go(func() {
			for {
				due, err := dbs[w%2].Due(context.Background(), now, 7)
				if err != nil {
					t.Error(err)
					return
				}
				if len(due) == 0 {
					return
				}
				for i, d := range due {
					if d.Status != rules.StatusCreated {
						t.Errorf("payout %d queued as %q", d.ID, d.Status)
					}
					if i > 0 && d.ID < due[i-1].ID {
						t.Errorf("claims out of order: %v", due)
					}
					got[w] = append(got[w], d.ID)
				}
			}
		})
	}
	wg.Wait()
	all := slices.Concat(got...)
	slices.Sort(all)
	if !slices.Equal(all, want) {
		t.Fatalf("claimed %v, want each of %v once", all, want)
	}
	if c := dbs[0].claimedSteps.Load() + dbs[1].claimedSteps.Load(); c != 60 {
		t.Errorf("claimedSteps %d, want 60", c)
	}
	if due, _ := dbs[1].Due(context.Background(), now, 100); len(due) != 0 {
		t.Errorf("claimed payouts handed out again: %v", due)
	}
	if next, err := dbs[0].NextDue(context.Background()); err != nil || !next.After(now) {
		t.Errorf("NextDue %v %v, want the first unclaimed, an hour ahead", next, err)
	}
}

// A claim whose lease ended is taken over by another instance; the first instance's later
// write does not release the new owner's claim.
func TestExpiredClaimIsTakenOver(t *testing.T) {
	url := pgtest.Database(t)
	a := openDB(t, url, Options{Lease: 200 * time.Millisecond})
	b := openDB(t, url, Options{})
	ids := createDue(t, a, "T-", 3, time.Now().Add(-time.Second))
	if due, err := a.Due(context.Background(), time.Now(), 10); err != nil || len(due) != 3 {
		t.Fatalf("a claims %v, %v", due, err)
	}
	if due, _ := b.Due(context.Background(), time.Now(), 10); len(due) != 0 {
		t.Fatalf("b claims %v while a's lease holds", due)
	}
	if next, _ := b.NextDue(context.Background()); !next.IsZero() {
		t.Errorf("NextDue %v while everything is claimed, want zero", next)
	}
	time.Sleep(300 * time.Millisecond)
	due, err := b.Due(context.Background(), time.Now(), 10)
	if err != nil || len(due) != 3 {
		t.Fatalf("b claims %v, %v after a's lease", due, err)
	}
	if got := b.takenOver.Load(); got != 3 {
		t.Errorf("b took over %d claims, want 3", got)
	}
	if due, _ := a.Due(context.Background(), time.Now(), 10); len(due) != 0 {
		t.Fatalf("a claims %v again while b's lease holds", due)
	}
	noop := func(*rules.Payout, rules.Ledger) (time.Time, error) { return time.Time{}, rules.ErrNoChange }
	if err := a.UpdatePayouts(context.Background(), ids, noop); err != nil {
		t.Fatal(err)
	}
	if n := count(t, a, `SELECT count(*) FROM payouts WHERE lease_owner = $1`, b.instance); n != 3 {
		t.Errorf("%d claims of b left after a's write, want 3", n)
	}
	if a.claimedSteps.Load() != 0 || b.claimedSteps.Load() != 3 {
		t.Errorf("claimedSteps a %d b %d, want 0 and 3", a.claimedSteps.Load(), b.claimedSteps.Load())
	}
}

// A step an instance queues is its own from its due time for one lease (queueLease): its
// next Due hands it out without writing the row, once; another instance takes it only when
// that lease ends, or at once after the owner closed.
func TestOwnQueuedStepsAreTakenWithoutAClaim(t *testing.T) {
	url := pgtest.Database(t)
	a := openDB(t, url, Options{Lease: 2 * time.Second})
	b := openDB(t, url, Options{})
	now := time.Now()
	ids := createDue(t, a, "O-", 3, now)
	version := func() int {
		return count(t, a, `SELECT sum(xmin::text::bigint)::bigint FROM payouts WHERE id = ANY($1)`, ids)
	}
	before := version()
	if n := count(t, a, `SELECT count(*) FROM payouts WHERE lease_owner = $1`, a.instance); n != 3 {
		t.Fatalf("%d of the created payouts are a's, want 3", n)
	}
	if next, _ := b.NextDue(context.Background()); !next.IsZero() {
		t.Errorf("b's NextDue %v, want zero: a's own steps", next)
	}
	if next, _ := a.NextDue(context.Background()); next.IsZero() || next.After(now.Add(time.Second)) {
		t.Errorf("a's NextDue %v, want its own steps", next)
	}
	if due, _ := b.Due(context.Background(), now.Add(10*time.Millisecond), 10); len(due) != 0 {
		t.Fatalf("b claims %v, a's own steps", due)
	}
	due, err := a.Due(context.Background(), now.Add(10*time.Millisecond), 10)
	if err != nil || !slices.Equal(dueIDs(due), ids) {
		t.Fatalf("a's Due: %v, %v; want %v", dueIDs(due), err, ids)
	}
	if version() != before {
		t.Error("a's Due wrote its own steps")
	}
	if again, _ := a.Due(context.Background(), now.Add(10*time.Millisecond), 10); len(again) != 0 {
		t.Errorf("a's Due handed out %v again while its round holds them", dueIDs(again))
	}
	if next, _ := a.NextDue(context.Background()); !next.IsZero() {
		t.Errorf("a's NextDue %v, want zero: its round holds them", next)
	}
	// The round writes the first again, queued a second on; the other two it leaves.
	err = a.UpdatePayouts(context.Background(), ids, func(p *rules.Payout, _ rules.Ledger) (time.Time, error) {
		if p.ID != ids[0] {
			return time.Time{}, rules.ErrNoChange
		}
		p.Status = rules.StatusAuthorized
		return now.Add(time.Second), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := count(t, a, `SELECT count(*) FROM payouts WHERE lease_owner = $1 AND id = $2`, a.instance, ids[0]); n != 1 {
		t.Error("the step a wrote and queued again is not a's")
	}
	if due, _ := b.Due(context.Background(), now.Add(1500*time.Millisecond), 10); !slices.Equal(dueIDs(due), ids[1:]) {
		t.Errorf("b claims %v, want the two a released and not the one it queued", dueIDs(due))
	}
	// Past its lease (from its due time), another instance takes it over.
	if due, _ := b.Due(context.Background(), now.Add(3100*time.Millisecond), 10); !slices.Equal(dueIDs(due), ids[:1]) {
		t.Errorf("b claims %v after a's lease, want %v", dueIDs(due), ids[:1])
	}
	// Closing gives up what an instance queued for itself.
	later := createDue(t, a, "L-", 2, now)
	a.Close(context.Background())
	if due, _ := b.Due(context.Background(), now.Add(10*time.Millisecond), 10); !slices.Equal(dueIDs(due), later) {
		t.Errorf("b claims %v after a closed, want %v", dueIDs(due), later)
	}
}

// Rounds of one instance claiming at once (the lifecycle's helpers) never get the same step
// of its own: the steps read without a write go to one of them.
func TestOwnQueuedStepsGoToOneRoundOfManyAtOnce(t *testing.T) {
	db := newDB(t)
	now := time.Now()
	want := createDue(t, db, "R-", 120, now)
	var mu sync.Mutex
	seen := map[int64]int{}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				due, err := db.Due(context.Background(), now.Add(time.Second), 7)
				if err != nil {
					t.Error(err)
					return
				}
				if len(due) == 0 {
					return
				}
				mu.Lock()
				for _, d := range due {
					seen[d.ID]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for _, id := range want {
		if seen[id] != 1 {
			t.Errorf("step %d handed out %d times, want once", id, seen[id])
		}
	}
	if len(seen) != len(want) {
		t.Errorf("%d steps handed out, want %d", len(seen), len(want))
	}
}

func dueIDs(due []rules.DueEntry) []int64 {
	ids := make([]int64, len(due))
	for i, d := range due {
		ids[i] = d.ID
	}
	return ids
}

// UpdatePayouts writes what each step changed (payout, columns, queue), leaves an unchanged
// payout as it was, releases the claims on every id, and skips a missing id. A step's error
// aborts the whole transaction.
func TestUpdatePayoutsWritesAndReleases(t *testing.T) {
	db := newDB(t)
	now := time.Now()
	ids := createDue(t, db, "U-", 3, now.Add(-time.Second))
	if due, _ := db.Due(context.Background(), now, 10); len(due) != 3 {
		t.Fatalf("claimed %v", due)
	}
	later := now.Add(time.Hour)
	step := func(p *rules.Payout, l rules.Ledger) (time.Time, error) {
		switch p.ID {
		case ids[0]:
			p.Move(rules.StatusAuthorized, now, "", "")
			return later, nil
		case ids[1]:
			p.RailRef = "lost" // an unchanged payout is not written, whatever the step did
			return time.Time{}, rules.ErrNoChange
		}
		p.Move(rules.StatusDenied, now, "DENIED", "no")
		return time.Time{}, nil
	}
	if err := db.UpdatePayouts(context.Background(), append(slices.Clone(ids), 999), step); err != nil {
		t.Fatal(err)
	}
	if c := db.claimedSteps.Load(); c != 0 {
		t.Errorf("claimedSteps %d after the write, want 0", c)
	}
	if n := count(t, db, `SELECT count(*) FROM payouts WHERE lease_owner IS NOT NULL`); n != 0 {
		t.Errorf("%d claims left", n)
	}
	ps, err := db.PayoutsByID(context.Background(), []int64{ids[2], 999, ids[0], ids[1]})
	if err != nil || len(ps) != 3 {
		t.Fatalf("PayoutsByID: %v %v", ps, err)
	}
	if ps[0].Status != rules.StatusDenied || ps[1].Status != rules.StatusAuthorized || ps[2].Status != rules.StatusCreated || ps[2].RailRef != "" {
		t.Errorf("stored %s %s %s (%q), want DENIED AUTHORIZED CREATED", ps[0].Status, ps[1].Status, ps[2].Status, ps[2].RailRef)
	}
	// The unchanged payout is due again at once; the authorized one at its new time.
	if due, _ := db.Due(context.Background(), now, 10); len(due) != 1 || due[0].ID != ids[1] {
		t.Errorf("due now %v, want only the unchanged payout", due)
	}
	// Later (past the lease of the unchanged payout's claim, taken over: leases run on the
	// service's clock), the authorized one is due in its new status.
	if due, _ := db.Due(context.Background(), later, 10); !slices.Contains(due, rules.DueEntry{ID: ids[0], Status: rules.StatusAuthorized}) {
		t.Errorf("due later %v, want the authorized payout in its new status", due)
	}
	if page, _ := db.ListPayouts(context.Background(), "m1", rules.ListFilter{Stage: rules.StageRejected}); len(page.Items) != 1 || page.Items[0].ID != ids[2] {
		t.Errorf("listing by stage after the write: %+v", page)
	}
	if got, _ := db.WithStatus(context.Background(), "m1", rules.StatusAuthorized, 10); !slices.Equal(got, []int64{ids[0]}) {
		t.Errorf("WithStatus %v", got)
	}

	// A failing step aborts everything, including what the steps before it changed, and
	// still releases the claims.
	db.Due(context.Background(), later, 10)
	boom := errors.New("boom")
	err = db.UpdatePayouts(context.Background(), []int64{ids[0], ids[1]}, func(p *rules.Payout, l rules.Ledger) (time.Time, error) {
		if p.ID == ids[1] {
			return time.Time{}, boom
		}
		p.Move(rules.StatusWaitingRouting, now, "", "")
		return time.Time{}, nil
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err %v, want boom", err)
	}
	if p, _ := db.Payout(context.Background(), "m1", ids[0]); p.Status != rules.StatusAuthorized {
		t.Errorf("the aborted write stored %s", p.Status)
	}
	if n := count(t, db, `SELECT count(*) FROM payouts WHERE lease_owner IS NOT NULL`); n != 0 || db.claimedSteps.Load() != 0 {
		t.Errorf("%d claims left after a failed write (gauge %d)", n, db.claimedSteps.Load())
	}
}

// A payout written twice in one UpdatePayouts goes through both steps, the second seeing
// the first's change.
func TestUpdatePayoutsTwiceInOneCall(t *testing.T) {
	db := newDB(t)
	id := create(t, db, newPayout("TWICE", 1), time.Time{}, nil).ID
	var seen []rules.Status
	err := db.UpdatePayouts(context.Background(), []int64{id, id}, func(p *rules.Payout, l rules.Ledger) (time.Time, error) {
		seen = append(seen, p.Status)
		p.Move(rules.StatusDenied, time.Now(), "", "")
		return time.Time{}, nil
	})
	if err != nil || !slices.Equal(seen, []rules.Status{rules.StatusCreated, rules.StatusDenied}) {
		t.Fatalf("err %v, steps saw %v", err, seen)
	}
}

// Imported payouts keep their ids, and later creates continue after the largest; payouts
// without one are numbered; a used orderId refuses the whole import.
func TestImportPayoutsKeepsIDs(t *testing.T) {
	db := newDB(t)
	a, b := newPayout("I-1", 1), newPayout("I-2", 1)
	a.ID, b.ID = 100, 101
	if err := db.ImportPayouts(context.Background(), []*rules.Payout{a, b}); err != nil {
		t.Fatal(err)
	}
	if got := create(t, db, newPayout("I-3", 1), time.Time{}, nil).ID; got != 102 {
		t.Errorf("next create got %d, want 102", got)
	}
	c, d := newPayout("I-4", 1), newPayout("I-5", 1)
	// (after 102, with a gap: the create's group drew ids for the next creates, creates.go)
	if err := db.ImportPayouts(context.Background(), []*rules.Payout{c, d}); err != nil || c.ID <= 102 || d.ID != c.ID+1 {
		t.Fatalf("numbered import: ids %d %d, %v", c.ID, d.ID, err)
	}
	if p, err := db.Payout(context.Background(), "m1", d.ID); err != nil || p.OrderID != "I-5" {
		t.Fatalf("imported payout: %v %v", p, err)
	}
	for _, ps := range [][]*rules.Payout{{newPayout("I-6", 1), newPayout("I-1", 1)}, {newPayout("I-7", 1), newPayout("I-7", 1)}} {
		if err := db.ImportPayouts(context.Background(), ps); err == nil {
			t.Errorf("import of a used orderId: no error")
		}
	}
	if n := count(t, db, `SELECT count(*) FROM payouts`); n != 5 {
		t.Errorf("%d payouts, want 5: a refused import stores nothing", n)
	}
	if due, _ := db.Due(context.Background(), time.Now(), 10); len(due) != 0 {
		t.Errorf("imported payouts queued: %v", due)
	}
}

func TestDueWithoutLimitClaimsNothing(t *testing.T) {
	db := newDB(t)
	createDue(t, db, "Z-", 1, time.Now().Add(-time.Second))
	if due, err := db.Due(context.Background(), time.Now(), 0); err != nil || due != nil {
		t.Fatalf("%v %v", due, err)
	}
	if ids, err := db.WithStatus(context.Background(), "m1", rules.StatusCreated, 0); err != nil || ids != nil {
		t.Fatalf("%v %v", ids, err)
	}
}

// A create that loses its order's race to another instance after admitting its payout rolls
// its writes back (the reservation too) and answers with the winner's payout.
func TestCreateLosingTheOrderRace(t *testing.T) {
	url := pgtest.Database(t)
	a, b := openDB(t, url, Options{}), openDB(t, url, Options{})
	if _, err := a.Fund(context.Background(), "m1", "PER", "PEN", 1000, time.Now()); err != nil {
		t.Fatal(err)
	}
	admitted, release := make(chan struct{}), make(chan struct{})
	admits := 0
	type result struct {
		p       *rules.Payout
		created bool
		err     error
	}
	done := make(chan result)
	go func() {
		p, created, err := a.CreatePayout(context.Background(), newPayout("RACE", 300), time.Now(), nil, func(p *rules.Payout, l rules.Ledger) (time.Time, error) {
			admits++
			next, err := reserve(p, l)
			close(admitted)
			<-release
			return next, err
		})
		done <- result{p, created, err}
	}()
	<-admitted
	winner := create(t, b, newPayout("RACE", 300), time.Time{}, nil)
	close(release)
	r := <-done
	if r.err != nil || r.created || r.p.ID != winner.ID || admits != 1 {
		t.Fatalf("the loser: %+v (admitted %d times), want payout %d, not created", r, admits, winner.ID)
	}
	if bs, _ := a.Balances(context.Background(), "m1"); bs[0].Available != 1000 {
		t.Errorf("balance %+v: the loser's reservation must be rolled back", bs[0])
	}
	if err := a.CheckAllLedgers(context.Background()); err != nil {
		t.Error(err)
	}
}
