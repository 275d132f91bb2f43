package web_test

// A payout link's page as a browser without JavaScript uses it, over the real server in
// process (servertest) on each engine: fields from the requirements schema, errors per field
// with their codes, the destination taken, expiry on the sandbox clock, the attempts' lock,
// the kinds a link offers and the origins that may frame and post it.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"payouts/internal/servertest"
	"payouts/rules"
)

// newLink starts a server on e, makes a merchant with settings and creates the link req.
func newLink(t *testing.T, e servertest.Engine, settings map[string]any, req map[string]any) (*servertest.Server, *servertest.Merchant, servertest.LinkAnswer) {
	t.Helper()
	s := servertest.Start(t, servertest.Setup{Engine: e})
	c := s.NewMerchant(t, settings)
	_, _, a, raw := c.CreateLink(t, req)
	if a.Link == "" {
		t.Fatalf("create: %s", raw)
	}
	return s, c, a
}

func TestPayoutLinkPage(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s, c, a := newLink(t, e, nil, servertest.LinkRequest("LINK-PAGE"))
		code, hdr, doc := s.Page(t, a.Link)
		if code != 200 || hdr.Get("Cache-Control") != "no-store" || hdr.Get("Referrer-Policy") != "no-referrer" ||
			!strings.Contains(hdr.Get("Content-Security-Policy"), "frame-ancestors *") {
			t.Fatalf("page: %d %v", code, hdr)
		}
		if lang, _ := doc.Find("html").Attr("lang"); lang != "es-PE" {
			t.Errorf("default language %q, want Spanish", lang)
		}
		// One kind offered: its fields at once, those its requirements schema requires.
		_, schema, _ := c.Requirements(t, "country=COL&accountType=2")
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
		code, _, page := s.SubmitLink(t, a.Link+"&lang=en", url.Values{"kind": {"2"}, "bankCode": {"012"}, "accountNumber": {"12"}})
		if code != 422 {
			t.Fatalf("wrong account: %d %s", code, servertest.DocText(page))
		}
		fe := page.Find("#f-accountNumber-error")
		if c, _ := fe.Attr("data-code"); c == "" || strings.TrimSpace(fe.Text()) == "" {
			t.Errorf("no error on the account number: %s", servertest.DocText(page))
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
		code, loc, _ := s.GiveDestination(t, a.Link, url.Values{"kind": {"2"}, "bankCode": {"012"}, "accountNumber": {"12345678901"}}, "1020304050")
		if code != 303 || !strings.HasPrefix(loc, s.URL+"/link?s=") {
			t.Fatalf("submit: %d %q", code, loc)
		}
		p := c.WaitStage(t, a.Payout.ID, "SUCCESS", 15*time.Second)
		if p.Output.Status != "PROCESSED" {
			t.Errorf("settled %s", p.Output.Status)
		}
		if d := c.LinkOf(t, a.Payout.ID); d.Link == nil || d.Link.State != "completed" || d.Channel == "LINK" {
			t.Errorf("GET after the destination: %+v", d)
		}
		_, _, doc = s.Page(t, a.Link)
		if st, _ := doc.Find("#result").Attr("class"); !strings.Contains(st, "result-success") {
			t.Errorf("page after the payout: %s", servertest.DocText(doc))
		}
		// The destination is never in the log, nor the token.
		token := strings.TrimPrefix(a.Link, s.URL+"/link?s=")
		if out := s.Log(); strings.Contains(out, "12345678901") || strings.Contains(out, token) {
			t.Errorf("the log holds the destination or the token")
		}
		// The store keeps the token's hash, never the token.
		stored := s.Stored(t)
		sum := sha256.Sum256([]byte("link:" + token))
		if bytes.Contains(stored, []byte(token)) || !bytes.Contains(stored, []byte(hex.EncodeToString(sum[:]))) {
			t.Errorf("the store holds the token (%v), or not its hash (%v)", bytes.Contains(stored, []byte(token)), !bytes.Contains(stored, []byte(hex.EncodeToString(sum[:]))))
		}
	})
}

