package e2e

// End-to-end tests of the sandbox powers through the real server: cancel before
// sending, the test clock across restarts.

import (
	"fmt"
	"testing"
	"time"

	"payouts/internal/servertest"
	"payouts/rules"
)

var perAccountRequest = servertest.PerAccountRequest

// waitStatus polls the payout until it has status (servertest.Merchant.WaitStatus).
func (c *merchantClient) waitStatus(t testing.TB, id int64, status string, within time.Duration) payoutAnswer {
	t.Helper()
	return c.WaitStatus(t, id, status, within)
}

// railCaughtUp creates a payout the sandbox pays and waits until it is paid
// (servertest.Merchant.RailCaughtUp).
func (c *merchantClient) railCaughtUp(t testing.TB, req map[string]any) {
	t.Helper()
	c.RailCaughtUp(t, req)
}

func (c *merchantClient) cancel(t testing.TB, id int64) (int, []byte) {
	t.Helper()
	code, _, raw := c.do(t, "POST", "payouts/"+itoa(id)+"/cancel", nil, "")
	return code, raw
}

func wantCancelled(t testing.TB, what string, code int, raw []byte) payoutAnswer {
	t.Helper()
	p := decodePayout(t, raw)
	if code != 200 || p.Output.Stage != "REJECTED" || p.Output.Status != "ERROR" || len(p.Errors) != 1 || p.Errors[0].Code != rules.CodeCancelled {
		t.Fatalf("cancel %s: %d %s, want 200 REJECTED/ERROR 2961", what, code, raw)
	}
	return p
}

