package e2e

// The dashboard in a real browser (Debian's chromium, driven by chromedp), with the network
// to anything but the server blocked: sign in, find a payout the API created by its orderId,
// press "Succeed", see SUCCESS and the delivered notification; send a dead letter again and
// see it delivered; /docs renders its operations offline. Screenshots of every page at 375
// and 1280 px go to testout/screenshots/.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// blockOthers lets the browser reach only base (and data:/blob: URLs); every other request
// fails and is recorded.
func blockOthers(t *testing.T, ctx context.Context, base string) func() []string {
	var mu sync.Mutex
	var blocked []string
	paused := make(chan *fetch.EventRequestPaused, 1024)
	// The listener must not run commands: it hands the paused requests to a goroutine.
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*fetch.EventRequestPaused); ok {
			select {
			case paused <- e:
			default:
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case e := <-paused:
				u := e.Request.URL
				if u == base || strings.HasPrefix(u, base+"/") || strings.HasPrefix(u, "data:") || strings.HasPrefix(u, "blob:") {
					chromedp.Call(ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: e.RequestID})
					continue
				}
				mu.Lock()
				blocked = append(blocked, u)
				mu.Unlock()
				chromedp.Call(ctx, fetch.FailRequest, fetch.FailRequestParams{RequestID: e.RequestID, ErrorReason: network.ErrorReasonBlockedByClient})
			}
		}
	}()
	if _, err := chromedp.Call(ctx, fetch.Enable, fetch.EnableParams{}); err != nil {
		t.Fatalf("enable request interception: %v", err)
	}
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), blocked...)
	}
}

// textOf reads the text of the first element matching sel.
func textOf(ctx context.Context, sel string) (string, error) {
	return chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
}

// waitPageText reloads url until its body's text contains want.
func waitPageText(t *testing.T, ctx context.Context, url, sel, want string, within time.Duration) string {
	t.Helper()
	var last string
	if poll(within, func() bool {
		if err := chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitReady(chromedp.CSS("body"))); err != nil {
			t.Fatalf("open %s: %v", url, err)
		}
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`(document.querySelector(%q)||{}).innerText||""`, sel)))
		if err != nil {
			t.Fatal(err)
		}
		last = s
		return strings.Contains(s, want)
	}) {
		return last
	}
	t.Fatalf("%s: %q never showed %q; last:\n%s", url, sel, want, last)
	return ""
}

// shoot saves the current page at 375 and 1280 px wide.
func shoot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	for _, w := range []int64{375, 1280} {
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(w, 800)); err != nil {
			t.Fatal(err)
		}
		painted(t, ctx)
		saveScreenshot(t, ctx, fmt.Sprintf("dashboard-%s-%d.png", name, w))
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}
}