// A link not completed by its expiry, on the sandbox clock: REJECTED/EXPIRED with 4042,
// its reservation released; the page says so with the way back.
func TestPayoutLinkExpiresOnTheSandboxClock(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: e})
		c := s.NewMerchant(t, map[string]any{"notificationUrl": "sandbox:inbox"})
		avail0, _ := c.Balance(t, "COP")
		_, _, a, raw := c.CreateLink(t, servertest.LinkRequest("LINK-EXP"))
		if a.Link == "" {
			t.Fatalf("create: %s", raw)
		}
		c.WaitStatus(t, a.Payout.ID, "AUTHORIZED", 5*time.Second)
		s.Advance(t, "61m")
		p := c.WaitStatus(t, a.Payout.ID, "EXPIRED", 5*time.Second)
		if len(p.Errors) != 1 || p.Errors[0].Code != rules.CodeLinkExpired ||
			p.Errors[0].Message != "The beneficiary's account registration process has expired. A new request is required." {
			t.Errorf("expired: %+v", p.Errors)
		}
		if avail, _ := c.Balance(t, "COP"); avail != avail0 {
			t.Errorf("available %d, want %d: the reservation released", avail, avail0)
		}
		if d := c.LinkOf(t, a.Payout.ID); d.Link == nil || d.Link.State != "expired" {
			t.Errorf("GET: %+v", d.Link)
		}
		code, _, doc := s.Page(t, a.Link)
		if href, _ := doc.Find("a.button").Attr("href"); code != 410 || href != "https://merchant.example/back" {
			t.Errorf("page: %d back %q %s", code, href, servertest.DocText(doc))
		}
		// The merchant is notified as of any rejection.
		var in servertest.Inbox
		if !servertest.Poll(5*time.Second, func() bool {
			in = c.Inbox(t)
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
	})
}

// A link offering two kinds asks which first (a GET form, without JavaScript), then shows
// that kind's fields. Under the merchant's allowedOrigins the page may be framed only there,
// and a post from another origin is refused.
func TestPayoutLinkKindsAndOrigins(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		req := servertest.LinkRequest("LINK-KINDS")
		req["allowedDestinations"], req["amount"] = []int{2, 4}, 5000000
		s, _, a := newLink(t, e, map[string]any{"realTimePhoneAccount": true, "allowedOrigins": []string{"https://shop.example"}}, req)
		code, hdr, doc := s.Page(t, a.Link)
		if code != 200 || doc.Find("form#link-form").Length() != 0 || doc.Find("form#kind-form input[name=kind]").Length() != 2 {
			t.Fatalf("chooser: %d %s", code, servertest.DocText(doc))
		}
		if csp := hdr.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors https://shop.example;") {
			t.Errorf("CSP %q does not frame under the allowed origin only", csp)
		}
		if tok, _ := doc.Find("form#kind-form input[name=s]").Attr("value"); !strings.Contains(a.Link, tok) || tok == "" {
			t.Errorf("the chooser does not carry the token")
		}
		_, _, doc = s.Page(t, a.Link+"&kind=4")
		if h, _ := doc.Find("#f-accountNumber-hint").Html(); doc.Find("form#link-form").Length() != 1 || h == "" {
			t.Fatalf("kind 4: %s", servertest.DocText(doc))
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
			code, _, _ := servertest.Send(t, s.Browser(), r)
			return code
		}
		if code := post("https://evil.example"); code != 403 {
			t.Errorf("a post from another origin: %d, want 403", code)
		}
		if code := post("https://shop.example"); code != 422 {
			t.Errorf("a post from the allowed origin: %d, want 422 (a wrong number, checked)", code)
		}
	})
}

// Five failed submissions lock the link and end its payout.
func TestPayoutLinkAttemptsLock(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s, c, a := newLink(t, e, nil, servertest.LinkRequest("LINK-LOCK"))
		bad := url.Values{"kind": {"2"}, "bankCode": {"012"}, "accountNumber": {"1"}}
		for i := 1; i <= 4; i++ {
			if code, _, page := s.SubmitLink(t, a.Link, bad); code != 422 {
				t.Fatalf("attempt %d: %d %s", i, code, servertest.DocText(page))
			} else if left := strings.TrimSpace(page.Find(".attempts strong").Text()); left != strconv.Itoa(5-i) {
				t.Errorf("attempt %d: %q attempts left", i, left)
			}
		}
		code, _, page := s.SubmitLink(t, a.Link, bad)
		if st, _ := page.Find("#result").Attr("class"); code != 410 || !strings.Contains(st, "result-locked") {
			t.Fatalf("fifth attempt: %d %s", code, servertest.DocText(page))
		}
		c.WaitStatus(t, a.Payout.ID, "EXPIRED", 5*time.Second)
		if code, _, _ := s.Page(t, a.Link); code != 410 {
			t.Errorf("the locked link answers %d, want 410", code)
		}
	})
}

