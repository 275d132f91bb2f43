package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/go-chi/chi/v5"

	"payouts/rules"
	"payouts/rules/sandbox"
	"payouts/rules/workers"
	"payouts/store"
	"payouts/store/bolt"
	"payouts/web"
)

// clock is an injected clock the test moves.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// fixture is the card form over a real store and lifecycle, on an injected clock.
type fixture struct {
	t     *testing.T
	clock *clock
	db    *bolt.DB
	svc   *rules.Service
	lc    *workers.Lifecycle
	cards *web.Cards
	srv   *httptest.Server
	m     *rules.Merchant
	cfg   web.Config
}

func newFixture(t *testing.T, settings rules.Settings) *fixture {
	t.Helper()
	f := &fixture{t: t, clock: &clock{t: time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC)}}
	db, err := bolt.Open(filepath.Join(t.TempDir(), "payouts.db"), bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close(context.Background()) })
	f.db = db
	f.m = &rules.Merchant{ID: "7", Name: "Tienda Ejemplo", Settings: settings}
	if err := db.CreateMerchant(context.Background(), f.m, nil); err != nil {
		t.Fatal(err)
	}
	for _, cur := range []string{"PEN", "USD"} {
		if _, err := db.Fund(context.Background(), "7", "PER", cur, 1_000_000_00, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	rail := &sandbox.Rail{Now: f.clock.Now}
	f.lc = &workers.Lifecycle{
		Lifecycle: &rules.Lifecycle{Store: db, Merchants: func(id string) (*rules.Merchant, error) { return db.Merchant(context.Background(), id) }, Now: f.clock.Now},
		Rail:      func(rules.Channel) rules.Rail { return rail },
	}
	f.svc = &rules.Service{Store: db, Now: f.clock.Now}
	key := make([]byte, 32)
	sealer, _ := store.NewSealer(key)
	r := chi.NewRouter()
	f.srv = httptest.NewServer(r)
	t.Cleanup(f.srv.Close)
	f.cfg = web.Config{BaseURL: f.srv.URL, Payouts: db, Merchants: func(id string) (*rules.Merchant, error) { return db.Merchant(context.Background(), id) }, Lifecycle: f.lc,
		Vault: db, Sessions: db.Sessions(context.Background(), f.clock.Now), Sealer: sealer, Now: f.clock.Now}
	f.cards = web.NewCards(f.cfg)
	f.cards.Routes(r)
	return f
}

// second serves the same form from another web.Cards on the same store, as a second
// instance of the service would, and answers its URL.
func (f *fixture) second() string {
	f.t.Helper()
	r := chi.NewRouter()
	srv := httptest.NewServer(r)
	f.t.Cleanup(srv.Close)
	cfg := f.cfg
	cfg.BaseURL = srv.URL
	cfg.Sessions = f.db.Sessions(context.Background(), f.clock.Now)
	web.NewCards(cfg).Routes(r)
	return srv.URL
}

func cardBody(orderID string) []byte {
	b, _ := json.Marshal(map[string]any{
		"country": "PER", "amount": 123456, "currency": "USD", "orderId": orderID,
		"beneficiary": map[string]any{"name": "Ana", "lastName": "Quispe", "email": "ana.quispe@gmail.com",
			"document": map[string]any{"type": 1, "number": "45678912"}},
		"destination": map[string]any{"bankAccount": map[string]any{"accountType": 5}},
		"timeoutUrl":  "https://shop.example/timeout", "expirationTime": "10",
	})
	return b
}

// open creates (or re-sends) a card payout and opens its form.
func (f *fixture) open(orderID string) (web.Form, rules.CreateResult) {
	f.t.Helper()
	res, err := f.svc.CreatePayout(context.Background(), f.m, cardBody(orderID), rules.EndpointCard)
	if err != nil {
		f.t.Fatalf("create: %v", err)
	}
	form, err := f.cards.Open(context.Background(), f.m, res, "es")
	if err != nil {
		f.t.Fatalf("open: %v", err)
	}
	return form, res
}

func get(t *testing.T, u string) (*http.Response, *goquery.Document) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	doc, err := goquery.NewDocumentFromReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, doc
}

