package rules_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"payouts/rules"
	"payouts/rules/sandbox"
	"payouts/rules/workers"
	"payouts/store/bolt"
)

// clock is an injected clock the tests move by hand: nothing sleeps.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }
func newClock() *clock               { return &clock{t: time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC)} }

const (
	rtDelay    = 2 * time.Second
	batchDelay = 30 * time.Second
)

// world is a service, a lifecycle and a store on a temporary bbolt file.
type world struct {
	t    *testing.T
	db   *bolt.DB
	path string
	clk  *clock
	svc  *rules.Service
	lc   *workers.Lifecycle
	m    *rules.Merchant
}

func newWorld(t *testing.T, settings rules.Settings, path string, clk *clock) *world {
	t.Helper()
	if path == "" {
		path = filepath.Join(t.TempDir(), "payouts.db")
	}
	db, err := bolt.Open(path, bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close(context.Background()) })
	if clk == nil {
		clk = newClock()
	}
	w := &world{t: t, db: db, path: path, clk: clk}
	w.m, err = db.Merchant(context.Background(), "M1")
	if err != nil {
		w.m = &rules.Merchant{ID: "M1", Name: "Tienda", Settings: settings}
		if err := db.CreateMerchant(context.Background(), w.m, nil); err != nil {
			t.Fatal(err)
		}
	}
	rail := &sandbox.Rail{Delay: rtDelay, BatchDelay: batchDelay, Now: clk.Now}
	w.lc = &workers.Lifecycle{
		Lifecycle: &rules.Lifecycle{Store: db, Merchants: func(id string) (*rules.Merchant, error) { return db.Merchant(context.Background(), id) }, Now: clk.Now},
		Rail:      func(rules.Channel) rules.Rail { return rail },
	}
	w.lc.OnFinal().Bind(rules.OutcomeEventsHook(clk.Now))
	w.svc = &rules.Service{Store: db, Now: clk.Now, Admit: w.lc.Admit}
	return w
}

func (w *world) fund(country, currency string, amount int64) {
	w.t.Helper()
	if _, err := w.lc.Fund(context.Background(), w.m.ID, country, currency, amount); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) balance(country, currency string) rules.Balance {
	w.t.Helper()
	bs, err := w.db.Balances(context.Background(), w.m.ID)
	if err != nil {
		w.t.Fatal(err)
	}
	for _, b := range bs {
		if b.Country == country && b.Currency == currency {
			return b
		}
	}
	return rules.Balance{Country: country, Currency: currency}
}

// create posts an example request (rules/testdata/examples) with an edit.
func (w *world) create(example string, edit func(m map[string]any)) *rules.Payout {
	w.t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "examples", example+".json"))
	if err != nil {
		w.t.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(raw, &m)
	if edit != nil {
		edit(m)
	}
	body, _ := json.Marshal(m)
	ep := rules.EndpointPayouts
	if m["country"] == "PER" && m["destination"].(map[string]any)["bankAccount"].(map[string]any)["accountType"] == 5.0 {
		ep = rules.EndpointCard
	}
	res, err := w.svc.CreatePayout(context.Background(), w.m, body, ep)
	if err != nil {
		w.t.Fatalf("create %s: %v", example, err)
	}
	return res.Payout
}

// run moves the lifecycle until nothing more is due now.
func (w *world) run() {
	w.t.Helper()
	for i := 0; i < 20; i++ {
		n, err := w.lc.RunOnce(context.Background())
		if err != nil {
			w.t.Fatal(err)
		}
		if n == 0 {
			return
		}
	}
	w.t.Fatal("the lifecycle did not settle")
}

func (w *world) get(id int64) *rules.Payout {
	w.t.Helper()
	p, err := w.db.Payout(context.Background(), w.m.ID, id)
	if err != nil {
		w.t.Fatal(err)
	}
	return p
}

func statuses(p *rules.Payout) []rules.Status {
	var s []rules.Status
	for _, h := range p.History {
		s = append(s, h.Status)
	}
	return s
}

func sameStatuses(got []rules.Status, want ...rules.Status) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i] != want[i] {
			return false
		}
	}
	return true
}

func setAccount(number string) func(m map[string]any) {
	return func(m map[string]any) {
		m["destination"].(map[string]any)["bankAccount"].(map[string]any)["accountNumber"] = number
	}
}

