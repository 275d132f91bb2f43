package e2e

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// The card answer's iframe URL is https:// when the service is reached over
// TLS: through --public-url, or through a trusted proxy's X-Forwarded-Proto (or Forwarded);
// an untrusted peer's headers change nothing.
func TestCardIframeIsHTTPSBehindTLS(t *testing.T) {
	t.Parallel()
	open := func(t *testing.T, c *merchantClient, order string, headers map[string]string, accept string) string {
		t.Helper()
		raw, _ := json.Marshal(cardRequest(order))
		req := c.request("POST", "payouts/card", raw, "")
		req.Header.Set("Accept", accept)
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := c.HTTP.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("card payout: %d %s", resp.StatusCode, body)
		}
		if accept == "text/html" {
			return string(body)
		}
		var a cardAnswer
		json.Unmarshal(body, &a)
		return a.Iframe
	}
	card := map[string]any{"cardPayouts": true}

	proxied := startServer(t, "", "--trusted-proxies", "127.0.0.1/32")
	c := proxied.newMerchant(t, card)
	if got := open(t, c, "TLS-1", map[string]string{"X-Forwarded-Proto": "https", "X-Forwarded-Host": "pay.example.com"}, "application/json"); !strings.HasPrefix(got, "https://pay.example.com/card?s=") {
		t.Errorf("behind a trusted TLS proxy the iframe is %q", got)
	}
	if got := open(t, c, "TLS-2", map[string]string{"Forwarded": `for=203.0.113.9;proto=https;host="pay.example.com"`}, "application/json"); !strings.HasPrefix(got, "https://pay.example.com/card?s=") {
		t.Errorf("with Forwarded proto=https the iframe is %q", got)
	}
	if got := open(t, c, "TLS-3", map[string]string{"X-Forwarded-Proto": "https"}, "application/json"); !strings.HasPrefix(got, "https://"+strings.TrimPrefix(proxied.URL, "http://")+"/card?s=") {
		t.Errorf("X-Forwarded-Proto alone keeps the Host: %q", got)
	}
	// The page for <iframe srcdoc> posts and loads its assets over the same scheme.
	page := open(t, c, "TLS-4", map[string]string{"X-Forwarded-Proto": "https", "X-Forwarded-Host": "pay.example.com"}, "text/html")
	if !strings.Contains(page, `action="https://pay.example.com/card?s=`) || strings.Contains(page, proxied.URL) {
		t.Errorf("the srcdoc page still points at http:\n%.2000s", page)
	}
	if got := open(t, c, "TLS-5", map[string]string{"X-Forwarded-Proto": "https", "X-Forwarded-Host": "evil.example/path"}, "application/json"); !strings.HasPrefix(got, proxied.URL+"/card?s=") {
		t.Errorf("a forwarded host that is no host was taken: %q", got)
	}

	direct := startServer(t, "")
	d := direct.newMerchant(t, card)
	if got := open(t, d, "TLS-6", map[string]string{"X-Forwarded-Proto": "https", "X-Forwarded-Host": "pay.example.com"}, "application/json"); !strings.HasPrefix(got, direct.URL+"/card?s=") {
		t.Errorf("an untrusted peer's X-Forwarded-Proto changed the iframe: %q", got)
	}

	public := startServer(t, "", "--public-url", "https://payouts.example.org/", "--trusted-proxies", "127.0.0.1/32")
	p := public.newMerchant(t, card)
	if got := open(t, p, "TLS-7", map[string]string{"X-Forwarded-Proto": "http", "X-Forwarded-Host": "other.example"}, "application/json"); !strings.HasPrefix(got, "https://payouts.example.org/card?s=") {
		t.Errorf("--public-url https does not win: %q", got)
	}
}
