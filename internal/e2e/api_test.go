package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"payouts/internal/server"
	"payouts/rules"
)

func TestAuthFailures(t *testing.T) {
	t.Parallel()
	s := startServer(t, "")
	a := s.newMerchant(t, nil)
	b := s.newMerchant(t, nil)
	body, _ := json.Marshal(perBankRequest("AUTH-1"))

	send := func(req *http.Request) (int, problemAnswer) {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var p problemAnswer
		json.NewDecoder(resp.Body).Decode(&p)
		return resp.StatusCode, p
	}
	cases := []struct {
		name string
		req  func() *http.Request
	}{
		{"bad signature", func() *http.Request {
			r := a.request("POST", "payouts", body, "")
			q := r.URL.Query()
			q.Set("signature", strings.Repeat("ab", 32))
			r.URL.RawQuery = q.Encode()
			return r
		}},
		{"stale timestamp", func() *http.Request {
			c := a.with(func(c *merchantClient) { c.Now = func() time.Time { return time.Now().Add(-6 * time.Minute) } })
			return c.request("POST", "payouts", body, "")
		}},
		{"timestamp from the future", func() *http.Request {
			c := a.with(func(c *merchantClient) { c.Now = func() time.Time { return time.Now().Add(6 * time.Minute) } })
			return c.request("POST", "payouts", body, "")
		}},
		{"another merchant's key", func() *http.Request {
			c := b.with(func(c *merchantClient) { c.MerchantID = a.MerchantID })
			return c.request("POST", "payouts", body, "")
		}},
		{"wrong secret", func() *http.Request {
			c := a.with(func(c *merchantClient) { c.Secret = b.Secret })
			return c.request("POST", "payouts", body, "")
		}},
		{"body changed after signing", func() *http.Request {
			r := a.request("POST", "payouts", body, "")
			tampered := bytes.Replace(body, []byte("100000"), []byte("900000"), 1)
			r2, _ := http.NewRequest("POST", r.URL.String(), bytes.NewReader(tampered))
			r2.Header = r.Header
			return r2
		}},
		{"missing API key", func() *http.Request {
			r := a.request("POST", "payouts", body, "")
			r.Header.Del("monnet-api-key")
			return r
		}},
		{"unknown merchant", func() *http.Request {
			c := a.with(func(c *merchantClient) { c.MerchantID = "999999" })
			return c.request("POST", "payouts", body, "")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, p := send(tc.req())
			if code != 401 || p.Code != rules.CodeAuthentication {
				t.Fatalf("got %d %+v, want 401 1001", code, p)
			}
		})
	}

	t.Run("a resent read is answered", func(t *testing.T) {
		r1 := a.request("GET", "balance", nil, "")
		r2, _ := http.NewRequest("GET", r1.URL.String(), nil)
		r2.Header = r1.Header.Clone()
		if code, _ := send(r1); code != 200 {
			t.Fatalf("first: %d", code)
		}
		if code, p := send(r2); code != 200 {
			t.Fatalf("the same signed request again: got %d %+v, want 200", code, p)
		}
	})
	t.Run("X-Api-Key alias", func(t *testing.T) {
		r := a.request("GET", "balance", nil, "")
		r.Header.Set("X-Api-Key", r.Header.Get("monnet-api-key"))
		r.Header.Del("monnet-api-key")
		if code, p := send(r); code != 200 {
			t.Fatalf("got %d %+v", code, p)
		}
	})
	t.Run("nothing was created by the failures", func(t *testing.T) {
		code, _, raw := a.do(t, "GET", "payouts", nil, "orderId=AUTH-1")
		if code != 200 || !strings.Contains(string(raw), `"items":[]`) {
			t.Fatalf("got %d %s", code, raw)
		}
	})
}