// sandboxAccount sets a bank 003 account (13 digits) ending in a sandbox trigger:
// a bank 002 account cannot end in one, its digit 11 or 12 is the currency (1213, 1221).
func sandboxAccount(ending string) func(m map[string]any) {
	return func(m map[string]any) {
		ba := m["destination"].(map[string]any)["bankAccount"].(map[string]any)
		ba["bankCode"], ba["accountNumber"] = "003", "123456789"+ending
	}
}

var inProgress = []rules.Status{rules.StatusCreated, rules.StatusAuthorized, rules.StatusWaitingRouting, rules.StatusPendingBank}

func TestLifecyclePaths(t *testing.T) {
	cases := []struct {
		name       string
		example    string
		edit       func(m map[string]any)
		settle     time.Duration
		wantStatus rules.Status
		wantCode   string
		debited    bool
	}{
		{"5 batch payout is processed after the batch delay", "per-bank-account", nil, batchDelay, rules.StatusProcessed, "", true},
		{"5 real-time payout is processed after the real-time delay", "per-cci", nil, rtDelay, rules.StatusProcessed, "", true},
		{"5 account ending 9999 is rejected by the bank: not the owner (4001)", "per-bank-account", sandboxAccount("9999"), batchDelay, rules.StatusRejectedBank, rules.CodeBankRejected, false},
		{"5 account ending 9998 is denied by the anti-fraud rules (3007)", "per-bank-account", sandboxAccount("9998"), batchDelay, rules.StatusDenied, rules.CodeDenied, false},
		{"5 account ending 9996 does not exist (4025)", "per-bank-account", sandboxAccount("9996"), batchDelay, rules.StatusRejectedBank, rules.CodeAccountNotFound, false},
		{"5 account ending 9995: bank out of service (4008)", "per-bank-account", sandboxAccount("9995"), batchDelay, rules.StatusRejectedBank, rules.CodeBankOutOfService, false},
		{"5 Colombian account ending 9996 does not exist (4025)", "col-bank-account", setAccount("12345679996"), batchDelay, rules.StatusRejectedBank, rules.CodeAccountNotFound, false},
		{"5 Colombian Bre-B key settles in real time", "col-breb-key", nil, rtDelay, rules.StatusProcessed, "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, rules.AllSettings(), "", nil)
			w.fund("PER", "PEN", 100_000_00)
			w.fund("COL", "COP", 100_000_000_00)
			// The balances as funded: the create reserves the amount at once (Admit).
			funded := map[string]rules.Balance{"PER": w.balance("PER", "PEN"), "COL": w.balance("COL", "COP")}
			p := w.create(tc.example, tc.edit)
			before := funded[p.Country]
			w.run()
			if got := w.get(p.ID); !sameStatuses(statuses(got), inProgress...) {
				t.Fatalf("before the delay: history %v, want %v", statuses(got), inProgress)
			}
			if b := w.balance(p.Country, p.Currency); b.Available != before.Available-p.Amount || b.Balance != before.Balance {
				t.Fatalf("while in progress the amount is reserved: %+v (before %+v)", b, before)
			}
			w.clk.Add(tc.settle - time.Millisecond)
			w.run()
			if got := w.get(p.ID); got.Status != rules.StatusPendingBank {
				t.Fatalf("1 ms before the delay: %s", got.Status)
			}
			w.clk.Add(time.Millisecond)
			w.run()
			got := w.get(p.ID)
			if got.Status != tc.wantStatus || !sameStatuses(statuses(got), append(inProgress, tc.wantStatus)...) {
				t.Fatalf("got %s with history %v, want %s", got.Status, statuses(got), tc.wantStatus)
			}
			if tc.wantCode != "" && (len(got.Errors) != 1 || got.Errors[0].Code != tc.wantCode) {
				t.Fatalf("errors %+v, want %s", got.Errors, tc.wantCode)
			}
			b := w.balance(p.Country, p.Currency)
			want := before
			if tc.debited {
				want.Available -= p.Amount
				want.Balance -= p.Amount
				want.Processed += p.Amount
			}
			if b != want {
				t.Fatalf("balance %+v, want %+v", b, want)
			}
		})
	}
}

