package servertest

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"payouts/internal/apicontract"
)

// Scenario is one request to a server and what its answer must be: the shape that most
// request/answer cases share (PocketBase's ApiScenario). Each is its own subtest; the
// contract check of the answer and the ledger check at the server's end are the
// post-conditions of every one.
type Scenario struct {
	Name   string
	Method string // GET when empty
	// Path is absolute ("/healthz"), or relative to /api/v1/{merchantId} when As signs it.
	Path string
	// Query is extra query parameters ("limit=2"), after the signature's when As signs.
	Query string
	// Body is sent as it is ([]byte, string) or as JSON (anything else); nil sends none.
	Body any
	// As signs the request as this merchant's client; nil sends it unsigned.
	As *Merchant
	// Admin sends the admin token.
	Admin   bool
	Headers map[string]string
	// Request, when set, makes the request instead (signed at a timestamp of its own, say);
	// Method and Path then only name it in messages.
	Request func() *http.Request
	// Edit changes the request before it is sent (a header or a query parameter taken
	// away), to send what a client should not.
	Edit func(*http.Request)

	WantStatus int
	// WantCode is the problem's code ("1001"); empty checks none.
	WantCode string
	// WantLocation is the first error's location ("body.merchantId"); empty checks none.
	WantLocation string
	// WantHeaders must be in the answer, with these values ("" for a header that must be absent).
	WantHeaders map[string]string
	// WantContains are substrings of the answer's body; WantNotContains must not be there.
	WantContains, WantNotContains []string
	// Then checks what else the answer must be.
	Then func(t *testing.T, hdr http.Header, raw []byte)
}

// Run sends each scenario to s, as a subtest named after it, in order.
func (s *Server) Run(t *testing.T, scenarios []Scenario) {
	t.Helper()
	RunAt(t, s.HTTP, s.URL, s.AdminToken, scenarios)
}

// RunAt sends each scenario to the server at base with client (nil: the default one), as a
// subtest named after it, in order.
func RunAt(t *testing.T, client *http.Client, base, adminToken string, scenarios []Scenario) {
	t.Helper()
	for _, sc := range scenarios {
		t.Run(sc.Name, func(t *testing.T) {
			t.Helper()
			code, hdr, raw := sc.Send(t, client, base, adminToken)
			if code != sc.WantStatus {
				t.Fatalf("%s %s: %d %.300s, want %d", sc.method(), sc.Path, code, raw, sc.WantStatus)
			}
			if sc.WantCode != "" || sc.WantLocation != "" {
				p := DecodeProblem(t, raw)
				if sc.WantCode != "" && p.Code != sc.WantCode {
					t.Errorf("code %q (%s), want %s", p.Code, raw, sc.WantCode)
				}
				if sc.WantLocation != "" && (len(p.Errors) == 0 || p.Errors[0].Location != sc.WantLocation) {
					t.Errorf("errors %+v, want the first at %s", p.Errors, sc.WantLocation)
				}
			}
			for k, v := range sc.WantHeaders {
				if got := hdr.Get(k); got != v {
					t.Errorf("header %s: %q, want %q", k, got, v)
				}
			}
			for _, want := range sc.WantContains {
				if !strings.Contains(string(raw), want) {
					t.Errorf("the body lacks %q: %.300s", want, raw)
				}
			}
			for _, not := range sc.WantNotContains {
				if strings.Contains(string(raw), not) {
					t.Errorf("the body has %q: %.300s", not, raw)
				}
			}
			if sc.Then != nil {
				sc.Then(t, hdr, raw)
			}
		})
	}
}

func (sc Scenario) method() string {
	if sc.Method == "" {
		return "GET"
	}
	return sc.Method
}

// Send makes the scenario's request to the server at base (with client; nil: the default
// one) and returns the answer.
func (sc Scenario) Send(t testing.TB, client *http.Client, base, adminToken string) (int, http.Header, []byte) {
	t.Helper()
	body := bodyBytes(sc.Body)
	var req *http.Request
	if sc.Request != nil {
		req = sc.Request()
	} else if sc.As != nil {
		req = sc.As.Request(sc.method(), sc.Path, body, sc.Query)
	} else {
		u := base + sc.Path
		if sc.Query != "" {
			u += "?" + sc.Query
		}
		var err error
		if req, err = http.NewRequest(sc.method(), u, bytes.NewReader(body)); err != nil {
			t.Fatal(err)
		}
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
	}
	req = req.WithContext(apicontract.ForTest(context.Background(), t))
	if sc.Admin {
		req.Header.Set("Authorization", "Bearer "+adminToken)
	}
	for k, v := range sc.Headers {
		req.Header.Set(k, v)
	}
	if sc.Edit != nil {
		sc.Edit(req)
	}
	return Send(t, client, req)
}

// Send makes the scenario's request to s and returns the answer.
func (s *Server) Send(t testing.TB, sc Scenario) (int, http.Header, []byte) {
	t.Helper()
	return sc.Send(t, s.HTTP, s.URL, s.AdminToken)
}