var noFollow = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func post(t *testing.T, u string, vals url.Values, hdr map[string]string) (*http.Response, *goquery.Document) {
	t.Helper()
	req, _ := http.NewRequest("POST", u, strings.NewReader(vals.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	doc, _ := goquery.NewDocumentFromReader(resp.Body)
	return resp, doc
}

var sameOrigin = map[string]string{"Sec-Fetch-Site": "same-origin"}

func goodCard() url.Values {
	return url.Values{"card": {"new"}, "holder": {"Ana Quispe"}, "pan": {"4111111111111111"}, "expiry": {"12/29"}, "cvv": {"123"}}
}

func TestFormExpiresWithInjectedClock(t *testing.T) {
	f := newFixture(t, rules.Settings{CardPayouts: true, CardOnFile: true})
	form, _ := f.open("EXP-1")
	if want := f.clock.Now().Add(10 * time.Minute); !form.ExpiresAt.Equal(want) {
		t.Fatalf("expires at %v, want %v (expirationTime 10)", form.ExpiresAt, want)
	}
	f.lc.RunOnce(context.Background()) // authorizes; waits for the card

	resp, doc := get(t, form.URL)
	if resp.StatusCode != 200 || doc.Find("form#card-form").Length() != 1 {
		t.Fatalf("before expiry: %d", resp.StatusCode)
	}
	if got := doc.Find("#countdown").Text(); got != "10:00" {
		t.Errorf("countdown = %q, want 10:00", got)
	}
	f.clock.Add(9*time.Minute + 59*time.Second)
	if _, doc := get(t, form.URL); doc.Find("#countdown").Text() != "0:01" {
		t.Errorf("one second before: countdown %q", doc.Find("#countdown").Text())
	}

	f.clock.Add(time.Second)
	resp, doc = get(t, form.URL)
	if resp.StatusCode != http.StatusGone || doc.Find(".result-expired").Length() != 1 {
		t.Fatalf("at expiry: %d %s", resp.StatusCode, doc.Text())
	}
	if href, _ := doc.Find("a.button").Attr("href"); href != "https://shop.example/timeout" {
		t.Errorf("way back = %q", href)
	}
	var cfg struct {
		Mode       string `json:"mode"`
		TimeoutURL string `json:"timeoutUrl"`
		Message    struct {
			Topic string `json:"topic"`
		} `json:"message"`
	}
	json.Unmarshal([]byte(doc.Find("#card-config").Text()), &cfg)
	if cfg.Mode != "expired" || cfg.Message.Topic != "mps-payout-finished-timeout" || cfg.TimeoutURL != "https://shop.example/timeout" {
		t.Errorf("expiry page config: %+v", cfg)
	}
	// A card posted now is not taken.
	if resp, _ := post(t, form.URL, goodCard(), sameOrigin); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("post after expiry: %d", resp.StatusCode)
	}
	f.lc.RunOnce(context.Background())
	p, _ := f.db.Payout(context.Background(), "7", form.Payout.ID)
	if p.Card != nil || p.Status != rules.StatusExpired {
		t.Errorf("payout after expiry: card %v status %s", p.Card, p.Status)
	}
	// After the grace hour the session itself is gone: the link is invalid.
	f.clock.Add(time.Hour)
	if resp, doc := get(t, form.URL); resp.StatusCode != http.StatusGone || doc.Find(".result-invalid").Length() != 1 {
		t.Errorf("after the grace period: %d", resp.StatusCode)
	}
}

func TestRestartKillsTheOldSession(t *testing.T) {
	f := newFixture(t, rules.Settings{CardPayouts: true})
	first, _ := f.open("RE-1")
	f.clock.Add(3 * time.Minute)
	second, res := f.open("RE-1")
	if res.Created || second.URL == "" || second.URL == first.URL {
		t.Fatalf("restart: created %v, urls %q %q", res.Created, first.URL, second.URL)
	}
	if want := f.clock.Now().Add(10 * time.Minute); !second.ExpiresAt.Equal(want) || !second.Payout.SessionExpiresAt.Equal(want) {
		t.Errorf("restarted expiry %v (payout %v), want %v", second.ExpiresAt, second.Payout.SessionExpiresAt, want)
	}
	if resp, doc := get(t, first.URL); resp.StatusCode != http.StatusGone || doc.Find(".result-invalid").Length() != 1 {
		t.Errorf("old link: %d", resp.StatusCode)
	}
	if resp, _ := post(t, first.URL, goodCard(), sameOrigin); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("post on the old link: %d", resp.StatusCode)
	}
	if p, _ := f.db.Payout(context.Background(), "7", first.Payout.ID); p.Card != nil {
		t.Fatalf("the old link took a card")
	}
	if resp, _ := get(t, second.URL); resp.StatusCode != 200 {
		t.Errorf("new link: %d", resp.StatusCode)
	}
	// The old session's time would have run out at 15:10; the new one runs to 15:13.
	f.clock.Add(8 * time.Minute)
	if resp, doc := get(t, second.URL); resp.StatusCode != 200 || doc.Find("form#card-form").Length() != 1 {
		t.Errorf("new link after the old expiry: %d", resp.StatusCode)
	}
}

