package servertest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"payouts/internal/apicontract"
	"payouts/rules"
)

// Merchant signs requests as one merchant's client does.
type Merchant struct {
	Base, MerchantID, Key, Secret string
	HTTP                          *http.Client
	// Now signs with this clock; nil is time.Now.
	Now func() time.Time
}

// NewMerchant creates a merchant with the given settings (their JSON names) and funds it.
func (s *Server) NewMerchant(t testing.TB, settings map[string]any) *Merchant {
	t.Helper()
	return NewMerchant(t, s.URL, s.AdminToken, s.HTTP, settings)
}

// NewMerchant creates a merchant through the admin API of the server at base, with the
// given settings (their JSON names), and funds each of its balances amply; its client
// sends with client.
func NewMerchant(t testing.TB, base, adminToken string, client *http.Client, settings map[string]any) *Merchant {
	t.Helper()
	var out struct {
		MerchantID, APIKey, APISecret string
	}
	admin := func(path string, body any) []byte {
		t.Helper()
		code, _, raw := AdminRequest(t, client, base, adminToken, "POST", path, body)
		if code >= 300 {
			t.Fatalf("POST %s: %d %s", path, code, raw)
		}
		return raw
	}
	raw := admin("/admin/v1/merchants", map[string]any{"name": "Test " + t.Name(), "settings": settings})
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("create merchant: %v: %s", err, raw)
	}
	for _, f := range [][3]any{{"COL", "COP", 100_000_000_000}, {"PER", "PEN", 1_000_000_000}, {"PER", "USD", 100_000_000}} {
		admin("/admin/v1/merchants/"+out.MerchantID+"/balance", map[string]any{"country": f[0], "currency": f[1], "amount": f[2]})
	}
	return &Merchant{Base: base, MerchantID: out.MerchantID, Key: out.APIKey, Secret: out.APISecret, HTTP: client}
}

// Admin calls the admin API and decodes a JSON answer below 300 into out (may be nil).
func (s *Server) Admin(t testing.TB, method, path string, body any, out any) int {
	t.Helper()
	return AdminJSON(t, s.HTTP, s.URL, s.AdminToken, method, path, body, out)
}

// AdminJSON calls the admin API of the server at base with token and decodes a JSON
// answer below 300 into out (may be nil); an answer of 300 or more is logged.
func AdminJSON(t testing.TB, client *http.Client, base, token, method, path string, body any, out any) int {
	t.Helper()
	code, _, raw := AdminRequest(t, client, base, token, method, path, body)
	if out != nil && code < 300 {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, raw)
		}
	}
	if code >= 300 {
		t.Logf("%s %s: %d %s", method, path, code, raw)
	}
	return code
}

// RawAdmin calls the admin API and returns the answer as it is.
func (s *Server) RawAdmin(t testing.TB, method, path string, body any) (int, http.Header, []byte) {
	t.Helper()
	return AdminRequest(t, s.HTTP, s.URL, s.AdminToken, method, path, body)
}

