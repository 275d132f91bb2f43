package e2e

// End-to-end tests of a paid payout's later word, through the real server: a scripted
// timeline on the test clock (paid, then returned three days later) and the magic ending that
// does the same; the requirements endpoint.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"payouts/internal/servertest"
	"payouts/rules"
	"payouts/rules/requirements"
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

// requirementsSchema fetches GET requirements and compiles it with a JSON Schema validator, as
// a merchant's code would.
func (c *merchantClient) requirementsSchema(t testing.TB, query string) (*jsonschema.Schema, map[string]any, []byte) {
	t.Helper()
	code, hdr, raw := c.do(t, "GET", "requirements", nil, query)
	if code != 200 {
		t.Fatalf("GET requirements?%s: %d %s", query, code, raw)
	}
	if ct := hdr.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type %q", ct)
	}
	var m map[string]any
	json.Unmarshal(raw, &m)
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	comp := jsonschema.NewCompiler()
	if err := comp.AddResource("requirements.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := comp.Compile("requirements.json")
	if err != nil {
		t.Fatalf("requirements?%s is no valid JSON Schema: %v", query, err)
	}
	return sch, m, raw
}

func validates(t testing.TB, sch *jsonschema.Schema, body any) error {
	t.Helper()
	raw, _ := json.Marshal(body)
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	return sch.Validate(inst)
}

