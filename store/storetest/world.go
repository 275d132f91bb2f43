package storetest

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"payouts/rules"
	"payouts/rules/sandbox"
	"payouts/rules/workers"
)

// clock is the suite's injected clock: tests move it by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// lifeWorld is the service's lifecycle (workers.Lifecycle on the sandbox's rail) over a store
// under test: a realistic sequence of creates, rail rounds, fundings, settlements, a
// cancel and a reversal, written only through rules.Storage.
type lifeWorld struct {
	s   rules.Storage
	clk *clock
	lc  *workers.Lifecycle
	m   *rules.Merchant
}

// Delays of the simulated rail in the lifeWorld.
const (
	lifeRTDelay    = 2 * time.Second
	lifeBatchDelay = 30 * time.Second
)

func newLifeWorld(t *testing.T, s rules.Storage) *lifeWorld {
	t.Helper()
	clk := &clock{t: T0}
	m := &rules.Merchant{ID: "LW", Name: "Ciclo", Settings: rules.AllSettings(), CreatedAt: T0}
	m.Settings.PendingOnNoBalance = true
	m.Settings.NotificationURL = "https://ciclo.example/hook"
	if err := s.CreateMerchant(context.Background(), m, nil); err != nil {
		t.Fatal(err)
	}
	rail := &sandbox.Rail{Delay: lifeRTDelay, BatchDelay: lifeBatchDelay, Now: clk.Now}
	lc := &workers.Lifecycle{
		Lifecycle: &rules.Lifecycle{Store: s, Merchants: func(id string) (*rules.Merchant, error) { return s.Merchant(context.Background(), id) }, Now: clk.Now,
			Log: slog.New(slog.NewTextHandler(io.Discard, nil))},
		Rail: func(rules.Channel) rules.Rail { return rail },
	}
	lc.OnFinal().Bind(rules.OutcomeEventsHook(clk.Now))
	return &lifeWorld{s: s, clk: clk, lc: lc, m: m}
}

// create stores a payout of amount to an account as the service does, admitted in its
// create (rules.Lifecycle.Admit).
func (w *lifeWorld) create(t *testing.T, orderID string, amount int64, accountNumber string, ch rules.Channel) *rules.Payout {
	t.Helper()
	p := newPayoutTo(w.m.ID, orderID, amount, w.clk.Now(), "PER", accountNumber)
	p.Channel = ch
	admit := func(p *rules.Payout, l rules.Ledger) (time.Time, error) { return w.lc.Admit(p, w.m, l) }
	stored, created, err := w.s.CreatePayout(context.Background(), p, w.clk.Now(), nil, admit)
	if err != nil || !created {
		t.Fatalf("create %s: %v %v", orderID, created, err)
	}
	return stored
}

// settle runs the lifecycle until nothing more is due now.
func (w *lifeWorld) settle(t *testing.T) {
	t.Helper()
	for range 50 {
		n, err := w.lc.RunOnce(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
	}
	t.Fatal("the lifecycle did not settle")
}

// run plays the sequence and checks where each payout ends and what the balance says.
func (w *lifeWorld) run(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	if _, err := w.lc.Fund(ctx, w.m.ID, "PER", "PEN", 10_000); err != nil {
		t.Fatal(err)
	}
	paid := w.create(t, "LW-paid", 2000, account, rules.ChannelRealTime)
	rejected := w.create(t, "LW-rejected", 1000, "1231234569999", rules.ChannelRealTime)
	reversed := w.create(t, "LW-reversed", 1500, "1231234569997", rules.ChannelBatch) // held at PENDING_BANK
	cancelled := w.create(t, "LW-cancelled", 500, account, rules.ChannelBatch)
	if _, err := w.lc.Cancel(ctx, w.m.ID, cancelled.ID); err != nil {
		t.Fatal(err)
	}
	waiting := w.create(t, "LW-waiting", 9000, account, rules.ChannelBatch) // more than is left: PENDING_BALANCE
	w.settle(t)
	w.clk.Add(lifeBatchDelay)
	w.settle(t)
	if _, err := w.lc.Settle(ctx, w.m.ID, reversed.ID, rules.StatusProcessed, "", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := w.lc.Settle(ctx, w.m.ID, reversed.ID, rules.StatusReversed, "", ""); err != nil {
		t.Fatal(err)
	}
	if got := payoutOf(t, w.s, w.m.ID, waiting.ID); got.Status != rules.StatusPendingBalance {
		t.Fatalf("the large payout is %s, want PENDING_BALANCE", got.Status)
	}
	if _, err := w.lc.Fund(ctx, w.m.ID, "PER", "PEN", 5000); err != nil { // releases it
		t.Fatal(err)
	}
	w.settle(t)
	w.clk.Add(lifeBatchDelay)
	w.settle(t)
	for _, c := range []struct {
		p    *rules.Payout
		want rules.Status
	}{{paid, rules.StatusProcessed}, {rejected, rules.StatusRejectedBank}, {reversed, rules.StatusReversed},
		{cancelled, rules.StatusError}, {waiting, rules.StatusProcessed}} {
		if got := payoutOf(t, w.s, w.m.ID, c.p.ID); got.Status != c.want || got.Reserved != 0 {
			t.Errorf("%s ended %s holding %d, want %s", c.p.OrderID, got.Status, got.Reserved, c.want)
		}
	}
	want := rules.Balance{Country: "PER", Currency: "PEN", Funded: 15_000, Processed: 2000 + 1500 + 9000, Reversed: 1500}
	want.Balance = want.Funded - want.Processed + want.Reversed
	want.Available = want.Balance
	if b := balanceOf(t, w.s, w.m.ID, "PER", "PEN"); b != want {
		t.Errorf("balance %+v, want %+v", b, want)
	}
	if due, err := w.s.Due(ctx, w.clk.Now().Add(time.Hour), 10); err != nil || len(due) != 0 {
		t.Errorf("queue after every outcome: %+v, %v", due, err)
	}
	// Every outcome wrote its notification and its mail (PROCESSED then REVERSED: two).
	if n := w.s.OutboxDepth(ctx); n != 12 {
		t.Errorf("outbox depth %d, want 2 events for each of the 6 outcomes", n)
	}
}
