package api_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"payouts/internal/servertest"
)

// A 401 1001 says which part failed, and a known key with a bad signature reads exactly as
// an unknown key or another merchant's; every 401 says, in the body and a header, whether it
// is authentication or validation.
func TestAuthenticationFailuresSayWhichPart(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: e})
		a := s.NewMerchant(t, nil)
		b := s.NewMerchant(t, nil)
		at := time.Now()
		fixed := func(c *servertest.Merchant) { c.Now = func() time.Time { return at } }
		query := func(edit func(q url.Values)) func(*http.Request) {
			return func(r *http.Request) {
				q := r.URL.Query()
				edit(q)
				r.URL.RawQuery = q.Encode()
			}
		}
		mismatch := map[string]bool{}
		// authentication is a failed authentication whose message says want.
		authentication := func(name, want string, as *servertest.Merchant, edit func(*http.Request)) servertest.Scenario {
			return servertest.Scenario{Name: name, Method: "POST", Path: "payouts", Body: `{"country":"PER"}`, As: as, Edit: edit,
				WantStatus: 401, WantCode: "1001", WantHeaders: map[string]string{"X-Payouts-Error-Type": "authentication"},
				Then: func(t *testing.T, _ http.Header, raw []byte) {
					p := servertest.DecodeProblem(t, raw)
					if p.ErrorType != "authentication" {
						t.Errorf("errorType %q, want authentication", p.ErrorType)
					}
					if !strings.Contains(p.Detail, want) {
						t.Errorf("the message %q does not say %q", p.Detail, want)
					}
					if want == "does not match" {
						mismatch[p.Detail] = true
						if !strings.Contains(p.Detail, "POST:/api/v1/"+a.MerchantID+"/payouts?timestamp=") {
							t.Errorf("the message %q does not show what the server signs", p.Detail)
						}
					}
				}}
		}
		wrongDNI := servertest.PerBankRequest("TYPED-1")
		wrongDNI["beneficiary"].(map[string]any)["document"] = map[string]any{"type": 1, "number": "1234"}
		s.Run(t, []servertest.Scenario{
			authentication("no API key", "monnet-api-key header", a, func(r *http.Request) { r.Header.Del("monnet-api-key") }),
			authentication("no timestamp", "timestamp query parameter", a, query(func(q url.Values) { q.Del("timestamp") })),
			authentication("a timestamp that is no number", "epoch milliseconds", a,
				query(func(q url.Values) { q.Set("timestamp", "2026-11-25T04:00:00Z") })),
			authentication("a timestamp outside the window", "server time "+time.Now().UTC().Format("2006-01-02T"),
				a.With(func(c *servertest.Merchant) { c.Now = func() time.Time { return time.Now().Add(-7 * time.Minute) } }), nil),
			authentication("no signature", "signature query parameter is missing", a, query(func(q url.Values) { q.Del("signature") })),
			authentication("a signature that is no HMAC", "64 hex characters", a, query(func(q url.Values) { q.Set("signature", "abc") })),
			authentication("a known key with a wrong secret", "does not match", a.With(fixed).With(func(c *servertest.Merchant) { c.Secret = b.Secret }), nil),
			authentication("an unknown key", "does not match", a.With(fixed).With(func(c *servertest.Merchant) { c.Key = "pk_nobody" }), nil),
			authentication("another merchant's key and secret", "does not match",
				b.With(fixed).With(func(c *servertest.Merchant) { c.MerchantID = a.MerchantID }), nil),
			{Name: "the admin API's 1001 is authentication too", Path: "/admin/v1/merchants/" + a.MerchantID,
				Headers:    map[string]string{"Authorization": "Bearer wrong-token"},
				WantStatus: 401, WantHeaders: map[string]string{"X-Payouts-Error-Type": "authentication"}, Then: errorType("authentication")},
			{Name: "a country rule's refusal is a 401 of another kind: validation", Method: "POST", Path: "payouts", As: a, Body: wrongDNI,
				WantStatus: 401, WantCode: "1201", WantHeaders: map[string]string{"X-Payouts-Error-Type": "validation"}, Then: errorType("validation")},
			{Name: "a 400 is neither: only a 401 needs telling apart", Method: "POST", Path: "payouts", As: a, Body: `{"country":"PER","amount":"x"}`,
				WantStatus: 400, WantHeaders: map[string]string{"X-Payouts-Error-Type": ""}, Then: errorType("")},
		})
		if len(mismatch) != 1 {
			t.Errorf("a known key with a bad signature reads differently from an unknown key: %v", mismatch)
		}
	})
}

// errorType checks the problem's errorType.
func errorType(want string) func(t *testing.T, _ http.Header, raw []byte) {
	return func(t *testing.T, _ http.Header, raw []byte) {
		t.Helper()
		if p := servertest.DecodeProblem(t, raw); p.ErrorType != want {
			t.Errorf("errorType %q, want %q", p.ErrorType, want)
		}
	}
}

// The rules' messages in Spanish for a client that asks for them.
func TestRulesMessagesInSpanishByAcceptLanguage(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: e})
		a := s.NewMerchant(t, nil)
		req := servertest.PerBankRequest("ES-1")
		req["beneficiary"].(map[string]any)["document"] = map[string]any{"type": 1, "number": "1234"}
		req["currency"] = "EUR"
		var cases []servertest.Scenario
		for _, tc := range []struct{ lang, want string }{
			{"es-PE,es;q=0.9,en;q=0.5", "un DNI tiene exactamente 8 dígitos"},
			{"en", "DNI 8 digits: a DNI has exactly 8 digits"},
			{"", "DNI 8 digits: a DNI has exactly 8 digits"},
		} {
			var headers map[string]string
			if tc.lang != "" {
				headers = map[string]string{"Accept-Language": tc.lang}
			}
			cases = append(cases, servertest.Scenario{Name: "Accept-Language " + tc.lang, Method: "POST", Path: "payouts", As: a, Body: req,
				Headers: headers, WantStatus: 401,
				Then: func(t *testing.T, h http.Header, raw []byte) {
					if es := h.Get("Content-Language") == "es"; es != strings.HasPrefix(tc.lang, "es") {
						t.Errorf("Content-Language %q", h.Get("Content-Language"))
					}
					p := servertest.DecodeProblem(t, raw)
					if p.ErrorType != "validation" || len(p.Errors) != 2 {
						t.Fatalf("%s, want two errors of validation", raw)
					}
					found := false
					for _, e := range p.Errors {
						found = found || strings.Contains(e.Message, tc.want)
					}
					if !found {
						t.Errorf("no error says %q: %+v", tc.want, p.Errors)
					}
				}})
		}
		s.Run(t, cases)
	})
}
