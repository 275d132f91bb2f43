package e2e

// End-to-end tests of the Peru card push payment: the signed
// endpoint and its answers, the form as a browser without JavaScript uses it, expiry,
// lockout, restart, card on file, and that no card number is ever at rest or in a log.

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"payouts/internal/server"
	"payouts/internal/servertest"
	"payouts/store"
)

// cardRequest is a valid card push payment for a merchant with cardPayouts on.
var cardRequest = servertest.CardRequest

// createCard calls the card endpoint (path relative to /api/v1/{id}, or absolute) with an
// Accept header ("" sends none).
func (c *merchantClient) createCard(t testing.TB, path string, body any, accept string) (int, http.Header, []byte) {
	t.Helper()
	raw, _ := json.Marshal(body)
	req := c.request("POST", path, raw, "")
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, out
}

// cardAnswer is the JSON answer of the card endpoint.
type cardAnswer struct {
	Iframe    string `json:"iframe"`
	ExpiresAt string `json:"expiresAt"`
	payoutAnswer
}

// openCard creates a card payout asking for JSON and returns the answer.
func (c *merchantClient) openCard(t testing.TB, body map[string]any, wantStatus int) cardAnswer {
	t.Helper()
	code, _, raw := c.createCard(t, "payouts/card", body, "application/json")
	if code != wantStatus {
		t.Fatalf("card payout: got %d %s, want %d", code, raw, wantStatus)
	}
	var a cardAnswer
	if err := json.Unmarshal(raw, &a); err != nil {
		t.Fatalf("decode: %v: %s", err, raw)
	}
	a.payoutAnswer = decodePayout(t, raw)
	return a
}

