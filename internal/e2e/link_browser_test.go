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
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"payouts/rules"
)

func TestBrowserPayoutLinkReview(t *testing.T) {
	t.Parallel()
	ctx := newBrowser(t)
	s := startServer(t, "")
	c := s.newMerchant(t, map[string]any{"realTimePhoneAccount": true, "notificationUrl": "sandbox:inbox"})
	if code := s.admin(t, "PUT", "/admin/v1/sandbox/directory/PER/987650021", map[string]any{"holderName": "Ana Quispe",
		"entities": []map[string]any{{"entityBrand": "Yape", "status": "AVAILABLE"}}}, nil); code != 200 {
		t.Fatalf("put PER entry: %d", code)
	}
	runIn := func(ctx context.Context, name string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := stepsIn(ctx, name, steps...); err != nil {
			t.Fatal(err)
		}
	}
	run := func(name string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		runIn(ctx, name, steps...)
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
			wantAccessible(t, ctx, order+" form")
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
			wantAccessible(t, ctx, order+" review with an error")
			run(order+" confirm", chromedp.SetValue(chromedp.CSS("#f-document"), "45678912"),
				chromedp.Click(chromedp.CSS("#confirm")), chromedp.WaitVisible(chromedp.CSS("#result")))
			if p := c.waitStage(t, a.Payout.ID, "SUCCESS", 15*time.Second); p.Output.Status != "PROCESSED" {
				t.Errorf("%s: settled %s", order, p.Output.Status)
			}
			// The page shows the outcome once its poll sees it final: waited for, so that its
			// reload never lands after the next link's navigation.
			run(order+" outcome", chromedp.WaitVisible(chromedp.CSS("#result.result-success")))
			wantAccessible(t, ctx, order+" outcome")
			wantNotified(t, c, a.Payout.ID)
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
	col := s.newMerchant(t, map[string]any{"realTimePhoneAccount": true, "realTimeKey": true, "notificationUrl": "sandbox:inbox"})
	type givenLink struct {
		order, kind    string
		fields         [][2]string
		holderReviewed bool
		lang           string
		width          int64
		link, doc      string
		m              *merchantClient
		id             int64
	}
	var given []givenLink
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
			given = append(given, givenLink{order, k.kind, k.fields, k.holderReviewed, view.lang, view.width, a.Link, doc, m, a.Payout.ID})
		}
	}
	// Each link in a tab of its own, closed once the destination is taken: the outcome is
	// waited for below, all at once, and no page left polling can reload over another.
	// Three tabs at a time: each mostly waits on a round trip to the browser or the server.
	give := func(g givenLink) error {
		tab, closeTab := chromedp.NewContext(ctx)
		defer closeTab()
		// A tab behind the first has no focus: it takes typed keys once it believes it has.
		if _, err := chromedp.Call(tab, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: true}); err != nil {
			return err
		}
		steps := []chromedp.Action[chromedp.Void]{chromedp.EmulateViewport(g.width, 900), chromedp.Navigate(g.link), chromedp.WaitVisible(chromedp.CSS("#kind-" + g.kind)),
			chromedp.Click(chromedp.CSS("#kind-" + g.kind)), chromedp.Click(chromedp.CSS("#choose")), chromedp.WaitVisible(chromedp.CSS("#" + g.fields[0][0]))}
		for _, f := range g.fields {
			if f[0] == "f-bankCode" {
				steps = append(steps, chromedp.SetValue(chromedp.CSS("#"+f[0]), f[1]))
			} else {
				steps = append(steps, chromedp.SendKeys(chromedp.CSS("#"+f[0]), f[1]))
			}
		}
		steps = append(steps, chromedp.Click(chromedp.CSS("#submit")), chromedp.WaitVisible(chromedp.CSS("#f-document")))
		if err := stepsIn(tab, "kind and destination", steps...); err != nil {
			return err
		}
		if n, err := chromedp.Run(tab, chromedp.Evaluate[int](`document.querySelectorAll("#review-holder").length`)); err != nil || (n == 1) != g.holderReviewed {
			t.Errorf("%s: %d holders shown %v, want %v", g.order, n, err, g.holderReviewed)
		}
		return stepsIn(tab, "confirm", chromedp.SendKeys(chromedp.CSS("#f-document"), g.doc), chromedp.Click(chromedp.CSS("#confirm")),
			chromedp.WaitVisible(chromedp.CSS("#result")))
	}
	failed := make([]error, len(given))
	var wg sync.WaitGroup
	tabs := make(chan struct{}, 3)
	for i, g := range given {
		wg.Add(1)
		tabs <- struct{}{}
		go func() {
			defer func() { <-tabs; wg.Done() }()
			failed[i] = give(g)
		}()
	}
	wg.Wait()
	for i, g := range given {
		if failed[i] != nil {
			t.Fatalf("%s: %v", g.order, failed[i])
		}
	}
	for _, g := range given {
		if p := g.m.waitStage(t, g.id, "SUCCESS", 15*time.Second); p.Output.Status != "PROCESSED" {
			t.Errorf("%s: settled %s", g.order, p.Output.Status)
		}
	}

	// By keyboard alone, on a phone: Tab reaches each control in the page's order, Space
	// chooses the kind, Enter submits; a wrong account's errors take the focus, each tied to
	// its field; the review is confirmed the same way.
	{
		order := "LINK-BR-KEYS"
		req := linkRequest(order)
		delete(req, "allowedDestinations")
		_, _, a, raw := col.createLink(t, req)
		if a.Link == "" {
			t.Fatalf("create: %s", raw)
		}
		run(order, chromedp.EmulateViewport(375, 900), chromedp.Navigate(a.Link), chromedp.WaitVisible(chromedp.CSS("#kind-2")))
		tabTo(t, ctx, order, "kind-2")
		run(order+" choose", chromedp.KeyEvent(" "))
		tabTo(t, ctx, order, "choose")
		run(order+" choose", chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(chromedp.CSS("#f-accountNumber")))
		if order, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](focusOrder)); err != nil || len(order) < 3 {
			t.Errorf("%s: the focus order %v (%v)", order, order, err)
		} else {
			walked := tabWalk(t, ctx, len(order))
			if strings.Join(walked, ",") != strings.Join(order, ",") {
				t.Errorf("Tab walks %v, want the page's order %v", walked, order)
			}
		}
		tabTo(t, ctx, order, "f-bankCode")
		run(order+" bank", chromedp.KeyEvent("0"), chromedp.KeyEvent("1"), chromedp.KeyEvent("2")) // a select takes typed text
		tabTo(t, ctx, order, "f-accountNumber")
		run(order+" wrong account", chromedp.KeyEvent("12"), chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(chromedp.CSS("#f-accountNumber-error")))
		if focused, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.activeElement && document.activeElement.id`)); focused != "error-summary" {
			t.Errorf("%s: after a failed submission the focus is on %q, want the error summary", order, focused)
		}
		wantAccessible(t, ctx, order+" errors")
		tabTo(t, ctx, order, "f-accountNumber")
		run(order+" account", chromedp.KeyEvent(kb.End), chromedp.KeyEvent("345678901"), chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(chromedp.CSS("#f-document")))
		wantAccessible(t, ctx, order+" review")
		tabTo(t, ctx, order, "f-document")
		run(order+" document", chromedp.KeyEvent("1020304050"))
		tabTo(t, ctx, order, "confirm")
		run(order+" confirm", chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(chromedp.CSS("#result")))
		col.waitStage(t, a.Payout.ID, "SUCCESS", 15*time.Second)
		run(order+" outcome", chromedp.WaitVisible(chromedp.CSS("#result.result-success")))
		wantNotified(t, col, a.Payout.ID)
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

// stepsIn runs a step's actions. A step waits for what it awaits, but a page that never
// shows it fails with the step's name instead of holding the browser until the suite's
// timeout.
func stepsIn(ctx context.Context, name string, steps ...chromedp.Action[chromedp.Void]) error {
	sctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := chromedp.Do(sctx, steps...); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// focusOrder is the ids of the page's controls a Tab reaches, in the page's order: the
// order a keyboard user expects (no positive tabindex reorders it).
const focusOrder = `Array.from(document.querySelectorAll("a[href], button, input:not([type=hidden]), select, textarea"))
	.filter(e => !e.disabled && e.offsetParent !== null && e.tabIndex >= 0)
	.filter((e, i, all) => e.type !== "radio" || !all.slice(0, i).some(o => o.type === "radio" && o.name === e.name))
	.map(` + focusName + `)`

// focusName names an element by its id, else its tag and text.
const focusName = `(e => e ? e.id || e.tagName.toLowerCase() + ":" + (e.textContent || "").trim().slice(0, 20) : "")`

// tabWalk presses Tab n times from the top of the page and answers the ids focused.
func tabWalk(t *testing.T, ctx context.Context, n int) []string {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.activeElement && document.activeElement.blur(), window.getSelection().removeAllRanges(), document.body.focus(), true`)); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for range n {
		if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Tab)); err != nil {
			t.Fatal(err)
		}
		id, _ := chromedp.Run(ctx, chromedp.Evaluate[string](focusName+`(document.activeElement)`))
		ids = append(ids, id)
	}
	return ids
}

