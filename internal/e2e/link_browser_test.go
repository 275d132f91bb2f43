package e2e

// A real browser (chromium, as card_browser_test.go drives it) goes through a Peru payout
// link's review at a phone's width and a desktop's, in Spanish and English: it gives a
// cellphone, sees the holder masked, types the document and the payout settles; types a VISA
// card; a Colombia link takes each of its kinds; a cellphone the directory lists at another
// wallet ends in 4041. With PAYOUTS_SCREENSHOTS set it leaves
// the pictures docs/guides/links.md shows.

import (
	"context"
	"fmt"
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

	// A VISA card typed on the link, with the document beside it, in both languages.
	cards := s.newMerchant(t, map[string]any{"cardPayouts": true})
	for _, lang := range []string{"es", "en"} {
		order := "LINK-BR-CARD-" + lang
		req := peruCardLink(order)
		req["lang"] = lang
		_, _, a, raw := cards.createLink(t, req)
		if a.Link == "" {
			t.Fatalf("create: %s", raw)
		}
		run(order, chromedp.EmulateViewport(375, 900), chromedp.Navigate(a.Link), chromedp.WaitVisible(chromedp.CSS("#pan")),
			chromedp.SendKeys(chromedp.CSS("#holder"), "ANA QUISPE"), chromedp.SendKeys(chromedp.CSS("#pan"), "4111111111111111"),
			chromedp.SendKeys(chromedp.CSS("#expiry"), "12/30"), chromedp.SendKeys(chromedp.CSS("#cvv"), "123"),
			chromedp.SendKeys(chromedp.CSS("#f-document"), "45678912"))
		painted(t, ctx)
		saveScreenshot(t, ctx, "link-card-"+lang+"-375.png")
		run(order+" submit", chromedp.Click(chromedp.CSS("#submit")), chromedp.WaitVisible(chromedp.CSS("#result")))
		if p := cards.waitStage(t, a.Payout.ID, "SUCCESS", 15*time.Second); p.Output.Status != "PROCESSED" {
			t.Errorf("%s: settled %s", order, p.Output.Status)
		}
		// The page shows the outcome once its poll sees it final: waited for, so that its
		// reload never lands after the next link's navigation.
		run(order+" outcome", chromedp.WaitVisible(chromedp.CSS("#result.result-success")))
	}

	// Each kind Colombia offers, chosen in the page's kind list, reviewed with the document.
	col := s.newMerchant(t, map[string]any{"realTimePhoneAccount": true, "realTimeKey": true})
	for _, k := range []struct {
		kind           string
		bank, number   string
		holderReviewed bool
	}{
		{"2", "012", "12345678901", false}, {"1", "012", "12345678901", false},
		{"4", "507", "3001234567", false}, {"5", "", "@andreamartinez", true},
	} {
		order := "LINK-BR-COL-" + k.kind
		req := linkRequest(order)
		delete(req, "allowedDestinations")
		_, _, a, raw := col.createLink(t, req)
		if a.Link == "" {
			t.Fatalf("create: %s", raw)
		}
		run(order+" kind", chromedp.EmulateViewport(1280, 900), chromedp.Navigate(a.Link), chromedp.WaitVisible(chromedp.CSS("#kind-"+k.kind)),
			chromedp.Click(chromedp.CSS("#kind-"+k.kind)), chromedp.Click(chromedp.CSS("#choose")), chromedp.WaitVisible(chromedp.CSS("#f-accountNumber")))
		if k.bank != "" {
			run(order+" bank", chromedp.SetValue(chromedp.CSS("#f-bankCode"), k.bank))
		}
		run(order+" give", chromedp.SendKeys(chromedp.CSS("#f-accountNumber"), k.number), chromedp.Click(chromedp.CSS("#submit")),
			chromedp.WaitVisible(chromedp.CSS("#f-document")))
		if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#review-holder").length`)); err != nil || (n == 1) != k.holderReviewed {
			t.Errorf("%s: %d holders shown %v, want %v", order, n, err, k.holderReviewed)
		}
		run(order+" confirm", chromedp.SendKeys(chromedp.CSS("#f-document"), "1020304050"), chromedp.Click(chromedp.CSS("#confirm")),
			chromedp.WaitVisible(chromedp.CSS("#result")))
		col.waitStage(t, a.Payout.ID, "SUCCESS", 15*time.Second)
		// The page shows the outcome once its poll sees it final: waited for, so that its
		// reload never lands after the next link's navigation.
		run(order+" outcome", chromedp.WaitVisible(chromedp.CSS("#result.result-success")))
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
