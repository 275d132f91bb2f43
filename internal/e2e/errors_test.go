package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// typedProblem is a problem with its errorType (validation or authentication).
type typedProblem struct {
	Code      string `json:"code"`
	Detail    string `json:"detail"`
	ErrorType string `json:"errorType"`
	Errors    []struct {
		Code, Message, Location string
	} `json:"errors"`
}

func sendTyped(t *testing.T, req *http.Request) (int, http.Header, typedProblem) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var p typedProblem
	json.NewDecoder(resp.Body).Decode(&p)
	return resp.StatusCode, resp.Header, p
}

// A 401 1001 says which part failed, and a known key with a bad signature reads exactly as
// an unknown key or another merchant's; every 401 says, in the body and a header, whether it
// is authentication or validation.
func TestAuthenticationFailuresSayWhichPart(t *testing.T) {
	t.Parallel()
	s := startServer(t, "")
	a := s.newMerchant(t, nil)
	b := s.newMerchant(t, nil)
	at := time.Now()
	fixed := func(c *merchantClient) { c.Now = func() time.Time { return at } }
	body := []byte(`{"country":"PER"}`)
	cases := []struct {
		name, want string
		req        func() *http.Request
	}{
		{"no API key", "monnet-api-key header", func() *http.Request {
			r := a.request("POST", "payouts", body, "")
			r.Header.Del("monnet-api-key")
			return r
		}},
		{"no timestamp", "timestamp query parameter", func() *http.Request {
			r := a.request("POST", "payouts", body, "")
			q := r.URL.Query()
			q.Del("timestamp")
			r.URL.RawQuery = q.Encode()
			return r
		}},
		{"a timestamp that is no number", "epoch milliseconds", func() *http.Request {
			r := a.request("POST", "payouts", body, "")
			q := r.URL.Query()
			q.Set("timestamp", "2026-11-25T04:00:00Z")
			r.URL.RawQuery = q.Encode()
			return r
		}},
		{"a timestamp outside the window", "server time " + time.Now().UTC().Format("2006-01-02T"), func() *http.Request {
			return a.with(func(c *merchantClient) { c.Now = func() time.Time { return time.Now().Add(-7 * time.Minute) } }).request("POST", "payouts", body, "")
		}},
		{"no signature", "signature query parameter is missing", func() *http.Request {
			r := a.request("POST", "payouts", body, "")
			q := r.URL.Query()
			q.Del("signature")
			r.URL.RawQuery = q.Encode()
			return r
		}},
		{"a signature that is no HMAC", "64 hex characters", func() *http.Request {
			r := a.request("POST", "payouts", body, "")
			q := r.URL.Query()
			q.Set("signature", "abc")
			r.URL.RawQuery = q.Encode()
			return r
		}},
		{"a known key with a wrong secret", "does not match", func() *http.Request {
			return a.with(fixed).with(func(c *merchantClient) { c.Secret = b.Secret }).request("POST", "payouts", body, "")
		}},
		{"an unknown key", "does not match", func() *http.Request {
			return a.with(fixed).with(func(c *merchantClient) { c.Key = "pk_nobody" }).request("POST", "payouts", body, "")
		}},
		{"another merchant's key and secret", "does not match", func() *http.Request {
			return b.with(fixed).with(func(c *merchantClient) { c.MerchantID = a.MerchantID }).request("POST", "payouts", body, "")
		}},
	}
	mismatch := map[string]bool{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, h, p := sendTyped(t, tc.req())
			if code != 401 || p.Code != "1001" || p.ErrorType != "authentication" || h.Get("X-Payouts-Error-Type") != "authentication" {
				t.Fatalf("got %d %+v (header %q), want 401 1001 authentication", code, p, h.Get("X-Payouts-Error-Type"))
			}
			if !strings.Contains(p.Detail, tc.want) {
				t.Errorf("the message %q does not say %q", p.Detail, tc.want)
			}
			if tc.want == "does not match" {
				mismatch[p.Detail] = true
				if !strings.Contains(p.Detail, "POST:/api/v1/"+a.MerchantID+"/payouts?timestamp=") {
					t.Errorf("the message %q does not show what the server signs", p.Detail)
				}
			}
		})
	}
	if len(mismatch) != 1 {
		t.Errorf("a known key with a bad signature reads differently from an unknown key: %v", mismatch)
	}

	// The admin API's 1001 is authentication too.
	adminReq, _ := http.NewRequest("GET", s.URL+"/admin/v1/merchants/"+a.MerchantID, nil)
	adminReq.Header.Set("Authorization", "Bearer wrong-token")
	if code, h, p := sendTyped(t, adminReq); code != 401 || p.ErrorType != "authentication" || h.Get("X-Payouts-Error-Type") != "authentication" {
		t.Errorf("a wrong admin token: %d %+v", code, p)
	}

	// A country rule's refusal is a 401 of another kind: validation.
	req := perBankRequest("TYPED-1")
	req["beneficiary"].(map[string]any)["document"] = map[string]any{"type": 1, "number": "1234"}
	raw, _ := json.Marshal(req)
	code, h, p := sendTyped(t, a.request("POST", "payouts", raw, ""))
	if code != 401 || p.Code != "1201" || p.ErrorType != "validation" || h.Get("X-Payouts-Error-Type") != "validation" {
		t.Fatalf("a DNI of 4 digits: %d %+v header %q, want 401 1201 validation", code, p, h.Get("X-Payouts-Error-Type"))
	}
	// A 400 is neither: only a 401 needs telling apart.
	code, h, p = sendTyped(t, a.request("POST", "payouts", []byte(`{"country":"PER","amount":"x"}`), ""))
	if code != 400 || p.ErrorType != "" || h.Get("X-Payouts-Error-Type") != "" {
		t.Errorf("a 400 carries an errorType: %d %+v", code, p)
	}
}

// The rules' messages in Spanish for a client that asks for them.
func TestRulesMessagesInSpanishByAcceptLanguage(t *testing.T) {
	t.Parallel()
	s := startServer(t, "")
	a := s.newMerchant(t, nil)
	req := perBankRequest("ES-1")
	req["beneficiary"].(map[string]any)["document"] = map[string]any{"type": 1, "number": "1234"}
	req["currency"] = "EUR"
	raw, _ := json.Marshal(req)
	for lang, want := range map[string]string{
		"es-PE,es;q=0.9,en;q=0.5": "un DNI tiene exactamente 8 dígitos",
		"en":                      "DNI 8 digits: a DNI has exactly 8 digits",
		"":                        "DNI 8 digits: a DNI has exactly 8 digits",
	} {
		r := a.request("POST", "payouts", raw, "")
		if lang != "" {
			r.Header.Set("Accept-Language", lang)
		}
		code, h, p := sendTyped(t, r)
		if code != 401 || p.ErrorType != "validation" || len(p.Errors) != 2 {
			t.Fatalf("%q: %d %+v", lang, code, p)
		}
		found := false
		for _, e := range p.Errors {
			found = found || strings.Contains(e.Message, want)
		}
		if !found {
			t.Errorf("Accept-Language %q: no error says %q: %+v", lang, want, p.Errors)
		}
		if es := h.Get("Content-Language") == "es"; es != strings.HasPrefix(lang, "es") {
			t.Errorf("Accept-Language %q: Content-Language %q", lang, h.Get("Content-Language"))
		}
	}
}
