package api_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"payouts/internal/servertest"
)

func TestCardEndpointTakesTheOriginalsInputs(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: e})
		c := s.NewMerchant(t, map[string]any{"cardPayouts": true})
		post := func(name, order, query string, edit func(map[string]any), status int) servertest.Scenario {
			b := servertest.CardRequest(order)
			if edit != nil {
				edit(b)
			}
			raw, _ := json.Marshal(b)
			return servertest.Scenario{Name: name, Method: "POST", Path: "/api-payout-plus-real-time/" + c.MerchantID, Query: query, As: c,
				Body: raw, WantStatus: status}
		}
		var cases []servertest.Scenario
		for _, q := range []string{"embed-jwt=true", "embed-jwt=true&proxy-requests=false", "embed-jwt=false&proxy-requests=true", "proxy-requests=true"} {
			cases = append(cases, post(q, "FLAGS-"+strconv.Itoa(len(q)), q, nil, 200))
		}
		for _, q := range []string{"embed-jwt=false&proxy-requests=false", "embed-jwt=false", "embed-jwt=maybe"} {
			sc := post(q, "FLAGS-BAD", q, nil, 400)
			sc.Then = func(t *testing.T, _ http.Header, raw []byte) {
				if p := servertest.DecodeProblem(t, raw); len(p.Errors) == 0 || !strings.HasPrefix(p.Errors[0].Location, "query.") {
					t.Errorf("%s, want the error at a query parameter", raw)
				}
			}
			cases = append(cases, sc)
		}
		cases = append(cases, post(`expirationTime "05"`, "EXP-05", "", func(m map[string]any) { m["expirationTime"] = "05" }, 200))
		// The original's sample sends "03": under the specification's minimum of 5, refused.
		sc := post(`expirationTime "03"`, "EXP-03", "", func(m map[string]any) { m["expirationTime"] = "03" }, 401)
		sc.WantLocation = "body.expirationTime"
		s.Run(t, append(cases, sc))
	})
}

func TestCardEndpointValidationComesFromRules(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: e})
		c := s.NewMerchant(t, map[string]any{"cardPayouts": true})
		off := s.NewMerchant(t, nil)
		edit := func(f func(m map[string]any)) map[string]any {
			b := servertest.CardRequest("CARD-BAD")
			f(b)
			return b
		}
		var cases []servertest.Scenario
		for _, tc := range []struct {
			name   string
			client *servertest.Merchant
			body   map[string]any
			status int
			code   string
		}{
			{"spec 4.2: email is required (1033)", c, edit(func(m map[string]any) { delete(m["beneficiary"].(map[string]any), "email") }), 401, "1033"},
			{"spec 4.2: timeoutUrl is required (1121)", c, edit(func(m map[string]any) { delete(m, "timeoutUrl") }), 401, "1121"},
			{"spec 4.2: accountType 5 only", c, edit(func(m map[string]any) {
				m["destination"] = map[string]any{"bankAccount": map[string]any{"accountType": 2}}
			}), 401, "1108"},
			{"spec 8: expirationTime 5 to 30", c, edit(func(m map[string]any) { m["expirationTime"] = 40 }), 401, "1954"},
			{"merchantLogo must be https", c, edit(func(m map[string]any) { m["merchantLogo"] = "http://merchant.example/l.png" }), 401, "1953"},
			{"merchant without cardPayouts", off, servertest.CardRequest("CARD-OFF"), 401, "1123"},
			{"Peru DNI length still applies", c, edit(func(m map[string]any) {
				m["beneficiary"].(map[string]any)["document"] = map[string]any{"type": 1, "number": "123"}
			}), 401, "1201"},
			{"generic contract: unknown field", c, edit(func(m map[string]any) { m["cardNumber"] = "4111111111111111" }), 400, "1035"},
		} {
			cases = append(cases, servertest.Scenario{Name: tc.name, Method: "POST", Path: "payouts/card", As: tc.client, Body: tc.body,
				Headers: map[string]string{"Accept": "text/html"}, WantStatus: tc.status,
				Then: func(t *testing.T, hdr http.Header, raw []byte) {
					if !strings.HasPrefix(hdr.Get("Content-Type"), "application/problem+json") {
						t.Fatalf("Content-Type %q, want problem+json", hdr.Get("Content-Type"))
					}
					found := false
					for _, e := range servertest.DecodeProblem(t, raw).Errors {
						found = found || e.Code == tc.code
					}
					if !found {
						t.Errorf("errors %s lack code %s", raw, tc.code)
					}
				}})
		}
		cases = append(cases, servertest.Scenario{Name: "accountType 5 through POST /payouts is refused", Method: "POST", Path: "payouts", As: c,
			Body: servertest.CardRequest("CARD-WRONG-EP"), WantStatus: 401, WantCode: "1122"})
		s.Run(t, cases)
	})
}

