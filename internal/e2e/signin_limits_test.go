package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A user's failed sign-ins count against the account, whatever address they come from: past
// three in a row, each doubles the wait before the account's next attempt is even checked
// (the right password and code, sent during a wait, are refused with 429 and Retry-After),
// the audit log has each failure with the account's count and wait, and the admin token
// still signs in from the attacker's own address once it is over its allowance.
func TestSignInFailuresDelayTheAccountAcrossAddresses(t *testing.T) {
	if r := time.Now().Unix() % 30; r > 15 { // the set-up's code and the sign-in's in two steps of one window
		time.Sleep(time.Duration(31-r) * time.Second)
	}
	now := time.Now().Unix() / 30
	s := startServer(t, "", "--trusted-proxies", "127.0.0.1/32")
	var created struct{ ID, SetupLink string }
	if code := s.admin(t, "POST", "/admin/v1/users", map[string]any{"name": "Olga", "email": "olga@example.com", "role": "operator"}, &created); code != 201 {
		t.Fatalf("create the user: %d", code)
	}
	olga := dashUser{ID: created.ID, Email: "olga@example.com", Password: "correct horse operator"}
	setUp(t, s, created.SetupLink, &olga, now-1)

	// Each attempt from an address of its own, as an attacker holding the password would.
	var addr atomic.Int32
	signIn := func(email, password, code string) (int, http.Header, string) {
		t.Helper()
		form := url.Values{"email": {email}, "password": {password}, "code": {code}}
		req, _ := http.NewRequest("POST", s.URL+"/dashboard/login?lang=en", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-Forwarded-For", fmt.Sprintf("198.51.100.%d", addr.Add(1)))
		jar, _ := cookiejar.New(nil)
		resp, err := dashClient(jar).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, resp.Header, string(body)
	}
	right := codeAt(t, olga.Secret, now)
	wrong := fmt.Sprintf("%06d", (mustAtoi(t, right)+1)%1_000_000)
	for i := 1; i <= 3; i++ {
		if code, _, _ := signIn(olga.Email, olga.Password, wrong); code != 401 {
			t.Fatalf("wrong code %d: %d, want 401 (three in a row cost nothing)", i, code)
		}
	}
	for i, wait := range []int{1, 2} {
		if code, _, _ := signIn("OLGA@example.com ", olga.Password, wrong); code != 401 {
			t.Fatalf("wrong code %d: %d, want 401", 4+i, code)
		}
		code, h, body := signIn(olga.Email, olga.Password, right)
		if code != http.StatusTooManyRequests || h.Get("Location") != "" {
			t.Fatalf("the right code %d s after failure %d, from another address: %d %q, want 429 unchecked", wait, 4+i, code, h.Get("Location"))
		}
		if ra, _ := strconv.Atoi(h.Get("Retry-After")); ra < 1 || ra > wait {
			t.Errorf("Retry-After %q after failure %d, want 1..%d", h.Get("Retry-After"), 4+i, wait)
		}
		if !strings.Contains(body, "each failure doubles the wait") {
			t.Errorf("the refusal does not say why:\n%.500s", body)
		}
		time.Sleep(time.Duration(wait)*time.Second + 100*time.Millisecond)
	}
	// Another account is not held up by Olga's failures.
	if code, _, _ := signIn("someone@example.com", "whatever it is", wrong); code != 401 {
		t.Errorf("another account: %d, want 401", code)
	}

	// The admin token, from one address over its allowance of wrong tokens: still signs in.
	jar, _ := cookiejar.New(nil)
	c := dashClient(jar)
	post := func(token string) int {
		req, _ := http.NewRequest("POST", s.URL+"/dashboard/login", strings.NewReader(url.Values{"token": {token}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-Forwarded-For", "198.51.100.1")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for range 25 {
		post("adm_wrong-token-0123456789abcdef")
	}
	if code := post("adm_wrong-token-0123456789abcdef"); code != http.StatusTooManyRequests {
		t.Errorf("a wrong admin token past the allowance: %d, want 429", code)
	}
	if code := post(s.AdminToken); code != http.StatusSeeOther {
		t.Errorf("the right admin token from the limited address: %d, want 303", code)
	}

	// Once the wait has passed, the right password and code sign in, and forget the failures.
	if code, h, _ := signIn(olga.Email, olga.Password, right); code != http.StatusSeeOther || h.Get("Location") != "/dashboard" {
		t.Fatalf("the right code after the wait: %d to %q", code, h.Get("Location"))
	}

	// Attempts sent together: only as many are checked as the account's count lets through
	// one after the other (three free, then one that sets a wait); the others wait.
	var mu sync.Mutex
	answers := map[int]int{}
	var wg sync.WaitGroup
	for range 12 {
		wg.Go(func() {
			code, _, _ := signIn(olga.Email, olga.Password, wrong)
			mu.Lock()
			answers[code]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if answers[401] != 4 || answers[429] != 8 {
		t.Errorf("12 wrong codes at once: %v, want 4 checked (401) and 8 made to wait (429)", answers)
	}

	var au struct {
		Entries []struct {
			Action     string
			RemoteAddr string
			Detail     json.RawMessage
		}
	}
	if code := s.admin(t, "GET", "/admin/v1/audit?action=signin.failure&limit=100", nil, &au); code != 200 {
		t.Fatalf("audit: %d", code)
	}
	var counted, waiting int
	for _, e := range au.Entries {
		var d map[string]string
		json.Unmarshal(e.Detail, &d)
		if d["email"] == "someone@example.com" {
			continue
		}
		switch d["why"] {
		case "wrong or replayed code":
			counted++
			if want := map[int]string{4: "1s", 5: "2s"}[mustAtoi(t, d["accountFailures"])]; want != "" && d["accountWait"] != want {
				t.Errorf("failure %s: accountWait %q, want %s", d["accountFailures"], d["accountWait"], want)
			}
		case "account waiting":
			waiting++
			if d["accountWait"] == "" || !strings.HasPrefix(e.RemoteAddr, "198.51.100.") {
				t.Errorf("a refused attempt: %+v %s", d, e.RemoteAddr)
			}
		}
	}
	if counted != 5+4 || waiting != 2+8 {
		t.Errorf("audit: %d counted failures and %d attempts refused for the wait, want 9 and 10", counted, waiting)
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return n
}