// painted waits until the browser has laid the page out anew and painted it: two animation
// frames after a change of size or scheme, before a screenshot.
func painted(t *testing.T, ctx context.Context) {
	t.Helper()
	_, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))`,
		chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
}

// hook is a merchant's notification endpoint that fails while failing is set.
type hook struct {
	failing atomic.Bool
	mu      sync.Mutex
	got     []string
}

func (h *hook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if h.failing.Load() {
		http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
		return
	}
	h.mu.Lock()
	h.got = append(h.got, string(body))
	h.mu.Unlock()
}

func (h *hook) received(orderID string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, b := range h.got {
		if strings.Contains(b, `"`+orderID+`"`) {
			return true
		}
	}
	return false
}

func TestDashboardBrowser(t *testing.T) {
	t.Parallel()
	ctx := newBrowser(t)
	s := startServer(t, "", "--allow-private-notification-urls")
	h := &hook{}
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	m := s.newMerchant(t, map[string]any{"notificationUrl": hs.URL + "/hook", "emailNotifications": true})
	blocked := blockOthers(t, ctx, s.URL)

	// A payout that waits at the bank until it is simulated (account ending in 9997).
	stamp := time.Now().UnixNano() % 1_000_000
	orderA := fmt.Sprintf("DASH-A-%d", stamp)
	req := perBankRequest(orderA)
	req["destination"] = map[string]any{"bankAccount": map[string]any{"bankCode": "003", "accountType": 2, "accountNumber": "1231234569997"}}
	code, _, raw := m.do(t, "POST", "payouts", req, "")
	if code != 201 {
		t.Fatalf("create: %d %s", code, raw)
	}
	idA := decodePayout(t, raw).Payout.ID
	m.waitStage(t, idA, "IN_PROGRESS", 5*time.Second)

	// Sign in.
	err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(s.URL+"/dashboard"),
		chromedp.WaitVisible(chromedp.CSS("#token")))
	if err != nil {
		t.Fatalf("the sign-in page: %v", err)
	}
	shoot(t, ctx, "login")
	err = chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS("#token"), s.AdminToken),
		chromedp.Submit(chromedp.CSS("#token")), chromedp.WaitVisible(chromedp.CSS(".tiles")))
	if err != nil {
		t.Fatalf("sign in: %v", err)
	}
	shoot(t, ctx, "overview")

	// Find the payout by its orderId and open it.
	err = chromedp.Do(ctx, chromedp.Navigate(s.URL+"/dashboard/payouts"), chromedp.WaitVisible(chromedp.CSS("#orderId")),
		chromedp.SendKeys(chromedp.CSS("#orderId"), orderA), chromedp.Submit(chromedp.CSS("#orderId")),
		chromedp.WaitVisible(chromedp.CSS("#payouts")))
	if err != nil {
		t.Fatalf("filter by orderId: %v", err)
	}
	shoot(t, ctx, "payouts")
	if rows, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#payouts tbody tr").length`)); err != nil || rows != 1 {
		t.Fatalf("rows for orderId %s: %d (%v)", orderA, rows, err)
	}
	err = chromedp.Do(ctx, chromedp.Click(chromedp.CSS(fmt.Sprintf(`#payouts td a[href="/dashboard/payouts/%d"]`, idA))),
		chromedp.WaitVisible(chromedp.CSS("#succeed")))
	if err != nil {
		t.Fatalf("open the payout: %v", err)
	}
	if u := currentURL(t, ctx); !strings.HasSuffix(u, fmt.Sprintf("/dashboard/payouts/%d", idA)) {
		t.Fatalf("opened %s", u)
	}

	// Succeed (sandbox): SUCCESS in the timeline, and the notification delivered.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#succeed")), chromedp.WaitVisible(chromedp.CSS(".flash"))); err != nil {
		t.Fatalf("press Succeed: %v", err)
	}
	timeline, err := textOf(ctx, "#timeline")
	if err != nil || !strings.Contains(timeline, "SUCCESS") || !strings.Contains(timeline, "PROCESSED") {
		t.Fatalf("timeline after Succeed: %q (%v)", timeline, err)
	}
	detail := fmt.Sprintf("%s/dashboard/payouts/%d", s.URL, idA)
	waitPageText(t, ctx, detail, `tr[data-event="merchant.notification.`+fmt.Sprint(idA)+`.PROCESSED"]`, "Entregado", 15*time.Second)
	if !h.received(orderA) {
		t.Fatal("the merchant's endpoint never received the notification the page shows delivered")
	}
	shoot(t, ctx, "payout")

	// A dead letter: the endpoint fails, then the merchant loses its notificationUrl, which
	// ends the retries (a permanent failure).
	h.failing.Store(true)
	orderB := fmt.Sprintf("DASH-B-%d", stamp)
	code, _, raw = m.do(t, "POST", "payouts", perBankRequest(orderB), "")
	if code != 201 {
		t.Fatalf("create: %d %s", code, raw)
	}
	idB := decodePayout(t, raw).Payout.ID
	m.waitStage(t, idB, "SUCCESS", 10*time.Second)
	eventB := fmt.Sprintf("merchant.notification.%d.PROCESSED", idB)
	rowB := `tr[data-event="` + eventB + `"]`
	waitPageText(t, ctx, s.URL+"/dashboard/deliveries?state=retrying", rowB, "Reintentando", 15*time.Second)
	if code := s.admin(t, "PATCH", "/admin/v1/merchants/"+m.MerchantID, map[string]any{"settings": map[string]any{"notificationUrl": ""}}, nil); code != 200 {
		t.Fatalf("patch: %d", code)
	}
	// The next try finds no URL and gives up: a minute of the sandbox clock makes it due at
	// once instead of after the retry's backoff (2 s, 4 s, ...).
	if code := s.admin(t, "POST", "/admin/v1/sandbox/clock", map[string]any{"advance": "1m"}, nil); code != 200 {
		t.Fatalf("advance the sandbox clock: %d", code)
	}
	waitPageText(t, ctx, s.URL+"/dashboard/deliveries?state=dead", rowB, "Abandonado", 15*time.Second)
	shoot(t, ctx, "deliveries")

	// The endpoint is back: send it again, and it is delivered under the same event id.
	h.failing.Store(false)
	if code := s.admin(t, "PATCH", "/admin/v1/merchants/"+m.MerchantID, map[string]any{"settings": map[string]any{"notificationUrl": hs.URL + "/hook"}}, nil); code != 200 {
		t.Fatalf("patch: %d", code)
	}
	err = chromedp.Do(ctx, chromedp.Click(chromedp.CSS(rowB+` button.resend`)), chromedp.WaitVisible(chromedp.CSS(".flash")))
	if err != nil {
		t.Fatalf("press Send again: %v", err)
	}
	waitPageText(t, ctx, fmt.Sprintf("%s/dashboard/payouts/%d", s.URL, idB), rowB, "Entregado", 15*time.Second)
	if !h.received(orderB) {
		t.Fatal("the notification sent again never reached the endpoint")
	}

	// The other pages, for the screenshots (and that they render signed in).
	for _, p := range []struct{ path, sel, name string }{
		{"/dashboard/merchants", "#create-h", "merchants"},
		{"/dashboard/merchants/" + m.MerchantID, "#bal-h", "merchant"},
		{"/dashboard/mail", ".mails", "mail"},
		{"/dashboard/merchants/" + m.MerchantID + "/new-payout?country=PER&accountType=4&bankCode=037", "#np-form", "new-payout"},
		{"/dashboard", ".chart", "overview-busy"},
	} {
		if err := chromedp.Do(ctx, chromedp.Navigate(s.URL+p.path), chromedp.WaitVisible(chromedp.CSS(p.sel))); err != nil {
			t.Fatalf("%s: %v", p.path, err)
		}
		shoot(t, ctx, p.name)
	}

	// /docs renders its operations list from the embedded Redoc, with nothing but the server reachable.
	err = chromedp.Do(ctx, chromedp.Navigate(s.URL+"/docs"))
	if err == nil {
		_, err = chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelectorAll("li[data-item-id*='operation/']").length > 4`, chromedp.WithPollingTimeout(30*time.Second)))
	}
	if err != nil {
		t.Fatalf("/docs did not render its operations: %v (blocked: %v)", err, blocked())
	}
	ops, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("li[data-item-id*='operation/']")).map(e => e.innerText)`))
	if err != nil {
		t.Fatal(err)
	}
	if len(ops) < 5 || !strings.Contains(strings.Join(ops, "\n"), "Create a payout") {
		t.Fatalf("docs operations: %q", ops)
	}
	if yaml, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`!!document.querySelector('a[href="/openapi.yaml"]')`)); err != nil || !yaml {
		t.Errorf("the docs page has no link to /openapi.yaml")
	}
	shoot(t, ctx, "docs")
	t.Logf("requests blocked (not the server): %v", blocked())
}

func currentURL(t *testing.T, ctx context.Context) string {
	t.Helper()
	u, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	return u
}