// Cancel in PENDING_BALANCE and of a card payout whose form was not submitted, with the
// balances checked, the notification and the email sent; idempotent; refused (409 2960)
// once the payout is at the bank or ended. WAITING_ROUTING is held still by a server
// without a rail (--sandbox=false).
func TestCancelBeforeSending(t *testing.T) {
	t.Parallel()
	hook := &hookReceiver{}
	s, c := startWithSignedHook(t, "", hook, "/hook", map[string]any{"pendingOnNoBalance": true, "cardPayouts": true, "emailNotifications": true})

	// PENDING_BALANCE: nothing is held, nothing moves; a later funding does not revive it.
	if code := s.admin(t, "POST", "/admin/v1/merchants/"+c.MerchantID+"/balance",
		map[string]any{"country": "COL", "currency": "COP", "amount": -100_000_000_000}, nil); code != 200 {
		t.Fatalf("withdraw: %d", code)
	}
	held := c.create(t, colBankRequest("CANCEL-HELD"))
	c.waitStatus(t, held.Payout.ID, "PENDING_BALANCE", 5*time.Second)
	code, raw := c.cancel(t, held.Payout.ID)
	wantCancelled(t, "PENDING_BALANCE", code, raw)
	s.admin(t, "POST", "/admin/v1/merchants/"+c.MerchantID+"/balance", map[string]any{"country": "COL", "currency": "COP", "amount": 100_000_000_000}, nil)
	if avail, total := c.balanceOf(t, "COP"); avail != 100_000_000_000 || total != 100_000_000_000 {
		t.Fatalf("COP after cancel and funding: %d/%d", avail, total)
	}

	// A card payout waiting for its form holds its amount; cancel releases it.
	penAvail, penTotal := c.balanceOf(t, "PEN")
	card := c.openCard(t, cardRequest("CANCEL-CARD"), 200)
	c.waitStatus(t, card.Payout.ID, "AUTHORIZED", 5*time.Second)
	waitFor(t, "the card payout's reservation", 5*time.Second, func() bool {
		a, _ := c.balanceOf(t, "PEN")
		return a == penAvail-card.Payout.Amount
	})
	code, raw = c.cancel(t, card.Payout.ID)
	first := wantCancelled(t, "a card payout without its card", code, raw)
	if a, tot := c.balanceOf(t, "PEN"); a != penAvail || tot != penTotal {
		t.Fatalf("PEN after cancel: %d/%d, want %d/%d", a, tot, penAvail, penTotal)
	}
	if st := waitCardStatus(t, card.Iframe, 5*time.Second); st.Topic != "mps-payout-finished-fail" {
		t.Fatalf("the card form after cancel: %+v", st)
	}
	code, raw = c.cancel(t, card.Payout.ID) // idempotent
	if again := wantCancelled(t, "again", code, raw); again.Output.StatusChangeDateTime != first.Output.StatusChangeDateTime {
		t.Fatalf("a second cancel changed the payout: %s", raw)
	}

	// At the bank (9997 holds it there), and after its end: too late.
	bank := c.create(t, perAccountRequest("CANCEL-BANK", "1231234569997"))
	c.waitStatus(t, bank.Payout.ID, "PENDING_BANK", 5*time.Second)
	code, raw = c.cancel(t, bank.Payout.ID)
	if p := decodeProblem(t, raw); code != 409 || p.Code != rules.CodeCancelRefused {
		t.Fatalf("cancel PENDING_BANK: %d %s, want 409 2960", code, raw)
	}
	c.do(t, "POST", "payouts/"+itoa(bank.Payout.ID)+"/simulate", map[string]any{"stage": "SUCCESS"}, "")
	if code, raw = c.cancel(t, bank.Payout.ID); code != 409 || decodeProblem(t, raw).Code != rules.CodeCancelRefused {
		t.Fatalf("cancel SUCCESS: %d %s, want 409 2960", code, raw)
	}
	if code, raw = c.cancel(t, 999999); code != 404 {
		t.Fatalf("cancel unknown: %d %s", code, raw)
	}

	// The notification and the email of a rejection, once each.
	for _, id := range []int64{held.Payout.ID, card.Payout.ID} {
		ev := fmt.Sprintf("merchant.notification.%d.ERROR", id)
		waitFor(t, "notification "+ev, 10*time.Second, func() bool {
			acc, _, _, _ := hook.snapshot()
			return len(acc[ev]) == 1
		})
		s.waitMails(t, "?kind=beneficiary.mail&payoutId="+itoa(id), 1, 10*time.Second)
	}

	// WAITING_ROUTING, with its amount held, on a server that has no rail.
	off := startServer(t, "", "--sandbox=false")
	oc := off.newMerchant(t, nil)
	avail, _ := oc.balanceOf(t, "PEN")
	routing := oc.create(t, perBankRequest("CANCEL-ROUTING"))
	oc.waitStatus(t, routing.Payout.ID, "WAITING_ROUTING", 5*time.Second)
	if a, _ := oc.balanceOf(t, "PEN"); a != avail-routing.Payout.Amount {
		t.Fatalf("not held while routing: %d", a)
	}
	code, raw = oc.cancel(t, routing.Payout.ID)
	wantCancelled(t, "WAITING_ROUTING", code, raw)
	if a, _ := oc.balanceOf(t, "PEN"); a != avail {
		t.Fatalf("PEN after cancelling a routed payout: %d, want %d", a, avail)
	}
}

type clockAnswer = servertest.SandboxClock

// advance moves the sandbox clock and returns its view.
func (s *testServer) advance(t testing.TB, by string) clockAnswer {
	t.Helper()
	return servertest.AdvanceClock(t, s.client(), s.URL, s.AdminToken, by)
}