func TestLifecycleHeldPayoutWaitsForSimulate(t *testing.T) {
	w := newWorld(t, rules.AllSettings(), "", nil)
	w.fund("PER", "PEN", 100_000_00)
	p := w.create("per-bank-account", sandboxAccount("9997"))
	w.run()
	w.clk.Add(24 * time.Hour)
	w.run()
	if got := w.get(p.ID); got.Status != rules.StatusPendingBank {
		t.Fatalf("9997 after a day: %s, want PENDING_BANK", got.Status)
	}
	got, err := w.lc.Settle(context.Background(), w.m.ID, p.ID, rules.StatusProcessed, "", "")
	if err != nil || got.Status != rules.StatusProcessed {
		t.Fatalf("simulate SUCCESS: %v %v", got, err)
	}
	// A late or repeated outcome is refused and changes nothing.
	if _, err := w.lc.Settle(context.Background(), w.m.ID, p.ID, rules.StatusRejectedBank, "", ""); err == nil {
		t.Fatal("a rejection after PROCESSED was accepted")
	}
	// A Peru return reverses a processed payout and gives the money back.
	before := w.balance("PER", "PEN")
	got, err = w.lc.Settle(context.Background(), w.m.ID, p.ID, rules.StatusReversed, "", "")
	if err != nil || got.Stage != rules.StageRejected || got.Status != rules.StatusReversed {
		t.Fatalf("reverse: %v %v", got, err)
	}
	if b := w.balance("PER", "PEN"); b.Balance != before.Balance+p.Amount || b.Available != before.Available+p.Amount {
		t.Fatalf("after reversal %+v, before %+v", b, before)
	}
	// Another merchant cannot touch it.
	if _, err := w.lc.Settle(context.Background(), "M2", p.ID, rules.StatusProcessed, "", ""); err == nil {
		t.Fatal("another merchant settled the payout")
	}
}

func TestLifecycleNoBalance(t *testing.T) {
	t.Run("5 rejected NO_BALANCE when the merchant does not wait", func(t *testing.T) {
		w := newWorld(t, rules.AllSettings(), "", nil)
		w.fund("PER", "PEN", 999_99) // less than 1,000.00
		p := w.create("per-bank-account", nil)
		w.run()
		got := w.get(p.ID)
		if got.Status != rules.StatusNoBalance || got.Errors[0].Code != rules.CodeNoBalance {
			t.Fatalf("got %s %+v", got.Status, got.Errors)
		}
		if b := w.balance("PER", "PEN"); b.Available != 999_99 || b.Balance != 999_99 {
			t.Fatalf("balance changed: %+v", b)
		}
	})
	t.Run("5 held PENDING_BALANCE and released in order when funded", func(t *testing.T) {
		s := rules.AllSettings()
		s.PendingOnNoBalance = true
		w := newWorld(t, s, "", nil)
		big := w.create("per-bank-account", func(m map[string]any) { m["orderId"] = "BIG"; m["amount"] = 500000 })
		small := w.create("per-bank-account", func(m map[string]any) { m["orderId"] = "SMALL"; m["amount"] = 100000 })
		w.run()
		for _, p := range []*rules.Payout{big, small} {
			if got := w.get(p.ID); got.Stage != rules.StagePending || got.Status != rules.StatusPendingBalance {
				t.Fatalf("%s: %s/%s, want PENDING/PENDING_BALANCE", p.OrderID, got.Stage, got.Status)
			}
		}
		// Enough for the small one only: the big, older one is first in line, so neither moves.
		w.fund("PER", "PEN", 200000)
		w.run()
		if got := w.get(small.ID); got.Status != rules.StatusPendingBalance {
			t.Fatalf("small overtook big: %s", got.Status)
		}
		w.fund("PER", "PEN", 400000)
		w.run()
		for _, p := range []*rules.Payout{big, small} {
			if got := w.get(p.ID); got.Status != rules.StatusPendingBank {
				t.Fatalf("%s after funding: %s, want PENDING_BANK", p.OrderID, got.Status)
			}
		}
		if b := w.balance("PER", "PEN"); b.Available != 0 || b.Balance != 600000 {
			t.Fatalf("balance %+v", b)
		}
	})
}

