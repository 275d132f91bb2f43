package api_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"payouts/internal/servertest"
)

// Each example destination of the rules is created (201) on the channel its rules choose;
// rule violations answer 401 with the expected code and location.
func TestCountryRulesThroughTheAPI(t *testing.T) {
	t.Parallel()
	example := func(t *testing.T, name string) map[string]any {
		raw, err := os.ReadFile(filepath.Join("..", "rules", "testdata", "examples", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: e})
		c := s.NewMerchant(t, map[string]any{"cardPayouts": true, "cashPayouts": true, "realTimePhoneAccount": true, "realTimeKey": true})

		var cases []servertest.Scenario
		for _, tc := range []struct{ example, channel string }{
			{"col-bank-account", "BATCH"}, {"col-wallet-507", "REAL_TIME"}, {"col-cellphone-realtime", "REAL_TIME"},
			{"col-breb-key", "REAL_TIME_KEY"}, {"col-cash", "CASH"}, {"per-bank-account", "BATCH"}, {"per-cci", "REAL_TIME"},
			{"per-cellphone-wallet-037", "REAL_TIME"},
		} {
			cases = append(cases, servertest.Scenario{Name: "valid " + tc.example, Method: "POST", Path: "payouts", As: c,
				Body: example(t, tc.example), WantStatus: 201,
				Then: func(t *testing.T, _ http.Header, raw []byte) {
					id := servertest.DecodePayout(t, raw).Payout.ID
					_, _, body := c.Do(t, "GET", "payouts/"+itoa(id), nil, "")
					var detail struct {
						Channel string `json:"channel"`
					}
					json.Unmarshal(body, &detail)
					if detail.Channel != tc.channel {
						t.Fatalf("channel %q, want %q", detail.Channel, tc.channel)
					}
				}})
		}
		for _, v := range []struct {
			name, example string
			edit          func(m map[string]any)
			code, loc     string
		}{
			{"2.5 DNI is 8 digits", "per-bank-account", func(m map[string]any) { at(m, "beneficiary", "document")["number"] = "1234" }, "1201", "body.beneficiary.document.number"},
			{"2.5 cci is 20 digits", "per-cci", func(m map[string]any) { at(m, "destination", "bankAccount")["cci"] = "0021" }, "1209", "body.destination.bankAccount.cci"},
			{"2.4 COP amount ends in 00", "col-bank-account", func(m map[string]any) { m["amount"] = 15000050 }, "1503", "body.amount"},
			{"8 COL wallet minimum 5,000", "col-wallet-507", func(m map[string]any) { m["amount"] = 499900 }, "2011", "body.amount"},
			{"8 PER wallet 037 maximum 3,000", "per-cellphone-wallet-037", func(m map[string]any) { m["amount"] = 300100 }, "1224", "body.amount"},
			{"4.2 card payouts use the card endpoint", "per-bank-account", func(m map[string]any) { at(m, "destination", "bankAccount")["accountType"] = 5 }, "1122", "body.destination.bankAccount.accountType"},
			{"8 cash requires email", "col-cash", func(m map[string]any) { delete(at(m, "beneficiary"), "email") }, "1033", "body.beneficiary.email"},
		} {
			m := example(t, v.example)
			m["orderId"] = "V-" + v.code
			v.edit(m)
			cases = append(cases, servertest.Scenario{Name: v.name, Method: "POST", Path: "payouts", As: c, Body: m, WantStatus: 401,
				Then: func(t *testing.T, _ http.Header, raw []byte) {
					for _, e := range servertest.DecodeProblem(t, raw).Errors {
						if e.Code == v.code && e.Location == v.loc {
							return
						}
					}
					t.Fatalf("no %s at %s in %s", v.code, v.loc, raw)
				}})
		}
		s.Run(t, cases)
	})
}

func at(m map[string]any, path ...string) map[string]any {
	for _, p := range path {
		m = m[p].(map[string]any)
	}
	return m
}
