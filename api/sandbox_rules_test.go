package api_test

import (
	"testing"
	"time"

	"payouts/internal/servertest"
	"payouts/rules"
)

// Scripted outcomes: a rule overrides the magic ending 9999, another rejects by amount with a
// catalogue code, another holds by bank; invalid lists are refused with every error and its
// place, storing nothing.
func TestScriptedOutcomesOverrideTheMagicEndings(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: e})
		c := s.NewMerchant(t, nil)
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
		if code := s.Admin(t, "PUT", rulesPath, list, &stored); code != 200 || len(stored.Rules) != 3 || stored.Rules[2].Outcome.Status != "PENDING_BANK" {
			t.Fatalf("PUT rules: %d %+v", code, stored)
		}

		ok := c.Create(t, servertest.PerAccountRequest("SCRIPT-9999", "1231234569999"))
		big := servertest.PerBankRequest("SCRIPT-BIG")
		big["amount"] = 200000
		denied := c.Create(t, big)
		held := c.Create(t, servertest.ColBankRequest("SCRIPT-HELD"))
		plain := c.Create(t, servertest.PerBankRequest("SCRIPT-PLAIN")) // no rule fits: the channel's delay, success

		if p := c.WaitStage(t, ok.Payout.ID, "SUCCESS", 5*time.Second); p.Output.Status != "PROCESSED" {
			t.Fatalf("9999 under a SUCCESS rule: %+v", p)
		}
		p := c.WaitStage(t, denied.Payout.ID, "REJECTED", 5*time.Second)
		if p.Output.Status != "DENIED" || len(p.Errors) != 1 || p.Errors[0].Code != rules.CodeDenied {
			t.Fatalf("amount rule: %+v", p)
		}
		c.WaitStage(t, plain.Payout.ID, "SUCCESS", 5*time.Second)
		s.Advance(t, "2h") // far past every delay: the held one still waits for simulate
		c.RailCaughtUp(t, servertest.PerBankRequest("SCRIPT-AFTER"))
		if _, _, raw := c.Do(t, "GET", "payouts/"+itoa(held.Payout.ID), nil, ""); servertest.DecodePayout(t, raw).Output.Status != "PENDING_BANK" {
			t.Fatalf("held rule: %s", raw)
		}

		bad := map[string]any{"rules": []any{
			map[string]any{"match": map[string]any{}, "outcome": map[string]any{"stage": "REJECTED", "code": "0042"}},
			map[string]any{"match": map[string]any{"bankCode": "7", "amountMin": 10, "amountMax": 5}, "outcome": map[string]any{"stage": "SUCCESS", "code": rules.CodeDenied}},
		}}
		code, _, raw := s.RawAdmin(t, "PUT", rulesPath, bad)
		prob := servertest.DecodeProblem(t, raw)
		want := []string{"body.rules[0].outcome.code", "body.rules[1].match.bankCode", "body.rules[1].match.amountMax", "body.rules[1].outcome.code"}
		if code != 400 || prob.Code != rules.CodeScriptRule || len(prob.Errors) != len(want) {
			t.Fatalf("invalid rules: %d %s", code, raw)
		}
		for i, e := range prob.Errors {
			if e.Location != want[i] || e.Code != rules.CodeScriptRule {
				t.Errorf("error %d at %s (%s), want %s", i, e.Location, e.Code, want[i])
			}
		}
		if code := s.Admin(t, "GET", rulesPath, nil, &stored); code != 200 || len(stored.Rules) != 3 {
			t.Fatalf("a refused PUT changed the rules: %d %+v", code, stored)
		}
		if code, _, raw := s.RawAdmin(t, "PUT", "/admin/v1/merchants/nobody/sandbox/rules", list); code != 404 || servertest.DecodeProblem(t, raw).Code != rules.CodeMerchantNotFound {
			t.Fatalf("unknown merchant: %d %s", code, raw)
		}
		off := servertest.Start(t, servertest.Setup{Engine: e, Args: []string{"--sandbox=false"}})
		oc := off.NewMerchant(t, nil)
		if code, _, raw := off.RawAdmin(t, "PUT", "/admin/v1/merchants/"+oc.MerchantID+"/sandbox/rules", list); code != 403 || servertest.DecodeProblem(t, raw).Code != rules.CodeSandboxOff {
			t.Fatalf("sandbox off: %d %s", code, raw)
		}
	})
}
