package api_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"payouts/internal/server"
	"payouts/internal/servertest"
	"payouts/rules"
)

func TestAuthFailures(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: e})
		a := s.NewMerchant(t, nil)
		b := s.NewMerchant(t, nil)
		body, _ := json.Marshal(servertest.PerBankRequest("AUTH-1"))
		refused := func(name string, req func() *http.Request) servertest.Scenario {
			return servertest.Scenario{Name: name, Method: "POST", Path: "payouts", Request: req, WantStatus: 401, WantCode: rules.CodeAuthentication}
		}
		signedBy := func(c *servertest.Merchant) func() *http.Request {
			return func() *http.Request { return c.Request("POST", "payouts", body, "") }
		}
		resent := a.Request("GET", "balance", nil, "")
		s.Run(t, []servertest.Scenario{
			refused("bad signature", func() *http.Request {
				r := a.Request("POST", "payouts", body, "")
				q := r.URL.Query()
				q.Set("signature", strings.Repeat("ab", 32))
				r.URL.RawQuery = q.Encode()
				return r
			}),
			refused("stale timestamp", signedBy(a.With(func(c *servertest.Merchant) { c.Now = func() time.Time { return time.Now().Add(-6 * time.Minute) } }))),
			refused("timestamp from the future", signedBy(a.With(func(c *servertest.Merchant) { c.Now = func() time.Time { return time.Now().Add(6 * time.Minute) } }))),
			refused("another merchant's key", signedBy(b.With(func(c *servertest.Merchant) { c.MerchantID = a.MerchantID }))),
			refused("wrong secret", signedBy(a.With(func(c *servertest.Merchant) { c.Secret = b.Secret }))),
			refused("body changed after signing", func() *http.Request {
				r := a.Request("POST", "payouts", body, "")
				tampered := bytes.Replace(body, []byte("100000"), []byte("900000"), 1)
				r2, _ := http.NewRequest("POST", r.URL.String(), bytes.NewReader(tampered))
				r2.Header = r.Header
				return r2
			}),
			refused("missing API key", func() *http.Request {
				r := a.Request("POST", "payouts", body, "")
				r.Header.Del("monnet-api-key")
				return r
			}),
			refused("unknown merchant", signedBy(a.With(func(c *servertest.Merchant) { c.MerchantID = "999999" }))),
			{Name: "a read", Path: "balance", Request: func() *http.Request { return resent.Clone(resent.Context()) }, WantStatus: 200},
			{Name: "the same signed read resent is answered", Path: "balance", Request: func() *http.Request { return resent.Clone(resent.Context()) },
				WantStatus: 200},
			{Name: "X-Api-Key alias", Path: "balance", Request: func() *http.Request {
				r := a.Request("GET", "balance", nil, "")
				r.Header.Set("X-Api-Key", r.Header.Get("monnet-api-key"))
				r.Header.Del("monnet-api-key")
				return r
			}, WantStatus: 200},
			{Name: "nothing was created by the failures", Path: "payouts", Query: "orderId=AUTH-1", As: a, WantStatus: 200,
				WantContains: []string{`"items":[]`}},
		})
	})
}

func TestFailedAuthenticationsAreLimitedPerAddress(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		clock := &servertest.Clock{} // held: the allowances a minute count in one minute however slow the machine
		clock.Hold()
		s := servertest.Start(t, servertest.Setup{Engine: e, Options: server.Options{Now: clock.Now}})
		a := s.NewMerchant(t, nil)
		c := a.With(func(c *servertest.Merchant) { c.Secret = "wrong" })
		saw429 := false
		for i := 0; i < 30; i++ {
			code, hdr, _ := c.Do(t, "GET", "balance", nil, "")
			if code == 429 {
				saw429 = hdr.Get("Retry-After") != ""
				break
			}
			if code != 401 {
				t.Fatalf("attempt %d: %d", i, code)
			}
		}
		if !saw429 {
			t.Fatal("30 failed authentications were never limited with 429 and Retry-After")
		}
	})
}

func TestRateLimitPerMerchant(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		clock := &servertest.Clock{} // held: the allowances a minute count in one minute however slow the machine
		clock.Hold()
		s := servertest.Start(t, servertest.Setup{Engine: e, Options: server.Options{Now: clock.Now}, Args: []string{"--rate-limit", "5"}})
		a := s.NewMerchant(t, nil)
		limited := 0
		for i := 0; i < 20; i++ {
			code, hdr, raw := a.Do(t, "GET", "balance", nil, "")
			if code == 429 {
				if hdr.Get("Retry-After") == "" || servertest.DecodeProblem(t, raw).Code != rules.CodeRateLimited {
					t.Fatalf("429 without Retry-After or code: %s", raw)
				}
				limited++
			}
		}
		if limited == 0 {
			t.Fatal("20 quick requests at --rate-limit 5 were never limited")
		}
	})
}

