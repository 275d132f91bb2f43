package rules_test

import (
	"context"
	"testing"
	"time"

	"payouts/rules"
)

// Authorization and routing need no rail: Lifecycle.Admit takes them in the transaction
// that creates the payout, each transition with its time, while the
// create answers the payout as created.
func TestAdmitAuthorizesAndRoutesInTheCreate(t *testing.T) {
	w := newWorld(t, rules.AllSettings(), "", nil)
	w.fund("PER", "PEN", 100_000_00)
	funded := w.balance("PER", "PEN")
	created := w.clk.Now()
	p := w.create("per-bank-account", nil)
	if p.Status != rules.StatusCreated || p.Stage != rules.StageInProgress || !p.StatusChangedAt.Equal(created) ||
		!sameStatuses(statuses(p), rules.StatusCreated) {
		t.Fatalf("the create answered %s/%s at %s with history %v, want IN_PROGRESS/CREATED at %s",
			p.Stage, p.Status, p.StatusChangedAt, statuses(p), created)
	}
	got := w.get(p.ID)
	want := []rules.Status{rules.StatusCreated, rules.StatusAuthorized, rules.StatusWaitingRouting}
	if got.Status != rules.StatusWaitingRouting || !sameStatuses(statuses(got), want...) {
		t.Fatalf("stored %s with history %v, want %v", got.Status, statuses(got), want)
	}
	for i, h := range got.History {
		if h.At.IsZero() || i > 0 && h.At.Before(got.History[i-1].At) {
			t.Fatalf("transition %d (%s) has time %s after %v", i, h.Status, h.At, got.History)
		}
	}
	if b := w.balance("PER", "PEN"); b.Available != funded.Available-p.Amount || b.Balance != funded.Balance {
		t.Fatalf("after the create: balance %+v, want %d reserved from %+v", b, p.Amount, funded)
	}
	if got.Reserved != p.Amount {
		t.Fatalf("reserved %d, want %d", got.Reserved, p.Amount)
	}
	due, err := w.db.Due(context.Background(), w.clk.Now(), 10)
	if err != nil || len(due) != 1 || due[0].ID != p.ID || due[0].Status != rules.StatusWaitingRouting {
		t.Fatalf("queue %+v (%v), want payout %d due now as WAITING_ROUTING", due, err, p.ID)
	}
	// Due claimed the entry (rules.Storage): hand it back unchanged for the worker to take.
	if err := w.db.UpdatePayouts(context.Background(), []int64{p.ID}, func(*rules.Payout, rules.Ledger) (time.Time, error) {
		return time.Time{}, rules.ErrNoChange
	}); err != nil {
		t.Fatal(err)
	}
	w.run()
	if got := w.get(p.ID); got.Status != rules.StatusPendingBank {
		t.Fatalf("after a round: %s, want PENDING_BANK", got.Status)
	}
}

// A short balance rejects the payout in the create, with its outcome events written in the
// same transaction (the beneficiary email).
func TestAdmitRejectsNoBalanceInTheCreate(t *testing.T) {
	w := newWorld(t, rules.AllSettings(), "", nil) // PendingOnNoBalance off
	p := w.create("per-bank-account", nil)
	got := w.get(p.ID)
	if got.Status != rules.StatusNoBalance || len(got.Errors) != 1 || got.Errors[0].Code != rules.CodeNoBalance {
		t.Fatalf("stored %s with errors %+v, want NO_BALANCE with %s", got.Status, got.Errors, rules.CodeNoBalance)
	}
	evs, err := w.db.OutboxEvents(context.Background(), 10)
	if err != nil {
		t.Fatal(err)
	}
	mails := 0
	for _, ev := range evs {
		if ev.Kind == rules.EventBeneficiaryMail && ev.PayoutID == p.ID {
			mails++
		}
	}
	if mails != 1 {
		t.Fatalf("outbox %+v: want one beneficiary mail for payout %d", evs, p.ID)
	}
	if due, _ := w.db.Due(context.Background(), w.clk.Now().Add(time.Hour), 10); len(due) != 0 {
		t.Fatalf("a rejected payout stays queued: %+v", due)
	}
}

// With the merchant's setting, a short balance holds the payout until a funding releases it.
func TestAdmitHoldsPendingBalance(t *testing.T) {
	s := rules.AllSettings()
	s.PendingOnNoBalance = true
	w := newWorld(t, s, "", nil)
	p := w.create("per-bank-account", nil)
	if got := w.get(p.ID); got.Status != rules.StatusPendingBalance {
		t.Fatalf("stored %s, want PENDING_BALANCE", got.Status)
	}
	w.fund("PER", "PEN", 100_000_00)
	w.run()
	if got := w.get(p.ID); got.Status != rules.StatusPendingBank {
		t.Fatalf("after the funding: %s, want PENDING_BANK", got.Status)
	}
}

// Without Admit (and for payouts stored CREATED by earlier versions) the worker authorizes.
func TestWithoutAdmitTheWorkerAuthorizes(t *testing.T) {
	w := newWorld(t, rules.AllSettings(), "", nil)
	w.svc.Admit = nil
	w.fund("PER", "PEN", 100_000_00)
	p := w.create("per-bank-account", nil)
	if got := w.get(p.ID); got.Status != rules.StatusCreated {
		t.Fatalf("stored %s, want CREATED", got.Status)
	}
	if _, err := w.lc.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	w.run()
	if got := w.get(p.ID); !sameStatuses(statuses(got), inProgress...) {
		t.Fatalf("history %v, want %v", statuses(got), inProgress)
	}
}
