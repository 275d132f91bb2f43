package web_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"payouts/internal/servertest"
)

// dashPost posts form to the dashboard's path with c (signed in) and returns where the 303
// answer sends; any other answer fails the test.
func dashPost(t *testing.T, s *servertest.Server, c *http.Client, path string, form url.Values) string {
	t.Helper()
	resp, err := c.PostForm(s.URL+path, form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("POST %s: %d", path, resp.StatusCode)
	}
	return resp.Header.Get("Location")
}

// On the dashboard, a merchant's API keys are listed,
// issued (shown once, the old pair working for its grace) and revoked; a card payout's page
// opens its form and cancels it while cancelling is allowed; a rejected payout's error and
// history read in Spanish on the Spanish page.
func TestDashboardKeysCancelCardFormAndSpanish(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: e})
		m := s.NewMerchant(t, map[string]any{"cardPayouts": true})
		c := s.Dashboard(t)
		get := func(path string) string {
			t.Helper()
			return servertest.Text(t, c, s.URL+path)
		}
		post := func(path string, form url.Values) string {
			t.Helper()
			return dashPost(t, s, c, path, form)
		}
		works := func(cl *servertest.Merchant) bool {
			code, _, _ := cl.Do(t, "GET", "balance", nil, "")
			return code == 200
		}

		page := get("/dashboard/merchants/" + m.MerchantID)
		ids := regexp.MustCompile(`<code>(key_[0-9a-f]+)</code>`).FindAllStringSubmatch(page, -1)
		if len(ids) != 1 || !strings.Contains(page, "Claves API") || strings.Contains(page, m.Key) {
			t.Fatalf("the merchant's page lists keys %v (want its one key, never the key itself)", ids)
		}
		oldID := ids[0][1]
		post("/dashboard/merchants/"+m.MerchantID+"/keys", url.Values{"grace": {"24h0m0s"}})
		page = get("/dashboard/merchants/" + m.MerchantID)
		key := regexp.MustCompile(`id="api-key">([^<]+)<`).FindStringSubmatch(page)
		secret := regexp.MustCompile(`id="api-secret">([^<]+)<`).FindStringSubmatch(page)
		if key == nil || secret == nil {
			t.Fatalf("the new key and secret are not shown once:\n%s", page)
		}
		if again := get("/dashboard/merchants/" + m.MerchantID); strings.Contains(again, secret[1]) {
			t.Error("the new secret is shown twice")
		}
		fresh := m.With(func(c *servertest.Merchant) { c.Key, c.Secret = key[1], strings.ReplaceAll(secret[1], "&#43;", "+") })
		if !works(fresh) || !works(m) {
			t.Fatalf("after a new key with 24 h of grace: new works %v, old works %v", works(fresh), works(m))
		}
		post("/dashboard/merchants/"+m.MerchantID+"/keys/revoke", url.Values{"key": {oldID}})
		if works(m) || !works(fresh) {
			t.Errorf("after revoking the old key: old works %v, new works %v", works(m), works(fresh))
		}

		// A card payout: a fresh form link from its page, then Cancel.
		card := fresh.OpenCard(t, servertest.CardRequest("DASH-CARD-1"), 200)
		self := "/dashboard/payouts/" + strconv.FormatInt(card.Payout.ID, 10)
		page = get(self)
		if !strings.Contains(page, `id="open-form"`) || !strings.Contains(page, `id="cancel"`) {
			t.Fatalf("a card payout waiting for its card offers no form or no Cancel")
		}
		post(self+"/card-form", nil)
		page = get(self)
		link := regexp.MustCompile(`id="form-link"><a href="([^"]+)"`).FindStringSubmatch(page)
		if link == nil {
			t.Fatalf("no form link after opening it:\n%s", page)
		}
		formURL := strings.ReplaceAll(link[1], "&amp;", "&")
		if code, _, doc := s.Page(t, formURL); code != 200 || doc.Find(`input[name="pan"], input[autocomplete="cc-number"]`).Length() == 0 {
			t.Errorf("the new form link %s answers %d without a card field", formURL, code)
		}
		if code, _, doc := s.Page(t, card.Iframe); code == 200 && doc.Find(`input[autocomplete="cc-number"]`).Length() > 0 {
			t.Error("the old form link still shows the form")
		}
		post(self+"/cancel", nil)
		p := fresh.WaitStage(t, card.Payout.ID, "REJECTED", 5*time.Second)
		if p.Output.Status != "ERROR" {
			t.Errorf("cancelled card payout: %s/%s", p.Output.Stage, p.Output.Status)
		}
		if page = get(self); strings.Contains(page, `id="cancel"`) || strings.Contains(page, `id="open-form"`) {
			t.Error("a cancelled payout still offers Cancel or its form")
		}

		// A bank rejection reads in Spanish on the Spanish page (the default), in English on the English one.
		bad := fresh.Create(t, servertest.PerAccountRequest("DASH-ES-1", "1231234569999"))
		fresh.WaitStage(t, bad.Payout.ID, "REJECTED", 10*time.Second)
		es := get("/dashboard/payouts/" + strconv.FormatInt(bad.Payout.ID, 10))
		en := get("/dashboard/payouts/" + strconv.FormatInt(bad.Payout.ID, 10) + "?lang=en")
		for _, want := range []string{"el banco rechazó el pago", "cuenta sandbox terminada en 9999", "Cambio en saldo"} {
			if !strings.Contains(es, want) {
				t.Errorf("the Spanish payout page lacks %q", want)
			}
		}
		if strings.Contains(es, "the beneficiary is not the account") || !strings.Contains(en, "the beneficiary is not the account") {
			t.Error("the history note is not in the page's language")
		}
	})
}