// Asked for HTML the card endpoint answers the form page itself (for <iframe srcdoc>), else
// JSON with the absolute iframe URL; the form behind it has its headers, script and style;
// the OpenAPI document declares both answers of both operations.
func TestCardEndpointAnswersHTMLAndJSON(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: e})
		c := s.NewMerchant(t, map[string]any{"cardPayouts": true})

		// Asked for HTML: the form page itself, for <iframe srcdoc>.
		code, hdr, raw := c.CreateCard(t, "payouts/card", servertest.CardRequest("CARD-HTML"), "text/html")
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
			code, hdr, raw := c.CreateCard(t, "payouts/card", servertest.CardRequest("CARD-JSON-"+strconv.Itoa(i)), accept)
			if code != 200 || hdr.Get("Content-Type") != "application/json" || !bytes.Contains(raw, []byte(`"iframe":"`+s.URL)) {
				t.Fatalf("Accept %q: got %d %q %s, want 200 JSON", accept, code, hdr.Get("Content-Type"), raw)
			}
		}
		before := time.Now()
		code, hdr, raw = c.CreateCard(t, "/api-payout-plus-real-time/"+c.MerchantID, servertest.CardRequest("CARD-JSON"), "")
		if code != 200 || hdr.Get("Content-Type") != "application/json" {
			t.Fatalf("JSON answer: got %d %q %s", code, hdr.Get("Content-Type"), raw)
		}
		var a servertest.CardAnswer
		json.Unmarshal(raw, &a)
		if !strings.HasPrefix(a.Iframe, s.URL+"/card?s=") {
			t.Fatalf("iframe = %q, want an absolute URL under %s", a.Iframe, s.URL)
		}
		exp, err := time.Parse(time.RFC3339Nano, a.ExpiresAt)
		if err != nil || exp.Before(before.Add(15*time.Minute-time.Second)) || exp.After(time.Now().Add(15*time.Minute+time.Second)) {
			t.Errorf("expiresAt = %q (%v), want 15 minutes from now", a.ExpiresAt, err)
		}
		if a.Payout.ID == 0 || a.Payout.OrderID != "CARD-JSON" || a.Output.Stage != "IN_PROGRESS" {
			t.Errorf("payout in the answer: %s", raw)
		}

		// The form behind the link, with its headers.
		code, hdr, doc = s.Page(t, a.Iframe)
		if code != 200 {
			t.Fatalf("GET form: %d %s", code, servertest.DocText(doc))
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
			req, _ := http.NewRequest("GET", u, nil)
			if code, _, _ := servertest.Send(t, s.HTTP, req); code != 200 {
				t.Errorf("GET %s: %d", u, code)
			}
		}

		// The OpenAPI document has both operations with both answers.
		var spec struct {
			Paths map[string]map[string]struct {
				Responses map[string]struct {
					Content map[string]any `json:"content"`
				} `json:"responses"`
			} `json:"paths"`
		}
		req, _ := http.NewRequest("GET", s.URL+"/openapi.json", nil)
		_, _, raw = servertest.Send(t, s.HTTP, req)
		json.Unmarshal(raw, &spec)
		for _, p := range []string{"/api/v1/{merchantId}/payouts/card", "/api-payout-plus-real-time/{merchantId}"} {
			r := spec.Paths[p]["post"].Responses["200"]
			if r.Content["text/html"] == nil || r.Content["application/json"] == nil {
				t.Errorf("OpenAPI %s 200 content: %v", p, r.Content)
			}
		}
	})
}
