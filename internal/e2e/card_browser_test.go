package e2e

// A real browser (Debian's chromium or its headless shell, driven by chromedp) embeds the card form as a
// merchant would: a shop page on one origin frames the form of the payouts server on
// another (different ports are different origins), the beneficiary types a card, and the
// shop page receives the outcome by postMessage. Skipped when no chromium is installed,
// unless PAYOUTS_REQUIRE_BROWSER=1 (CI), which makes it fail instead.

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"payouts/internal/server"
	"payouts/internal/servertest"

	"github.com/chromedp/cdproto/emulation"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// screenshotDir is where the browser tests leave their screenshots: nowhere, unless
// PAYOUTS_SCREENSHOTS names a directory (relative to the repository's root), as
// docs/development.md does to retake the pictures the docs show.
func screenshotDir() string {
	dir := os.Getenv("PAYOUTS_SCREENSHOTS")
	if dir != "" && !filepath.IsAbs(dir) {
		dir = repoPath(dir)
	}
	return dir
}

// findChromium prefers the headless shell (Debian's chromium-headless-shell, Google's
// chrome-headless-shell): the same Blink without the browser's windows and user interface,
// it ran the browser tests in half the time and CPU of the full chromium. Any chromium will do.
func findChromium() string {
	for _, name := range []string{"chromium-headless-shell", "chrome-headless-shell", "chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// browserSlots are held by the tests whose browsers run: two at once. A browser test
// mostly waits (for a payout to settle, a page's poll, a notification's retry), so two
// keep a 2-core machine busy where one left the browser tests a serial chain as long as
// the rest of the package; more than two rendering at once miss their deadlines.
var browserSlots = make(chan struct{}, 2)

// theBrowser is the one headless chromium the package's browser tests share, started by
// the first of them and stopped by TestMain (stopBrowser): each test has a browser
// context of its own (newBrowser), so that none pays chromium's start and stop, a second
// or more of a loaded machine's CPU each.
var theBrowser struct {
	once sync.Once
	ctx  context.Context // the browser's first tab, which no test uses
	err  error
	stop func()
}

// sharedBrowser starts the package's chromium at path, once.
func sharedBrowser(path string) (context.Context, error) {
	theBrowser.once.Do(func() {
		profile, err := os.MkdirTemp("", "payouts-e2e-chromium-")
		if err != nil {
			theBrowser.err = err
			return
		}
		opts := append(chromedp.DefaultExecAllocatorOptions[:],
			chromedp.ExecPath(path),
			chromedp.NoSandbox,
			chromedp.DisableGPU,
			// /dev/shm, as before the browser was shared: a file-backed copy in /tmp is slower.
			chromedp.Flag("disable-dev-shm-usage", false),
			chromedp.Flag("disable-quic", true),
			chromedp.Flag("disable-component-update", true),
			chromedp.UserDataDir(profile),
			chromedp.WindowSize(1024, 900),
			// The merchant logo comes from a local https test server with its own certificate.
			chromedp.IgnoreCertErrors,
		)
		actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
		ctx, cancel := chromedp.NewContext(actx)
		theBrowser.stop = func() {
			cancel()
			cancelAlloc()
			os.RemoveAll(profile)
		}
		if err := chromedp.Do(ctx); err != nil {
			theBrowser.err = err
			return
		}
		theBrowser.ctx = ctx
	})
	return theBrowser.ctx, theBrowser.err
}

// stopBrowser stops the shared chromium, if a test started it.
func stopBrowser() {
	if theBrowser.stop != nil {
		theBrowser.stop()
	}
}

// newBrowser opens a window of the shared chromium for the test, in a browser context of
// its own: cookies, storage, cache and permissions no other test sees, disposed of at the
// test's end.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	if testing.Short() {
		t.Skip("drives a browser: seconds of start-up and rendering")
	}
	browserOnBolt(t)
	path := findChromium()
	if path == "" {
		if os.Getenv("PAYOUTS_REQUIRE_BROWSER") == "1" {
			t.Fatal("no chromium found and PAYOUTS_REQUIRE_BROWSER=1 (apt-get install -y chromium-headless-shell)")
		}
		t.Skip("no chromium found: install it (apt-get install -y chromium-headless-shell) to run the browser test")
	}
	// Two browsers at a time (browserSlots); the other tests go on meanwhile.
	browserSlots <- struct{}{}
	t.Cleanup(func() { <-browserSlots })
	root, err := sharedBrowser(path)
	if err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	ctx, cancel := chromedp.NewContext(root, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("open a window of chromium: %v", err)
	}
	// Another test's window may have the focus: the page believes it has it all the same,
	// and takes typed keys and the clipboard.
	if _, err := chromedp.Call(ctx, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: true}); err != nil {
		t.Fatalf("emulate focus: %v", err)
	}
	return ctx
}