func TestLifecycleCashExpires(t *testing.T) {
	w := newWorld(t, rules.AllSettings(), "", nil)
	w.fund("COL", "COP", 100_000_000_00)
	p := w.create("col-cash", nil)
	if p.ClaimUntil.IsZero() || p.Channel != rules.ChannelCash {
		t.Fatalf("cash payout without a claim deadline: %+v", p)
	}
	w.run()
	w.clk.Add(p.ClaimUntil.Sub(w.clk.Now()) - time.Second)
	w.run()
	if got := w.get(p.ID); got.Status != rules.StatusPendingBank {
		t.Fatalf("before the deadline: %s", got.Status)
	}
	w.clk.Add(time.Second)
	w.run()
	got := w.get(p.ID)
	if got.Status != rules.StatusExpired || got.Errors[0].Code != rules.CodeExpired {
		t.Fatalf("after the deadline: %s %+v", got.Status, got.Errors)
	}
	if b := w.balance("COL", "COP"); b.Available != 100_000_000_00 {
		t.Fatalf("the reservation was not released: %+v", b)
	}
}

// A cash payout keeps the code it was collected with as its reference (its success
// notification's paymentCode) when the beneficiary claims it while the lifecycle is asking
// the rail to take it (the code is mailed on creation): the rail's
// answer, recorded after the claim, does not replace the code.
func TestLifecycleCashClaimedWhileBeingSubmittedKeepsItsCode(t *testing.T) {
	w := newWorld(t, rules.AllSettings(), "", nil)
	w.fund("COL", "COP", 100_000_000_00)
	p := w.create("col-cash", nil)
	const code = "482913"
	if err := w.db.UpdatePayouts(context.Background(), []int64{p.ID}, func(p *rules.Payout, _ rules.Ledger) (time.Time, error) {
		p.ClaimCodeHash = rules.ClaimCodeHash(code) // what the OTP event gives it in the server
		return w.clk.Now(), nil
	}); err != nil {
		t.Fatal(err)
	}
	if got := w.get(p.ID); got.Status != rules.StatusWaitingRouting {
		t.Fatalf("created: %s, want WAITING_ROUTING (reserved on admission)", got.Status)
	}
	// The claim's code check is written, then the round that asked the rail records its
	// answer, then the claim settles: the order the two transactions can take.
	claims := &rules.CashClaims{Store: w.db, Now: w.clk.Now,
		Settle: func(ctx context.Context, merchantID string, id int64, status rules.Status, code, note string) (*rules.Payout, error) {
			if _, err := w.lc.RunOnce(ctx); err != nil {
				return nil, err
			}
			if got := w.get(p.ID); got.Status != rules.StatusPendingBank {
				t.Fatalf("the round between the claim's two steps left %s, want PENDING_BANK", got.Status)
			}
			return w.lc.Settle(ctx, merchantID, id, status, code, note)
		}}
	got, err := claims.Claim(context.Background(), w.m.ID, p.ID, code)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != rules.StatusProcessed || got.RailRef != code {
		t.Fatalf("claimed: %s with reference %q, want PROCESSED with the claim code %s", got.Status, got.RailRef, code)
	}
}

