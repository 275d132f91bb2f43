package api_test

import (
	"encoding/base64"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"payouts/internal/servertest"
	"payouts/rules"
)

// The signed endpoint of payout links: the link and its token, the reservation, the link
// as GET and the list show it, the replay and the conflict, each bad input with its code,
// another merchant's view, and the cancel that ends it.
func TestPayoutLinkEndpoint(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: e})
		c := s.NewMerchant(t, nil)
		avail0, _ := c.Balance(t, "COP")

		before := time.Now()
		code, hdr, a, raw := c.CreateLink(t, servertest.LinkRequest("LINK-1"))
		if code != 200 || !strings.HasPrefix(a.Link, s.URL+"/link?s=") || hdr.Get("Cache-Control") != "no-store" || hdr.Get("Idempotent-Replayed") != "" {
			t.Fatalf("create: %d %v %s", code, hdr, raw)
		}
		token := strings.TrimPrefix(a.Link, s.URL+"/link?s=")
		if b, err := base64.RawURLEncoding.DecodeString(token); err != nil || len(b)*8 < 128 {
			t.Errorf("token %q: %d bits (%v), want at least 128", token, len(b)*8, err)
		}
		exp, err := time.Parse(time.RFC3339Nano, a.ExpiresAt)
		if err != nil || exp.Before(before.Add(time.Hour-time.Second)) || exp.After(time.Now().Add(time.Hour+time.Second)) {
			t.Errorf("expiresAt %q, want an hour from now", a.ExpiresAt)
		}
		p := c.WaitStatus(t, a.Payout.ID, "AUTHORIZED", 5*time.Second)
		if avail, _ := c.Balance(t, "COP"); avail != avail0-15000000 {
			t.Errorf("available %d, want %d reserved", avail, avail0-15000000)
		}
		if d := c.LinkOf(t, p.Payout.ID); d.Link == nil || d.Link.State != "waiting" || d.Channel != "LINK" || !slices.Equal(d.Link.AllowedDestinations, []int{2}) {
			t.Errorf("GET shows %+v", d)
		}

		// Listed as the payout it is, on its channel.
		var listed struct{ Items []servertest.LinkDetail }
		c.GetJSON(t, "payouts", "orderId=LINK-1", &listed)
		if len(listed.Items) != 1 || listed.Items[0].Channel != "LINK" || listed.Items[0].Link == nil || listed.Items[0].Link.State != "waiting" {
			t.Errorf("listed as %+v", listed.Items)
		}

		// The same body again: the same link, replayed. Another body: 409 2005.
		code, hdr, again, raw := c.CreateLink(t, servertest.LinkRequest("LINK-1"))
		if code != 200 || again.Link != a.Link || again.Payout.ID != a.Payout.ID || hdr.Get("Idempotent-Replayed") != "true" {
			t.Errorf("replay: %d %v %s", code, hdr, raw)
		}
		other := servertest.LinkRequest("LINK-1")
		other["expirationTime"] = 120
		if code, _, _, raw := c.CreateLink(t, other); code != 409 || !strings.Contains(string(raw), `"code":"2005"`) {
			t.Errorf("another body: %d %s, want 409 2005", code, raw)
		}

		// Bad input: each error with its code and field; nothing stored.
		bad := servertest.LinkRequest("LINK-BAD")
		bad["expirationTime"], bad["allowedDestinations"], bad["destination"] = 43201, []int{3}, map[string]any{}
		delete(bad, "currency")
		code, _, _, raw = c.CreateLink(t, bad)
		var prob struct {
			Errors []struct{ Code, Location string }
		}
		json.Unmarshal(raw, &prob)
		got := map[string]string{}
		for _, e := range prob.Errors {
			got[e.Location] = e.Code
		}
		want := map[string]string{"body.expirationTime": rules.CodeLinkExpiration, "body.allowedDestinations[0]": rules.CodeLinkDestinations,
			"body.destination": rules.CodeLinkNoDestination, "body.currency": "1012"}
		for loc, c := range want {
			if got[loc] != c {
				t.Errorf("bad input: %s has %q, want %s (%d %s)", loc, got[loc], c, code, raw)
			}
		}
		if code != 400 {
			t.Errorf("bad input: %d, want 400", code)
		}
		if code, _, _ := c.Do(t, "GET", "payouts", nil, "orderId=LINK-BAD"); code == 200 {
			if _, _, raw := c.Do(t, "GET", "payouts", nil, "orderId=LINK-BAD"); strings.Contains(string(raw), "LINK-BAD") {
				t.Errorf("a refused link was stored: %s", raw)
			}
		}

		// Readable only by its merchant: to another, the payout and its link do not exist.
		id := strconv.FormatInt(a.Payout.ID, 10)
		stranger := s.NewMerchant(t, nil)
		if code, _, raw := stranger.Do(t, "GET", "payouts/"+id, nil, ""); code != 404 || strings.Contains(string(raw), "/link?s=") {
			t.Errorf("another merchant reads the link: %d %s", code, raw)
		}
		if code, _, raw := stranger.Do(t, "POST", "payouts/"+id+"/cancel", nil, ""); code != 404 {
			t.Errorf("another merchant cancels the link: %d %s", code, raw)
		}

		// Cancel ends it: the reservation back, the page says it failed.
		code, _, raw = c.Do(t, "POST", "payouts/"+id+"/cancel", nil, "")
		if p := servertest.DecodePayout(t, raw); code != 200 || p.Output.Stage != "REJECTED" || p.Output.Status != "ERROR" || len(p.Errors) != 1 || p.Errors[0].Code != rules.CodeCancelled {
			t.Fatalf("cancel a link: %d %s, want 200 REJECTED/ERROR 2961", code, raw)
		}
		if avail, _ := c.Balance(t, "COP"); avail != avail0 {
			t.Errorf("after the cancel: available %d, want %d", avail, avail0)
		}
		if d := c.LinkOf(t, a.Payout.ID); d.Link == nil || d.Link.State != "ended" {
			t.Errorf("GET after the cancel: %+v", d.Link)
		}
		code, _, doc := s.Page(t, a.Link)
		if st, _ := doc.Find("#result").Attr("class"); code != 200 || !strings.Contains(st, "result-failed") {
			t.Errorf("page after the cancel: %d %q %s", code, st, servertest.DocText(doc))
		}
	})
}