// shopPage is the merchant's page: it frames the card form and records every message it
// receives in window.__msgs (kept in sessionStorage, so a navigation of the top window to
// the timeoutUrl keeps them).
const shopPage = `<!doctype html><html lang="es"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>Tienda Ejemplo</title>
<style>body{font-family:system-ui,sans-serif;margin:0;padding:12px;background:#e9edf5}h1{font-size:18px}
iframe{border:0;width:100%%;max-width:520px;height:820px;display:block;margin:0 auto;background:#fff;border-radius:12px}</style>
<script>
window.__msgs = JSON.parse(sessionStorage.getItem("msgs") || "[]");
addEventListener("message", function (e) {
  window.__msgs.push({origin: e.origin, topic: e.data && e.data.topic, data: e.data && e.data.data});
  sessionStorage.setItem("msgs", JSON.stringify(window.__msgs));
});
</script></head><body><h1>%s</h1>%s</body></html>`

// srcdocPages are the form pages the card endpoint answered as HTML, by order id, for the
// shop to embed with <iframe srcdoc>.
var srcdocPages sync.Map

// startShop serves the shop page on its own origin, and an https logo.
func startShop(t *testing.T) (shop *httptest.Server, logo *httptest.Server) {
	t.Helper()
	shop = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch r.URL.Path {
		case "/timeout":
			fmt.Fprintf(w, shopPage, "Tienda Ejemplo: el pago no se completó", "")
		case "/srcdoc":
			page, _ := srcdocPages.Load(r.URL.Query().Get("order"))
			b, _ := page.([]byte)
			fmt.Fprintf(w, shopPage, "Tienda Ejemplo", `<iframe id="pay" title="Recibir pago" srcdoc="`+html.EscapeString(string(b))+`"></iframe>`)
		default:
			src := r.URL.Query().Get("src")
			fmt.Fprintf(w, shopPage, "Tienda Ejemplo", `<iframe id="pay" title="Recibir pago" src="`+html.EscapeString(src)+`"></iframe>`)
		}
	}))
	t.Cleanup(shop.Close)
	logo = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/svg+xml")
		fmt.Fprint(w, `<svg xmlns="http://www.w3.org/2000/svg" width="187" height="40" viewBox="0 0 187 40">`+
			`<rect x="0" y="4" width="32" height="32" rx="8" fill="#e4572e"/><path d="M9 14h14l-2 12H11z" fill="#fff"/>`+
			`<text x="40" y="27" font-family="Arial,sans-serif" font-size="17" font-weight="700" fill="#1b1f2a">Tienda Ejemplo</text></svg>`)
	}))
	t.Cleanup(logo.Close)
	return shop, logo
}

// shopMerchant creates the merchant of the shop: cards on, the shop's origin allowed.
func shopMerchant(t *testing.T, s *testServer, origin string) *merchantClient {
	t.Helper()
	var out struct{ MerchantID, APIKey, APISecret string }
	settings := map[string]any{"cardPayouts": true, "allowedOrigins": []string{origin}}
	if code := s.admin(t, "POST", "/admin/v1/merchants", map[string]any{"name": "Tienda Ejemplo", "settings": settings}, &out); code != 201 {
		t.Fatalf("create merchant: %d", code)
	}
	if code := s.admin(t, "POST", "/admin/v1/merchants/"+out.MerchantID+"/balance",
		map[string]any{"country": "PER", "currency": "PEN", "amount": 1_000_000_000}, nil); code != 200 {
		t.Fatalf("fund: %d", code)
	}
	return &merchantClient{&servertest.Merchant{Base: s.URL, MerchantID: out.MerchantID, Key: out.APIKey, Secret: out.APISecret, HTTP: &http.Client{Timeout: 30 * time.Second}}}
}