// A Peru link to a cellphone: the bank list offers only the banks this payout can go to,
// and the payout settles on the real-time rail.
func TestPayoutLinkPeruCellphone(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: e})
		c := s.NewMerchant(t, map[string]any{"realTimePhoneAccount": true})
		_, _, a, raw := c.CreateLink(t, map[string]any{
			"country": "PER", "amount": 10000, "currency": "PEN", "orderId": "LINK-PER",
			"beneficiary": map[string]any{"name": "Ana", "lastName": "Quispe", "email": "ana.quispe@gmail.com",
				"document": map[string]any{"type": 1, "number": "45678912"}},
			"allowedDestinations": []int{4}, "lang": "en",
		})
		if !strings.HasSuffix(a.Link, "&lang=en") {
			t.Fatalf("create: %s", raw)
		}
		_, _, doc := s.Page(t, a.Link)
		if doc.Find("select#f-bankCode option[value='037']").Length() != 0 || doc.Find("select#f-bankCode option[value='002']").Length() != 1 {
			t.Errorf("bank list: wallet 037 needs the merchant's names this request lacks, 002 takes it: %s", doc.Find("select#f-bankCode").Text())
		}
		code, _, page := s.SubmitLink(t, a.Link, url.Values{"kind": {"4"}, "bankCode": {"002"}, "accountNumber": {"98765"}})
		if c, _ := page.Find("#f-accountNumber-error").Attr("data-code"); code != 422 || c == "" {
			t.Fatalf("a short cellphone: %d %q %s", code, c, servertest.DocText(page))
		}
		if code, _, _ := s.GiveDestination(t, a.Link, url.Values{"kind": {"4"}, "bankCode": {"002"}, "accountNumber": {"987654321"}}, "45678912"); code != 303 {
			t.Fatalf("submit: %d", code)
		}
		if p := c.WaitStage(t, a.Payout.ID, "SUCCESS", 15*time.Second); p.Output.Status != "PROCESSED" {
			t.Errorf("settled %s", p.Output.Status)
		}
		if d := c.LinkOf(t, a.Payout.ID); d.Channel != "REAL_TIME" || d.Link == nil || d.Link.State != "completed" {
			t.Errorf("GET: %+v", d)
		}
	})
}

// A kind the link does not offer, posted by hand, is refused with its code and counts as a
// failed attempt.
func TestPayoutLinkRefusesAKindItDoesNotOffer(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s, c, a := newLink(t, e, map[string]any{"realTimePhoneAccount": true}, servertest.LinkRequest("LINK-KIND"))
		code, _, page := s.SubmitLink(t, a.Link, url.Values{"kind": {"4"}, "bankCode": {"507"}, "accountNumber": {"3001234567"}})
		if code != 422 || !strings.Contains(page.Find("#error-summary").Text(), rules.CodeLinkDestinations) ||
			strings.TrimSpace(page.Find(".attempts strong").Text()) != "4" {
			t.Errorf("kind 4 on a savings-only link: %d %s", code, servertest.DocText(page))
		}
		if d := c.LinkOf(t, a.Payout.ID); d.Channel != "LINK" {
			t.Errorf("the payout took a kind its link does not offer: %+v", d)
		}
	})
}

// A Peru bank account on a link is a CCI (or a bank and an account number), as the
// requirements schema says: the page asks for the CCI, and the payout settles on it.
func TestPayoutLinkPeruBankAccountByCCI(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s, c, a := newLink(t, e, nil, map[string]any{
			"country": "PER", "amount": 10000, "currency": "PEN", "orderId": "LINK-PER-CCI",
			"beneficiary": map[string]any{"name": "Ana", "lastName": "Quispe", "email": "ana.quispe@gmail.com",
				"document": map[string]any{"type": 1, "number": "45678912"}},
			"allowedDestinations": []int{2},
		})
		code, _, page := s.SubmitLink(t, a.Link, url.Values{"kind": {"2"}})
		if code != 422 || page.Find("input#f-cci").Length() != 1 {
			t.Fatalf("the kind without its fields: %d, a CCI field %d\n%s", code, page.Find("input#f-cci").Length(), servertest.DocText(page))
		}
		if code, _, page := s.GiveDestination(t, a.Link, url.Values{"kind": {"2"}, "cci": {"00219412345678901253"}}, "45678912"); code != 303 {
			t.Fatalf("submit: %d %s", code, servertest.DocText(page))
		}
		if p := c.WaitStage(t, a.Payout.ID, "SUCCESS", 15*time.Second); p.Output.Status != "PROCESSED" {
			t.Errorf("settled %s", p.Output.Status)
		}
	})
}
