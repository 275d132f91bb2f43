package rules_test

import (
	"context"
	"errors"
	"testing"

	"payouts/rules"
)

// Cancel in each state before the rail, with the balance checked: CREATED (nothing held),
// WAITING_ROUTING (held, released), and refused from PENDING_BANK on; a second cancel
// answers the cancelled payout and changes nothing.
func TestCancelBeforeTheRail(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, rules.AllSettings(), "", nil)
	w.fund("PER", "PEN", 100_000_00)
	full := w.balance("PER", "PEN")

	created := w.create("per-bank-account", func(m map[string]any) { m["orderId"] = "C-CREATED" })
	p, err := w.lc.Cancel(ctx, w.m.ID, created.ID)
	if err != nil || p.Stage != rules.StageRejected || p.Status != rules.StatusError || !rules.Cancelled(p) {
		t.Fatalf("cancel CREATED: %+v %v", p, err)
	}
	if b := w.balance("PER", "PEN"); b != full {
		t.Fatalf("cancel CREATED changed the balance: %+v, want %+v", b, full)
	}

	// Authorization and routing are written with the create (Admit): it waits for the rail.
	routing := w.create("per-bank-account", func(m map[string]any) { m["orderId"] = "C-ROUTING" })
	if got := w.get(routing.ID); got.Status != rules.StatusWaitingRouting || got.Reserved != routing.Amount {
		t.Fatalf("setup: %s reserved %d", got.Status, got.Reserved)
	}
	if b := w.balance("PER", "PEN"); b.Available != full.Available-routing.Amount {
		t.Fatalf("setup: not reserved: %+v", b)
	}
	p, err = w.lc.Cancel(ctx, w.m.ID, routing.ID)
	if err != nil || p.Status != rules.StatusError || len(p.Errors) != 1 || p.Errors[0].Code != rules.CodeCancelled {
		t.Fatalf("cancel WAITING_ROUTING: %+v %v", p, err)
	}
	if b := w.balance("PER", "PEN"); b != full {
		t.Fatalf("the reservation was not released: %+v, want %+v", b, full)
	}
	w.run() // the worker leaves a cancelled payout alone
	if got := w.get(routing.ID); got.Status != rules.StatusError {
		t.Fatalf("after the worker: %s", got.Status)
	}
	again, err := w.lc.Cancel(ctx, w.m.ID, routing.ID)
	if err != nil || again.Status != rules.StatusError || len(again.History) != len(p.History) {
		t.Fatalf("second cancel: %+v %v", again, err)
	}

	sent := w.create("per-bank-account", func(m map[string]any) { m["orderId"] = "C-SENT" })
	w.run()
	if got := w.get(sent.ID); got.Status != rules.StatusPendingBank {
		t.Fatalf("setup: %s", got.Status)
	}
	_, err = w.lc.Cancel(ctx, w.m.ID, sent.ID)
	var re *rules.Error
	if !errors.As(err, &re) || re.Code != rules.CodeCancelRefused || re.Kind != rules.KindConflict {
		t.Fatalf("cancel PENDING_BANK: %v, want a conflict %s", err, rules.CodeCancelRefused)
	}
	if got := w.get(sent.ID); got.Status != rules.StatusPendingBank || got.Reserved != sent.Amount {
		t.Fatalf("a refused cancel changed the payout: %s reserved %d", got.Status, got.Reserved)
	}
	if _, err := w.lc.Cancel(ctx, "other", sent.ID); !errors.As(err, &re) || re.Code != rules.CodePayoutNotFound {
		t.Fatalf("another merchant's payout: %v", err)
	}
}
