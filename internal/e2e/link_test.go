package e2e

// End-to-end tests of payout links: the signed endpoint and its answers, the link's page as
// a browser without JavaScript uses it (fields from the requirements schema, errors per
// field with their codes, the destination taken), expiry on the sandbox clock and the
// attempts' lock.

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"payouts/rules"
)

// linkRequest is a Colombia payout link offering a savings account.
func linkRequest(orderID string) map[string]any {
	return map[string]any{
		"country": "COL", "amount": 15000000, "currency": "COP", "orderId": orderID, "description": "Reembolso",
		"beneficiary": map[string]any{"name": "Juan", "lastName": "Pérez", "email": "juan.perez@gmail.com",
			"document": map[string]any{"type": 1, "number": "1020304050"}},
		"expirationTime": 60, "allowedDestinations": []int{2}, "returnUrl": "https://merchant.example/back",
	}
}

type linkAnswer struct {
	Link      string `json:"link"`
	ExpiresAt string `json:"expiresAt"`
	payoutAnswer
}

type linkDetail struct {
	Channel string `json:"channel"`
	Link    *struct {
		State               string `json:"state"`
		ExpiresAt           string `json:"expiresAt"`
		AllowedDestinations []int  `json:"allowedDestinations"`
	} `json:"link"`
}

func (c *merchantClient) createLink(t testing.TB, body map[string]any) (int, http.Header, linkAnswer, []byte) {
	t.Helper()
	code, hdr, raw := c.do(t, "POST", "payouts/link", body, "")
	var a linkAnswer
	if code == 200 {
		json.Unmarshal(raw, &a)
		a.payoutAnswer = decodePayout(t, raw)
	}
	return code, hdr, a, raw
}

func (c *merchantClient) linkOf(t testing.TB, id int64) linkDetail {
	t.Helper()
	_, _, raw := c.do(t, "GET", "payouts/"+itoa(id), nil, "")
	var d linkDetail
	json.Unmarshal(raw, &d)
	return d
}