func TestPageHeadersLanguageAndAccessibility(t *testing.T) {
	f := newFixture(t, rules.Settings{CardPayouts: true, AllowedOrigins: []string{"https://shop.example", "https://m.shop.example:8443"}})
	form, _ := f.open("A11Y-1")
	resp, doc := get(t, form.URL)
	csp := resp.Header.Get("Content-Security-Policy")
	nonce, _ := doc.Find("script[src]").Attr("nonce")
	cssNonce, _ := doc.Find("link[rel=stylesheet]").Attr("nonce")
	if len(nonce) < 16 || nonce != cssNonce {
		t.Fatalf("nonces: script %q style %q", nonce, cssNonce)
	}
	for _, want := range []string{"default-src 'self'", "script-src 'nonce-" + nonce + "'", "style-src 'self' 'nonce-" + nonce + "'",
		"img-src 'self' https:", "form-action 'self'", "frame-ancestors https://shop.example https://m.shop.example:8443;", "object-src 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe-inline") {
		t.Errorf("CSP allows inline code: %q", csp)
	}
	if resp.Header.Get("Cache-Control") != "no-store" || resp.Header.Get("Referrer-Policy") != "no-referrer" {
		t.Errorf("Cache-Control %q, Referrer-Policy %q", resp.Header.Get("Cache-Control"), resp.Header.Get("Referrer-Policy"))
	}
	resp2, _ := get(t, form.URL)
	if strings.Contains(resp2.Header.Get("Content-Security-Policy"), nonce) {
		t.Errorf("the nonce is reused across responses")
	}
	if lang, _ := doc.Find("html").Attr("lang"); lang != "es-PE" {
		t.Errorf("lang = %q", lang)
	}
	if got := doc.Find(".amount-value").Text(); got != "US$ 1,234.56" {
		t.Errorf("amount = %q", got)
	}
	fields := map[string][2]string{"holder": {"cc-name", ""}, "pan": {"cc-number", "numeric"}, "expiry": {"cc-exp", "numeric"}, "cvv": {"cc-csc", "numeric"}}
	for id, want := range fields {
		in := doc.Find("#" + id)
		if doc.Find("label[for="+id+"]").Length() != 1 {
			t.Errorf("#%s has no label", id)
		}
		if ac, _ := in.Attr("autocomplete"); ac != want[0] {
			t.Errorf("#%s autocomplete = %q, want %s", id, ac, want[0])
		}
		if im, _ := in.Attr("inputmode"); im != want[1] {
			t.Errorf("#%s inputmode = %q, want %q", id, im, want[1])
		}
		if d, _ := in.Attr("aria-describedby"); !strings.Contains(d, id+"-hint") {
			t.Errorf("#%s aria-describedby = %q", id, d)
		}
	}
	if m, _ := doc.Find("form#card-form").Attr("method"); m != "post" {
		t.Errorf("form method %q: the card number must never be in a URL", m)
	}
	// English on ?lang=en.
	_, en := get(t, form.URL+"&lang=en")
	if lang, _ := en.Find("html").Attr("lang"); lang != "en" || en.Find("label[for=pan]").Text() != "Card number" {
		t.Errorf("English page: lang %q label %q", lang, en.Find("label[for=pan]").Text())
	}
	if action, _ := en.Find("form#card-form").Attr("action"); !strings.HasSuffix(action, "&lang=en") {
		t.Errorf("English form posts to %q: the answer would switch language", action)
	}

	// Errors: per field, described, announced; the summary is an alert.
	resp, doc = post(t, form.URL, url.Values{"card": {"new"}, "holder": {"Ana"}, "pan": {"5555555555554444"}, "expiry": {"01/20"}, "cvv": {"12a"}}, sameOrigin)
	if resp.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("bad card: %d", resp.StatusCode)
	}
	if role, _ := doc.Find("#error-summary").Attr("role"); role != "alert" || doc.Find("#error-summary li").Length() != 3 {
		t.Errorf("summary role %q with %d items", role, doc.Find("#error-summary li").Length())
	}
	for id, want := range map[string]string{"pan": "VISA", "expiry": "vencida", "cvv": "3 dígitos"} {
		if got := doc.Find("#" + id + "-error").Text(); !strings.Contains(got, want) {
			t.Errorf("#%s error %q lacks %q", id, got, want)
		}
	}
	if v, _ := doc.Find("#holder").Attr("value"); v != "Ana" {
		t.Errorf("holder not kept: %q", v)
	}
}

