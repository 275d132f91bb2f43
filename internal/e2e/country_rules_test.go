package e2e

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestEndToEndCountryRules sends a representative sample through the real server: each
// example destination is created (201) on the channel its rules choose; rule violations
// answer 401 with the expected code and location.
func TestEndToEndCountryRules(t *testing.T) {
	t.Parallel()
	s := startServer(t, "")
	all := map[string]any{"cardPayouts": true, "cashPayouts": true, "realTimePhoneAccount": true, "realTimeKey": true}
	c := s.newMerchant(t, all)

	wantChannel := map[string]string{
		"col-bank-account": "BATCH", "col-wallet-507": "REAL_TIME", "col-cellphone-realtime": "REAL_TIME",
		"col-breb-key": "REAL_TIME_KEY", "col-cash": "CASH", "per-bank-account": "BATCH", "per-cci": "REAL_TIME",
		"per-cellphone-wallet-037": "REAL_TIME",
	}
	for name, channel := range wantChannel {
		t.Run("valid "+name, func(t *testing.T) {
			raw, err := os.ReadFile(repoPath("rules", "testdata", "examples", name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			code, _, body := c.do(t, "POST", "payouts", raw, "")
			if code != 201 {
				t.Fatalf("got %d %s", code, body)
			}
			id := decodePayout(t, body).Payout.ID
			_, _, body = c.do(t, "GET", "payouts/"+itoa(id), nil, "")
			var detail struct {
				Channel string `json:"channel"`
			}
			json.Unmarshal(body, &detail)
			if detail.Channel != channel {
				t.Fatalf("channel %q, want %q", detail.Channel, channel)
			}
		})
	}

	violations := []struct {
		name, example string
		edit          func(m map[string]any)
		code, loc     string
	}{
		{"2.5 DNI is 8 digits", "per-bank-account", func(m map[string]any) { at(m, "beneficiary", "document")["number"] = "1234" }, "1201", "body.beneficiary.document.number"},
		{"2.5 cci is 20 digits", "per-cci", func(m map[string]any) { at(m, "destination", "bankAccount")["cci"] = "0021" }, "1209", "body.destination.bankAccount.cci"},
		{"2.4 COP amount ends in 00", "col-bank-account", func(m map[string]any) { m["amount"] = 15000050 }, "1503", "body.amount"},
		{"8 COL wallet minimum 5,000", "col-wallet-507", func(m map[string]any) { m["amount"] = 499900 }, "2011", "body.amount"},
		{"8 PER wallet 037 maximum 3,000", "per-cellphone-wallet-037", func(m map[string]any) {
			m["amount"] = 300100
		}, "1224", "body.amount"},
		{"4.2 card payouts use the card endpoint", "per-bank-account", func(m map[string]any) { at(m, "destination", "bankAccount")["accountType"] = 5 }, "1122", "body.destination.bankAccount.accountType"},
		{"8 cash requires email", "col-cash", func(m map[string]any) { delete(at(m, "beneficiary"), "email") }, "1033", "body.beneficiary.email"},
	}
	for _, v := range violations {
		t.Run(v.name, func(t *testing.T) {
			raw, _ := os.ReadFile(repoPath("rules", "testdata", "examples", v.example+".json"))
			var m map[string]any
			json.Unmarshal(raw, &m)
			m["orderId"] = "V-" + strings.ReplaceAll(v.code, " ", "")
			v.edit(m)
			code, _, body := c.do(t, "POST", "payouts", m, "")
			if code != 401 {
				t.Fatalf("got %d %s, want 401", code, body)
			}
			p := decodeProblem(t, body)
			for _, e := range p.Errors {
				if e.Code == v.code && e.Location == v.loc {
					return
				}
			}
			t.Fatalf("no %s at %s in %s", v.code, v.loc, body)
		})
	}
}

func at(m map[string]any, path ...string) map[string]any {
	for _, p := range path {
		m = m[p].(map[string]any)
	}
	return m
}
