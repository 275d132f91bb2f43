package web_test

// The dashboard over HTTP, in process (servertest) on each engine, as a browser without
// JavaScript would use it: every page refuses a signed-out request and a cross-site post;
// the sign-in sets a strict cookie and is rate limited.

import (
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"payouts/internal/server"
	"payouts/internal/servertest"
)

// dashboardGets and dashboardPosts are every /dashboard path (ids of existing records: a
// signed-out or forged request must be refused before anything is looked up).
var dashboardGets = []string{"/dashboard", "/dashboard/payouts", "/dashboard/payouts.csv", "/dashboard/payouts/1",
	"/dashboard/deliveries", "/dashboard/merchants", "/dashboard/merchants/1", "/dashboard/mail",
	"/dashboard/merchants/1/inbox", "/dashboard/merchants/1/events", "/dashboard/merchants/1/events/merchant.notification.1.PROCESSED",
	"/dashboard/merchants/1/new-payout?country=PER"}

var dashboardPosts = []string{"/dashboard/logout", "/dashboard/payouts/1/simulate", "/dashboard/deliveries/resend",
	"/dashboard/merchants", "/dashboard/merchants/1", "/dashboard/merchants/1/fund",
	"/dashboard/merchants/1/new-payout?country=PER"}

func TestDashboardRefusesSignedOutRequests(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: e})
		m := s.NewMerchant(t, map[string]any{})
		code, _, raw := m.Do(t, "POST", "payouts", servertest.PerBankRequest("DASH-OUT-1"), "")
		if code != 201 {
			t.Fatalf("create: %d %s", code, raw)
		}
		c := s.Browser()
		check := func(method, path string, resp *http.Response, err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/dashboard/login" {
				t.Errorf("signed out %s %s: %d to %q, want 303 to /dashboard/login: %.200s", method, path, resp.StatusCode, resp.Header.Get("Location"), body)
			}
		}
		for _, p := range dashboardGets {
			resp, err := c.Get(s.URL + p)
			check("GET", p, resp, err)
		}
		// Same-origin posts (as the dashboard's own forms send them), with what each would need.
		form := url.Values{"action": {"succeed"}, "event": {"x"}, "name": {"Intruso"}, "pair": {"PER PEN"}, "amount": {"5"}}
		for _, p := range dashboardPosts {
			req, _ := http.NewRequest("POST", s.URL+p, strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Origin", s.URL)
			req.Header.Set("Sec-Fetch-Site", "same-origin")
			resp, err := c.Do(req)
			check("POST", p, resp, err)
		}
		// Nothing happened: no merchant named Intruso, the payout is not forced, the balance untouched.
		var got struct{ Name string }
		s.Admin(t, "GET", "/admin/v1/merchants/1", nil, &got)
		if got.Name == "Intruso" {
			t.Error("a signed-out post renamed the merchant")
		}
		code, _, raw = m.Do(t, "GET", "balance", nil, "")
		if code != 200 || !strings.Contains(string(raw), `"balance":1000000000`) {
			t.Errorf("balance after signed-out fund: %d %s", code, raw)
		}
	})
}

func TestDashboardRefusesCrossSitePosts(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: e})
		s.NewMerchant(t, map[string]any{})
		c := s.Dashboard(t)
		form := url.Values{"action": {"succeed"}, "event": {"x"}, "name": {"Intruso"}, "pair": {"PER PEN"}, "amount": {"5"}, "token": {s.AdminToken}}
		for _, p := range append([]string{"/dashboard/login", "/dashboard/lang"}, dashboardPosts...) {
			for _, h := range []map[string]string{
				{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"},
				{"Origin": "https://evil.example"}, // an older browser: no Sec-Fetch-Site
			} {
				req, _ := http.NewRequest("POST", s.URL+p, strings.NewReader(form.Encode()))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				for k, v := range h {
					req.Header.Set(k, v)
				}
				if code, _, _ := servertest.Send(t, c, req); code != http.StatusForbidden {
					t.Errorf("cross-site POST %s %v: %d, want 403", p, h, code)
				}
			}
		}
		// Still signed in (the forged logout did nothing), and nothing was renamed.
		req, _ := http.NewRequest("GET", s.URL+"/dashboard/merchants/1", nil)
		if code, _, body := servertest.Send(t, c, req); code != 200 || strings.Contains(string(body), "Intruso") {
			t.Errorf("after forged posts: %d, renamed %v", code, strings.Contains(string(body), "Intruso"))
		}
	})
}

func TestDashboardSignIn(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: e})
		c := s.CookieBrowser()
		resp, err := c.PostForm(s.URL+"/dashboard/login", url.Values{"token": {s.AdminToken}, "lang": {"en"}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		var cookie string
		for _, h := range resp.Header.Values("Set-Cookie") {
			if strings.HasPrefix(h, "payouts_dashboard=") {
				cookie = h
			}
		}
		for _, want := range []string{"HttpOnly", "SameSite=Strict", "Path=/"} {
			if !strings.Contains(cookie, want) {
				t.Errorf("cookie %q lacks %s", cookie, want)
			}
		}
		if strings.Contains(cookie, "Secure") {
			t.Errorf("cookie %q is Secure on plain http: the browser would drop it", cookie)
		}
		req, _ := http.NewRequest("GET", s.URL+"/dashboard", nil)
		code, hdr, body := servertest.Send(t, c, req)
		if code != 200 || !strings.Contains(string(body), `<html lang="en">`) || !strings.Contains(string(body), "The last 24 hours") {
			t.Fatalf("overview after sign-in in English: %d %.300s", code, body)
		}
		if csp := hdr.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") || strings.Contains(csp, "script-src") {
			t.Errorf("CSP %q", csp)
		}
		// Sign out ends the session: the old cookie opens nothing.
		req, _ = http.NewRequest("POST", s.URL+"/dashboard/logout", nil)
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		servertest.Send(t, c, req)
		req, _ = http.NewRequest("GET", s.URL+"/dashboard", nil)
		if code, _, _ := servertest.Send(t, c, req); code != http.StatusSeeOther {
			t.Errorf("after sign-out: %d, want 303 to the sign-in", code)
		}
	})
}

func TestDashboardSignInIsRateLimited(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		clock := &servertest.Clock{} // held: the allowances a minute count in one minute however slow the machine
		clock.Hold()
		s := servertest.Start(t, servertest.Setup{Engine: e, Options: server.Options{Now: clock.Now}})
		c := s.Browser()
		var last int
		for i := 0; i < 25; i++ {
			resp, err := c.PostForm(s.URL+"/dashboard/login", url.Values{"token": {"wrong-" + strconv.Itoa(i)}})
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			last = resp.StatusCode
			if i == 0 && last != http.StatusUnauthorized {
				t.Fatalf("a wrong token: %d, want 401", last)
			}
		}
		if last != http.StatusTooManyRequests {
			t.Fatalf("the 25th wrong token in a burst: %d, want 429", last)
		}
		// While blocked, the right token still signs in: the failures are limited, never
		// the operator; TestSignInFailuresSharedWithTheAdminAPIAndNeverTheRightToken goes on.
		resp, err := c.PostForm(s.URL+"/dashboard/login", url.Values{"token": {s.AdminToken}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther {
			t.Errorf("the right token while blocked: %d, want 303", resp.StatusCode)
		}
	})
}