func TestCrossSiteFormPostsAreRefused(t *testing.T) {
	bad := url.Values{"card": {"new"}, "pan": {"1"}} // a 422 means the post got past the check
	t.Run("allowed origins configured", func(t *testing.T) {
		f := newFixture(t, rules.Settings{CardPayouts: true, AllowedOrigins: []string{"https://shop.example"}})
		form, _ := f.open("CSRF-1")
		cases := []struct {
			name string
			hdr  map[string]string
			want int
		}{
			{"same origin", sameOrigin, 422},
			{"no fetch metadata, same host", map[string]string{"Origin": f.srv.URL}, 422},
			{"cross-site from another page", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}, 403},
			{"cross-site, origin not sent", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
			{"srcdoc form in the allowed origin", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://shop.example"}, 422},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				if resp, _ := post(t, form.URL, bad, tc.hdr); resp.StatusCode != tc.want {
					t.Errorf("got %d, want %d", resp.StatusCode, tc.want)
				}
			})
		}
		// Refused posts are not attempts: three 422s so far, two left.
		_, doc := get(t, form.URL)
		if got := doc.Find(".attempts strong").Text(); got != "2" {
			t.Errorf("attempts left %q, want 2", got)
		}
	})
	t.Run("none configured: the token alone", func(t *testing.T) {
		f := newFixture(t, rules.Settings{CardPayouts: true})
		form, _ := f.open("CSRF-2")
		if resp, _ := post(t, form.URL, bad, map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://any.example"}); resp.StatusCode != 422 {
			t.Errorf("srcdoc post without allowed origins: %d, want 422", resp.StatusCode)
		}
	})
}

func TestLockoutEndsThePayout(t *testing.T) {
	f := newFixture(t, rules.Settings{CardPayouts: true})
	form, _ := f.open("LOCK-1")
	f.lc.RunOnce(context.Background())
	bad := goodCard()
	bad.Set("cvv", "1")
	for i := 1; i < 5; i++ {
		if resp, _ := post(t, form.URL, bad, sameOrigin); resp.StatusCode != 422 {
			t.Fatalf("attempt %d: %d", i, resp.StatusCode)
		}
	}
	resp, doc := post(t, form.URL, bad, sameOrigin)
	if resp.StatusCode != http.StatusGone || doc.Find(".result-locked").Length() != 1 {
		t.Fatalf("fifth: %d", resp.StatusCode)
	}
	p, _ := f.db.Payout(context.Background(), "7", form.Payout.ID)
	if p.Status != rules.StatusExpired || len(p.Errors) == 0 || p.Errors[0].Code != rules.CodeCardAttemptsExceded {
		t.Errorf("payout: %s %+v", p.Status, p.Errors)
	}
	bs, _ := f.db.Balances(context.Background(), "7")
	for _, b := range bs {
		if b.Available != b.Balance {
			t.Errorf("the reservation was not released: %+v", b)
		}
	}
	// A good card afterwards is not taken.
	post(t, form.URL, goodCard(), sameOrigin)
	if p, _ := f.db.Payout(context.Background(), "7", form.Payout.ID); p.Card != nil {
		t.Errorf("a card was taken after the lockout")
	}
	resp, _ = http.Get(strings.Replace(form.URL, "/card?", "/card/status?", 1))
	var st struct {
		Final bool
		Topic string
	}
	json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	if !st.Final || st.Topic != "mps-payout-finished-fail" {
		t.Errorf("status: %+v", st)
	}
}