func TestLifecycleCard(t *testing.T) {
	card := func(bin, last4 string) rules.CardRef {
		return rules.CardRef{Token: "tok", Brand: "VISA", BIN: bin, Last4: last4}
	}
	t.Run("6 card payout waits for its card, then settles in real time", func(t *testing.T) {
		w := newWorld(t, rules.AllSettings(), "", nil)
		w.fund("PER", "PEN", 100_000_00)
		p := w.create("per-card", nil)
		w.run()
		if got := w.get(p.ID); got.Status != rules.StatusAuthorized {
			t.Fatalf("waiting for the card: %s, want AUTHORIZED", got.Status)
		}
		if _, err := w.lc.CardEntered(context.Background(), p.ID, card("411111", "1111")); err != nil {
			t.Fatal(err)
		}
		w.run()
		w.clk.Add(rtDelay)
		w.run()
		if got := w.get(p.ID); got.Status != rules.StatusProcessed {
			t.Fatalf("after the card: %s", got.Status)
		}
		if _, err := w.lc.CardEntered(context.Background(), p.ID, card("411111", "1111")); err == nil {
			t.Fatal("a second card was taken")
		}
	})
	t.Run("6 declined test card is rejected by the bank", func(t *testing.T) {
		w := newWorld(t, rules.AllSettings(), "", nil)
		w.fund("PER", "PEN", 100_000_00)
		p := w.create("per-card", nil)
		w.run()
		w.lc.CardEntered(context.Background(), p.ID, card("400000", "0002"))
		w.run()
		w.clk.Add(rtDelay)
		w.run()
		if got := w.get(p.ID); got.Status != rules.StatusRejectedBank || got.Errors[0].Code != rules.CodeCardDeclined {
			t.Fatalf("declined card: %s %+v", got.Status, got.Errors)
		}
	})
	t.Run("6 session without a card expires", func(t *testing.T) {
		w := newWorld(t, rules.AllSettings(), "", nil)
		w.fund("PER", "PEN", 100_000_00)
		p := w.create("per-card", nil) // expirationTime 10
		w.run()
		w.clk.Add(10*time.Minute - time.Second)
		w.run()
		if got := w.get(p.ID); got.Status != rules.StatusAuthorized {
			t.Fatalf("before expiry: %s", got.Status)
		}
		w.clk.Add(time.Second)
		w.run()
		if got := w.get(p.ID); got.Status != rules.StatusExpired {
			t.Fatalf("after expiry: %s", got.Status)
		}
		if _, err := w.lc.CardEntered(context.Background(), p.ID, card("411111", "1111")); err == nil {
			t.Fatal("a card was taken after expiry")
		}
		if b := w.balance("PER", "PEN"); b.Available != 100_000_00 {
			t.Fatalf("reservation not released: %+v", b)
		}
	})
}

// A restart in the middle of the lifecycle resumes it: the queue is in the database.
func TestLifecycleResumesAfterRestart(t *testing.T) {
	clk := newClock()
	w := newWorld(t, rules.AllSettings(), "", clk)
	w.fund("PER", "PEN", 100_000_00)
	p := w.create("per-bank-account", nil)
	w.run()
	if got := w.get(p.ID); got.Status != rules.StatusPendingBank {
		t.Fatalf("before restart: %s", got.Status)
	}
	w.db.Close(context.Background())
	clk.Add(batchDelay)
	w2 := newWorld(t, rules.AllSettings(), w.path, clk)
	w2.run()
	if got := w2.get(p.ID); got.Status != rules.StatusProcessed {
		t.Fatalf("after restart: %s", got.Status)
	}
}

// 100 payouts race for a balance that covers exactly half: exactly 50 proceed, 50 are
// rejected NO_BALANCE, and the balance adds up, whatever the interleaving.
func TestBalanceUnderConcurrency(t *testing.T) {
	w := newWorld(t, rules.AllSettings(), "", nil)
	w.fund("PER", "PEN", 50*100000)
	var wg sync.WaitGroup
	ids := make(chan int64, 100)
	for i := 0; i < 100; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := map[string]any{"orderId": "C" + string(rune('A'+i/26)) + string(rune('a'+i%26))}
			p := w.create("per-bank-account", func(m map[string]any) { m["orderId"] = body["orderId"] })
			ids <- p.ID
		}()
		if i%10 == 0 { // workers run while payouts are still being created
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := w.lc.RunOnce(context.Background()); err != nil {
					t.Error(err)
				}
			}()
		}
	}
	wg.Wait()
	close(ids)
	w.run()
	counts := map[rules.Status]int{}
	var all []int64
	for id := range ids {
		all = append(all, id)
		counts[w.get(id).Status]++
	}
	if counts[rules.StatusPendingBank] != 50 || counts[rules.StatusNoBalance] != 50 {
		t.Fatalf("statuses %v, want 50 PENDING_BANK and 50 NO_BALANCE", counts)
	}
	if b := w.balance("PER", "PEN"); b.Available != 0 || b.Balance != 50*100000 {
		t.Fatalf("balance %+v", b)
	}
	w.clk.Add(batchDelay)
	w.run()
	if b := w.balance("PER", "PEN"); b.Available != 0 || b.Balance != 0 {
		due, _ := w.db.Due(context.Background(), w.clk.Now().Add(time.Hour), 100)
		for _, id := range all {
			if p := w.get(id); p.Status == rules.StatusPendingBank {
				t.Logf("unsettled %d: %+v changed %v now %v", id, p.History, p.StatusChangedAt, w.clk.Now())
				break
			}
		}
		t.Fatalf("after settlement %+v; due %v", b, due)
	}
}