// AdminRequest calls the admin API of the server at base with token.
func AdminRequest(t testing.TB, client *http.Client, base, token, method, path string, body any) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(apicontract.ForTest(context.Background(), t), method, base+path, bytes.NewReader(bodyBytes(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	return Send(t, client, req)
}

// Send sends req with client (nil: the default client) and reads the answer.
func Send(t testing.TB, client *http.Client, req *http.Request) (int, http.Header, []byte) {
	t.Helper()
	if client == nil {
		client = http.DefaultClient
	}
	if apicontract.TestOf(req.Context()) == nil {
		req = req.WithContext(apicontract.ForTest(req.Context(), t))
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, raw
}

// bodyBytes is a request's body: as it is ([]byte, string), or as JSON; nil is none.
func bodyBytes(body any) []byte {
	switch b := body.(type) {
	case nil:
		return nil
	case []byte:
		return b
	case string:
		return []byte(b)
	default:
		raw, _ := json.Marshal(b)
		return raw
	}
}

// Do sends a signed request; path is relative to /api/v1/{merchantId} unless it starts
// with "/". body is sent as it is ([]byte, string) or as JSON; query is extra query
// parameters ("limit=2&stage=SUCCESS").
func (c *Merchant) Do(t testing.TB, method, path string, body any, query string) (int, http.Header, []byte) {
	t.Helper()
	req := c.Request(method, path, bodyBytes(body), query)
	return Send(t, c.HTTP, req)
}

// Request builds a signed request.
func (c *Merchant) Request(method, path string, body []byte, query string) *http.Request {
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	return c.SignedAt(method, path, body, now().UnixMilli(), query)
}

// SignedAt builds a request signed with an explicit timestamp (seconds or milliseconds).
func (c *Merchant) SignedAt(method, path string, body []byte, ts int64, query string) *http.Request {
	if !strings.HasPrefix(path, "/") {
		path = "/api/v1/" + c.MerchantID + "/" + path
	}
	u := fmt.Sprintf("%s%s?timestamp=%d&signature=%s", c.Base, path, ts, rules.Signature(c.Secret, method, path, ts, body))
	if query != "" {
		u += "&" + query
	}
	req, _ := http.NewRequest(method, u, bytes.NewReader(body))
	req.Header.Set("monnet-api-key", c.Key)
	req.Header.Set("Content-Type", "application/json")
	return req
}

// With is a copy of the client changed by edit (to sign with a wrong key, clock, id).
func (c *Merchant) With(edit func(*Merchant)) *Merchant {
	n := *c
	edit(&n)
	return &n
}

// Role is a new key of c's merchant with role (maker, checker), as the admin API makes it.
func (s *Server) Role(t testing.TB, c *Merchant, role string) *Merchant {
	t.Helper()
	return NewRole(t, s.URL, s.AdminToken, s.HTTP, c, role)
}

// NewRole is a new key of c's merchant with role (maker, checker), made through the admin
// API of the server at base.
func NewRole(t testing.TB, base, adminToken string, client *http.Client, c *Merchant, role string) *Merchant {
	t.Helper()
	var out struct {
		KeyID, Role, APIKey, APISecret string
	}
	code, _, raw := AdminRequest(t, client, base, adminToken, "POST", "/admin/v1/merchants/"+c.MerchantID+"/keys", map[string]any{"role": role})
	if code != 201 || json.Unmarshal(raw, &out) != nil || out.Role != role {
		t.Fatalf("a %s key: %d %s", role, code, raw)
	}
	return c.With(func(n *Merchant) { n.Key, n.Secret = out.APIKey, out.APISecret })
}

// Dashboard signs in to the dashboard with the admin token and returns the client that
// holds the session's cookie; it follows no redirect.
func (s *Server) Dashboard(t testing.TB) *http.Client {
	t.Helper()
	c := s.CookieBrowser()
	SignIn(t, c, s.URL, s.AdminToken)
	return c
}

// SignIn signs c (which keeps cookies and follows no redirect) in to the dashboard of the
// server at base with the admin token.
func SignIn(t testing.TB, c *http.Client, base, adminToken string) {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/dashboard/login", strings.NewReader(url.Values{"token": {adminToken}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	code, hdr, _ := Send(t, c, req)
	if code != http.StatusSeeOther || hdr.Get("Location") != "/dashboard" {
		t.Fatalf("sign in: %d to %q", code, hdr.Get("Location"))
	}
}

// Create creates a payout, or fails the test.
func (c *Merchant) Create(t testing.TB, body map[string]any) Payout {
	t.Helper()
	code, _, raw := c.Do(t, "POST", "payouts", body, "")
	if code != 201 {
		t.Fatalf("create %v: %d %s", body["orderId"], code, raw)
	}
	return DecodePayout(t, raw)
}

// Balance is the merchant's available balance and balance in currency (0, 0: none).
func (c *Merchant) Balance(t testing.TB, currency string) (available, balance int64) {
	t.Helper()
	code, _, raw := c.Do(t, "GET", "balance", nil, "")
	if code != 200 {
		t.Fatalf("GET balance: %d %s", code, raw)
	}
	var bs []struct {
		Currency  string `json:"currency"`
		Available int64  `json:"availableBalance"`
		Balance   int64  `json:"balance"`
	}
	json.Unmarshal(raw, &bs)
	for _, b := range bs {
		if b.Currency == currency {
			return b.Available, b.Balance
		}
	}
	return 0, 0
}

// WaitStage polls GET /payouts/{id} until the payout reaches stage, or fails the test.
func (c *Merchant) WaitStage(t testing.TB, id int64, stage string, within time.Duration) Payout {
	t.Helper()
	var last Payout
	if Poll(within, func() bool {
		code, _, raw := c.Do(t, "GET", "payouts/"+strconv.FormatInt(id, 10), nil, "")
		if code != 200 {
			t.Fatalf("GET payout %d: %d %s", id, code, raw)
		}
		last = DecodePayout(t, raw)
		return last.Output.Stage == stage
	}) {
		return last
	}
	t.Fatalf("payout %d did not reach %s within %v: last %s/%s", id, stage, within, last.Output.Stage, last.Output.Status)
	return last
}

// PollEvery is how long a wait pauses between two looks at what it waits for.
const PollEvery = 20 * time.Millisecond

// Poll calls cond until it holds (true) or within has passed (false). Every wait for the
// service polls what it awaits through here, or moves the sandbox clock: a fixed sleep is
// either too short on a loaded machine or too long on a quiet one.
func Poll(within time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(PollEvery)
	}
	return true
}

// Eventually polls cond until it holds, or fails the test after within saying what did
// not happen.
func Eventually(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Poll(within, cond) {
		t.Fatalf("after %s: %s", within, what)
	}
}

// Payout is the wire payout with the GET additions the tests read.
type Payout struct {
	Payout struct {
		ID       int64  `json:"Id"`
		Country  string `json:"country"`
		Amount   int64  `json:"amount"`
		Currency string `json:"currency"`
		OrderID  string `json:"orderId"`
	} `json:"payout"`
	Output struct {
		Stage                string `json:"stage"`
		Status               string `json:"status"`
		StatusChangeDateTime string `json:"statusChangeDateTime"`
	} `json:"output"`
	Errors []struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"errors"`
	History []struct {
		Status string `json:"status"`
	} `json:"history"`
}

// DecodePayout reads a payout answer, or fails the test.
func DecodePayout(t testing.TB, raw []byte) Payout {
	t.Helper()
	var p Payout
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatalf("decode payout: %v: %s", err, raw)
	}
	return p
}

// Problem is the error body (docs/reference/errors.md).
type Problem struct {
	Title     string   `json:"title"`
	Status    int      `json:"status"`
	Detail    string   `json:"detail"`
	Code      string   `json:"code"`
	ErrorType string   `json:"errorType"`
	Message   []string `json:"message"`
	Errors    []struct {
		Code     string `json:"code"`
		Message  string `json:"message"`
		Location string `json:"location"`
	} `json:"errors"`
}

// DecodeProblem reads an error answer, or fails the test.
func DecodeProblem(t testing.TB, raw []byte) Problem {
	t.Helper()
	var p Problem
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatalf("decode problem: %v: %s", err, raw)
	}
	return p
}

// PerBankRequest is a Peru bank payout any merchant may send.
func PerBankRequest(orderID string) map[string]any {
	return map[string]any{
		"country": "PER", "amount": 100000, "currency": "PEN", "orderId": orderID,
		"beneficiary": map[string]any{"name": "Ana", "lastName": "Quispe", "email": "ana.quispe@gmail.com",
			"document": map[string]any{"type": 1, "number": "45678912"}},
		"destination": map[string]any{"bankAccount": map[string]any{"bankCode": "002", "accountType": 2, "accountNumber": "19312345678012"}},
	}
}

// CardRequest is a Peru card push payment for a merchant with cardPayouts on (the card
// endpoint's body).
func CardRequest(orderID string) map[string]any {
	return map[string]any{
		"country": "PER", "amount": 100000, "currency": "PEN", "orderId": orderID,
		"beneficiary": map[string]any{"name": "Ana", "lastName": "Quispe", "email": "ana.quispe@gmail.com",
			"document": map[string]any{"type": 1, "number": "45678912"}},
		"destination":    map[string]any{"bankAccount": map[string]any{"accountType": 5}},
		"timeoutUrl":     "https://merchant.example/timeout",
		"merchantLogo":   "https://merchant.example/logo.png",
		"expirationTime": 15,
	}
}

// ColBankRequest is a Colombia bank payout any merchant may send.
func ColBankRequest(orderID string) map[string]any {
	return map[string]any{
		"country": "COL", "amount": 5000000, "currency": "COP", "orderId": orderID,
		"beneficiary": map[string]any{"name": "Juan", "lastName": "Pérez", "email": "juan.perez@gmail.com",
			"document": map[string]any{"type": 1, "number": "1020304050"}},
		"destination": map[string]any{"bankAccount": map[string]any{"bankCode": "007", "accountType": 2, "accountNumber": "12345678901"}},
	}
}
