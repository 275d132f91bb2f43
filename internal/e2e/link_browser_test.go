package e2e

// A real browser (chromium, as card_browser_test.go drives it) goes through a Peru payout
// link's review at a phone's width and a desktop's, in Spanish and English: it gives a
// cellphone, sees the holder masked, types the document and the payout settles; types a VISA
// card; Peru's bank accounts (by CCI, by bank and account number) and each of Colombia's
// kinds are chosen and given at both widths; a cellphone the directory lists at another
// wallet ends in 4041; framed by the merchant's page, a link paid posts its outcome to it.
// With PAYOUTS_SCREENSHOTS set it leaves
// the pictures docs/guides/links.md shows.

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"payouts/rules"
)

func TestBrowserPayoutLinkReview(t *testing.T) {
	t.Parallel()
	ctx := newBrowser(t)
	s := startServer(t, "")
	c := s.newMerchant(t, map[string]any{"realTimePhoneAccount": true})
	if code := s.admin(t, "PUT", "/admin/v1/sandbox/directory/PER/987650021", map[string]any{"holderName": "Ana Quispe",
		"entities": []map[string]any{{"entityBrand": "Yape", "status": "AVAILABLE"}}}, nil); code != 200 {
		t.Fatalf("put PER entry: %d", code)
	}
	run := func(name string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		// A step waits for what it awaits, but a page that never shows it fails the test
		// with the step's name instead of holding the browser until the suite's timeout.
		sctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		if err := chromedp.Do(sctx, steps...); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	for _, lang := range []string{"es", "en"} {
		for _, w := range []int64{375, 1280} {
			order := fmt.Sprintf("LINK-BR-%s-%d", lang, w)
			_, _, a, raw := c.createLink(t, peruCellphoneLink(order, lang))
			if a.Link == "" {
				t.Fatalf("create: %s", raw)
			}
			run(order+" form", chromedp.EmulateViewport(w, 900), chromedp.Navigate(a.Link),
				chromedp.WaitVisible(chromedp.CSS("#f-accountNumber")))
			painted(t, ctx)
			saveScreenshot(t, ctx, fmt.Sprintf("link-form-%s-%d.png", lang, w))
			run(order+" give", chromedp.SetValue(chromedp.CSS("#f-bankCode"), "002"),
				chromedp.SendKeys(chromedp.CSS("#f-accountNumber"), "987650021"),
				chromedp.Click(chromedp.CSS("#submit")), chromedp.WaitVisible(chromedp.CSS("#review-holder")))
			if h, err := textOf(ctx, "#review-holder"); err != nil || h != "An* Qu****" {
				t.Errorf("%s: holder %q %v", order, h, err)
			}
			if l, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.documentElement.lang`)); err != nil || !strings.HasPrefix(l, lang) {
				t.Errorf("%s: page lang %q %v", order, l, err)
			}
			painted(t, ctx)
			saveScreenshot(t, ctx, fmt.Sprintf("link-review-%s-%d.png", lang, w))
			// A wrong document first: its error under the field, then the right one.
			run(order+" wrong document", chromedp.SendKeys(chromedp.CSS("#f-document"), "11111111"),
				chromedp.Click(chromedp.CSS("#confirm")), chromedp.WaitVisible(chromedp.CSS("#f-document-error")))
			if e, err := textOf(ctx, "#f-document-error"); err != nil || e == "" {
				t.Errorf("%s: document error %q %v", order, e, err)
			}
			run(order+" confirm", chromedp.SetValue(chromedp.CSS("#f-document"), "45678912"),
				chromedp.Click(chromedp.CSS("#confirm")), chromedp.WaitVisible(chromedp.CSS("#result")))
			if p := c.waitStage(t, a.Payout.ID, "SUCCESS", 15*time.Second); p.Output.Status != "PROCESSED" {
				t.Errorf("%s: settled %s", order, p.Output.Status)
			}
			// The page shows the outcome once its poll sees it final: waited for, so that its
			// reload never lands after the next link's navigation.
			run(order+" outcome", chromedp.WaitVisible(chromedp.CSS("#result.result-success")))
		}
	}

	// A VISA card typed on the link, with the document beside it: on a phone in Spanish, on
	// a desktop in English.
	cards := s.newMerchant(t, map[string]any{"cardPayouts": true})
	for _, lang := range []string{"es", "en"} {
		width := int64(375)
		if lang == "en" {
			width = 1280
		}
		order := "LINK-BR-CARD-" + lang
		req := peruCardLink(order)
		req["lang"] = lang
		_, _, a, raw := cards.createLink(t, req)
		if a.Link == "" {
			t.Fatalf("create: %s", raw)
		}
		run(order, chromedp.EmulateViewport(width, 900), chromedp.Navigate(a.Link), chromedp.WaitVisible(chromedp.CSS("#pan")),
			chromedp.SendKeys(chromedp.CSS("#holder"), "ANA QUISPE"), chromedp.SendKeys(chromedp.CSS("#pan"), "4111111111111111"),
			chromedp.SendKeys(chromedp.CSS("#expiry"), "12/30"), chromedp.SendKeys(chromedp.CSS("#cvv"), "123"),
			chromedp.SendKeys(chromedp.CSS("#f-document"), "45678912"))
		painted(t, ctx)
		saveScreenshot(t, ctx, fmt.Sprintf("link-card-%s-%d.png", lang, width))
		run(order+" submit", chromedp.Click(chromedp.CSS("#submit")), chromedp.WaitVisible(chromedp.CSS("#result")))
		if p := cards.waitStage(t, a.Payout.ID, "SUCCESS", 15*time.Second); p.Output.Status != "PROCESSED" {
			t.Errorf("%s: settled %s", order, p.Output.Status)
		}
		// The page shows the outcome once its poll sees it final: waited for, so that its
		// reload never lands after the next link's navigation.
		run(order+" outcome", chromedp.WaitVisible(chromedp.CSS("#result.result-success")))
	}

	// Each kind each country offers but those above (a Peru cellphone, a Peru card), chosen
	// in the page's kind list at a phone's width in Spanish and a desktop's in English, and
	// reviewed with the document. Peru has no cash; Colombia's cash is not offered on a link
	// (its code is mailed at the create).
	col := s.newMerchant(t, map[string]any{"realTimePhoneAccount": true, "realTimeKey": true})
	for _, k := range []struct {
		country, kind  string
		fields         [][2]string // input id and value, in the order typed; a select's set
		holderReviewed bool
	}{
		{"PER", "2", [][2]string{{"f-cci", "00219412345678901253"}}, false},
		{"PER", "1", [][2]string{{"f-bankCode", "002"}, {"f-accountNumber", "1941234567012"}}, false},
		{"COL", "2", [][2]string{{"f-bankCode", "012"}, {"f-accountNumber", "12345678901"}}, false},
		{"COL", "1", [][2]string{{"f-bankCode", "012"}, {"f-accountNumber", "12345678901"}}, false},
		{"COL", "4", [][2]string{{"f-bankCode", "507"}, {"f-accountNumber", "3001234567"}}, false},
		{"COL", "5", [][2]string{{"f-accountNumber", "@andreamartinez"}}, true},
	} {
		for _, view := range []struct {
			lang  string
			width int64
		}{{"es", 375}, {"en", 1280}} {
			order := fmt.Sprintf("LINK-BR-%s-%s-%d", k.country, k.kind, view.width)
			m, req, doc := col, linkRequest(order), "1020304050"
			if k.country == "PER" {
				m, req, doc = c, peruCellphoneLink(order, ""), "45678912"
			}
			delete(req, "allowedDestinations")
			req["lang"] = view.lang
			_, _, a, raw := m.createLink(t, req)
			if a.Link == "" {
				t.Fatalf("create: %s", raw)
			}
			run(order+" kind", chromedp.EmulateViewport(view.width, 900), chromedp.Navigate(a.Link), chromedp.WaitVisible(chromedp.CSS("#kind-"+k.kind)),
				chromedp.Click(chromedp.CSS("#kind-"+k.kind)), chromedp.Click(chromedp.CSS("#choose")), chromedp.WaitVisible(chromedp.CSS("#"+k.fields[0][0])))
			for _, f := range k.fields {
				if f[0] == "f-bankCode" {
					run(order+" "+f[0], chromedp.SetValue(chromedp.CSS("#"+f[0]), f[1]))
				} else {
					run(order+" "+f[0], chromedp.SendKeys(chromedp.CSS("#"+f[0]), f[1]))
				}
			}
			run(order+" give", chromedp.Click(chromedp.CSS("#submit")), chromedp.WaitVisible(chromedp.CSS("#f-document")))
			if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#review-holder").length`)); err != nil || (n == 1) != k.holderReviewed {
				t.Errorf("%s: %d holders shown %v, want %v", order, n, err, k.holderReviewed)
			}
			run(order+" confirm", chromedp.SendKeys(chromedp.CSS("#f-document"), doc), chromedp.Click(chromedp.CSS("#confirm")),
				chromedp.WaitVisible(chromedp.CSS("#result")))
			if p := m.waitStage(t, a.Payout.ID, "SUCCESS", 15*time.Second); p.Output.Status != "PROCESSED" {
				t.Errorf("%s: settled %s", order, p.Output.Status)
			}
			// The page shows the outcome once its poll sees it final: waited for, so that its
			// reload never lands after the next link's navigation.
			run(order+" outcome", chromedp.WaitVisible(chromedp.CSS("#result.result-success")))
		}
	}

	// Framed by the merchant's page on an allowed origin, a link paid tells the parent
	// window its outcome, as the card form does.
	shop, _ := startShop(t)
	framed := shopMerchant(t, s, shop.URL)
	_, _, fl, raw := framed.createLink(t, map[string]any{"country": "PER", "amount": 10000, "currency": "PEN", "orderId": "LINK-BR-FRAMED",
		"beneficiary":         map[string]any{"name": "Ana", "lastName": "Quispe", "email": "ana.quispe@gmail.com", "document": map[string]any{"type": 1, "number": "45678912"}},
		"allowedDestinations": []int{2}})
	if fl.Link == "" {
		t.Fatalf("create: %s", raw)
	}
	run("LINK-BR-FRAMED", chromedp.EmulateViewport(375, 900), chromedp.Navigate(shop.URL+"/?src="+url.QueryEscape(fl.Link)),
		chromedp.WaitVisible(chromedp.CSS("#pay")))
	if code, _, page := giveDestination(t, fl.Link, url.Values{"kind": {"2"}, "cci": {"00219412345678901253"}}, "45678912"); code != 303 {
		t.Fatalf("framed link submit: %d %s", code, docText(page))
	}
	framed.waitStage(t, fl.Payout.ID, "SUCCESS", 15*time.Second)
	run("LINK-BR-FRAMED reload", chromedp.Navigate(shop.URL+"/?src="+url.QueryEscape(fl.Link)), chromedp.WaitVisible(chromedp.CSS("#pay")))
	if msg := waitMessage(t, ctx, "mps-payout-finished-ok", "LINK-BR-FRAMED", 15*time.Second); msg.Origin != s.URL ||
		msg.Data.PayoutID != fl.Payout.ID || msg.Data.Status != "PROCESSED" {
		t.Errorf("the framed link's message: %+v", msg)
	}

	// A cellphone the directory lists at Plin only, given with Yape's bank: 4041, said on the page.
	for _, lang := range []string{"es", "en"} {
		order := "LINK-BR-4041-" + lang
		_, _, a, raw := c.createLink(t, peruCellphoneLink(order, lang))
		if a.Link == "" {
			t.Fatalf("create: %s", raw)
		}
		run(order, chromedp.EmulateViewport(375, 900), chromedp.Navigate(a.Link), chromedp.WaitVisible(chromedp.CSS("#f-accountNumber")),
			chromedp.SetValue(chromedp.CSS("#f-bankCode"), "002"), chromedp.SendKeys(chromedp.CSS("#f-accountNumber"), "987654323"),
			chromedp.Click(chromedp.CSS("#submit")), chromedp.WaitVisible(chromedp.CSS("#result.result-failed")))
		want := rules.MessageIn(lang, rules.CodeLinkOwnership, rules.Published(rules.CodeLinkOwnership))
		if d, err := textOf(ctx, "#result-detail"); err != nil || !strings.Contains(d, want) {
			t.Errorf("%s: detail %q %v, want %q", order, d, err, want)
		}
		painted(t, ctx)
		saveScreenshot(t, ctx, "link-4041-"+lang+"-375.png")
		c.waitStatus(t, a.Payout.ID, "REJECTED_BANK", 5*time.Second)
	}
}
