package e2e

// End-to-end tests of a paid payout's later word, through the real server: a scripted
// timeline on the test clock (paid, then returned three days later) and the magic ending that
// does the same; the dashboard's form built from the requirements schema.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/santhosh-tekuri/jsonschema/v6"

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

// requirementsSchema fetches GET requirements and compiles it (servertest.Merchant.Requirements).
func (c *merchantClient) requirementsSchema(t testing.TB, query string) (*jsonschema.Schema, map[string]any, []byte) {
	t.Helper()
	return c.Requirements(t, query)
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
