package postgres

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"payouts/rules"
	"payouts/rules/sandbox"
	"payouts/rules/workers"
	"payouts/store/postgres/pgtest"
)

// instance is one server of the service on a shared database: its store, its service and
// its lifecycle worker, on a clock the test moves.
type instance struct {
	db  *DB
	svc *rules.Service
	lc  *workers.Lifecycle
}

// testClock is an injected clock.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *testClock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func newInstance(t *testing.T, url string, clk *testClock) *instance {
	db := openDB(t, url, Options{})
	rail := &sandbox.Rail{Delay: 2 * time.Second, BatchDelay: 30 * time.Second, Now: clk.Now}
	lc := &workers.Lifecycle{
		Lifecycle: &rules.Lifecycle{Store: db, Merchants: func(id string) (*rules.Merchant, error) { return db.Merchant(context.Background(), id) }, Now: clk.Now},
		Rail:      func(rules.Channel) rules.Rail { return rail },
	}
	lc.OnFinal().Bind(rules.OutcomeEventsHook(clk.Now))
	return &instance{db: db, lc: lc, svc: &rules.Service{Store: db, Now: clk.Now, Admit: lc.Admit}}
}

// createExample posts rules/testdata/examples/per-bank-account.json with an orderId.
func (in *instance) createExample(t *testing.T, m *rules.Merchant, orderID string) *rules.Payout {
	raw, err := os.ReadFile(filepath.Join("..", "..", "rules", "testdata", "examples", "per-bank-account.json"))
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	json.Unmarshal(raw, &body)
	body["orderId"] = orderID
	raw, _ = json.Marshal(body)
	res, err := in.svc.CreatePayout(context.Background(), m, raw, rules.EndpointPayouts)
	if err != nil {
		t.Errorf("create %s: %v", orderID, err)
		return nil
	}
	return res.Payout
}

// runAll runs the workers of every instance at once until none finds anything due.
func runAll(t *testing.T, ins []*instance) {
	for range 50 {
		var moved sync.Map
		var wg sync.WaitGroup
		for i, in := range ins {
			wg.Go(func() {
				n, err := in.lc.RunOnce(context.Background())
				if err != nil {
					t.Error(err)
				}
				moved.Store(i, n)
			})
		}
		wg.Wait()
		idle := true
		moved.Range(func(_, n any) bool { idle = idle && n.(int) == 0; return true })
		if idle {
			return
		}
	}
	t.Fatal("the lifecycle did not settle")
}

