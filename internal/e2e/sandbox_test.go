package e2e

// End-to-end tests of the sandbox powers through the real server: cancel before
// sending, the test clock, scripted outcomes, the integration token with the Peru lookup,
// and the Bre-B key lookup.

import (
	"fmt"
	"testing"
	"time"

	"payouts/rules"
)

// perAccountRequest is a Peru batch payout to a bank 003 account (13 digits): a bank 002
// account cannot end in a sandbox trigger, its digit 12 being the currency digit.
func perAccountRequest(orderID, account string) map[string]any {
	req := perBankRequest(orderID)
	ba := req["destination"].(map[string]any)["bankAccount"].(map[string]any)
	ba["bankCode"], ba["accountNumber"] = "003", account
	return req
}

// waitStatus polls GET /payouts/{id} until the payout has status.
func (c *merchantClient) waitStatus(t testing.TB, id int64, status string, within time.Duration) payoutAnswer {
	t.Helper()
	var last payoutAnswer
	if poll(within, func() bool {
		_, _, raw := c.do(t, "GET", "payouts/"+itoa(id), nil, "")
		last = decodePayout(t, raw)
		return last.Output.Status == status
	}) {
		return last
	}
	t.Fatalf("payout %d did not reach %s within %v: %s/%s", id, status, within, last.Output.Stage, last.Output.Status)
	return last
}

// railCaughtUp creates req, a payout that is simply paid, and waits until it is. The worker
// takes payouts in the order they fall due, so every payout due before this one has then
// had its answer from the rail: a test checks that one stayed as it was without a pause in
// which it might have moved.
func (c *merchantClient) railCaughtUp(t testing.TB, req map[string]any) {
	t.Helper()
	c.waitStatus(t, c.create(t, req).Payout.ID, "PROCESSED", 10*time.Second)
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

type clockAnswer struct {
	Now, RealNow, Offset string
	OffsetSeconds        int64
}

// advance moves the sandbox clock and returns its view.
func (s *testServer) advance(t testing.TB, by string) clockAnswer {
	t.Helper()
	var out clockAnswer
	if code := s.admin(t, "POST", "/admin/v1/sandbox/clock", map[string]any{"advance": by}, &out); code != 200 {
		t.Fatalf("advance %s: %d", by, code)
	}
	return out
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

// Scripted outcomes: a rule overrides the magic ending 9999, another rejects by amount with a
// catalogue code, another holds by bank; invalid lists are refused with every error and its
// place, storing nothing.
func TestScriptedOutcomesOverrideTheMagicEndings(t *testing.T) {
	t.Parallel()
	s := startServer(t, "")
	c := s.newMerchant(t, nil)
	rulesPath := "/admin/v1/merchants/" + c.MerchantID + "/sandbox/rules"
	list := map[string]any{"rules": []any{
		map[string]any{"match": map[string]any{"accountSuffix": "9999"}, "outcome": map[string]any{"stage": "SUCCESS", "afterSeconds": 0}},
		map[string]any{"match": map[string]any{"country": "PER", "amountMin": 150000, "amountMax": 250000},
			"outcome": map[string]any{"stage": "REJECTED", "status": "DENIED", "code": rules.CodeDenied}},
		map[string]any{"match": map[string]any{"bankCode": "007"}, "outcome": map[string]any{"stage": "IN_PROGRESS"}},
	}}
	var stored struct {
		Rules []struct {
			Outcome struct{ Stage, Status, Code string }
		}
	}
	if code := s.admin(t, "PUT", rulesPath, list, &stored); code != 200 || len(stored.Rules) != 3 || stored.Rules[2].Outcome.Status != "PENDING_BANK" {
		t.Fatalf("PUT rules: %d %+v", code, stored)
	}

	ok := c.create(t, perAccountRequest("SCRIPT-9999", "1231234569999"))
	big := perBankRequest("SCRIPT-BIG")
	big["amount"] = 200000
	denied := c.create(t, big)
	held := c.create(t, colBankRequest("SCRIPT-HELD"))
	plain := c.create(t, perBankRequest("SCRIPT-PLAIN")) // no rule fits: the channel's delay, success

	if p := c.waitStage(t, ok.Payout.ID, "SUCCESS", 5*time.Second); p.Output.Status != "PROCESSED" {
		t.Fatalf("9999 under a SUCCESS rule: %+v", p)
	}
	p := c.waitStage(t, denied.Payout.ID, "REJECTED", 5*time.Second)
	if p.Output.Status != "DENIED" || len(p.Errors) != 1 || p.Errors[0].Code != rules.CodeDenied {
		t.Fatalf("amount rule: %+v", p)
	}
	c.waitStage(t, plain.Payout.ID, "SUCCESS", 5*time.Second)
	s.advance(t, "2h") // far past every delay: the held one still waits for simulate
	c.railCaughtUp(t, perBankRequest("SCRIPT-AFTER"))
	if _, _, raw := c.do(t, "GET", "payouts/"+itoa(held.Payout.ID), nil, ""); decodePayout(t, raw).Output.Status != "PENDING_BANK" {
		t.Fatalf("held rule: %s", raw)
	}

	bad := map[string]any{"rules": []any{
		map[string]any{"match": map[string]any{}, "outcome": map[string]any{"stage": "REJECTED", "code": "0042"}},
		map[string]any{"match": map[string]any{"bankCode": "7", "amountMin": 10, "amountMax": 5}, "outcome": map[string]any{"stage": "SUCCESS", "code": rules.CodeDenied}},
	}}
	code, _, raw := s.rawAdmin(t, "PUT", rulesPath, bad)
	prob := decodeProblem(t, raw)
	want := []string{"body.rules[0].outcome.code", "body.rules[1].match.bankCode", "body.rules[1].match.amountMax", "body.rules[1].outcome.code"}
	if code != 400 || prob.Code != rules.CodeScriptRule || len(prob.Errors) != len(want) {
		t.Fatalf("invalid rules: %d %s", code, raw)
	}
	for i, e := range prob.Errors {
		if e.Location != want[i] || e.Code != rules.CodeScriptRule {
			t.Errorf("error %d at %s (%s), want %s", i, e.Location, e.Code, want[i])
		}
	}
	if code := s.admin(t, "GET", rulesPath, nil, &stored); code != 200 || len(stored.Rules) != 3 {
		t.Fatalf("a refused PUT changed the rules: %d %+v", code, stored)
	}
	if code, _, raw := s.rawAdmin(t, "PUT", "/admin/v1/merchants/nobody/sandbox/rules", list); code != 404 || decodeProblem(t, raw).Code != rules.CodeMerchantNotFound {
		t.Fatalf("unknown merchant: %d %s", code, raw)
	}
	off := startServer(t, "", "--sandbox=false")
	oc := off.newMerchant(t, nil)
	if code, _, raw := off.rawAdmin(t, "PUT", "/admin/v1/merchants/"+oc.MerchantID+"/sandbox/rules", list); code != 403 || decodeProblem(t, raw).Code != rules.CodeSandboxOff {
		t.Fatalf("sandbox off: %d %s", code, raw)
	}
}