type shopMessage struct {
	Origin string `json:"origin"`
	Topic  string `json:"topic"`
	Data   struct {
		PayoutID int64  `json:"payoutId"`
		OrderID  string `json:"orderId"`
		Stage    string `json:"stage"`
		Status   string `json:"status"`
	} `json:"data"`
}

// waitMessage polls the shop page's window.__msgs until a message of topic about the order
// arrives (the shop keeps the messages of earlier payouts in its sessionStorage). The
// top window may navigate meanwhile (to the timeoutUrl), so errors of a page going away
// are retried.
func waitMessage(t *testing.T, ctx context.Context, topic, orderID string, within time.Duration) shopMessage {
	t.Helper()
	var last string
	var got *shopMessage
	if poll(within, func() bool {
		ectx, cancel := context.WithTimeout(ctx, 2*time.Second)
		raw, err := chromedp.Run(ectx, chromedp.Evaluate[string](`JSON.stringify(window.__msgs || [])`))
		cancel()
		if err == nil {
			last = raw
			var msgs []shopMessage
			json.Unmarshal([]byte(raw), &msgs)
			for _, m := range msgs {
				if m.Topic == topic && m.Data.OrderID == orderID {
					got = &m
					break
				}
			}
		}
		return got != nil
	}) {
		return *got
	}
	t.Fatalf("the shop page got no %s for %s within %v; messages: %s", topic, orderID, within, last)
	return shopMessage{}
}

// shotHeight is the most of a page's height a screenshot takes, from its top. Every page
// but one fits whole; the API reference (/docs) is 78,000 px tall at 1280 px, and
// capturing it whole took 15 to 25 s of a loaded machine's CPU for a picture that no one
// looks at (at a phone's width it is taller than the browser captures at all).
const shotHeight = 8000

// saveScreenshot keeps the page where PAYOUTS_SCREENSHOTS says; without it, none is taken:
// a capture checks nothing (a page that renders wrong captures all the same), and the
// captures thrown away were a fifth of the browser tests' CPU (82 s → 65 s of the
// machine's, 56 s → 41 s of wall time, the browser tests alone).
func saveScreenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if screenshotDir() == "" {
		return
	}
	size, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`[document.documentElement.scrollWidth, document.documentElement.scrollHeight]`))
	if err != nil || len(size) != 2 {
		t.Fatalf("screenshot %s: the page's size %v (%v)", name, size, err)
	}
	beyond, fromSurface := true, true
	params := cdppage.CaptureScreenshotParams{Format: cdppage.CaptureScreenshotFormatPng,
		CaptureBeyondViewport: &beyond, FromSurface: &fromSurface}
	if size[1] > shotHeight {
		params.Clip = &cdppage.Viewport{Width: size[0], Height: shotHeight, Scale: 1}
	}
	shot, err := chromedp.Call(ctx, cdppage.CaptureScreenshot, params)
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	writeScreenshot(t, name, shot.Data)
}

