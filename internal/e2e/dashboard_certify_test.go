package e2e

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// From the dashboard, a merchant's receiver is certified: the form on the merchant's page
// starts a run against its notificationUrl (or the URL given) and the run's page shows the
// signed report once it is done.
func TestDashboardCertifiesTheReceiver(t *testing.T) {
	t.Parallel()
	s := startServer(t, "", "--allow-private-notification-urls")
	// A receiver that accepts anything: the run is done in well under a second, and fails the forgeries.
	lax := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) }))
	defer lax.Close()
	m := s.newMerchant(t, map[string]any{"notificationUrl": lax.URL + "/hook"})
	c := dashboardSignIn(t, s)
	self := "/dashboard/merchants/" + m.MerchantID

	page := dashText(t, c, s.URL+self)
	if !strings.Contains(page, `action="`+self+`/certify"`) || !strings.Contains(page, `placeholder="`+lax.URL+`/hook"`) {
		t.Fatalf("the merchant's page offers no certification of its receiver:\n%s", page)
	}
	start := func(target string) string {
		t.Helper()
		resp, err := c.PostForm(s.URL+self+"/certify", url.Values{"url": {target}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("POST certify: %d", resp.StatusCode)
		}
		return resp.Header.Get("Location")
	}

	// A URL that is not a receiver's goes back to the merchant's page with the reason.
	if to := start("ftp://example.com/x"); to != self {
		t.Fatalf("an ftp URL went to %q", to)
	}
	if page := dashText(t, c, s.URL+self); !strings.Contains(page, "https") {
		t.Errorf("the merchant's page does not say why the URL was refused")
	}

	run := start("")
	if !regexp.MustCompile(`^` + regexp.QuoteMeta(self) + `/certifications/cr_[0-9a-f]{12}$`).MatchString(run) {
		t.Fatalf("the run's page is %q", run)
	}
	var report string
	var csp string
	eventually(t, 30*time.Second, "the run's page shows its report", func() bool {
		resp, err := c.Get(s.URL + run)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d", run, resp.StatusCode)
		}
		report, csp = string(raw), resp.Header.Get("Content-Security-Policy")
		return strings.Contains(report, "<h1>Receiver certification")
	})
	for _, want := range []string{"FAILED", "forged-other-key", lax.URL + "/hook", "Signed by the service"} {
		if !strings.Contains(report, want) {
			t.Errorf("the report page lacks %q", want)
		}
	}
	if !strings.Contains(csp, "style-src 'unsafe-inline'") || strings.Contains(csp, "script-src") {
		t.Errorf("the report page's policy %q: its inline styles, and no script", csp)
	}

	// Another merchant's run, or one that does not exist, is not shown.
	other := s.newMerchant(t, nil)
	resp, err := c.Get(s.URL + "/dashboard/merchants/" + other.MerchantID + strings.TrimPrefix(run, self))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/dashboard/merchants/"+other.MerchantID {
		t.Errorf("another merchant's run: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
}
