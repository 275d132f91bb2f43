package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"payouts/internal/servertest"
	"payouts/rules"
	"payouts/rules/requirements"
)

// GET requirements through the real handler for a few destinations: the schema is JSON Schema
// 2020-12 marked as our extension; a body it accepts is created, a body it refuses is refused
// by the server with a code the schema names; bad queries and impossible destinations are
// 400 with their codes; the sandbox off answers 403.
func TestRequirementsEndpoint(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: e})
		c := s.NewMerchant(t, map[string]any{"realTimeKey": true, "realTimePhoneAccount": true, "cardPayouts": true})

		sch, doc, raw := c.Requirements(t, "country=PER&accountType=4&bankCode=037")
		if doc["$schema"] != requirements.SchemaDialect || doc["x-payouts-extension"] != true || !strings.Contains(fmt.Sprint(doc["title"]), "merchant "+c.MerchantID) {
			t.Fatalf("schema header: %v %v %v", doc["$schema"], doc["x-payouts-extension"], doc["title"])
		}
		example, err := os.ReadFile(filepath.Join("..", "rules", "testdata", "examples", "per-cellphone-wallet-037.json"))
		if err != nil {
			t.Fatal(err)
		}
		var good map[string]any
		json.Unmarshal(example, &good)
		if err := servertest.Validates(t, sch, good); err != nil {
			t.Fatalf("the example of wallet 037 fails its requirements: %v", err)
		}
		if code, _, body := c.Do(t, "POST", "payouts", good, ""); code != 201 {
			t.Fatalf("the body the schema accepts: %d %s", code, body)
		}
		for _, tc := range []struct {
			name string
			edit func(map[string]any)
			code string
		}{
			{"not a Peru cellphone", func(m map[string]any) {
				m["destination"].(map[string]any)["bankAccount"].(map[string]any)["accountNumber"] = "812345678"
			}, rules.CodePERCellphone},
			{"above wallet 037's maximum", func(m map[string]any) { m["amount"] = 300001 }, rules.CodePERAboveLimit},
			{"wallet 037 needs a description", func(m map[string]any) { delete(m, "description") }, rules.CodeFieldRequired},
			{"in USD", func(m map[string]any) { m["currency"] = "USD" }, rules.CodePERCellphonePEN},
		} {
			var bad map[string]any
			json.Unmarshal(example, &bad)
			bad["orderId"] = fmt.Sprintf("REQ-%d", len(tc.name))
			tc.edit(bad)
			if err := servertest.Validates(t, sch, bad); err == nil {
				t.Errorf("%s: the schema accepts it", tc.name)
			}
			code, _, body := c.Do(t, "POST", "payouts", bad, "")
			p := servertest.DecodeProblem(t, body)
			if code < 400 || len(p.Errors) == 0 || p.Errors[0].Code != tc.code {
				t.Errorf("%s: server answered %d %s, want %s", tc.name, code, body, tc.code)
			}
			if !bytes.Contains(raw, []byte(`"x-code":"`+tc.code+`"`)) && !bytes.Contains(raw, []byte(`":"`+tc.code+`"`)) {
				t.Errorf("%s: the schema does not name code %s", tc.name, tc.code)
			}
		}

		// Other destinations: the country alone (if/then by account type and bank), a Bre-B key,
		// the card endpoint; each accepts its example and refuses a broken one.
		for _, tc := range []struct {
			query, example string
			breaks         func(map[string]any)
		}{
			{"country=COL", "col-bank-account", func(m map[string]any) {
				m["destination"].(map[string]any)["bankAccount"].(map[string]any)["bankCode"] = "041" // retired
			}},
			{"country=COL&accountType=5", "col-breb-key", func(m map[string]any) {
				m["destination"].(map[string]any)["bankAccount"].(map[string]any)["accountNumber"] = "juan perez"
			}},
			{"endpoint=card", "per-card", func(m map[string]any) { delete(m, "timeoutUrl") }},
			{"", "per-cci", func(m map[string]any) {
				m["destination"].(map[string]any)["bankAccount"].(map[string]any)["cci"] = "0021941234567890125"
			}},
		} {
			sch, _, _ := c.Requirements(t, tc.query)
			raw, _ := os.ReadFile(filepath.Join("..", "rules", "testdata", "examples", tc.example+".json"))
			var m map[string]any
			json.Unmarshal(raw, &m)
			if err := servertest.Validates(t, sch, m); err != nil {
				t.Errorf("%s: the example %s fails: %v", tc.query, tc.example, err)
			}
			tc.breaks(m)
			if err := servertest.Validates(t, sch, m); err == nil {
				t.Errorf("%s: the broken %s passes", tc.query, tc.example)
			}
		}

		for _, tc := range []struct {
			query, code, location string
		}{
			{"country=ARG", rules.CodeRequirementsQuery, "query.country"},
			{"country=COL&accountType=9", rules.CodeRequirementsQuery, "query.accountType"},
			{"endpoint=batch", rules.CodeRequirementsQuery, "query.endpoint"},
			{"country=PER&bankCode=999", rules.CodeRequirementsQuery, "query.bankCode"},
			{"country=COL&accountType=3", rules.CodeRequirementsNone, "query.accountType"},           // cash is off for this merchant
			{"country=PER&accountType=4&bankCode=008", rules.CodeRequirementsNone, "query.bankCode"}, // 008 has no real-time channel
		} {
			code, _, body := c.Do(t, "GET", "requirements", nil, tc.query)
			p := servertest.DecodeProblem(t, body)
			if code != 400 || len(p.Errors) != 1 || p.Errors[0].Code != tc.code || p.Errors[0].Location != tc.location {
				t.Errorf("%s: %d %s, want 400 %s at %s", tc.query, code, body, tc.code, tc.location)
			}
		}
		if code, _, _ := c.With(func(m *servertest.Merchant) { m.Secret = "wrong" }).Do(t, "GET", "requirements", nil, "country=PER"); code != 401 {
			t.Errorf("a wrong signature: %d, want 401", code)
		}

		_, _, full := s.Send(t, servertest.Scenario{Path: "/openapi.json"})
		var openapi struct {
			Paths      map[string]map[string]map[string]any `json:"paths"`
			Components struct {
				Schemas map[string]struct {
					Properties map[string]map[string]any `json:"properties"`
				} `json:"schemas"`
			} `json:"components"`
		}
		json.Unmarshal(full, &openapi)
		op := openapi.Paths["/api/v1/{merchantId}/requirements"]["get"]
		if op["x-payouts-extension"] != true || !strings.Contains(fmt.Sprint(op["responses"]), "example") {
			t.Errorf("requirements in the OpenAPI document: %v", op)
		}
		if then := openapi.Components.Schemas["ScriptOutcome"].Properties["then"]; then["x-payouts-extension"] != true || then["examples"] == nil {
			t.Errorf("outcome.then in the OpenAPI document: %v", then)
		}

		off := servertest.Start(t, servertest.Setup{Engine: e, Args: []string{"--sandbox=false"}})
		oc := off.NewMerchant(t, nil)
		if code, _, body := oc.Do(t, "GET", "requirements", nil, "country=PER"); code != 403 || servertest.DecodeProblem(t, body).Code != rules.CodeSandboxOff {
			t.Errorf("sandbox off: %d %s", code, body)
		}
	})
}
