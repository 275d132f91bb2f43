package e2e

// The dashboard's payout link screens in a real browser, at a phone's width and a
// desktop's: the form creates a link, its payout's page shows it with Copy (the page's one
// script), Resend the email and Cancel, each clicked. Its screenshots are the pictures
// docs/guides/links.md shows (retaken with PAYOUTS_SCREENSHOTS=docs/images).

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

func TestBrowserDashboardPayoutLink(t *testing.T) {
	t.Parallel()
	ctx := newBrowser(t)
	s := startServer(t, "")
	m := s.newMerchant(t, map[string]any{"emailNotifications": true})
	blockOthers(t, ctx, s.URL)
	run := func(name string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		if err := chromedp.Do(sctx, steps...); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	run("sign in", chromedp.EmulateViewport(1280, 900), chromedp.Navigate(s.URL+"/dashboard"),
		chromedp.WaitVisible(chromedp.CSS("#token")), chromedp.SendKeys(chromedp.CSS("#token"), s.AdminToken),
		chromedp.Submit(chromedp.CSS("#token")), chromedp.WaitVisible(chromedp.CSS(".tiles")))
	// The Copy button writes to the clipboard, which a page may do once allowed (in the
	// test's own browser context, not the shared browser's default one).
	for _, name := range []string{"clipboard-read", "clipboard-write"} {
		if _, err := chromedp.CallBrowser(ctx, browser.SetPermission, browser.SetPermissionParams{
			Permission: &browser.PermissionDescriptor{Name: name}, Setting: browser.PermissionSettingGranted, Origin: s.URL,
			BrowserContextID: chromedp.FromContext(ctx).BrowserContextID}); err != nil {
			t.Fatalf("allow %s: %v", name, err)
		}
	}

	for _, width := range []int64{375, 1280} {
		order := fmt.Sprintf("DLINK-BR-%d", width)
		run(order+" form", chromedp.EmulateViewport(width, 900), chromedp.Navigate(s.URL+"/dashboard/merchants/"+m.MerchantID+"/new-link?country=COL"),
			chromedp.WaitVisible(chromedp.CSS("#nl-form")))
		if wide, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`document.documentElement.scrollWidth`)); err != nil || wide > float64(width)+1 {
			t.Errorf("the link form at %d px is %.0f px wide (%v)", width, wide, err)
		}
		for _, f := range [][2]string{{"#nl-amount", "150000"}, {"#nl-orderId", order}, {"#nl-description", "Reembolso"},
			{"#nl-beneficiary-name", "Juan"}, {"#nl-beneficiary-lastName", "Pérez"}, {"#nl-beneficiary-email", "juan.perez@gmail.com"},
			{"#nl-beneficiary-document-number", "1020304050"}} {
			run(order+" "+f[0], chromedp.SendKeys(chromedp.CSS(f[0]), f[1]))
		}
		run(order+" kinds", chromedp.SetValue(chromedp.CSS("#nl-beneficiary-document-type"), "1"),
			chromedp.Click(chromedp.CSS("#nl-kind-2")), chromedp.Click(chromedp.CSS("#nl-kind-4")))
		painted(t, ctx)
		saveScreenshotOf(t, ctx, "#nl-form", "#nl-form", fmt.Sprintf("link-dashboard-new-%d.png", width))
		run(order+" create", chromedp.Click(chromedp.CSS("#nl-create")), chromedp.WaitVisible(chromedp.CSS("#link-panel")))
		state, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#link-state").dataset.state`))
		if err != nil || state != "waiting" {
			t.Fatalf("%s: the link's state %q %v", order, state, err)
		}
		linkURL, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#link-url").value`))
		if err != nil || !strings.Contains(linkURL, "/link?s=") {
			t.Fatalf("%s: the link %q %v", order, linkURL, err)
		}

		// Copy: the script shows the button, and a click puts the link on the clipboard.
		run(order+" copy", chromedp.WaitVisible(chromedp.CSS("#link-copy")), chromedp.Click(chromedp.CSS("#link-copy")))
		copied, err := chromedp.Run(ctx, chromedp.Poll[string](`(() => { const b = document.querySelector("#link-copy"); return b.textContent === b.dataset.done ? "done" : ""; })()`,
			chromedp.WithPollingTimeout(10*time.Second)))
		if err != nil || copied != "done" {
			t.Errorf("%s: Copy did not say it copied (%v)", order, err)
		} else if got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`navigator.clipboard.readText()`, chromedp.EvalAwaitPromise)); err != nil || got != linkURL {
			t.Errorf("%s: the clipboard holds %q (%v), want the link", order, got, err)
		}
		painted(t, ctx)
		saveScreenshotOf(t, ctx, "#link-panel", "#cancel", fmt.Sprintf("link-dashboard-payout-%d.png", width))

		// Resend the email: the page that follows (a new document, unmarked) counts it.
		run(order+" resend", chromedp.Evaluate[chromedp.Void](`document.body.dataset.seen = "1"`),
			chromedp.Click(chromedp.CSS("#link-resend")), chromedp.WaitVisible(chromedp.CSS(`body:not([data-seen]) #link-resend-note`)))
		if note, err := textOf(ctx, "#link-resend-note"); err != nil || !regexp.MustCompile(`\b1\b`).MatchString(note) {
			t.Errorf("%s: after a resend the note says %q (%v)", order, note, err)
		}
		id := payoutIDOf(t, m, order)
		s.waitMails(t, "?kind=link.mail&payoutId="+itoa(id), 2, 10*time.Second)

		// Cancel: the link ends, nothing more to copy or resend.
		run(order+" cancel", chromedp.Click(chromedp.CSS("#cancel")), chromedp.WaitVisible(chromedp.CSS(`#link-state[data-state="cancelled"]`)))
		if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#link-url, #link-copy, #link-resend").length`)); err != nil || n != 0 {
			t.Errorf("%s: a cancelled link still offers %d of copy and resend (%v)", order, n, err)
		}
		if d := m.linkOf(t, id); d.Link == nil || d.Link.State != "ended" {
			t.Errorf("%s: the API's view of the cancelled link: %+v", order, d.Link)
		}
	}
}

