package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"payouts/api"
	"payouts/internal/server"
	"payouts/rules"
)

// A user's failed sign-ins count against the account, whatever address they come from: past
// three in a row, each doubles the wait before the account's next attempt is even checked
// (the right password and code, sent during a wait, are refused with 429 and Retry-After),
// the audit log counts every failure and has each lock-out with the account's count and
// wait, and the admin token
// still signs in from the attacker's own address once it is over its allowance.
func TestSignInFailuresDelayTheAccountAcrossAddresses(t *testing.T) {
	t.Parallel()
	clock := stepStartClock() // the set-up's code and the sign-in's in two steps of one window
	clock.Hold()              // a wait is over when the test advances past it, however slow the machine
	now := clock.Now().Unix() / 30
	s := startServerWith(t, "", server.Options{Now: clock.Now}, "--trusted-proxies", "127.0.0.1/32")
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
		clock.Advance(time.Duration(wait)*time.Second + 100*time.Millisecond)
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

	// The audit log counts the refusals (an entry per address and account a minute, written
	// as the log is read) and has each lock-out of the account.
	var au struct {
		Entries []struct {
			Action     string
			RemoteAddr string
			Detail     struct {
				Email, AccountWait, Lockout string
				Count, AccountFailures      int
				Reasons                     map[string]int
			}
		}
	}
	if code := s.admin(t, "GET", "/admin/v1/audit?action=signin&limit=1000", nil, &au); code != 200 {
		t.Fatalf("audit: %d", code)
	}
	var counted, waiting int
	var lockouts []string
	for _, e := range au.Entries {
		d := e.Detail
		if d.Email == "someone@example.com" || d.Email == "" {
			continue
		}
		switch e.Action {
		case "signin.failure":
			counted += d.Reasons["wrong or replayed code"]
			waiting += d.Reasons["account waiting"]
			if d.Reasons["account waiting"] > 0 && (d.AccountWait == "" || !strings.HasPrefix(e.RemoteAddr, "198.51.100.")) {
				t.Errorf("a refused attempt: %+v %s", d, e.RemoteAddr)
			}
		case "signin.lockout":
			if d.Lockout == "account" {
				lockouts = append(lockouts, fmt.Sprintf("%d:%s", d.AccountFailures, d.AccountWait))
			}
		}
	}
	if counted != 5+4 || waiting != 2+8 {
		t.Errorf("audit: %d counted failures and %d attempts refused for the wait, want 9 and 10", counted, waiting)
	}
	slices.Sort(lockouts)
	if want := []string{"4:1s", "4:1s", "5:2s"}; !slices.Equal(lockouts, want) {
		t.Errorf("the account's lock-outs in the audit log: %v, want %v (failures:wait)", lockouts, want)
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

// Thousands of refused sign-ins (most refused 429 before any check, each for another
// account with a 240-character email, from three addresses) leave the store about as it was:
// the audit log counts them, an entry per address and account a minute, instead of an entry
// each. What an auditor needs is kept: every refusal is counted, each address over its
// allowance and each account made to wait is a lock-out entry, with when and how many tries.
func TestRefusedSignInsDoNotGrowTheStore(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("3,000 sign-ins")
	}
	clock := &testClock{} // held: the allowances a minute count in one minute however slow the machine
	clock.Hold()
	s := startServerWith(t, "", server.Options{Now: clock.Now}, "--trusted-proxies", "127.0.0.1/32")
	signIn := func(addr, email string) int {
		form := url.Values{"email": {email}, "password": {"not the password"}, "code": {"123456"}}
		req, _ := http.NewRequest("POST", s.URL+"/dashboard/login?lang=en", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-Forwarded-For", addr)
		resp, err := dashClient(nil).Do(req)
		if err != nil {
			t.Error(err)
			return 0
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	type auditDetail struct {
		Email, AccountWait, Lockout   string
		Count, AccountFailures, Tries int
	}
	type auditEntry struct {
		Action, RemoteAddr string
		At                 time.Time
		Detail             auditDetail
	}
	audit := func() []auditEntry {
		var au struct {
			Entries []struct {
				Action, RemoteAddr string
				At                 time.Time
				Detail             json.RawMessage
			}
		}
		if code := s.admin(t, "GET", "/admin/v1/audit?action=signin&limit=1000", nil, &au); code != 200 {
			t.Fatalf("audit: %d", code)
		}
		var out []auditEntry
		for _, e := range au.Entries {
			var d auditDetail
			json.Unmarshal(e.Detail, &d) // what does not fit stays zero, and is told below
			out = append(out, auditEntry{e.Action, e.RemoteAddr, e.At, d})
		}
		return out
	}
	dbFile := filepath.Join(s.Data, "payouts.db")
	sizeBefore := int64(-1)
	if !onPostgresTests() {
		st, err := os.Stat(dbFile)
		if err != nil {
			t.Fatal(err)
		}
		sizeBefore = st.Size()
	}

	// An account made to wait: three free failures, the fourth sets a second's wait, the
	// fifth is refused for it.
	for i := 1; i <= 5; i++ {
		signIn(fmt.Sprintf("192.0.2.%d", i), "olga@example.com")
	}
	const sent = 3000
	var codes sync.Map
	var next atomic.Int32
	var wg sync.WaitGroup
	const clients = 8
	for range clients {
		wg.Go(func() {
			for i := int(next.Add(1)); i <= sent; i = int(next.Add(1)) {
				email := fmt.Sprintf("%s-%05d@example.com", strings.Repeat("x", 222), i)
				code := signIn(fmt.Sprintf("203.0.113.%d", i%3+1), email)
				n, _ := codes.LoadOrStore(code, new(atomic.Int32))
				n.(*atomic.Int32).Add(1)
			}
		})
	}
	wg.Wait()
	answers := map[any]int32{}
	codes.Range(func(k, v any) bool { answers[k] = v.(*atomic.Int32).Load(); return true })
	if answers[401]+answers[429] != sent || answers[429] < sent/2 {
		t.Fatalf("the refused sign-ins were answered %v, want 401 or 429, most 429", answers)
	}

	entries := audit()
	counted, failures, lockouts := 0, 0, map[string]auditEntry{}
	for _, e := range entries {
		switch e.Action {
		case "signin.failure":
			failures++
			counted += e.Detail.Count
		case "signin.lockout":
			key := e.RemoteAddr
			if e.Detail.Lockout == "account" {
				key = e.Detail.Email
			}
			lockouts[key] = e
		}
	}
	if counted != sent+5 {
		t.Errorf("the audit log counts %d refused sign-ins, want %d", counted, sent+5)
	}
	// At most 2×100+1 entries a minute's window, and the run may span two windows.
	if failures > 2*(2*rules.SignInRefusalMax+1) {
		t.Errorf("%d signin.failure entries for %d refusals, want at most %d", failures, sent+5, 2*(2*rules.SignInRefusalMax+1))
	}
	if l, ok := lockouts["olga@example.com"]; !ok || l.Detail.AccountFailures != 4 || l.Detail.AccountWait != "1s" || l.At.IsZero() {
		t.Errorf("the account's lock-out: %+v (found %v), want 4 failures and a wait of 1s", l, ok)
	}
	// An address is locked out by its refusal past the allowance; the lock-out counts the
	// address's refusals counted so far, and the other clients' refusals, answered already
	// by the limiter, may not be counted yet (the PostgreSQL pass once saw 19).
	for i := 1; i <= 3; i++ {
		addr := fmt.Sprintf("203.0.113.%d", i)
		if l, ok := lockouts[addr]; !ok || l.Detail.Tries < api.AuthFailuresPerMinute-(clients-1) || l.At.IsZero() {
			t.Errorf("the lock-out of %s: %+v (found %v), want it with at least %d tries", addr, l, ok, api.AuthFailuresPerMinute-(clients-1))
		}
	}
	if !onPostgresTests() {
		st, err := os.Stat(dbFile)
		if err != nil {
			t.Fatal(err)
		}
		if grown := st.Size() - sizeBefore; grown > 1<<20 {
			t.Errorf("%d refused sign-ins grew the store from %d to %d bytes", sent, sizeBefore, st.Size())
		}
		t.Logf("%d refused sign-ins: the store went from %d to %d bytes, in %d signin.failure entries", sent, sizeBefore, st.Size(), failures)
	}
}
