package e2e

// End-to-end tests of a paid payout's later word, through the real server: a scripted
// timeline on the test clock (paid, then returned three days later) and the magic ending that
// does the same.

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"payouts/rules"
)

// A scripted outcome with a timeline: SUCCESS one minute after the bank has the payout, then
// REVERSED 4025 three days later, each step moving the balance and notifying (signed) as a
// real one would; an account ending 9994 is paid then returned (4901) without a script.
func TestScriptedTimelineOnTheTestClock(t *testing.T) {
	t.Parallel()
	hook := &hookReceiver{}
	s, c := startWithSignedHook(t, "", hook, "/hooks", nil)

	rulesPath := "/admin/v1/merchants/" + c.MerchantID + "/sandbox/rules"
	list := map[string]any{"rules": []any{map[string]any{
		"match": map[string]any{"accountSuffix": "4321"},
		"outcome": map[string]any{"stage": "SUCCESS", "afterSeconds": 60,
			"then": []any{map[string]any{"status": "REVERSED", "code": rules.CodeAccountNotFound, "afterSeconds": 3 * 86400}}},
	}}}
	if code, _, raw := s.rawAdmin(t, "PUT", rulesPath, list); code != 200 {
		t.Fatalf("PUT rules with a timeline: %d %s", code, raw)
	}
	bad := map[string]any{"rules": []any{map[string]any{"match": map[string]any{}, "outcome": map[string]any{"stage": "REJECTED",
		"then": []any{map[string]any{"status": "REVERSED", "afterSeconds": 60}}}}}}
	if code, _, raw := s.rawAdmin(t, "PUT", rulesPath, bad); code != 400 || decodeProblem(t, raw).Errors[0].Location != "body.rules[0].outcome.then[0].status" {
		t.Fatalf("REVERSED after REJECTED: %d %s", code, raw)
	}

	avail0, bal0 := c.balanceOf(t, "PEN")
	scripted := c.create(t, perAccountRequest("TL-SCRIPT", "1231234564321"))
	magic := c.create(t, perAccountRequest("TL-9994", "1231234569994"))
	amount := scripted.Payout.Amount + magic.Payout.Amount
	// The scripted payout waits at the bank for the clock; the other is paid on the sandbox's
	// own delay, which a loaded machine may reach before a look at its PENDING_BANK.
	c.waitStatus(t, scripted.Payout.ID, "PENDING_BANK", 5*time.Second)
	s.advance(t, "2m") // past the script's minute and the batch delay
	c.waitStatus(t, scripted.Payout.ID, "PROCESSED", 5*time.Second)
	c.waitStatus(t, magic.Payout.ID, "PROCESSED", 5*time.Second)
	if avail, bal := c.balanceOf(t, "PEN"); avail != avail0-amount || bal != bal0-amount {
		t.Fatalf("paid: available %d balance %d, want %d %d", avail, bal, avail0-amount, bal0-amount)
	}
	s.advance(t, "71h")
	c.railCaughtUp(t, colBankRequest("TL-AFTER")) // in COP: the balance checked is in PEN
	for _, id := range []int64{scripted.Payout.ID, magic.Payout.ID} {
		if _, _, raw := c.do(t, "GET", "payouts/"+itoa(id), nil, ""); decodePayout(t, raw).Output.Status != "PROCESSED" {
			t.Fatalf("payout %d returned before its three days: %s", id, raw)
		}
	}
	s.advance(t, "1h")
	for _, tc := range []struct {
		id   int64
		code string
	}{{scripted.Payout.ID, rules.CodeAccountNotFound}, {magic.Payout.ID, rules.CodeReversed}} {
		p := c.waitStatus(t, tc.id, "REVERSED", 5*time.Second)
		if len(p.Errors) != 1 || p.Errors[0].Code != tc.code {
			t.Errorf("payout %d: errors %+v, want %s", tc.id, p.Errors, tc.code)
		}
		var hist []string
		for _, h := range p.History {
			hist = append(hist, h.Status)
		}
		if fmt.Sprint(hist) != "[CREATED AUTHORIZED WAITING_ROUTING PENDING_BANK PROCESSED REVERSED]" {
			t.Errorf("payout %d: history %v", tc.id, hist)
		}
	}
	if avail, bal := c.balanceOf(t, "PEN"); avail != avail0 || bal != bal0 {
		t.Fatalf("returned: available %d balance %d, want %d %d", avail, bal, avail0, bal0)
	}
	for _, id := range []int64{scripted.Payout.ID, magic.Payout.ID} {
		for _, status := range []string{"PROCESSED", "REVERSED"} {
			ev := fmt.Sprintf("merchant.notification.%d.%s", id, status)
			waitFor(t, ev, 20*time.Second, func() bool { acc, _, _, _ := hook.snapshot(); return len(acc[ev]) == 1 })
			acc, _, badSigs, _ := hook.snapshot()
			var body struct {
				Output struct{ Status string } `json:"output"`
			}
			json.Unmarshal(acc[ev][0], &body)
			if badSigs != 0 || body.Output.Status != status {
				t.Errorf("%s: %d bad signatures, body %s", ev, badSigs, acc[ev][0])
			}
		}
	}
}