// payoutIDOf is the id of the merchant's payout of orderID.
func payoutIDOf(t *testing.T, m *merchantClient, orderID string) int64 {
	t.Helper()
	code, _, raw := m.do(t, "GET", "payouts", nil, "orderId="+orderID)
	if code != 200 {
		t.Fatalf("list %s: %d %s", orderID, code, raw)
	}
	var page struct{ Items []payoutAnswer }
	if err := json.Unmarshal(raw, &page); err != nil || len(page.Items) != 1 {
		t.Fatalf("list %s: %v %s", orderID, err, raw)
	}
	return page.Items[0].Payout.ID
}

// saveScreenshotOf keeps the part of the page from the top of the element from to the
// bottom of the element to, across the page's width: a committed picture shows what its
// text is about, and stays small.
func saveScreenshotOf(t *testing.T, ctx context.Context, from, to, name string) {
	t.Helper()
	if screenshotDir() == "" {
		return // none is taken but to be kept (saveScreenshot)
	}
	box, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](fmt.Sprintf(`(() => {
		const a = document.querySelector(%q).getBoundingClientRect(), b = document.querySelector(%q).getBoundingClientRect();
		const top = Math.max(0, Math.min(a.top, b.top) + window.scrollY - 16), bottom = Math.max(a.bottom, b.bottom) + window.scrollY + 16;
		return [top, bottom - top, document.documentElement.clientWidth];
	})()`, from, to)))
	if err != nil || len(box) != 3 {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	beyond := true
	shot, err := chromedp.Call(ctx, cdppage.CaptureScreenshot, cdppage.CaptureScreenshotParams{Format: cdppage.CaptureScreenshotFormatPng,
		Clip: &cdppage.Viewport{X: 0, Y: box[0], Width: box[2], Height: box[1], Scale: 1}, CaptureBeyondViewport: &beyond})
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	writeScreenshot(t, name, shot.Data)
}
