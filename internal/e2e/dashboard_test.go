package e2e

// The dashboard's clients as the end-to-end tests of the dashboard use them (its outages,
// its faults, the browsers'). The dashboard's own request/answer tests run in process
// (web/dashboard/*_test.go).

import (
	"net/http"
	"net/http/cookiejar"
	"testing"
	"time"

	"payouts/internal/servertest"
)

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
// fails (servertest.Text).
func dashText(t *testing.T, c *http.Client, u string) string {
	t.Helper()
	return servertest.Text(t, c, u)
}
