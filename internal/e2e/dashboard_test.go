package e2e

// The dashboard over HTTP, as a browser without JavaScript would use it: every
// page refuses a signed-out request and a cross-site post; the sign-in sets a strict cookie
// and is rate limited; the CSV holds what the API created.

import (
	"encoding/csv"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

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

// dashClient is a client that shows redirects instead of following them.
func dashClient(jar http.CookieJar) *http.Client {
	return &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// dashboardSignIn signs in and returns the client holding the session cookie.
func dashboardSignIn(t *testing.T, s *testServer) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := dashClient(jar)
	servertest.SignIn(t, c, s.URL, s.AdminToken)
	return c
}

// dashText GETs a dashboard page with c (signed in) and returns its body; anything but 200
// fails.
func dashText(t *testing.T, c *http.Client, u string) string {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %.300s", u, resp.StatusCode, raw)
	}
	return string(raw)
}

func TestDashboardRefusesSignedOutRequests(t *testing.T) {
	t.Parallel()
	s := startServer(t, "")
	m := s.newMerchant(t, map[string]any{})
	code, _, raw := m.do(t, "POST", "payouts", perBankRequest("DASH-OUT-1"), "")
	if code != 201 {
		t.Fatalf("create: %d %s", code, raw)
	}
	c := dashClient(nil)
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
	s.admin(t, "GET", "/admin/v1/merchants/1", nil, &got)
	if got.Name == "Intruso" {
		t.Error("a signed-out post renamed the merchant")
	}
	code, _, raw = m.do(t, "GET", "balance", nil, "")
	if code != 200 || !strings.Contains(string(raw), `"balance":1000000000`) {
		t.Errorf("balance after signed-out fund: %d %s", code, raw)
	}
}

func TestDashboardRefusesCrossSitePosts(t *testing.T) {
	t.Parallel()
	s := startServer(t, "")
	s.newMerchant(t, map[string]any{})
	c := dashboardSignIn(t, s)
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
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusForbidden {
				t.Errorf("cross-site POST %s %v: %d, want 403", p, h, resp.StatusCode)
			}
		}
	}
	// Still signed in (the forged logout did nothing), and nothing was renamed.
	resp, err := c.Get(s.URL + "/dashboard/merchants/1")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || strings.Contains(string(body), "Intruso") {
		t.Errorf("after forged posts: %d, renamed %v", resp.StatusCode, strings.Contains(string(body), "Intruso"))
	}
}

func TestDashboardSignIn(t *testing.T) {
	t.Parallel()
	s := startServer(t, "")
	jar, _ := cookiejar.New(nil)
	c := dashClient(jar)
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
	resp, err = c.Get(s.URL + "/dashboard")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `<html lang="en">`) || !strings.Contains(string(body), "The last 24 hours") {
		t.Fatalf("overview after sign-in in English: %d %.300s", resp.StatusCode, body)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") || strings.Contains(csp, "script-src") {
		t.Errorf("CSP %q", csp)
	}
	// Sign out ends the session: the old cookie opens nothing.
	req, _ := http.NewRequest("POST", s.URL+"/dashboard/logout", nil)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err = c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	resp, err = c.Get(s.URL + "/dashboard")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Errorf("after sign-out: %d, want 303 to the sign-in", resp.StatusCode)
	}
}

func TestDashboardSignInIsRateLimited(t *testing.T) {
	t.Parallel()
	clock := &testClock{} // held: the allowances a minute count in one minute however slow the machine
	clock.Hold()
	s := startServerWith(t, "", server.Options{Now: clock.Now})
	c := dashClient(nil)
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
}

func TestDashboardPayoutsCSV(t *testing.T) {
	t.Parallel()
	s := startServer(t, "")
	m := s.newMerchant(t, map[string]any{})
	other := s.newMerchant(t, map[string]any{})
	ids := map[string]int64{}
	for _, o := range []string{"CSV-1", "CSV-2", "CSV-3"} {
		code, _, raw := m.do(t, "POST", "payouts", perBankRequest(o), "")
		if code != 201 {
			t.Fatalf("create %s: %d %s", o, code, raw)
		}
		ids[o] = decodePayout(t, raw).Payout.ID
	}
	if code, _, raw := other.do(t, "POST", "payouts", colBankRequest("CSV-OTHER"), ""); code != 201 {
		t.Fatalf("create: %d %s", code, raw)
	}
	c := dashboardSignIn(t, s)
	get := func(q string) [][]string {
		t.Helper()
		resp, err := c.Get(s.URL + "/dashboard/payouts.csv?" + q)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/csv") {
			t.Fatalf("CSV %s: %d %s", q, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		rows, err := csv.NewReader(resp.Body).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
	rows := get("")
	if len(rows) != 5 || rows[0][0] != "payoutId" || rows[0][6] != "amount" || rows[0][7] != "amountMinor" {
		t.Fatalf("all payouts: %d rows, header %v", len(rows), rows[0])
	}
	// Newest first, across merchants.
	if rows[1][1] != "CSV-OTHER" || rows[2][1] != "CSV-3" || rows[4][1] != "CSV-1" {
		t.Errorf("order: %v", [][]string{rows[1], rows[2], rows[3], rows[4]})
	}
	if rows[2][6] != "1000.00" || rows[2][7] != "100000" || rows[2][4] != "PER" || rows[2][5] != "PEN" || rows[2][2] != m.MerchantID {
		t.Errorf("CSV-3 row: %v", rows[2])
	}
	if rows[1][6] != "50000.00" || rows[1][7] != "5000000" {
		t.Errorf("COL row amounts: %v", rows[1])
	}
	rows = get("merchant=" + m.MerchantID + "&orderId=CSV-2")
	if len(rows) != 2 || rows[1][0] != strconv.FormatInt(ids["CSV-2"], 10) {
		t.Errorf("by orderId: %v", rows)
	}
	rows = get("country=COL")
	if len(rows) != 2 || rows[1][1] != "CSV-OTHER" {
		t.Errorf("by country: %v", rows)
	}
	resp, err := c.Get(s.URL + "/dashboard/payouts.csv?stage=NOPE")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a bad stage: %d, want 400", resp.StatusCode)
	}

	// The list pages with a cursor: one page of two, then the rest.
	resp, err = c.Get(s.URL + "/dashboard/payouts?merchant=" + m.MerchantID)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, o := range []string{"CSV-1", "CSV-2", "CSV-3"} {
		if !strings.Contains(string(body), ">"+o+"<") {
			t.Errorf("the list lacks %s", o)
		}
	}
	if strings.Contains(string(body), ">CSV-OTHER<") {
		t.Error("the merchant filter let another merchant's payout through")
	}
}