// The test clock: a batch payout settles, a card session and a cash claim expire after an
// advance, each in seconds of wall time; the clock never goes back, survives a
// restart, returns to real time on DELETE, and --sandbox=false refuses it and ignores it.
func TestSandboxClockMovesTheServiceNotTheWallClock(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startServer(t, dir, "--sandbox-batch-delay", "1h")
	c := s.newMerchant(t, map[string]any{"cashPayouts": true, "cardPayouts": true})

	batch := c.create(t, perBankRequest("CLOCK-BATCH"))
	cash := c.create(t, colCashRequest("CLOCK-CASH"))
	card := c.openCard(t, cardRequest("CLOCK-CARD"), 200)
	c.waitStatus(t, batch.Payout.ID, "PENDING_BANK", 5*time.Second)
	c.waitStatus(t, cash.Payout.ID, "PENDING_BANK", 5*time.Second)
	c.waitStatus(t, card.Payout.ID, "AUTHORIZED", 5*time.Second)

	start := time.Now()
	view := s.advance(t, "61m")
	if view.OffsetSeconds != 61*60 || view.Offset != "1h1m0s" {
		t.Fatalf("clock after 61m: %+v", view)
	}
	// An hour's delay passes in seconds of wall time: the bound leaves a busy machine room
	// (under the race detector with a dozen servers beside it, a round can take seconds),
	// and is still an hour short of what the wall clock would take.
	const within = 30 * time.Second
	got := c.waitStatus(t, batch.Payout.ID, "PROCESSED", within) // signed with real time: still accepted
	c.waitStatus(t, card.Payout.ID, "EXPIRED", within)
	if took := time.Since(start); took > within {
		t.Fatalf("the batch settled after %v of wall time", took)
	}
	if at, _ := time.Parse(time.RFC3339, got.Output.StatusChangeDateTime); at.Before(time.Now().Add(time.Hour)) {
		t.Fatalf("settled at %s: not by the service's clock", got.Output.StatusChangeDateTime)
	}
	if _, _, raw := c.do(t, "GET", "payouts/"+itoa(cash.Payout.ID), nil, ""); decodePayout(t, raw).Output.Status != "PENDING_BANK" {
		t.Fatalf("the cash claim ended early: %s", raw)
	}
	start = time.Now()
	s.advance(t, "8d")
	exp := c.waitStatus(t, cash.Payout.ID, "EXPIRED", within)
	if took := time.Since(start); took > within || len(exp.Errors) != 1 || exp.Errors[0].Code != rules.CodeExpired {
		t.Fatalf("cash claim: %+v after %v", exp, took)
	}

	// Never back, and a clear error where.
	for _, bad := range []string{"-1h", "0s", "soon", ""} {
		code, _, raw := s.rawAdmin(t, "POST", "/admin/v1/sandbox/clock", map[string]any{"advance": bad})
		p := decodeProblem(t, raw)
		if code != 400 || p.Code != rules.CodeClockAdvance || len(p.Errors) != 1 || p.Errors[0].Location != "body.advance" {
			t.Fatalf("advance %q: %d %s, want 400 2962 at body.advance", bad, code, raw)
		}
	}

	// A restart keeps the clock; --sandbox=false ignores it and refuses the endpoint.
	s.Stop(t)
	s = startServer(t, dir)
	var kept clockAnswer
	if code := s.admin(t, "GET", "/admin/v1/sandbox/clock", nil, &kept); code != 200 || kept.OffsetSeconds != 61*60+8*86400 {
		t.Fatalf("after a restart: %d %+v", code, kept)
	}
	s.Stop(t)
	s = startServer(t, dir, "--sandbox=false")
	if code, _, raw := s.rawAdmin(t, "GET", "/admin/v1/sandbox/clock", nil); code != 403 || decodeProblem(t, raw).Code != rules.CodeSandboxOff {
		t.Fatalf("sandbox off: %d %s", code, raw)
	}
	c.Base = s.URL
	real := c.create(t, perBankRequest("CLOCK-REAL"))
	if at, _ := time.Parse(time.RFC3339, real.Output.StatusChangeDateTime); at.After(time.Now().Add(time.Minute)) {
		t.Fatalf("with --sandbox=false the offset still applies: %s", real.Output.StatusChangeDateTime)
	}
	s.Stop(t)
	s = startServer(t, dir)
	var back clockAnswer
	if code := s.admin(t, "DELETE", "/admin/v1/sandbox/clock", nil, &back); code != 200 || back.OffsetSeconds != 0 || back.Offset != "0s" {
		t.Fatalf("DELETE: %d %+v", code, back)
	}
}