// GET requirements on the real server for a few destinations: the schema is JSON Schema
// 2020-12 marked as our extension; a body it accepts is created, a body it refuses is refused
// by the server with a code the schema names; bad queries and impossible destinations are
// 400 with their codes; the sandbox off answers 403.
func TestRequirementsEndpoint(t *testing.T) {
	t.Parallel()
	s := startServer(t, "")
	c := s.newMerchant(t, map[string]any{"realTimeKey": true, "realTimePhoneAccount": true, "cardPayouts": true})

	sch, doc, raw := c.requirementsSchema(t, "country=PER&accountType=4&bankCode=037")
	if doc["$schema"] != requirements.SchemaDialect || doc["x-payouts-extension"] != true || !strings.Contains(fmt.Sprint(doc["title"]), "merchant "+c.MerchantID) {
		t.Fatalf("schema header: %v %v %v", doc["$schema"], doc["x-payouts-extension"], doc["title"])
	}
	example, err := os.ReadFile(repoPath("rules/testdata/examples/per-cellphone-wallet-037.json"))
	if err != nil {
		t.Fatal(err)
	}
	var good map[string]any
	json.Unmarshal(example, &good)
	if err := validates(t, sch, good); err != nil {
		t.Fatalf("the example of wallet 037 fails its requirements: %v", err)
	}
	if code, _, body := c.do(t, "POST", "payouts", good, ""); code != 201 {
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
		if err := validates(t, sch, bad); err == nil {
			t.Errorf("%s: the schema accepts it", tc.name)
		}
		code, _, body := c.do(t, "POST", "payouts", bad, "")
		p := decodeProblem(t, body)
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
		sch, _, _ := c.requirementsSchema(t, tc.query)
		raw, _ := os.ReadFile(repoPath("rules/testdata/examples/" + tc.example + ".json"))
		var m map[string]any
		json.Unmarshal(raw, &m)
		if err := validates(t, sch, m); err != nil {
			t.Errorf("%s: the example %s fails: %v", tc.query, tc.example, err)
		}
		tc.breaks(m)
		if err := validates(t, sch, m); err == nil {
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
		code, _, body := c.do(t, "GET", "requirements", nil, tc.query)
		p := decodeProblem(t, body)
		if code != 400 || len(p.Errors) != 1 || p.Errors[0].Code != tc.code || p.Errors[0].Location != tc.location {
			t.Errorf("%s: %d %s, want 400 %s at %s", tc.query, code, body, tc.code, tc.location)
		}
	}
	if code, _, _ := (&merchantClient{&servertest.Merchant{Base: s.URL, MerchantID: c.MerchantID, Key: c.Key, Secret: "wrong", HTTP: c.HTTP}}).do(t, "GET", "requirements", nil, "country=PER"); code != 401 {
		t.Errorf("a wrong signature: %d, want 401", code)
	}

	resp, err := http.Get(s.URL + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var openapi struct {
		Paths      map[string]map[string]map[string]any `json:"paths"`
		Components struct {
			Schemas map[string]struct {
				Properties map[string]map[string]any `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	json.NewDecoder(resp.Body).Decode(&openapi)
	op := openapi.Paths["/api/v1/{merchantId}/requirements"]["get"]
	if op["x-payouts-extension"] != true || !strings.Contains(fmt.Sprint(op["responses"]), "example") {
		t.Errorf("requirements in the OpenAPI document: %v", op)
	}
	if then := openapi.Components.Schemas["ScriptOutcome"].Properties["then"]; then["x-payouts-extension"] != true || then["examples"] == nil {
		t.Errorf("outcome.then in the OpenAPI document: %v", then)
	}

	off := startServer(t, "", "--sandbox=false")
	oc := off.newMerchant(t, nil)
	if code, _, body := oc.do(t, "GET", "requirements", nil, "country=PER"); code != 403 || decodeProblem(t, body).Code != rules.CodeSandboxOff {
		t.Errorf("sandbox off: %d %s", code, body)
	}
}

// The dashboard's sandbox "New payout" form is built from the requirements schema (its
// fields, the bank list of the destination, the codes) and posts through the same service as
// the API: a valid form makes a payout, an invalid one is re-rendered with the rule's code at
// the field.
func TestDashboardNewPayoutFormFromTheSchema(t *testing.T) {
	t.Parallel()
	s := startServer(t, "")
	c := s.newMerchant(t, map[string]any{"realTimeKey": true})
	hc := dashboardSignIn(t, s)
	page := s.URL + "/dashboard/merchants/" + c.MerchantID + "/new-payout?country=PER&accountType=4&bankCode=037"
	get := func() *goquery.Document {
		resp, err := hc.Get(page)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("GET new payout: %d", resp.StatusCode)
		}
		doc, err := goquery.NewDocumentFromReader(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return doc
	}
	doc := get()
	form := doc.Find("form#np-form")
	if form.Length() != 1 {
		t.Fatalf("no form: %s", doc.Text())
	}
	for _, name := range []string{"amount", "orderId", "description", "beneficiary.name", "beneficiary.document.number",
		"destination.bankAccount.accountNumber", "subMerchantInfo.name"} {
		if form.Find(`fieldset [name="`+name+`"][required]`).Length() != 1 {
			t.Errorf("the required field %s is not in the form's required fields", name)
		}
	}
	if got := form.Find(`select[name="destination.bankAccount.bankCode"] option[selected]`).AttrOr("value", ""); got != "037" {
		t.Errorf("bank select: %q", got)
	}
	if hint := form.Find("#np-destination-bankAccount-accountNumber-hint").Text(); !strings.Contains(hint, rules.CodePERCellphone) {
		t.Errorf("accountNumber's codes: %q", hint)
	}
	if !strings.Contains(doc.Find("#np-schema").Text(), requirements.SchemaDialect) {
		t.Error("the page does not show the schema")
	}

	values := url.Values{"country": {"PER"}, "currency": {"PEN"}, "amount": {"150000"}, "orderId": {"DASH-NP-1"},
		"description": {"Bodega Santa Rosa"}, "beneficiary.name": {"Rosa"}, "beneficiary.lastName": {"Mamani"},
		"beneficiary.document.type": {"1"}, "beneficiary.document.number": {"70123456"},
		"destination.bankAccount.bankCode": {"037"}, "destination.bankAccount.accountType": {"4"},
		"destination.bankAccount.accountNumber": {"812345678"}, "subMerchantInfo.name": {"Bodega Santa Rosa"}}
	resp, err := hc.PostForm(page, values)
	if err != nil {
		t.Fatal(err)
	}
	bad, _ := goquery.NewDocumentFromReader(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(bad.Find("#np-destination-bankAccount-accountNumber-error").Text(), rules.CodePERCellphone) {
		t.Fatalf("invalid form: %d %q", resp.StatusCode, bad.Find("#np-destination-bankAccount-accountNumber-error").Text())
	}
	if v := bad.Find(`input[name="destination.bankAccount.accountNumber"]`).AttrOr("value", ""); v != "812345678" {
		t.Errorf("the re-rendered form lost the value: %q", v)
	}
	if code, _, raw := c.do(t, "GET", "payouts", nil, "orderId=DASH-NP-1"); code != 200 || strings.Contains(string(raw), "DASH-NP-1") {
		t.Fatalf("a refused form stored a payout: %d %s", code, raw)
	}

	values.Set("destination.bankAccount.accountNumber", "987654321")
	resp, err = hc.PostForm(page, values)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/dashboard/payouts/") {
		t.Fatalf("valid form: %d to %q", resp.StatusCode, loc)
	}
	code, _, raw := c.do(t, "GET", "payouts/"+strings.TrimPrefix(loc, "/dashboard/payouts/"), nil, "")
	if p := decodePayout(t, raw); code != 200 || p.Payout.OrderID != "DASH-NP-1" || p.Payout.Amount != 150000 {
		t.Fatalf("the payout the form made: %d %s", code, raw)
	}

	// The merchant's page shows its scripted outcomes with their timelines.
	list := map[string]any{"rules": []any{map[string]any{"match": map[string]any{"accountSuffix": "4321"},
		"outcome": map[string]any{"stage": "SUCCESS", "afterSeconds": 60,
			"then": []any{map[string]any{"status": "REVERSED", "code": rules.CodeAccountNotFound, "afterSeconds": 3 * 86400}}}}}}
	if code, _, raw := s.rawAdmin(t, "PUT", "/admin/v1/merchants/"+c.MerchantID+"/sandbox/rules", list); code != 200 {
		t.Fatalf("PUT rules: %d %s", code, raw)
	}
	resp, err = hc.Get(s.URL + "/dashboard/merchants/" + c.MerchantID)
	if err != nil {
		t.Fatal(err)
	}
	mp, _ := goquery.NewDocumentFromReader(resp.Body)
	resp.Body.Close()
	row := mp.Find("#scripts tbody tr")
	if row.Length() != 1 || !strings.Contains(row.Text(), "accountSuffix=4321") || !strings.Contains(row.Find(".timeline").Text(), "+72h0m0s → REVERSED "+rules.CodeAccountNotFound) {
		t.Errorf("scripted outcomes on the merchant page: %q", row.Text())
	}

	// A destination the merchant cannot use says why, with its code.
	resp, err = hc.Get(s.URL + "/dashboard/merchants/" + c.MerchantID + "/new-payout?country=COL&accountType=3")
	if err != nil {
		t.Fatal(err)
	}
	none, _ := goquery.NewDocumentFromReader(resp.Body)
	resp.Body.Close()
	if !strings.Contains(none.Find("#np-query-error").Text(), rules.CodeRequirementsNone) || none.Find("form#np-form").Length() != 0 {
		t.Errorf("cash for a merchant without it: %q", none.Find("#np-query-error").Text())
	}
}
