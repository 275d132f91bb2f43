package e2e

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"
)

// During a database outage the dashboard answers as the API does: 503 with Retry-After and
// a page that says the database cannot be reached, for a signed-in page, the sign-in page
// and both sign-ins (admin token, user); never 500. Once the database is back, the session
// signed in before the outage still works.
func TestDashboardAnswers503DuringDatabaseOutage(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	s, proxy := startBehindCutProxy(t)
	signedIn := dashboardSignIn(t, s)
	get := func(c *http.Client, path string) (*http.Response, string) {
		t.Helper()
		resp, err := c.Get(s.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(body)
	}
	if resp, _ := get(signedIn, "/dashboard/payouts"); resp.StatusCode != 200 {
		t.Fatalf("before the outage: %d", resp.StatusCode)
	}

	proxy.cut()
	post := func(form url.Values) (*http.Response, string) {
		t.Helper()
		jar, _ := cookiejar.New(nil)
		resp, err := dashClient(jar).PostForm(s.URL+"/dashboard/login?lang=en", form)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(body)
	}
	for _, tc := range []struct {
		name string
		call func() (*http.Response, string)
	}{
		{"a signed-in page", func() (*http.Response, string) { return get(signedIn, "/dashboard/payouts?lang=en") }},
		{"the overview", func() (*http.Response, string) { return get(signedIn, "/dashboard?lang=en") }},
		{"the sign-in page", func() (*http.Response, string) { return get(dashClient(nil), "/dashboard/login?lang=en") }},
		{"the admin token's sign-in", func() (*http.Response, string) { return post(url.Values{"token": {s.AdminToken}}) }},
		{"a user's sign-in", func() (*http.Response, string) {
			return post(url.Values{"email": {"ana@example.com"}, "password": {"correct horse battery"}, "code": {"123456"}})
		}},
	} {
		resp, body := tc.call()
		if resp.StatusCode != http.StatusServiceUnavailable {
			t.Errorf("%s during the outage: %d, want 503:\n%.300s", tc.name, resp.StatusCode, body)
			continue
		}
		if resp.Header.Get("Retry-After") == "" {
			t.Errorf("%s during the outage: no Retry-After", tc.name)
		}
		if !strings.Contains(body, "cannot reach its database") || resp.Header.Get("Location") != "" ||
			!strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
			t.Errorf("%s during the outage: a page that does not say the database cannot be reached (Location %q, %s):\n%.500s",
				tc.name, resp.Header.Get("Location"), resp.Header.Get("Content-Type"), body)
		}
		if strings.Count(body, "</html>") != 1 {
			t.Errorf("%s during the outage: the page is not alone in the answer:\n%s", tc.name, body)
		}
	}

	proxy.restore()
	var code int
	var body string
	if !poll(15*time.Second, func() bool {
		var resp *http.Response
		resp, body = get(signedIn, "/dashboard/payouts")
		if code = resp.StatusCode; code != 200 && code != http.StatusServiceUnavailable {
			t.Fatalf("after the outage, the session of before it: %d\n%.300s", code, body)
		}
		return code == 200
	}) {
		t.Fatalf("after the outage, the session of before it: %d\n%.300s", code, body)
	}
}
