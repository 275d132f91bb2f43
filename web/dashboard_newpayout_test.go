package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"payouts/internal/servertest"
	"payouts/rules"
	"payouts/rules/requirements"
)

// The dashboard's sandbox "New payout" form is built from the requirements schema (its
// fields, the bank list of the destination, the codes) and posts through the same service as
// the API: a valid form makes a payout, an invalid one is re-rendered with the rule's code at
// the field.
func TestDashboardNewPayoutFormFromTheSchema(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: e})
		c := s.NewMerchant(t, map[string]any{"realTimeKey": true})
		hc := s.Dashboard(t)
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
		if code, _, raw := c.Do(t, "GET", "payouts", nil, "orderId=DASH-NP-1"); code != 200 || strings.Contains(string(raw), "DASH-NP-1") {
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
		code, _, raw := c.Do(t, "GET", "payouts/"+strings.TrimPrefix(loc, "/dashboard/payouts/"), nil, "")
		if p := servertest.DecodePayout(t, raw); code != 200 || p.Payout.OrderID != "DASH-NP-1" || p.Payout.Amount != 150000 {
			t.Fatalf("the payout the form made: %d %s", code, raw)
		}

		// The merchant's page shows its scripted outcomes with their timelines.
		list := map[string]any{"rules": []any{map[string]any{"match": map[string]any{"accountSuffix": "4321"},
			"outcome": map[string]any{"stage": "SUCCESS", "afterSeconds": 60,
				"then": []any{map[string]any{"status": "REVERSED", "code": rules.CodeAccountNotFound, "afterSeconds": 3 * 86400}}}}}}
		if code, _, raw := s.RawAdmin(t, "PUT", "/admin/v1/merchants/"+c.MerchantID+"/sandbox/rules", list); code != 200 {
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
	})
}
