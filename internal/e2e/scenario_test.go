package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// scenario is one request to a running server and what its answer must be: the shape that
// many end-to-end cases share (PocketBase's ApiScenario). Each is its own subtest.
type scenario struct {
	Name   string
	Method string // GET when empty
	// Path is absolute ("/healthz"), or relative to /api/v1/{merchantId} when As signs it.
	Path string
	// Body is sent as it is ([]byte, string) or as JSON (anything else); nil sends none.
	Body any
	// As signs the request as this merchant's client; nil sends it unsigned.
	As *merchantClient
	// Admin sends the admin token.
	Admin   bool
	Headers map[string]string

	WantStatus int
	// WantCode is the problem's code ("1001"); empty checks none.
	WantCode string
	// WantLocation is the first error's location ("body.merchantId"); empty checks none.
	WantLocation string
	// WantHeaders must be in the answer, with these values.
	WantHeaders map[string]string
	// WantContains are substrings of the answer's body; WantNotContains must not be there.
	WantContains, WantNotContains []string
}

// run sends each scenario to s, as a subtest named after it.
func (s *testServer) run(t *testing.T, scenarios []scenario) {
	t.Helper()
	for _, sc := range scenarios {
		t.Run(sc.Name, func(t *testing.T) {
			t.Helper()
			code, hdr, raw := s.send(t, sc)
			if code != sc.WantStatus {
				t.Fatalf("%s %s: %d %.300s, want %d", sc.method(), sc.Path, code, raw, sc.WantStatus)
			}
			if sc.WantCode != "" || sc.WantLocation != "" {
				p := decodeProblem(t, raw)
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
		})
	}
}

func (sc scenario) method() string {
	if sc.Method == "" {
		return "GET"
	}
	return sc.Method
}

// send makes the scenario's request and returns the answer.
func (s *testServer) send(t *testing.T, sc scenario) (int, http.Header, []byte) {
	t.Helper()
	var body []byte
	switch b := sc.Body.(type) {
	case nil:
	case []byte:
		body = b
	case string:
		body = []byte(b)
	default:
		body, _ = json.Marshal(b)
	}
	var req *http.Request
	if sc.As != nil {
		req = sc.As.request(sc.method(), sc.Path, body, "")
	} else {
		var err error
		if req, err = http.NewRequest(sc.method(), s.URL+sc.Path, bytes.NewReader(body)); err != nil {
			t.Fatal(err)
		}
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
	}
	if sc.Admin {
		req.Header.Set("Authorization", "Bearer "+s.AdminToken)
	}
	for k, v := range sc.Headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", sc.method(), sc.Path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, raw
}