// tabTo presses Tab until the element id has the focus, as a keyboard user reaches it.
func tabTo(t *testing.T, ctx context.Context, what, id string) {
	t.Helper()
	for range 40 {
		got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.activeElement && document.activeElement.id || ""`))
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if got == id {
			return
		}
		if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Tab)); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	t.Fatalf("%s: Tab never reaches #%s", what, id)
}

// wantAccessible fails the test with what on the page breaks WCAG 2.1 AA as the link's page
// promises it: text under 4.5:1 contrast with its background (3:1 when large), a control
// without its label, a field marked invalid whose error is not among what describes it.
func wantAccessible(t *testing.T, ctx context.Context, what string) {
	t.Helper()
	problems, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`(() => {
		const out = [];
		const rgba = c => (c.match(/[\d.]+/g) || ["0", "0", "0", "0"]).map(Number);
		const lum = m => { const f = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); }; return 0.2126 * f(m[0]) + 0.7152 * f(m[1]) + 0.0722 * f(m[2]); };
		// The colours behind el: its nearest opaque background, or every stop of a gradient.
		const backgrounds = el => {
			for (let e = el; e; e = e.parentElement) {
				const st = getComputedStyle(e);
				const stops = st.backgroundImage.match(/rgba?\([^)]*\)/g);
				if (stops) return stops.map(rgba);
				const m = rgba(st.backgroundColor);
				if (m.length < 4 || m[3] > 0.5) return [m];
			}
			return [[255, 255, 255]];
		};
		for (const el of document.querySelectorAll("body *")) {
			if (el.offsetParent === null || !Array.from(el.childNodes).some(n => n.nodeType === 3 && n.textContent.trim())) continue;
			const s = getComputedStyle(el);
			if (s.visibility === "hidden" || Number(s.opacity) === 0) continue;
			const a = lum(rgba(s.color));
			const ratio = Math.min(...backgrounds(el).map(m => { const b = lum(m); return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05); }));
			const size = parseFloat(s.fontSize), large = size >= 24 || (Number(s.fontWeight) >= 700 && size >= 18.66);
			if (ratio < (large ? 3 : 4.5)) out.push("contrast " + ratio.toFixed(2) + ": <" + el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + "> " + el.textContent.trim().slice(0, 40));
		}
		for (const el of document.querySelectorAll("input:not([type=hidden]), select, textarea")) {
			if (el.labels.length === 0 && !el.getAttribute("aria-label")) out.push("no label: " + (el.id || el.name));
			if (el.getAttribute("aria-invalid") === "true") {
				const by = (el.getAttribute("aria-describedby") || "").split(/\s+/);
				if (!by.some(id => id.endsWith("-error") && document.getElementById(id))) out.push("an error not tied to its field: " + el.id);
			}
		}
		return out;
	})()`))
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", what, p)
	}
}

// wantNotified waits for the merchant's inbox to hold the link's events and the payout's
// notification of its success, each signed.
func wantNotified(t *testing.T, m *merchantClient, id int64) {
	t.Helper()
	want := []string{fmt.Sprintf("link.notification.%d.SUBMITTED", id), fmt.Sprintf("merchant.notification.%d.PROCESSED", id)}
	waitFor(t, "the link's events and notification in the inbox", 15*time.Second, func() bool {
		got := map[string]bool{}
		for _, it := range m.inbox(t).Items {
			got[it.EventID] = got[it.EventID] || it.SignatureValid
		}
		return got[want[0]] && got[want[1]]
	})
}