func TestFailedAuthenticationsAreLimitedPerAddress(t *testing.T) {
	t.Parallel()
	clock := &testClock{} // held: the allowances a minute count in one minute however slow the machine
	clock.Hold()
	s := startServerWith(t, "", server.Options{Now: clock.Now})
	a := s.newMerchant(t, nil)
	c := a.with(func(c *merchantClient) { c.Secret = "wrong" })
	saw429 := false
	for i := 0; i < 30; i++ {
		code, hdr, _ := c.do(t, "GET", "balance", nil, "")
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
}

func TestRateLimitPerMerchant(t *testing.T) {
	t.Parallel()
	clock := &testClock{} // held: the allowances a minute count in one minute however slow the machine
	clock.Hold()
	s := startServerWith(t, "", server.Options{Now: clock.Now}, "--rate-limit", "5")
	a := s.newMerchant(t, nil)
	limited := 0
	for i := 0; i < 20; i++ {
		code, hdr, raw := a.do(t, "GET", "balance", nil, "")
		if code == 429 {
			if hdr.Get("Retry-After") == "" || decodeProblem(t, raw).Code != rules.CodeRateLimited {
				t.Fatalf("429 without Retry-After or code: %s", raw)
			}
			limited++
		}
	}
	if limited == 0 {
		t.Fatal("20 quick requests at --rate-limit 5 were never limited")
	}
}

func TestGenericErrorsOverHTTPStoreNothing(t *testing.T) {
	t.Parallel()
	s := startServer(t, "")
	a := s.newMerchant(t, nil)
	bad := perBankRequest("GEN-1")
	delete(bad["beneficiary"].(map[string]any), "name")
	bad["orderId"] = "GEN-1"
	bad["currency"] = "SOLES"
	bad["bonus"] = 1
	code, hdr, raw := a.do(t, "POST", "payouts", bad, "")
	if code != 400 || !strings.HasPrefix(hdr.Get("Content-Type"), "application/problem+json") {
		t.Fatalf("got %d %s %s, want 400 problem+json", code, hdr.Get("Content-Type"), raw)
	}
	p := decodeProblem(t, raw)
	want := map[string]string{"body.beneficiary.name": "1015", "body.currency": "1104", "body.bonus": "1035"}
	if len(p.Errors) != len(want) || len(p.Message) != len(want) {
		t.Fatalf("want %d errors, got %+v", len(want), p)
	}
	for _, e := range p.Errors {
		if want[e.Location] != e.Code {
			t.Errorf("error %+v not expected", e)
		}
	}
	// The failed request did not use up its orderId.
	if code, _, raw := a.do(t, "POST", "payouts", perBankRequest("GEN-1"), ""); code != 201 {
		t.Fatalf("valid request after a failed one: %d %s", code, raw)
	}
	// A country outside COL and PER is a data validation error.
	mex := perBankRequest("GEN-2")
	mex["country"] = "MEX"
	if code, _, raw := a.do(t, "POST", "payouts", mex, ""); code != 401 || decodeProblem(t, raw).Code != rules.CodeCountryNotSupported {
		t.Fatalf("MEX: %d %s", code, raw)
	}
	// Over 64 KiB is 413.
	huge := perBankRequest("GEN-3")
	huge["description"] = strings.Repeat("x", 70<<10)
	if code, _, raw := a.do(t, "POST", "payouts", huge, ""); code != 413 || decodeProblem(t, raw).Code != rules.CodeBodyTooLarge {
		t.Fatalf("huge: %d %s", code, raw)
	}
	// Unknown payout is 404; so is another merchant's.
	if code, _, raw := a.do(t, "GET", "payouts/999999", nil, ""); code != 404 || decodeProblem(t, raw).Code != rules.CodePayoutNotFound {
		t.Fatalf("404: %d %s", code, raw)
	}
	b := s.newMerchant(t, nil)
	_, _, raw = a.do(t, "POST", "payouts", perBankRequest("GEN-4"), "")
	id := decodePayout(t, raw).Payout.ID
	if code, _, _ := b.do(t, "GET", "payouts/"+itoa(id), nil, ""); code != 404 {
		t.Fatalf("another merchant's payout: %d, want 404", code)
	}
	if code, _, raw := a.do(t, "GET", "payouts", nil, "status=NOPE"); code != 400 || decodeProblem(t, raw).Errors[0].Location != "query.status" {
		t.Fatalf("bad filter: %d %s", code, raw)
	}
}

func TestFiftyConcurrentIdenticalCreatesMakeOnePayout(t *testing.T) {
	t.Parallel()
	s := startServer(t, "")
	a := s.newMerchant(t, nil)
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[int]int{}
	ids := map[int64]bool{}
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, _, raw := a.do(t, "POST", "payouts", perBankRequest("CONC-1"), "")
			mu.Lock()
			defer mu.Unlock()
			codes[code]++
			if code < 300 {
				ids[decodePayout(t, raw).Payout.ID] = true
			}
		}()
	}
	wg.Wait()
	if codes[201] != 1 || codes[200] != 49 || len(ids) != 1 {
		t.Fatalf("codes %v, ids %v: want one 201, 49 200 and one payout", codes, ids)
	}
	code, _, raw := a.do(t, "GET", "payouts", nil, "orderId=CONC-1")
	var page struct{ Items []payoutAnswer }
	json.Unmarshal(raw, &page)
	if code != 200 || len(page.Items) != 1 {
		t.Fatalf("listing by orderId: %d %s", code, raw)
	}
}

func TestHealthOpenAPIAndDocs(t *testing.T) {
	t.Parallel()
	s := startServer(t, "")
	problem := map[string]string{"Content-Type": "application/problem+json"}
	s.run(t, []scenario{
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
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