// Failed submissions sent at once, half of them to a second instance, count each on the
// payout: four re-render the form, one locks it and ends the payout, once, and the rest find
// it locked (a redirect to the locked page); no lock of the form's own is needed for that.
func TestConcurrentFailuresLockOnce(t *testing.T) {
	f := newFixture(t, rules.Settings{CardPayouts: true})
	form, _ := f.open("LOCK-AT-ONCE")
	f.lc.RunOnce(context.Background())
	other := strings.Replace(form.URL, f.srv.URL, f.second(), 1)
	bad := goodCard()
	bad.Set("cvv", "1")
	const posts = 12
	codes := make([]int, posts)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range codes {
		u := form.URL
		if i%2 == 1 {
			u = other
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			req, _ := http.NewRequest("POST", u, strings.NewReader(bad.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Sec-Fetch-Site", "same-origin")
			resp, err := noFollow.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			codes[i] = resp.StatusCode
		}()
	}
	close(start)
	wg.Wait()
	n := map[int]int{}
	for _, c := range codes {
		n[c]++
	}
	if n[http.StatusUnprocessableEntity] != rules.CardAttemptsMax-1 || n[http.StatusGone] != 1 ||
		n[http.StatusSeeOther] != posts-rules.CardAttemptsMax {
		t.Fatalf("answers %v, want %d re-rendered forms, one lockout and the rest redirected", n, rules.CardAttemptsMax-1)
	}
	p, _ := f.db.Payout(context.Background(), "7", form.Payout.ID)
	if p.Status != rules.StatusExpired || p.CardAttempts != rules.CardAttemptsMax || len(p.Errors) != 1 ||
		p.Errors[0].Code != rules.CodeCardAttemptsExceded || p.Reserved != 0 {
		t.Errorf("payout: %s, %d attempts, reserved %d, errors %+v", p.Status, p.CardAttempts, p.Reserved, p.Errors)
	}
	if resp, doc := get(t, other); resp.StatusCode != http.StatusGone || doc.Find(".result-locked").Length() != 1 {
		t.Errorf("the form after the lockout: %d", resp.StatusCode)
	}
	post(t, other, goodCard(), sameOrigin)
	if p, _ := f.db.Payout(context.Background(), "7", form.Payout.ID); p.Card != nil {
		t.Errorf("a card was taken after the lockout")
	}
}

// A restart gives the new session all its attempts, and a failure sent on the old one
// counts against neither.
func TestRestartForgetsTheFailedAttempts(t *testing.T) {
	f := newFixture(t, rules.Settings{CardPayouts: true})
	first, _ := f.open("RE-ATTEMPTS")
	f.lc.RunOnce(context.Background())
	bad := goodCard()
	bad.Set("cvv", "1")
	for range 3 {
		if resp, _ := post(t, first.URL, bad, sameOrigin); resp.StatusCode != http.StatusUnprocessableEntity {
			t.Fatalf("failure: %d", resp.StatusCode)
		}
	}
	f.clock.Add(time.Minute)
	second, _ := f.open("RE-ATTEMPTS")
	if resp, _ := post(t, first.URL, bad, sameOrigin); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("a failure on the old link: %d, want a redirect", resp.StatusCode)
	}
	resp, doc := post(t, second.URL, bad, sameOrigin)
	if got := doc.Find(".attempts strong").Text(); resp.StatusCode != http.StatusUnprocessableEntity || got != "4" {
		t.Errorf("the new session's first failure: %d, %q attempts left, want 422 and 4", resp.StatusCode, got)
	}
}

func TestCardOnFileChoice(t *testing.T) {
	f := newFixture(t, rules.Settings{CardPayouts: true, CardOnFile: true})
	first, _ := f.open("COF-1")
	if resp, _ := post(t, first.URL, goodCard(), sameOrigin); resp.StatusCode != 303 {
		t.Fatalf("first card: %d", resp.StatusCode)
	}
	p1, _ := f.db.Payout(context.Background(), "7", first.Payout.ID)
	if p1.Card == nil || p1.Card.BIN != "411111" || p1.Card.Last4 != "1111" || p1.Card.Brand != "VISA" {
		t.Fatalf("card ref: %+v", p1.Card)
	}
	second, _ := f.open("COF-2")
	_, doc := get(t, second.URL)
	if !strings.Contains(doc.Find("label.option").First().Text(), "VISA •••• 1111") {
		t.Fatalf("saved card not offered: %q", doc.Find("fieldset").Text())
	}
	// Without JavaScript the new card's fields are still there: typing a number wins.
	vals := goodCard()
	vals.Set("card", "saved")
	vals.Set("pan", "4242424242424242")
	post(t, second.URL, vals, sameOrigin)
	p2, _ := f.db.Payout(context.Background(), "7", second.Payout.ID)
	if p2.Card == nil || p2.Card.Last4 != "4242" || p2.Card.Token == p1.Card.Token {
		t.Fatalf("a typed card should be used: %+v", p2.Card)
	}
	// The latest card is now the one on file, and choosing it needs no typing.
	third, _ := f.open("COF-3")
	post(t, third.URL, url.Values{"card": {"saved"}}, sameOrigin)
	p3, _ := f.db.Payout(context.Background(), "7", third.Payout.ID)
	if p3.Card == nil || p3.Card.Token != p2.Card.Token {
		t.Fatalf("saved card not used: %+v", p3.Card)
	}
	if _, sealed, err := f.db.PayoutCard(context.Background(), third.Payout.ID, p3.Card.Token); err != nil || len(sealed) == 0 {
		t.Errorf("the payout's card is not kept for its rail: %v", err)
	}
}