// writeScreenshot keeps a screenshot where PAYOUTS_SCREENSHOTS says.
func writeScreenshot(t *testing.T, name string, png []byte) {
	t.Helper()
	dir := screenshotDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// payInFrame opens the shop page (framing the form at formURL, or with srcdoc when formURL
// starts with "srcdoc:") and types a card into the framed form and submits it; otherCard
// first chooses "another card" over the card on file the form offers.
func payInFrame(t *testing.T, ctx context.Context, shopURL, formURL, pan string, otherCard bool) {
	t.Helper()
	page := shopURL + "/?src=" + url.QueryEscape(formURL)
	if order, ok := strings.CutPrefix(formURL, "srcdoc:"); ok {
		page = shopURL + "/srcdoc?order=" + url.QueryEscape(order)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(page)); err != nil {
		t.Fatal(err)
	}
	qctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	frames, err := chromedp.Run(qctx, chromedp.Nodes(chromedp.CSS("iframe#pay")))
	if err != nil || len(frames) == 0 {
		t.Fatalf("no iframe: %v", err)
	}
	in := chromedp.FromNode(frames[0])
	if otherCard {
		err := chromedp.Do(qctx, chromedp.WaitVisible(chromedp.CSS("#card-new"), in), chromedp.Sleep(200*time.Millisecond))
		if err != nil {
			t.Fatalf("no choice of another card: %v", err)
		}
		// With JavaScript the saved card hides the new card's fields until it is chosen.
		if hidden, err := chromedp.Run(qctx, chromedp.JavascriptAttribute[bool](chromedp.CSS("#new-card"), "hidden", in)); err != nil || !hidden {
			t.Errorf("the new card's fields show while the saved card is chosen (%v)", err)
		}
		saveScreenshot(t, ctx, "card-saved-card-1024.png")
		if err := chromedp.Do(qctx, chromedp.Click(chromedp.CSS("#card-new"), in)); err != nil {
			t.Fatalf("choose another card: %v", err)
		}
	}
	err = chromedp.Do(qctx,
		chromedp.WaitVisible(chromedp.CSS("#pan"), in),
		chromedp.SendKeys(chromedp.CSS("#holder"), "Ana Quispe", in),
		chromedp.SendKeys(chromedp.CSS("#pan"), pan, in),
		chromedp.SendKeys(chromedp.CSS("#expiry"), time.Now().AddDate(3, 0, 0).Format("0106"), in),
		chromedp.SendKeys(chromedp.CSS("#cvv"), "123", in),
	)
	if err != nil {
		t.Fatalf("type the card: %v", err)
	}
	// card.js groups the number as it is typed.
	shown, err := chromedp.Run(qctx, chromedp.Value(chromedp.CSS("#pan"), in))
	if err != nil || strings.Count(shown, " ") < 3 {
		t.Errorf("card number shown as %q (%v): want it grouped by card.js", shown, err)
	}
	if err := chromedp.Do(qctx, chromedp.Click(chromedp.CSS("#submit"), in)); err != nil {
		t.Fatalf("submit: %v", err)
	}
}

func TestBrowserCardFormInIframe(t *testing.T) {
	t.Parallel()
	ctx := newBrowser(t)
	shop, logo := startShop(t)
	s := startServer(t, "")
	c := shopMerchant(t, s, shop.URL)
	body := func(order string) map[string]any {
		b := cardRequest(order)
		b["timeoutUrl"] = shop.URL + "/timeout"
		b["merchantLogo"] = logo.URL + "/logo.svg"
		return b
	}

	// Screenshots of the form at a phone's and a desktop's width, and of its errors.
	shot := c.openCard(t, body("BRW-SHOT"), 200)
	for _, w := range []int64{375, 1024} {
		err := chromedp.Do(ctx, chromedp.EmulateViewport(w, 800), chromedp.Navigate(shot.Iframe),
			chromedp.WaitVisible(chromedp.CSS("#pan")), chromedp.Sleep(300*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		saveScreenshot(t, ctx, fmt.Sprintf("card-form-%d.png", w))
	}
	// At 320 px (the narrowest phone) nothing overflows sideways.
	err := chromedp.Do(ctx, chromedp.EmulateViewport(320, 700), chromedp.Navigate(shot.Iframe), chromedp.WaitVisible(chromedp.CSS("#pan")))
	if err != nil {
		t.Fatal(err)
	}
	if wide, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth`)); err != nil || wide {
		t.Errorf("the form overflows at 320 px (%v)", err)
	}
	err = chromedp.Do(ctx, chromedp.EmulateViewport(375, 800),
		chromedp.SendKeys(chromedp.CSS("#pan"), "5555555555554444"),
		chromedp.Click(chromedp.CSS("#submit")),
		chromedp.WaitVisible(chromedp.CSS("#error-summary")), chromedp.Sleep(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if focused, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.activeElement && document.activeElement.id`)); focused != "error-summary" {
		t.Errorf("the error summary is not focused after a failed submission (focus on %q)", focused)
	}
	saveScreenshot(t, ctx, "card-form-errors-375.png")
	err = chromedp.Do(ctx, chromedp.Navigate(shot.Iframe+"&lang=en"), chromedp.WaitVisible(chromedp.CSS("#pan")))
	if err != nil {
		t.Fatal(err)
	}
	if label, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("label[for=pan]"))); label != "Card number" {
		t.Errorf("English label = %q", label)
	}

	t.Run("success posts mps-payout-finished-ok", func(t *testing.T) {
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(1024, 900)); err != nil {
			t.Fatal(err)
		}
		a := c.openCard(t, body("BRW-OK"), 200)
		payInFrame(t, ctx, shop.URL, a.Iframe, "4111111111111111", false)
		m := waitMessage(t, ctx, "mps-payout-finished-ok", "BRW-OK", 20*time.Second)
		if m.Origin != s.URL || m.Data.PayoutID != a.Payout.ID || m.Data.OrderID != "BRW-OK" || m.Data.Stage != "SUCCESS" || m.Data.Status != "PROCESSED" {
			t.Errorf("message: %+v (origin want %s)", m, s.URL)
		}
		saveScreenshot(t, ctx, "card-embedded-success-1024.png")
	})

	t.Run("declined card posts mps-payout-finished-fail", func(t *testing.T) {
		a := c.openCard(t, body("BRW-FAIL"), 200)
		// The card of the first payout is on file: the form offers it; this one takes a new card.
		payInFrame(t, ctx, shop.URL, a.Iframe, "4000000000000002", true)
		m := waitMessage(t, ctx, "mps-payout-finished-fail", "BRW-FAIL", 20*time.Second)
		if m.Data.PayoutID != a.Payout.ID || m.Data.Stage != "REJECTED" || m.Data.Status != "REJECTED_BANK" {
			t.Errorf("message: %+v", m)
		}
	})

	t.Run("the HTML answer in <iframe srcdoc> posts mps-payout-finished-ok", func(t *testing.T) {
		b := body("BRW-SRCDOC")
		b["beneficiary"].(map[string]any)["document"] = map[string]any{"type": 1, "number": "11223344"}
		code, _, page := c.createCard(t, "payouts/card", b, "text/html")
		if code != 200 {
			t.Fatalf("card payout: %d %s", code, page)
		}
		srcdocPages.Store("BRW-SRCDOC", page)
		// The srcdoc form runs in the shop's origin: its post is cross-origin and passes
		// because the shop is the merchant's allowed origin.
		payInFrame(t, ctx, shop.URL, "srcdoc:BRW-SRCDOC", "4242424242424242", false)
		m := waitMessage(t, ctx, "mps-payout-finished-ok", "BRW-SRCDOC", 20*time.Second)
		if m.Origin != s.URL || m.Data.OrderID != "BRW-SRCDOC" || m.Data.Stage != "SUCCESS" {
			t.Errorf("message: %+v", m)
		}
	})

	t.Run("expiry posts mps-payout-finished-timeout", func(t *testing.T) {
		dir := t.TempDir()
		s2 := startServerWith(t, dir, server.Options{CardSessionLength: 3 * time.Second})
		c2 := shopMerchant(t, s2, shop.URL)
		b := body("BRW-LATE")
		delete(b, "merchantLogo")
		a := c2.openCard(t, b, 200)
		if err := chromedp.Do(ctx, chromedp.Navigate(shop.URL+"/?src="+url.QueryEscape(a.Iframe))); err != nil {
			t.Fatal(err)
		}
		m := waitMessage(t, ctx, "mps-payout-finished-timeout", "BRW-LATE", 20*time.Second)
		if m.Origin != s2.URL || m.Data.PayoutID != a.Payout.ID || m.Data.Status != "EXPIRED" {
			t.Errorf("message: %+v", m)
		}
		// card.js then takes the top window to the timeoutUrl; a browser may refuse that to
		// a cross-origin frame without a click, and the page keeps a link for that case.
		var loc string
		poll(5*time.Second, func() bool {
			loc, _ = chromedp.Run(ctx, chromedp.Location())
			return loc == shop.URL+"/timeout"
		})
		t.Logf("top window after the expiry: %s", loc)
		// The location changes before the new page is laid out: a screenshot taken at once
		// may find a page of no width.
		if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS("h1"))); err != nil {
			t.Fatalf("the page after the expiry: %v", err)
		}
		painted(t, ctx)
		saveScreenshot(t, ctx, "card-after-timeout-1024.png")
		// The expiry page itself, opened directly.
		err := chromedp.Do(ctx, chromedp.EmulateViewport(375, 800), chromedp.Navigate(a.Iframe),
			chromedp.WaitVisible(chromedp.CSS(".result-expired")))
		if err != nil {
			t.Fatal(err)
		}
		saveScreenshot(t, ctx, "card-expired-375.png")
	})
}