func TestGenericErrorsOverHTTPStoreNothing(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: e})
		a := s.NewMerchant(t, nil)
		b := s.NewMerchant(t, nil)
		bad := servertest.PerBankRequest("GEN-1")
		delete(bad["beneficiary"].(map[string]any), "name")
		bad["currency"] = "SOLES"
		bad["bonus"] = 1
		mex := servertest.PerBankRequest("GEN-2")
		mex["country"] = "MEX"
		huge := servertest.PerBankRequest("GEN-3")
		huge["description"] = strings.Repeat("x", 70<<10)
		var other int64
		s.Run(t, []servertest.Scenario{
			{Name: "every error of a request at once", Method: "POST", Path: "payouts", As: a, Body: bad, WantStatus: 400,
				WantHeaders: map[string]string{"Content-Type": "application/problem+json"},
				Then: func(t *testing.T, _ http.Header, raw []byte) {
					p := servertest.DecodeProblem(t, raw)
					want := map[string]string{"body.beneficiary.name": "1015", "body.currency": "1104", "body.bonus": "1035"}
					if len(p.Errors) != len(want) || len(p.Message) != len(want) {
						t.Fatalf("want %d errors, got %+v", len(want), p)
					}
					for _, e := range p.Errors {
						if want[e.Location] != e.Code {
							t.Errorf("error %+v not expected", e)
						}
					}
				}},
			{Name: "the failed request did not use up its orderId", Method: "POST", Path: "payouts", As: a,
				Body: servertest.PerBankRequest("GEN-1"), WantStatus: 201},
			{Name: "a country outside COL and PER is a data validation error", Method: "POST", Path: "payouts", As: a, Body: mex,
				WantStatus: 401, WantCode: rules.CodeCountryNotSupported},
			{Name: "over 64 KiB", Method: "POST", Path: "payouts", As: a, Body: huge, WantStatus: 413, WantCode: rules.CodeBodyTooLarge},
			{Name: "an unknown payout", Path: "payouts/999999", As: a, WantStatus: 404, WantCode: rules.CodePayoutNotFound},
			{Name: "a payout of the merchant", Method: "POST", Path: "payouts", As: a, Body: servertest.PerBankRequest("GEN-4"), WantStatus: 201,
				Then: func(t *testing.T, _ http.Header, raw []byte) { other = servertest.DecodePayout(t, raw).Payout.ID }},
			{Name: "another merchant's payout", Request: func() *http.Request { return b.Request("GET", "payouts/"+itoa(other), nil, "") },
				WantStatus: 404},
			{Name: "a bad filter", Path: "payouts", Query: "status=NOPE", As: a, WantStatus: 400, WantLocation: "query.status"},
		})
	})
}

func TestFiftyConcurrentIdenticalCreatesMakeOnePayout(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: e})
		a := s.NewMerchant(t, nil)
		var wg sync.WaitGroup
		var mu sync.Mutex
		codes := map[int]int{}
		ids := map[int64]bool{}
		for i := 0; i < 50; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				code, _, raw := a.Do(t, "POST", "payouts", servertest.PerBankRequest("CONC-1"), "")
				mu.Lock()
				defer mu.Unlock()
				codes[code]++
				if code < 300 {
					ids[servertest.DecodePayout(t, raw).Payout.ID] = true
				}
			}()
		}
		wg.Wait()
		if codes[201] != 1 || codes[200] != 49 || len(ids) != 1 {
			t.Fatalf("codes %v, ids %v: want one 201, 49 200 and one payout", codes, ids)
		}
		code, _, raw := a.Do(t, "GET", "payouts", nil, "orderId=CONC-1")
		var page struct{ Items []servertest.Payout }
		json.Unmarshal(raw, &page)
		if code != 200 || len(page.Items) != 1 {
			t.Fatalf("listing by orderId: %d %s", code, raw)
		}
	})
}

func TestHealthOpenAPIAndDocs(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: e})
		problem := map[string]string{"Content-Type": "application/problem+json"}
		s.Run(t, []servertest.Scenario{
			{Name: "health", Path: "/healthz", WantStatus: 200},
			{Name: "ready", Path: "/readyz", WantStatus: 200},
			{Name: "the OpenAPI 3.1 document", Path: "/openapi.json", WantStatus: 200,
				WantContains: []string{`"openapi":"3.1`, `"/api/v1/{merchantId}/payouts"`}},
			{Name: "the document in YAML", Path: "/openapi.yaml", WantStatus: 200},
			{Name: "the docs page", Path: "/docs", WantStatus: 200},
			{Name: "an unknown path answers problem+json", Method: "POST", Path: "/nope", WantStatus: 404, WantHeaders: problem},
			{Name: "an unknown method answers problem+json", Method: "POST", Path: "/healthz", WantStatus: 405, WantHeaders: problem},
			{Name: "the admin API needs the token", Path: "/admin/v1/merchants/1", WantStatus: 401},
		})
	})
}