// noRedirect is a client playing the beneficiary's browser without JavaScript; it shows
// the redirects instead of following them.
var noRedirect = &http.Client{Timeout: 30 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func getDoc(t testing.TB, u string) (int, http.Header, *goquery.Document) {
	t.Helper()
	resp, err := noRedirect.Get(u)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	doc, err := goquery.NewDocumentFromReader(resp.Body)
	if err != nil {
		t.Fatalf("parse %s: %v", u, err)
	}
	return resp.StatusCode, resp.Header, doc
}

// submitCard posts the form of page u as a same-origin browser would, and returns the
// status, the redirect target and the page answered.
func submitCard(t testing.TB, u string, vals url.Values) (int, string, *goquery.Document) {
	t.Helper()
	_, _, doc := getDoc(t, u)
	action, ok := doc.Find("form#card-form").Attr("action")
	if !ok {
		t.Fatalf("no card form at %s: %s", u, docText(doc))
	}
	req, _ := http.NewRequest("POST", action, strings.NewReader(vals.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", action, err)
	}
	defer resp.Body.Close()
	page, _ := goquery.NewDocumentFromReader(resp.Body)
	return resp.StatusCode, resp.Header.Get("Location"), page
}

func cardValues(pan, expiry, cvv string) url.Values {
	return url.Values{"card": {"new"}, "holder": {"ANA QUISPE"}, "pan": {pan}, "expiry": {expiry}, "cvv": {cvv}}
}

func futureExpiry() string {
	return time.Now().AddDate(3, 0, 0).Format("01/06")
}

func docText(doc *goquery.Document) string {
	return strings.Join(strings.Fields(doc.Find("body").Text()), " ")
}

type cardStatus struct {
	PayoutID int64  `json:"payoutId"`
	OrderID  string `json:"orderId"`
	Stage    string `json:"stage"`
	Status   string `json:"status"`
	State    string `json:"state"`
	Final    bool   `json:"final"`
	Topic    string `json:"topic"`
}

// waitCardStatus polls the form's status endpoint (as card.js does) until it is final.
func waitCardStatus(t testing.TB, formURL string, within time.Duration) cardStatus {
	t.Helper()
	u := strings.Replace(formURL, "/card?", "/card/status?", 1)
	var last cardStatus
	if poll(within, func() bool {
		resp, err := http.Get(u)
		if err != nil {
			t.Fatalf("status: %v", err)
		}
		last = cardStatus{}
		json.NewDecoder(resp.Body).Decode(&last)
		resp.Body.Close()
		return last.Final
	}) {
		return last
	}
	t.Fatalf("status not final within %v: %+v", within, last)
	return last
}

func TestCardEndpointAnswersHTMLAndJSON(t *testing.T) {
	t.Parallel()
	s := startServer(t, "")
	c := s.newMerchant(t, map[string]any{"cardPayouts": true})

	// Asked for HTML: the form page itself, for <iframe srcdoc>.
	code, hdr, raw := c.createCard(t, "payouts/card", cardRequest("CARD-HTML"), "text/html")
	if code != 200 || !strings.HasPrefix(hdr.Get("Content-Type"), "text/html") {
		t.Fatalf("HTML answer: got %d %q %.300s", code, hdr.Get("Content-Type"), raw)
	}
	if hdr.Get("Cache-Control") != "no-store" {
		t.Errorf("Cache-Control = %q, want no-store", hdr.Get("Cache-Control"))
	}
	doc, _ := goquery.NewDocumentFromReader(bytes.NewReader(raw))
	action, _ := doc.Find("form#card-form").Attr("action")
	if !strings.HasPrefix(action, s.URL+"/card?s=") {
		t.Errorf("srcdoc form action %q is not an absolute URL of this server", action)
	}
	if got := strings.TrimSpace(doc.Find(".amount-value").Text()); got != "S/ 1,000.00" {
		t.Errorf("amount = %q, want S/ 1,000.00", got)
	}
	// It runs in the embedder's origin: its post must carry an Origin header, and a
	// Referer never more than an origin.
	if rp, _ := doc.Find(`meta[name=referrer]`).Attr("content"); rp != "strict-origin" {
		t.Errorf("srcdoc page referrer policy %q, want strict-origin", rp)
	}
	if css, _ := doc.Find(`link[rel=stylesheet]`).Attr("href"); !strings.HasPrefix(css, s.URL+"/static/card.css") {
		t.Errorf("stylesheet %q is not absolute (srcdoc resolves against the embedder)", css)
	}

	// The wire alias with no Accept, as the original's clients send it: 200 and the absolute
	// iframe URL; with */* or application/json the same.
	for i, accept := range []string{"*/*", "application/json"} {
		code, hdr, raw := c.createCard(t, "payouts/card", cardRequest("CARD-JSON-"+strconv.Itoa(i)), accept)
		if code != 200 || hdr.Get("Content-Type") != "application/json" || !bytes.Contains(raw, []byte(`"iframe":"`+s.URL)) {
			t.Fatalf("Accept %q: got %d %q %s, want 200 JSON", accept, code, hdr.Get("Content-Type"), raw)
		}
	}
	before := time.Now()
	code, hdr, raw = c.createCard(t, "/api-payout-plus-real-time/"+c.MerchantID, cardRequest("CARD-JSON"), "")
	if code != 200 || hdr.Get("Content-Type") != "application/json" {
		t.Fatalf("JSON answer: got %d %q %s", code, hdr.Get("Content-Type"), raw)
	}
	var a cardAnswer
	json.Unmarshal(raw, &a)
	a.payoutAnswer = decodePayout(t, raw)
	if !strings.HasPrefix(a.Iframe, s.URL+"/card?s=") {
		t.Fatalf("iframe = %q, want an absolute URL under %s", a.Iframe, s.URL)
	}
	exp, err := time.Parse(time.RFC3339Nano, a.ExpiresAt)
	if err != nil || exp.Before(before.Add(15*time.Minute-time.Second)) || exp.After(time.Now().Add(15*time.Minute+time.Second)) {
		t.Errorf("expiresAt = %q (%v), want 15 minutes from now", a.ExpiresAt, err)
	}
	if a.Payout.ID == 0 || a.Payout.OrderID != "CARD-JSON" || a.Output.Stage != "IN_PROGRESS" {
		t.Errorf("payout in the answer: %+v", a.payoutAnswer)
	}

	// The form behind the link, with its headers.
	code, hdr, doc = getDoc(t, a.Iframe)
	if code != 200 {
		t.Fatalf("GET form: %d %s", code, docText(doc))
	}
	csp := hdr.Get("Content-Security-Policy")
	nonce, _ := doc.Find("script[src]").Attr("nonce")
	for _, want := range []string{"frame-ancestors *", "form-action 'self'", "default-src 'self'", "script-src 'nonce-" + nonce + "'", "img-src 'self' https:"} {
		if nonce == "" || !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if hdr.Get("Cache-Control") != "no-store" || hdr.Get("Referrer-Policy") != "no-referrer" {
		t.Errorf("headers: Cache-Control %q Referrer-Policy %q", hdr.Get("Cache-Control"), hdr.Get("Referrer-Policy"))
	}
	if rp, _ := doc.Find(`meta[name=referrer]`).Attr("content"); rp != "no-referrer" {
		t.Errorf("form page referrer policy %q, want no-referrer", rp)
	}
	if src, _ := doc.Find("img.logo").Attr("src"); src != "https://merchant.example/logo.png" {
		t.Errorf("logo = %q", src)
	}
	// The script and the stylesheet are served.
	for _, sel := range []string{"script[src]", "link[rel=stylesheet]"} {
		attr := "src"
		if sel != "script[src]" {
			attr = "href"
		}
		u, _ := doc.Find(sel).Attr(attr)
		resp, err := http.Get(u)
		if err != nil || resp.StatusCode != 200 {
			t.Errorf("GET %s: %v %v", u, err, resp)
		} else {
			resp.Body.Close()
		}
	}

	// The OpenAPI document has both operations with both answers.
	resp, err := http.Get(s.URL + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var spec struct {
		Paths map[string]map[string]struct {
			Responses map[string]struct {
				Content map[string]any `json:"content"`
			} `json:"responses"`
		} `json:"paths"`
	}
	json.NewDecoder(resp.Body).Decode(&spec)
	resp.Body.Close()
	for _, p := range []string{"/api/v1/{merchantId}/payouts/card", "/api-payout-plus-real-time/{merchantId}"} {
		r := spec.Paths[p]["post"].Responses["200"]
		if r.Content["text/html"] == nil || r.Content["application/json"] == nil {
			t.Errorf("OpenAPI %s 200 content: %v", p, r.Content)
		}
	}
}

// TestCardPayoutEndToEndEncryptedAtRest enters a card as a browser without JavaScript,
// follows the payout to SUCCESS, then reads the database file and the server's logs: the
// card number is nowhere, in any encoding; the sealed card opens with the card key only.
func TestCardPayoutEndToEndEncryptedAtRest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startServer(t, dir)
	c := s.newMerchant(t, map[string]any{"cardPayouts": true})
	a := c.openCard(t, cardRequest("CARD-OK"), 200)

	code, loc, _ := submitCard(t, a.Iframe, cardValues("4111 1111 1111 1111", futureExpiry(), "123"))
	if code != http.StatusSeeOther || loc != a.Iframe {
		t.Fatalf("submit: got %d → %q, want 303 → the form link", code, loc)
	}
	_, _, doc := getDoc(t, a.Iframe)
	if !strings.Contains(docText(doc), "VISA •••• 1111") {
		t.Errorf("progress page does not show the card: %s", docText(doc))
	}
	st := waitCardStatus(t, a.Iframe, 10*time.Second)
	if st.Topic != "mps-payout-finished-ok" || st.Stage != "SUCCESS" || st.Status != "PROCESSED" || st.PayoutID != a.Payout.ID || st.OrderID != "CARD-OK" {
		t.Fatalf("status: %+v", st)
	}
	c.waitStage(t, a.Payout.ID, "SUCCESS", 5*time.Second)
	_, _, doc = getDoc(t, a.Iframe)
	var cfg struct {
		Message struct {
			Topic string `json:"topic"`
			Data  struct {
				PayoutID int64 `json:"payoutId"`
			} `json:"data"`
		} `json:"message"`
		Targets []string `json:"targets"`
	}
	json.Unmarshal([]byte(doc.Find("#card-config").Text()), &cfg)
	if cfg.Message.Topic != "mps-payout-finished-ok" || cfg.Message.Data.PayoutID != a.Payout.ID || len(cfg.Targets) != 1 || cfg.Targets[0] != "*" {
		t.Errorf("outcome page config: %+v", cfg)
	}

	token := strings.TrimPrefix(a.Iframe, s.URL+"/card?s=")
	s.Stop(t)
	logs := s.Stdout.String() + s.Stderr.String()
	raw := storedBytes(t, dir)
	pan := "4111111111111111"
	if how, found := holdsSecret(raw, pan); found {
		t.Errorf("the database file holds the card number (%s)", how)
	}
	if how, found := holdsSecret([]byte(logs), pan); found {
		t.Errorf("the logs hold the card number (%s)", how)
	}
	if strings.Contains(logs, token) {
		t.Errorf("the logs hold the session token")
	}
	if !strings.Contains(logs, `"path":"/card"`) {
		t.Errorf("no access log line of the form (the check above would prove nothing): %.2000s", logs)
	}
	if bytes.Contains(raw, []byte(token)) {
		t.Errorf("the database holds the session token itself (scs should store its hash)")
	}

	// The card on file is sealed: it opens with card.key bound to its token, and holds
	// the number but no CVV.
	var rec struct {
		Token, BIN, Last4 string
		Sealed            []byte
	}
	for _, c := range storedCardRecords(t, dir) {
		if c.DocNumber != "" {
			rec.Token, rec.BIN, rec.Last4, rec.Sealed = c.Ref.Token, c.Ref.BIN, c.Ref.Last4, c.Sealed
		}
	}
	if rec.BIN != "411111" || rec.Last4 != "1111" || rec.Token == "" {
		t.Fatalf("card on file: %+v", rec)
	}
	keyFile := filepath.Join(dir, "card.key")
	if onPostgresTests() {
		keyFile = filepath.Join(databaseDirKeys(t, dir), server.CardKeyFile)
	}
	key, err := store.LoadOrCreateKey(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	sealer, _ := store.NewSealer(key)
	plain, err := sealer.Open(rec.Sealed, []byte("card:"+rec.Token))
	if err != nil || !bytes.Contains(plain, []byte(pan)) || bytes.Contains(bytes.ToLower(plain), []byte("cvv")) || bytes.Contains(plain, []byte("123")) {
		t.Errorf("sealed card opens to %q (%v): want the number and no CVV", plain, err)
	}
	if _, err := sealer.Open(rec.Sealed, []byte("card:other")); err == nil {
		t.Errorf("the sealed card opens for another token")
	}
}

func TestCardDeclinedCard(t *testing.T) {
	t.Parallel()
	s := startServer(t, "")
	c := s.newMerchant(t, map[string]any{"cardPayouts": true, "allowedOrigins": []string{"https://shop.example"}})
	a := c.openCard(t, cardRequest("CARD-DECLINE"), 200)
	_, hdr, _ := getDoc(t, a.Iframe)
	if csp := hdr.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors https://shop.example;") {
		t.Errorf("CSP %q: frame-ancestors should be the allowed origin", csp)
	}
	if code, _, doc := submitCard(t, a.Iframe, cardValues("4000000000000002", futureExpiry(), "123")); code != 303 {
		t.Fatalf("submit: %d %s", code, docText(doc))
	}
	st := waitCardStatus(t, a.Iframe, 10*time.Second)
	if st.Topic != "mps-payout-finished-fail" || st.Stage != "REJECTED" || st.Status != "REJECTED_BANK" {
		t.Fatalf("status: %+v", st)
	}
	_, _, doc := getDoc(t, a.Iframe)
	var cfg struct {
		Targets []string `json:"targets"`
	}
	json.Unmarshal([]byte(doc.Find("#card-config").Text()), &cfg)
	if len(cfg.Targets) != 1 || cfg.Targets[0] != "https://shop.example" {
		t.Errorf("postMessage targets = %v, want only the allowed origin", cfg.Targets)
	}
}

func TestCardFormErrorsAndLockoutAfterFiveFailures(t *testing.T) {
	t.Parallel()
	s := startServer(t, "")
	c := s.newMerchant(t, map[string]any{"cardPayouts": true})
	a := c.openCard(t, cardRequest("CARD-LOCK"), 200)
	bad := cardValues("4111111111111112", "13/30", "12") // Luhn, month, CVV
	for i := 1; i <= 4; i++ {
		code, _, doc := submitCard(t, a.Iframe, bad)
		if code != http.StatusUnprocessableEntity {
			t.Fatalf("attempt %d: got %d, want 422", i, code)
		}
		for _, f := range []string{"pan", "expiry", "cvv"} {
			in := doc.Find("#" + f)
			if v, _ := in.Attr("aria-invalid"); v != "true" {
				t.Errorf("attempt %d: #%s not aria-invalid", i, f)
			}
			if d, _ := in.Attr("aria-describedby"); !strings.Contains(d, f+"-error") || strings.TrimSpace(doc.Find("#"+f+"-error").Text()) == "" {
				t.Errorf("attempt %d: #%s has no described error (%q)", i, f, d)
			}
		}
		if v, _ := doc.Find("#pan").Attr("value"); v != "" {
			t.Errorf("the card number is echoed back: %q", v)
		}
		if got := doc.Find(".attempts strong").Text(); got != strconv.Itoa(5-i) {
			t.Errorf("attempt %d: attempts left %q, want %d", i, got, 5-i)
		}
	}
	code, _, doc := submitCard(t, a.Iframe, bad)
	if code != http.StatusGone || doc.Find(".result-locked").Length() != 1 {
		t.Fatalf("fifth failure: got %d %s, want 410 locked", code, docText(doc))
	}
	got := c.waitStage(t, a.Payout.ID, "REJECTED", 5*time.Second)
	if got.Output.Status != "EXPIRED" || len(got.Errors) == 0 || got.Errors[0].Code != "2932" {
		t.Errorf("payout after lockout: %+v", got)
	}
	st := waitCardStatus(t, a.Iframe, time.Second)
	if st.Topic != "mps-payout-finished-fail" {
		t.Errorf("status after lockout: %+v", st)
	}
	// A good card is no longer taken.
	_, _, doc = getDoc(t, a.Iframe)
	if doc.Find("form#card-form").Length() != 0 {
		t.Errorf("the form is still offered after the lockout")
	}
}

func TestCardResendRestartsWithNewSession(t *testing.T) {
	t.Parallel()
	s := startServer(t, "")
	c := s.newMerchant(t, map[string]any{"cardPayouts": true})
	first := c.openCard(t, cardRequest("CARD-AGAIN"), 200)
	s.advance(t, "1s") // the restarted session starts later on the service's clock
	second := c.openCard(t, cardRequest("CARD-AGAIN"), 200)
	if second.Payout.ID != first.Payout.ID || second.Iframe == "" || second.Iframe == first.Iframe {
		t.Fatalf("restart: first %q, second %q (payout %d, %d)", first.Iframe, second.Iframe, first.Payout.ID, second.Payout.ID)
	}
	e1, _ := time.Parse(time.RFC3339Nano, first.ExpiresAt)
	e2, _ := time.Parse(time.RFC3339Nano, second.ExpiresAt)
	if !e2.After(e1) {
		t.Errorf("the restarted session expires at %v, not after %v", e2, e1)
	}
	code, _, doc := getDoc(t, first.Iframe)
	if code != http.StatusGone || doc.Find(".result-invalid").Length() != 1 {
		t.Errorf("old link: got %d %s, want 410 invalid", code, docText(doc))
	}
	if code, _, doc := submitCard(t, second.Iframe, cardValues("4242424242424242", futureExpiry(), "321")); code != 303 {
		t.Fatalf("submit on the new link: %d %s", code, docText(doc))
	}
	c.waitStage(t, first.Payout.ID, "SUCCESS", 10*time.Second)
	// With the card entered, the same orderId opens nothing: the payout as it stands.
	third := c.openCard(t, cardRequest("CARD-AGAIN"), 200)
	if third.Iframe != "" || third.Output.Stage != "SUCCESS" {
		t.Errorf("re-send after the card: %+v", third)
	}
	code, _, raw := c.createCard(t, "payouts/card", cardRequest("CARD-AGAIN"), "text/html")
	if code != 200 || !bytes.Contains(raw, []byte("result-success")) {
		t.Errorf("HTML re-send after the card: %d %.300s", code, raw)
	}
}

func TestCardSessionExpires(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startServerWith(t, dir, server.Options{CardSessionLength: 1500 * time.Millisecond})
	c := s.newMerchant(t, map[string]any{"cardPayouts": true})
	a := c.openCard(t, cardRequest("CARD-LATE"), 200)
	if exp, _ := time.Parse(time.RFC3339Nano, a.ExpiresAt); time.Until(exp) > 2*time.Second {
		t.Fatalf("the test hook did not shorten the session: %s", a.ExpiresAt)
	}
	code, _, doc := getDoc(t, a.Iframe)
	if code != 200 || doc.Find("form#card-form").Length() != 1 {
		t.Fatalf("form before expiry: %d", code)
	}
	got := c.waitStage(t, a.Payout.ID, "REJECTED", 10*time.Second)
	if got.Output.Status != "EXPIRED" {
		t.Errorf("payout after expiry: %+v", got)
	}
	code, _, doc = getDoc(t, a.Iframe)
	back, _ := doc.Find("a.button").Attr("href")
	target, _ := doc.Find("a.button").Attr("target")
	if code != http.StatusGone || back != "https://merchant.example/timeout" || target != "_top" {
		t.Errorf("expiry page: %d link %q target %q: %s", code, back, target, docText(doc))
	}
	st := waitCardStatus(t, a.Iframe, time.Second)
	if st.Topic != "mps-payout-finished-timeout" || st.Status != "EXPIRED" {
		t.Errorf("status: %+v", st)
	}
	// A card posted now is not taken.
	req, _ := http.NewRequest("POST", a.Iframe, strings.NewReader(cardValues("4111111111111111", futureExpiry(), "123").Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Errorf("post after expiry: %d, want 303 to the expiry page", resp.StatusCode)
	}
	// Re-sending the orderId after the expiry opens nothing.
	if again := c.openCard(t, cardRequest("CARD-LATE"), 200); again.Iframe != "" || again.Output.Status != "EXPIRED" {
		t.Errorf("re-send after expiry: %+v", again)
	}
}

// holdsSecret looks for a secret in raw: as text, spaced in groups of four, in hex, and
// inside any quoted base64 string at any alignment (JSON writes []byte as base64).
func holdsSecret(raw []byte, secret string) (string, bool) {
	spaced := strings.TrimSpace(regexp.MustCompile(`(\d{4})`).ReplaceAllString(secret, "$1 "))
	for how, form := range map[string]string{"plain": secret, "spaced": spaced, "hex": hex.EncodeToString([]byte(secret))} {
		if bytes.Contains(raw, []byte(form)) {
			return how, true
		}
	}
	// Quoted strings, found with IndexByte: the file is mostly empty pages.
	for rest := raw; ; {
		i := bytes.IndexByte(rest, '"')
		if i < 0 {
			break
		}
		rest = rest[i+1:]
		j := bytes.IndexByte(rest, '"')
		if j < 0 {
			break
		}
		str := rest[:j]
		rest = rest[j+1:]
		if len(str) < 20 || len(str) > 1<<16 {
			continue
		}
		for shift := 0; shift < 4; shift++ {
			r := bytes.TrimRight(str[shift:], "=")
			for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
				dec := make([]byte, enc.DecodedLen(len(r)))
				n, _ := enc.Decode(dec, r)
				if bytes.Contains(dec[:n], []byte(secret)) {
					return "base64", true
				}
			}
		}
	}
	return "", false
}

// cardBuckets counts the records of the card buckets in a stopped server's database.
func TestCardOnFile(t *testing.T) {
	t.Parallel()
	t.Run("on: the next payout offers the saved card", func(t *testing.T) {
		dir := t.TempDir()
		s := startServer(t, dir)
		c := s.newMerchant(t, map[string]any{"cardPayouts": true})
		a := c.openCard(t, cardRequest("COF-1"), 200)
		_, _, doc := getDoc(t, a.Iframe)
		if doc.Find("input[name=card][value=saved]").Length() != 0 {
			t.Fatalf("a saved card is offered before any was entered")
		}
		submitCard(t, a.Iframe, cardValues("4242424242424242", futureExpiry(), "123"))
		c.waitStage(t, a.Payout.ID, "SUCCESS", 10*time.Second)

		b := c.openCard(t, cardRequest("COF-2"), 200)
		_, _, doc = getDoc(t, b.Iframe)
		label := strings.Join(strings.Fields(doc.Find("label.option").First().Text()), " ")
		if _, checked := doc.Find("input[name=card][value=saved]").Attr("checked"); !checked || !strings.Contains(label, "VISA •••• 4242") {
			t.Fatalf("saved card not offered: %q", label)
		}
		if doc.Find("input[name=card][value=new]").Length() != 1 {
			t.Errorf("no choice of a new card")
		}
		code, _, doc := submitCard(t, b.Iframe, url.Values{"card": {"saved"}})
		if code != 303 {
			t.Fatalf("pay to the saved card: %d %s", code, docText(doc))
		}
		c.waitStage(t, b.Payout.ID, "SUCCESS", 10*time.Second)
		_, _, doc = getDoc(t, b.Iframe)
		if !strings.Contains(docText(doc), "VISA •••• 4242") {
			t.Errorf("outcome does not show the saved card: %s", docText(doc))
		}
		// Another beneficiary is not offered that card.
		other := cardRequest("COF-3")
		other["beneficiary"].(map[string]any)["document"] = map[string]any{"type": 1, "number": "87654321"}
		o := c.openCard(t, other, 200)
		if _, _, doc := getDoc(t, o.Iframe); doc.Find("input[name=card][value=saved]").Length() != 0 {
			t.Errorf("another beneficiary is offered the saved card")
		}
		s.Stop(t)
		if onFile, perPayout := storedCards(t, dir); onFile != 1 || perPayout != 0 {
			t.Errorf("card buckets: %d on file, %d per payout; want 1 and 0", onFile, perPayout)
		}
	})
	t.Run("off: the card is for one payout and is deleted after it", func(t *testing.T) {
		dir := t.TempDir()
		s := startServer(t, dir)
		c := s.newMerchant(t, map[string]any{"cardPayouts": true, "cardOnFile": false})
		a := c.openCard(t, cardRequest("NOF-1"), 200)
		submitCard(t, a.Iframe, cardValues("4242424242424242", futureExpiry(), "123"))
		c.waitStage(t, a.Payout.ID, "SUCCESS", 10*time.Second)
		b := c.openCard(t, cardRequest("NOF-2"), 200)
		if _, _, doc := getDoc(t, b.Iframe); doc.Find("input[name=card][value=saved]").Length() != 0 || strings.Contains(docText(doc), "4242") {
			t.Errorf("a card is offered with card on file off")
		}
		s.Stop(t)
		if onFile, perPayout := storedCards(t, dir); onFile != 0 || perPayout != 0 {
			t.Errorf("card buckets: %d on file, %d per payout; want none", onFile, perPayout)
		}
	})
}

// Two different cards sent at the same moment on one card form: the payout takes one, pays
// it, and that card, not the other, is the one the beneficiary's next card form offers.
func TestCardFormDoubleSubmitKeepsTheCardTakenOnFile(t *testing.T) {
	t.Parallel()
	s := startServer(t, "")
	c := s.newMerchant(t, map[string]any{"cardPayouts": true})
	a := c.openCard(t, cardRequest("COF-TWICE-1"), 200)
	_, _, doc := getDoc(t, a.Iframe)
	action, ok := doc.Find("form#card-form").Attr("action")
	if !ok {
		t.Fatalf("no card form: %s", docText(doc))
	}
	var posts []linkConfirm
	for _, pan := range []string{"4111111111111111", "4012888888881881"} {
		posts = append(posts, linkConfirm{action: action, body: cardValues(pan, futureExpiry(), "123")})
	}
	postAtOnce(t, s.URL, posts)
	c.waitStage(t, a.Payout.ID, "SUCCESS", 15*time.Second)
	_, _, raw := c.do(t, "GET", "payouts/"+itoa(a.Payout.ID), nil, "")
	var d struct {
		Card *struct {
			Last4 string `json:"last4"`
		} `json:"card"`
	}
	json.Unmarshal(raw, &d)
	if d.Card == nil || d.Card.Last4 != "1111" && d.Card.Last4 != "1881" {
		t.Fatalf("the settled payout's card: %s", raw)
	}
	b := c.openCard(t, cardRequest("COF-TWICE-2"), 200)
	_, _, doc = getDoc(t, b.Iframe)
	label := strings.Join(strings.Fields(doc.Find("label.option").First().Text()), " ")
	if !strings.Contains(label, "VISA •••• "+d.Card.Last4) {
		t.Errorf("the next form offers %q, want the card the first payout took, ending %s", label, d.Card.Last4)
	}
}