// The service's own lifecycle on two instances of one database: 100 payouts race for a
// balance that covers half of them, created and moved by both instances at once. Exactly 50
// proceed and settle, 50 are NO_BALANCE, no step runs twice (each history is whole and in
// order), and the ledger checks from scratch (store/bolt's TestBalanceUnderConcurrency, on
// two instances).
func TestLifecycleOnTwoInstances(t *testing.T) {
	url := pgtest.Database(t)
	clk := &testClock{t: time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC)}
	ins := []*instance{newInstance(t, url, clk), newInstance(t, url, clk)}
	m := &rules.Merchant{ID: "M1", Name: "Tienda", Settings: rules.AllSettings()}
	if err := ins[0].db.CreateMerchant(context.Background(), m, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ins[1].lc.Fund(context.Background(), "M1", "PER", "PEN", 50*100000); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	ids := make(chan int64, 100)
	for i := range 100 {
		wg.Go(func() {
			if p := ins[i%2].createExample(t, m, "C-"+strconv.Itoa(i)); p != nil {
				ids <- p.ID
			}
		})
		if i%10 == 0 { // workers run while payouts are still being created
			wg.Go(func() {
				if _, err := ins[i/10%2].lc.RunOnce(context.Background()); err != nil {
					t.Error(err)
				}
			})
		}
	}
	wg.Wait()
	close(ids)
	runAll(t, ins)
	clk.Add(30 * time.Second)
	runAll(t, ins)

	counts := map[rules.Status]int{}
	for id := range ids {
		p, err := ins[0].db.Payout(context.Background(), "M1", id)
		if err != nil {
			t.Fatal(err)
		}
		counts[p.Status]++
		want := []rules.Status{rules.StatusCreated, rules.StatusAuthorized, rules.StatusWaitingRouting, rules.StatusPendingBank, rules.StatusProcessed}
		if p.Status == rules.StatusNoBalance {
			want = []rules.Status{rules.StatusCreated, rules.StatusAuthorized, rules.StatusNoBalance}
		}
		if got := historyOf(p); len(got) != len(want) || !equalStatuses(got, want) {
			t.Errorf("payout %d: history %v, want %v", id, got, want)
		}
	}
	if counts[rules.StatusProcessed] != 50 || counts[rules.StatusNoBalance] != 50 {
		t.Fatalf("statuses %v, want 50 PROCESSED and 50 NO_BALANCE", counts)
	}
	want := rules.Balance{Country: "PER", Currency: "PEN", Funded: 50 * 100000, Processed: 50 * 100000}
	if bs, _ := ins[1].db.Balances(context.Background(), "M1"); len(bs) != 1 || bs[0] != want {
		t.Fatalf("balances %+v, want %+v", bs, want)
	}
	if err := ins[0].db.CheckAllLedgers(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, in := range ins {
		if c := in.db.claimedSteps.Load(); c != 0 {
			t.Errorf("instance %s holds %d claims", in.db.instance, c)
		}
	}
	if n := count(t, ins[0].db, `SELECT count(*) FROM outbox WHERE kind = $1`, rules.EventBeneficiaryMail); n != 100 {
		t.Errorf("%d outcome mails in the outbox, want one per payout", n)
	}
}

func historyOf(p *rules.Payout) []rules.Status {
	var s []rules.Status
	for _, h := range p.History {
		s = append(s, h.Status)
	}
	return s
}

func equalStatuses(a, b []rules.Status) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}

// A round steps the payouts its claim read (DueRead) without reading their documents again,
// unless a row changed after the claim: then the step sees the row as it is now.
func TestRoundStepsTheRowAsItIsWhenItChangedAfterTheClaim(t *testing.T) {
	db := newDB(t)
	if _, err := db.Fund(context.Background(), "m1", "PER", "PEN", 1000, time.Now()); err != nil {
		t.Fatal(err)
	}
	a := create(t, db, newPayout("CL-1", 100), time.Now(), reserve)
	b := create(t, db, newPayout("CL-2", 100), time.Now(), reserve)
	due, read, err := db.DueRead(context.Background(), time.Now().Add(time.Second), 10)
	if err != nil || len(due) != 2 || read[a.ID] == nil || read[b.ID] == nil {
		t.Fatalf("claim: %+v %v, %v", due, read, err)
	}
	if read[b.ID].RailRef != "" {
		t.Fatalf("claimed %+v", read[b.ID])
	}
	// b changes after the claim (as an operator's action would change it).
	changed := read[b.ID].Clone()
	changed.RailRef = "changed-after-the-claim"
	doc, _ := json.Marshal(changed)
	if _, err := db.pool.Exec(context.Background(), `UPDATE payouts SET doc = $1 WHERE id = $2`, string(doc), b.ID); err != nil {
		t.Fatal(err)
	}
	seen := map[int64]string{}
	err = db.UpdatePayouts(context.Background(), []int64{a.ID, b.ID}, func(p *rules.Payout, l rules.Ledger) (time.Time, error) {
		seen[p.ID] = p.RailRef
		p.Move(rules.StatusPendingBank, time.Now(), "", "")
		return time.Time{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen[a.ID] != "" || seen[b.ID] != "changed-after-the-claim" {
		t.Errorf("the steps saw %v, want b as changed after the claim", seen)
	}
	for _, id := range []int64{a.ID, b.ID} {
		if p, err := db.Payout(context.Background(), "m1", id); err != nil || p.Status != rules.StatusPendingBank {
			t.Errorf("payout %d after the round: %+v, %v", id, p, err)
		}
	}
	if p, _ := db.Payout(context.Background(), "m1", b.ID); p.RailRef != "changed-after-the-claim" {
		t.Errorf("b lost its change: %+v", p)
	}
}