// submitLink posts the destination form of the link page u as a same-origin browser would.
func submitLink(t testing.TB, u string, vals url.Values) (int, string, *goquery.Document) {
	t.Helper()
	_, _, doc := getDoc(t, u)
	action, ok := doc.Find("form#link-form").Attr("action")
	if !ok {
		t.Fatalf("no destination form at %s: %s", u, docText(doc))
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

func TestPayoutLinkEndpoint(t *testing.T) {
	t.Parallel()
	s := startServer(t, "")
	c := s.newMerchant(t, nil)
	avail0, _ := c.balanceOf(t, "COP")

	before := time.Now()
	code, hdr, a, raw := c.createLink(t, linkRequest("LINK-1"))
	if code != 200 || !strings.HasPrefix(a.Link, s.URL+"/link?s=") || hdr.Get("Cache-Control") != "no-store" || hdr.Get("Idempotent-Replayed") != "" {
		t.Fatalf("create: %d %v %s", code, hdr, raw)
	}
	token := strings.TrimPrefix(a.Link, s.URL+"/link?s=")
	if b, err := base64.RawURLEncoding.DecodeString(token); err != nil || len(b)*8 < 128 {
		t.Errorf("token %q: %d bits (%v), want at least 128", token, len(b)*8, err)
	}
	exp, err := time.Parse(time.RFC3339Nano, a.ExpiresAt)
	if err != nil || exp.Before(before.Add(time.Hour-time.Second)) || exp.After(time.Now().Add(time.Hour+time.Second)) {
		t.Errorf("expiresAt %q, want an hour from now", a.ExpiresAt)
	}
	p := c.waitStatus(t, a.Payout.ID, "AUTHORIZED", 5*time.Second)
	if avail, _ := c.balanceOf(t, "COP"); avail != avail0-15000000 {
		t.Errorf("available %d, want %d reserved", avail, avail0-15000000)
	}
	if d := c.linkOf(t, p.Payout.ID); d.Link == nil || d.Link.State != "waiting" || d.Channel != "LINK" || !slices.Equal(d.Link.AllowedDestinations, []int{2}) {
		t.Errorf("GET shows %+v", d)
	}

	// Listed as the payout it is, on its channel.
	var listed struct{ Items []linkDetail }
	c.getJSON(t, "payouts", "orderId=LINK-1", &listed)
	if len(listed.Items) != 1 || listed.Items[0].Channel != "LINK" || listed.Items[0].Link == nil || listed.Items[0].Link.State != "waiting" {
		t.Errorf("listed as %+v", listed.Items)
	}

	// The same body again: the same link, replayed. Another body: 409 2005.
	code, hdr, again, raw := c.createLink(t, linkRequest("LINK-1"))
	if code != 200 || again.Link != a.Link || again.Payout.ID != a.Payout.ID || hdr.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay: %d %v %s", code, hdr, raw)
	}
	other := linkRequest("LINK-1")
	other["expirationTime"] = 120
	if code, _, _, raw := c.createLink(t, other); code != 409 || !strings.Contains(string(raw), `"code":"2005"`) {
		t.Errorf("another body: %d %s, want 409 2005", code, raw)
	}

	// Bad input: each error with its code and field; nothing stored.
	bad := linkRequest("LINK-BAD")
	bad["expirationTime"], bad["allowedDestinations"], bad["destination"] = 43201, []int{3}, map[string]any{}
	delete(bad, "currency")
	code, _, _, raw = c.createLink(t, bad)
	var prob struct {
		Errors []struct{ Code, Location string }
	}
	json.Unmarshal(raw, &prob)
	got := map[string]string{}
	for _, e := range prob.Errors {
		got[e.Location] = e.Code
	}
	want := map[string]string{"body.expirationTime": rules.CodeLinkExpiration, "body.allowedDestinations[0]": rules.CodeLinkDestinations,
		"body.destination": rules.CodeLinkNoDestination, "body.currency": "1012"}
	for loc, c := range want {
		if got[loc] != c {
			t.Errorf("bad input: %s has %q, want %s (%d %s)", loc, got[loc], c, code, raw)
		}
	}
	if code != 400 {
		t.Errorf("bad input: %d, want 400", code)
	}
	if code, _, _ := c.do(t, "GET", "payouts", nil, "orderId=LINK-BAD"); code == 200 {
		if _, _, raw := c.do(t, "GET", "payouts", nil, "orderId=LINK-BAD"); strings.Contains(string(raw), "LINK-BAD") {
			t.Errorf("a refused link was stored: %s", raw)
		}
	}

	// Readable only by its merchant: to another, the payout and its link do not exist.
	stranger := s.newMerchant(t, nil)
	if code, _, raw := stranger.do(t, "GET", "payouts/"+itoa(a.Payout.ID), nil, ""); code != 404 || strings.Contains(string(raw), "/link?s=") {
		t.Errorf("another merchant reads the link: %d %s", code, raw)
	}
	if code, raw := stranger.cancel(t, a.Payout.ID); code != 404 {
		t.Errorf("another merchant cancels the link: %d %s", code, raw)
	}

	// Cancel ends it: the reservation back, the page says it failed.
	code, raw = c.cancel(t, a.Payout.ID)
	wantCancelled(t, "a link", code, raw)
	if avail, _ := c.balanceOf(t, "COP"); avail != avail0 {
		t.Errorf("after the cancel: available %d, want %d", avail, avail0)
	}
	if d := c.linkOf(t, a.Payout.ID); d.Link == nil || d.Link.State != "ended" {
		t.Errorf("GET after the cancel: %+v", d.Link)
	}
	code, _, doc := getDoc(t, a.Link)
	if st, _ := doc.Find("#result").Attr("class"); code != 200 || !strings.Contains(st, "result-failed") {
		t.Errorf("page after the cancel: %d %q %s", code, st, docText(doc))
	}
}

func TestPayoutLinkPage(t *testing.T) {
	t.Parallel()
	s := startServer(t, "")
	c := s.newMerchant(t, nil)
	_, _, a, raw := c.createLink(t, linkRequest("LINK-PAGE"))
	if a.Link == "" {
		t.Fatalf("create: %s", raw)
	}
	code, hdr, doc := getDoc(t, a.Link)
	if code != 200 || hdr.Get("Cache-Control") != "no-store" || hdr.Get("Referrer-Policy") != "no-referrer" ||
		!strings.Contains(hdr.Get("Content-Security-Policy"), "frame-ancestors *") {
		t.Fatalf("page: %d %v", code, hdr)
	}
	if lang, _ := doc.Find("html").Attr("lang"); lang != "es-PE" {
		t.Errorf("default language %q, want Spanish", lang)
	}
	// One kind offered: its fields at once, those its requirements schema requires.
	_, schema, _ := c.requirementsSchema(t, "country=COL&accountType=2")
	ba := schema["properties"].(map[string]any)["destination"].(map[string]any)["properties"].(map[string]any)["bankAccount"].(map[string]any)
	var wantFields []string
	for _, f := range ba["required"].([]any) {
		if f != "accountType" {
			wantFields = append(wantFields, f.(string))
		}
	}
	var fields []string
	doc.Find("form#link-form [name]").Each(func(_ int, s *goquery.Selection) {
		if n, _ := s.Attr("name"); n != "kind" {
			fields = append(fields, n)
		}
	})
	if !slices.Equal(fields, wantFields) || len(fields) == 0 {
		t.Errorf("fields %v, want the schema's %v", fields, wantFields)
	}
	if n := doc.Find("select#f-bankCode option[value='012']").Length(); n != 1 {
		t.Errorf("the bank list lacks 012 (the schema's enum)")
	}
	for _, f := range fields {
		if doc.Find("label[for='f-"+f+"']").Length() != 1 {
			t.Errorf("field %s has no label", f)
		}
	}

	// Wrong: 422, a message per field with its code, the summary on top; in English too.
	code, _, page := submitLink(t, a.Link+"&lang=en", url.Values{"kind": {"2"}, "bankCode": {"012"}, "accountNumber": {"12"}})
	if code != 422 {
		t.Fatalf("wrong account: %d %s", code, docText(page))
	}
	e := page.Find("#f-accountNumber-error")
	if c, _ := e.Attr("data-code"); c == "" || strings.TrimSpace(e.Text()) == "" {
		t.Errorf("no error on the account number: %s", docText(page))
	}
	if page.Find("#error-summary li a[href='#f-accountNumber']").Length() != 1 || page.Find("#f-bankCode-error").Text() != "" {
		t.Errorf("summary: %s", page.Find("#error-summary").Text())
	}
	if lang, _ := page.Find("html").Attr("lang"); lang != "en" {
		t.Errorf("?lang=en page in %q", lang)
	}
	if v, _ := page.Find("#f-accountNumber").Attr("value"); v != "12" {
		t.Errorf("the value typed is not kept: %q", v)
	}

	// Right: 303 to the progress, the payout takes the destination and settles.
	code, loc, _ := giveDestination(t, a.Link, url.Values{"kind": {"2"}, "bankCode": {"012"}, "accountNumber": {"12345678901"}}, "1020304050")
	if code != 303 || !strings.HasPrefix(loc, s.URL+"/link?s=") {
		t.Fatalf("submit: %d %q", code, loc)
	}
	p := c.waitStage(t, a.Payout.ID, "SUCCESS", 15*time.Second)
	if p.Output.Status != "PROCESSED" {
		t.Errorf("settled %s", p.Output.Status)
	}
	if d := c.linkOf(t, a.Payout.ID); d.Link == nil || d.Link.State != "completed" || d.Channel == "LINK" {
		t.Errorf("GET after the destination: %+v", d)
	}
	_, _, doc = getDoc(t, a.Link)
	if st, _ := doc.Find("#result").Attr("class"); !strings.Contains(st, "result-success") {
		t.Errorf("page after the payout: %s", docText(doc))
	}
	// The destination is never in the log, nor the token.
	token := strings.TrimPrefix(a.Link, s.URL+"/link?s=")
	if out := s.Stdout.String() + s.Stderr.String(); strings.Contains(out, "12345678901") || strings.Contains(out, token) {
		t.Errorf("the log holds the destination or the token")
	}
	// The store keeps the token's hash, never the token.
	s.Stop(t)
	stored := storedBytes(t, s.Data)
	sum := sha256.Sum256([]byte("link:" + token))
	if bytes.Contains(stored, []byte(token)) || !bytes.Contains(stored, []byte(hex.EncodeToString(sum[:]))) {
		t.Errorf("the store holds the token (%v), or not its hash (%v)", bytes.Contains(stored, []byte(token)), !bytes.Contains(stored, []byte(hex.EncodeToString(sum[:]))))
	}
}

// A link not completed by its expiry, on the sandbox clock: REJECTED/EXPIRED with 4042,
// its reservation released; the page says so with the way back.
func TestPayoutLinkExpiresOnTheSandboxClock(t *testing.T) {
	t.Parallel()
	s := startServer(t, "")
	c := s.newMerchant(t, map[string]any{"notificationUrl": "sandbox:inbox"})
	avail0, _ := c.balanceOf(t, "COP")
	_, _, a, raw := c.createLink(t, linkRequest("LINK-EXP"))
	if a.Link == "" {
		t.Fatalf("create: %s", raw)
	}
	c.waitStatus(t, a.Payout.ID, "AUTHORIZED", 5*time.Second)
	if code := s.admin(t, "POST", "/admin/v1/sandbox/clock", map[string]string{"advance": "61m"}, nil); code != 200 {
		t.Fatalf("advance: %d", code)
	}
	p := c.waitStatus(t, a.Payout.ID, "EXPIRED", 5*time.Second)
	if len(p.Errors) != 1 || p.Errors[0].Code != rules.CodeLinkExpired ||
		p.Errors[0].Message != "The beneficiary's account registration process has expired. A new request is required." {
		t.Errorf("expired: %+v", p.Errors)
	}
	if avail, _ := c.balanceOf(t, "COP"); avail != avail0 {
		t.Errorf("available %d, want %d: the reservation released", avail, avail0)
	}
	if d := c.linkOf(t, a.Payout.ID); d.Link == nil || d.Link.State != "expired" {
		t.Errorf("GET: %+v", d.Link)
	}
	code, _, doc := getDoc(t, a.Link)
	if href, _ := doc.Find("a.button").Attr("href"); code != 410 || href != "https://merchant.example/back" {
		t.Errorf("page: %d back %q %s", code, href, docText(doc))
	}
	// The merchant is notified as of any rejection.
	var in inboxAnswer
	if !poll(5*time.Second, func() bool {
		in = c.inbox(t)
		for _, it := range in.Items {
			var n struct {
				Output struct{ Status string }
				Errors []struct{ Code string }
			}
			json.Unmarshal([]byte(it.Body), &n)
			if n.Output.Status == "EXPIRED" && len(n.Errors) == 1 && n.Errors[0].Code == rules.CodeLinkExpired {
				return true
			}
		}
		return false
	}) {
		t.Fatalf("no EXPIRED notification with 4042 in the inbox: %+v", in.Items)
	}
}

// A link offering two kinds asks which first (a GET form, without JavaScript), then shows
// that kind's fields. Under the merchant's allowedOrigins the page may be framed only there,
// and a post from another origin is refused.
func TestPayoutLinkKindsAndOrigins(t *testing.T) {
	t.Parallel()
	s := startServer(t, "")
	c := s.newMerchant(t, map[string]any{"realTimePhoneAccount": true, "allowedOrigins": []string{"https://shop.example"}})
	req := linkRequest("LINK-KINDS")
	req["allowedDestinations"], req["amount"] = []int{2, 4}, 5000000
	_, _, a, raw := c.createLink(t, req)
	if a.Link == "" {
		t.Fatalf("create: %s", raw)
	}
	code, hdr, doc := getDoc(t, a.Link)
	if code != 200 || doc.Find("form#link-form").Length() != 0 || doc.Find("form#kind-form input[name=kind]").Length() != 2 {
		t.Fatalf("chooser: %d %s", code, docText(doc))
	}
	if csp := hdr.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors https://shop.example;") {
		t.Errorf("CSP %q does not frame under the allowed origin only", csp)
	}
	if tok, _ := doc.Find("form#kind-form input[name=s]").Attr("value"); !strings.Contains(a.Link, tok) || tok == "" {
		t.Errorf("the chooser does not carry the token")
	}
	_, _, doc = getDoc(t, a.Link+"&kind=4")
	if h, _ := doc.Find("#f-accountNumber-hint").Html(); doc.Find("form#link-form").Length() != 1 || h == "" {
		t.Fatalf("kind 4: %s", docText(doc))
	}
	if v, _ := doc.Find("form#link-form input[name=kind]").Attr("value"); v != "4" {
		t.Errorf("kind posted %q, want 4", v)
	}

	action, _ := doc.Find("form#link-form").Attr("action")
	post := func(origin string) int {
		r, _ := http.NewRequest("POST", action, strings.NewReader(url.Values{"kind": {"4"}, "bankCode": {"507"}, "accountNumber": {"1"}}.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.Header.Set("Origin", origin)
		r.Header.Set("Sec-Fetch-Site", "cross-site")
		resp, err := noRedirect.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post("https://evil.example"); code != 403 {
		t.Errorf("a post from another origin: %d, want 403", code)
	}
	if code := post("https://shop.example"); code != 422 {
		t.Errorf("a post from the allowed origin: %d, want 422 (a wrong number, checked)", code)
	}
}

// Five failed submissions lock the link and end its payout.
// postLinkForm posts the form sel of page with vals over its hidden inputs, as a same-origin
// browser would.
func postLinkForm(t testing.TB, page *goquery.Document, sel string, vals url.Values) (int, string, *goquery.Document) {
	t.Helper()
	form := page.Find(sel)
	action, ok := form.Attr("action")
	if !ok {
		t.Fatalf("no %s: %s", sel, docText(page))
	}
	all := url.Values{}
	form.Find("input[type=hidden]").Each(func(_ int, in *goquery.Selection) {
		name, _ := in.Attr("name")
		v, _ := in.Attr("value")
		all.Set(name, v)
	})
	for k, v := range vals {
		all[k] = v
	}
	req, _ := http.NewRequest("POST", action, strings.NewReader(all.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", action, err)
	}
	defer resp.Body.Close()
	doc, _ := goquery.NewDocumentFromReader(resp.Body)
	return resp.StatusCode, resp.Header.Get("Location"), doc
}

// giveDestination submits the link's form, then confirms its review with the document typed:
// the answer is the review's (303 when the payout took the destination).
func giveDestination(t testing.TB, link string, vals url.Values, document string) (int, string, *goquery.Document) {
	t.Helper()
	code, loc, page := submitLink(t, link, vals)
	if code != 200 || page.Find("form#review-form").Length() == 0 {
		return code, loc, page
	}
	return postLinkForm(t, page, "form#review-form", url.Values{"answer": {"yes"}, "document": {document}})
}

func TestPayoutLinkAttemptsLock(t *testing.T) {
	t.Parallel()
	s := startServer(t, "")
	c := s.newMerchant(t, nil)
	_, _, a, raw := c.createLink(t, linkRequest("LINK-LOCK"))
	if a.Link == "" {
		t.Fatalf("create: %s", raw)
	}
	bad := url.Values{"kind": {"2"}, "bankCode": {"012"}, "accountNumber": {"1"}}
	for i := 1; i <= 4; i++ {
		if code, _, page := submitLink(t, a.Link, bad); code != 422 {
			t.Fatalf("attempt %d: %d %s", i, code, docText(page))
		} else if left := strings.TrimSpace(page.Find(".attempts strong").Text()); left != itoa(int64(5-i)) {
			t.Errorf("attempt %d: %q attempts left", i, left)
		}
	}
	code, _, page := submitLink(t, a.Link, bad)
	if st, _ := page.Find("#result").Attr("class"); code != 410 || !strings.Contains(st, "result-locked") {
		t.Fatalf("fifth attempt: %d %s", code, docText(page))
	}
	c.waitStatus(t, a.Payout.ID, "EXPIRED", 5*time.Second)
	if code, _, _ := getDoc(t, a.Link); code != 410 {
		t.Errorf("the locked link answers %d, want 410", code)
	}
}

// A Peru link to a cellphone: the bank list offers only the banks this payout can go to,
// and the payout settles on the real-time rail.
func TestPayoutLinkPeruCellphone(t *testing.T) {
	t.Parallel()
	s := startServer(t, "")
	c := s.newMerchant(t, map[string]any{"realTimePhoneAccount": true})
	_, _, a, raw := c.createLink(t, map[string]any{
		"country": "PER", "amount": 10000, "currency": "PEN", "orderId": "LINK-PER",
		"beneficiary": map[string]any{"name": "Ana", "lastName": "Quispe", "email": "ana.quispe@gmail.com",
			"document": map[string]any{"type": 1, "number": "45678912"}},
		"allowedDestinations": []int{4}, "lang": "en",
	})
	if !strings.HasSuffix(a.Link, "&lang=en") {
		t.Fatalf("create: %s", raw)
	}
	_, _, doc := getDoc(t, a.Link)
	if doc.Find("select#f-bankCode option[value='037']").Length() != 0 || doc.Find("select#f-bankCode option[value='002']").Length() != 1 {
		t.Errorf("bank list: wallet 037 needs the merchant's names this request lacks, 002 takes it: %s", doc.Find("select#f-bankCode").Text())
	}
	code, _, page := submitLink(t, a.Link, url.Values{"kind": {"4"}, "bankCode": {"002"}, "accountNumber": {"98765"}})
	if c, _ := page.Find("#f-accountNumber-error").Attr("data-code"); code != 422 || c == "" {
		t.Fatalf("a short cellphone: %d %q %s", code, c, docText(page))
	}
	if code, _, _ := giveDestination(t, a.Link, url.Values{"kind": {"4"}, "bankCode": {"002"}, "accountNumber": {"987654321"}}, "45678912"); code != 303 {
		t.Fatalf("submit: %d", code)
	}
	if p := c.waitStage(t, a.Payout.ID, "SUCCESS", 15*time.Second); p.Output.Status != "PROCESSED" {
		t.Errorf("settled %s", p.Output.Status)
	}
	if d := c.linkOf(t, a.Payout.ID); d.Channel != "REAL_TIME" || d.Link == nil || d.Link.State != "completed" {
		t.Errorf("GET: %+v", d)
	}
}

// A kind the link does not offer, posted by hand, is refused with its code and counts as a
// failed attempt.
func TestPayoutLinkRefusesAKindItDoesNotOffer(t *testing.T) {
	t.Parallel()
	s := startServer(t, "")
	c := s.newMerchant(t, map[string]any{"realTimePhoneAccount": true})
	_, _, a, raw := c.createLink(t, linkRequest("LINK-KIND"))
	if a.Link == "" {
		t.Fatalf("create: %s", raw)
	}
	code, _, page := submitLink(t, a.Link, url.Values{"kind": {"4"}, "bankCode": {"507"}, "accountNumber": {"3001234567"}})
	if code != 422 || !strings.Contains(page.Find("#error-summary").Text(), rules.CodeLinkDestinations) ||
		strings.TrimSpace(page.Find(".attempts strong").Text()) != "4" {
		t.Errorf("kind 4 on a savings-only link: %d %s", code, docText(page))
	}
	if d := c.linkOf(t, a.Payout.ID); d.Channel != "LINK" {
		t.Errorf("the payout took a kind its link does not offer: %+v", d)
	}
}

// A Peru bank account on a link is a CCI (or a bank and an account number), as the
// requirements schema says: the page asks for the CCI, and the payout settles on it.
func TestPayoutLinkPeruBankAccountByCCI(t *testing.T) {
	t.Parallel()
	s := startServer(t, "")
	c := s.newMerchant(t, nil)
	_, _, a, raw := c.createLink(t, map[string]any{
		"country": "PER", "amount": 10000, "currency": "PEN", "orderId": "LINK-PER-CCI",
		"beneficiary": map[string]any{"name": "Ana", "lastName": "Quispe", "email": "ana.quispe@gmail.com",
			"document": map[string]any{"type": 1, "number": "45678912"}},
		"allowedDestinations": []int{2},
	})
	if a.Link == "" {
		t.Fatalf("create: %s", raw)
	}
	code, _, page := submitLink(t, a.Link, url.Values{"kind": {"2"}})
	if code != 422 || page.Find("input#f-cci").Length() != 1 {
		t.Fatalf("the kind without its fields: %d, a CCI field %d\n%s", code, page.Find("input#f-cci").Length(), docText(page))
	}
	if code, _, page := giveDestination(t, a.Link, url.Values{"kind": {"2"}, "cci": {"00219412345678901253"}}, "45678912"); code != 303 {
		t.Fatalf("submit: %d %s", code, docText(page))
	}
	if p := c.waitStage(t, a.Payout.ID, "SUCCESS", 15*time.Second); p.Output.Status != "PROCESSED" {
		t.Errorf("settled %s", p.Output.Status)
	}
}
