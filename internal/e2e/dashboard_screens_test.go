package e2e

// The dashboard in a real browser at 375 and 1280 px, light and dark (the system's
// prefers-color-scheme), with what a phone showed wrong checked: every section reachable in
// the navigation, chart labels of a readable size, the When column inside its cell; and the
// card form showing the merchant's name when its logo cannot be loaded. Its screenshots are
// the pictures the docs show (docs/images, retaken with PAYOUTS_SCREENSHOTS=docs/images).

import (
	"fmt"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

func TestDashboardAtPhoneAndDesktopLightAndDark(t *testing.T) {
	t.Parallel()
	ctx := newBrowser(t)
	s := startServer(t, "", "--allow-private-notification-urls")
	h := &hook{}
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	m := s.newMerchant(t, map[string]any{"notificationUrl": hs.URL + "/hook", "emailNotifications": true, "cardPayouts": true})
	blockOthers(t, ctx, s.URL)

	// Some history: settled, rejected, held at the bank, and a card payout waiting for its card.
	ok := m.create(t, perBankRequest("SHOT-OK"))
	rej := perBankRequest("SHOT-REJ")
	rej["destination"].(map[string]any)["bankAccount"] = map[string]any{"bankCode": "003", "accountType": 2, "accountNumber": "1231234569999"}
	bad := m.create(t, rej)
	held := perBankRequest("SHOT-HELD")
	held["destination"].(map[string]any)["bankAccount"] = map[string]any{"bankCode": "003", "accountType": 2, "accountNumber": "1231234569997"}
	m.create(t, held)
	for i := 0; i < 6; i++ {
		m.create(t, perBankRequest("SHOT-"+strconv.Itoa(i)))
	}
	cardReq := cardRequest("SHOT-CARD")
	cardReq["merchantLogo"] = "https://logo.unreachable.example/logo-187x40.png"
	card := m.openCard(t, cardReq, 200)
	m.waitStage(t, ok.Payout.ID, "SUCCESS", 10*time.Second)
	m.waitStage(t, bad.Payout.ID, "REJECTED", 10*time.Second)
	waitFor(t, "the notifications delivered", 20*time.Second, func() bool { return h.received("SHOT-OK") && h.received("SHOT-REJ") })

	err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(s.URL+"/dashboard"),
		chromedp.WaitVisible(chromedp.CSS("#token")), chromedp.SendKeys(chromedp.CSS("#token"), s.AdminToken),
		chromedp.Submit(chromedp.CSS("#token")), chromedp.WaitVisible(chromedp.CSS(".tiles")))
	if err != nil {
		t.Fatalf("sign in: %v", err)
	}

	pages := []struct{ name, path, sel string }{
		{"overview", "/dashboard", ".chart"},
		{"payouts", "/dashboard/payouts", "#payouts"},
		{"payout-rejected", "/dashboard/payouts/" + strconv.FormatInt(bad.Payout.ID, 10), "#timeline"},
		{"payout-card", "/dashboard/payouts/" + strconv.FormatInt(card.Payout.ID, 10), "#cancel"},
		{"deliveries", "/dashboard/deliveries", "table.deliveries"},
		{"merchant", "/dashboard/merchants/" + m.MerchantID, "#key-list"},
	}
	eval := func(js string) float64 {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[float64](js))
		if err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		return v
	}
	for _, scheme := range []string{"light", "dark"} {
		if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}}); err != nil {
			t.Fatalf("emulate %s: %v", scheme, err)
		}
		for _, p := range pages {
			for _, width := range []int64{375, 1280} {
				err := chromedp.Do(ctx, chromedp.EmulateViewport(width, 800), chromedp.Navigate(s.URL+p.path), chromedp.WaitVisible(chromedp.CSS(p.sel)))
				if err != nil {
					t.Fatalf("%s at %d: %v", p.path, width, err)
				}
				// Dark follows the system: the page's background is dark, its text light.
				lum := eval(`(() => { const m = getComputedStyle(document.body).backgroundColor.match(/\d+/g).map(Number); return (m[0]*299 + m[1]*587 + m[2]*114) / 1000; })()`)
				if (scheme == "dark") != (lum < 80) {
					t.Errorf("%s %s: the background's brightness is %.0f", p.name, scheme, lum)
				}
				if wide := eval(`document.documentElement.scrollWidth`); wide > float64(width)+1 {
					t.Errorf("%s %s at %d px: the page is %.0f px wide", p.name, scheme, width, wide)
				}
				if width == 375 {
					// Every section of the navigation fits on the screen, whole.
					if off := eval(`Array.from(document.querySelectorAll("nav a")).filter(a => { const r = a.getBoundingClientRect(); return r.right > window.innerWidth + 0.5 || r.left < 0 || a.scrollWidth > a.clientWidth + 1; }).length`); off > 0 {
						t.Errorf("%s at 375 px: %.0f navigation links are cut or off screen", p.name, off)
					}
					if p.name == "overview" {
						if small := eval(`Math.min(...Array.from(document.querySelectorAll(".chart text.axis")).map(e => e.getBoundingClientRect().height))`); small < 9 {
							t.Errorf("overview at 375 px: chart labels %.1f px high, under 9", small)
						}
					}
					if p.name == "deliveries" {
						// The When cell's content sits right of its label, never under it.
						if under := eval(`Array.from(document.querySelectorAll("table.deliveries td[data-label]")).filter(td => td.children.length > 0 && td.lastElementChild.getBoundingClientRect().left < td.getBoundingClientRect().left + td.getBoundingClientRect().width * 0.3).length`); under > 0 {
							t.Errorf("deliveries at 375 px: %.0f cells wrap their content into the label column", under)
						}
					}
				}
				painted(t, ctx)
				saveScreenshot(t, ctx, fmt.Sprintf("%s-%s-%d.png", p.name, scheme, width))
			}
		}
	}
	if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{}); err != nil {
		t.Fatal(err)
	}

	// The overview's ticks are whole, evenly spaced numbers.
	err = chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800), chromedp.Navigate(s.URL+"/dashboard"), chromedp.WaitVisible(chromedp.CSS(".chart")))
	if err != nil {
		t.Fatal(err)
	}
	ticks, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll(".chart text.axis[text-anchor=end]")).map(e => e.textContent)`))
	if err != nil || len(ticks) < 2 {
		t.Fatalf("ticks %v (%v)", ticks, err)
	}
	step := -1
	for i := 1; i < len(ticks); i++ {
		a, _ := strconv.Atoi(ticks[i-1])
		b, _ := strconv.Atoi(ticks[i])
		if step == -1 {
			step = b - a
		}
		if b-a != step || step <= 0 {
			t.Errorf("uneven ticks %v", ticks)
			break
		}
	}

	// The card form whose logo cannot be loaded shows the merchant's name instead.
	for _, width := range []int64{375, 1280} {
		err := chromedp.Do(ctx, chromedp.EmulateViewport(width, 800), chromedp.Navigate(card.Iframe), chromedp.WaitVisible(chromedp.CSS("#pan")))
		if err != nil {
			t.Fatalf("card form: %v", err)
		}
		name, err := chromedp.Run(ctx, chromedp.Poll[string](`(() => { const n = document.querySelector("header.brand .merchant"); return !document.querySelector("img.logo") && n ? n.textContent : ""; })()`,
			chromedp.WithPollingTimeout(10*time.Second)))
		if err != nil || !strings.HasPrefix(name, "Test ") {
			t.Errorf("a logo that cannot load: the header shows %q (%v), want the merchant's name", name, err)
		}
		saveScreenshot(t, ctx, fmt.Sprintf("card-form-no-logo-%d.png", width))
	}
}
