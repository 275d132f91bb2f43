package e2e

import (
	"context"
	"encoding/json"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"payouts/internal/freeport"
	"payouts/rules"
)

// A notification that cannot be delivered shows the merchant the class of the failure
// (name not found, connection refused), in the API's event log and on the dashboard's
// event and deliveries pages, without the service's own network details (its resolver,
// the addresses it dialled); the server's own log keeps the whole error. An attempt logged
// in the old form, with the network's words, is shown by its class too.
func TestDeliveryErrorsShowTheClassNotTheServicesNetwork(t *testing.T) {
	t.Parallel()
	refusedAddr, release, err := freeport.Refusing()
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	s := startServer(t, "", "--allow-private-notification-urls")
	// .invalid never resolves (RFC 6761).
	noName := s.newMerchant(t, map[string]any{"notificationUrl": "https://hooks.does-not-exist.invalid/payouts"})
	refused := s.newMerchant(t, map[string]any{"notificationUrl": "http://" + refusedAddr + "/payouts"})
	// Go's words for the failures, which carry the resolver's and the dialled addresses.
	secret := []string{"lookup ", "no such host", "dial tcp", "connect:"}
	// A resolver's address and port; not a bare ":53", which a page's time can show.
	resolver := regexp.MustCompile(`(\d{1,3}(\.\d{1,3}){3}|\])(:53)\b`)
	if ns := nameserver(); ns != "" {
		secret = append(secret, ns)
	}
	dash := dashboardSignIn(t, s)
	for _, tc := range []struct {
		name string
		c    *merchantClient
		want string
		log  string // in the server's log
	}{
		{"a name that does not resolve", noName, "the notificationUrl of merchant " + noName.MerchantID + " could not be reached: name not found", "no such host"},
		{"a refused connection", refused, "the notificationUrl of merchant " + refused.MerchantID + " could not be reached: connection refused", refusedAddr},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, raw := tc.c.do(t, "POST", "payouts", perBankRequest("DE-"+tc.c.MerchantID), "")
			if code != 201 {
				t.Fatalf("create: %d %s", code, raw)
			}
			var ev struct {
				EventID  string
				Attempts []struct{ Error string }
			}
			waitFor(t, "a failed attempt", 20*time.Second, func() bool {
				_, _, raw := tc.c.do(t, "GET", "events", nil, "")
				var page struct{ Items []json.RawMessage }
				if json.Unmarshal(raw, &page) != nil || len(page.Items) == 0 {
					return false
				}
				return json.Unmarshal(page.Items[0], &ev) == nil && len(ev.Attempts) > 0
			})
			shown := func(where, text string) {
				t.Helper()
				if !strings.Contains(text, tc.want) {
					t.Errorf("%s does not show %q: %.600s", where, tc.want, text)
				}
				for _, s := range secret {
					if strings.Contains(text, s) {
						t.Errorf("%s shows %q, the service's own network: %.600s", where, s, text)
					}
				}
				if m := resolver.FindString(text); m != "" {
					t.Errorf("%s shows %q, the service's own resolver: %.600s", where, m, text)
				}
			}
			shown("the event list", ev.Attempts[0].Error)
			code, _, raw = tc.c.do(t, "GET", "events/"+ev.EventID, nil, "")
			if code != 200 {
				t.Fatalf("read the event: %d %s", code, raw)
			}
			var one struct{ Attempts []struct{ Error string } }
			json.Unmarshal(raw, &one)
			for _, a := range one.Attempts {
				shown("the event", a.Error)
			}
			shown("the dashboard's event page", dashText(t, dash, s.URL+"/dashboard/merchants/"+tc.c.MerchantID+"/events/"+url.PathEscape(ev.EventID)))
			shown("the dashboard's deliveries", dashText(t, dash, s.URL+"/dashboard/deliveries?merchant="+tc.c.MerchantID))
			waitFor(t, "the whole error in the server's log", 10*time.Second, func() bool {
				return strings.Contains(s.Stdout.String()+s.Stderr.String(), tc.log)
			})
		})
	}

	// An attempt logged before, with the network's words, reads as its class.
	old := "merchant.notification:999:PROCESSED"
	s.Stop(t)
	logOldEvent(t, s.Data, rules.LoggedEvent{ID: old, MerchantID: noName.MerchantID, PayoutID: 999, Type: "payout.PROCESSED", Body: []byte(`{}`),
		CreatedAt: time.Now().UTC()}, rules.DeliveryAttempt{At: time.Now().UTC(),
		Error: "POST to the notificationUrl of merchant " + noName.MerchantID + ": dial tcp: lookup localhost. on 10.255.255.53:53: no such host"})
	s2 := startServer(t, s.Data, "--allow-private-notification-urls")
	c := noName.with(func(m *merchantClient) { m.Base = s2.URL })
	code, _, raw := c.do(t, "GET", "events/"+old, nil, "")
	want := "the notificationUrl of merchant " + noName.MerchantID + " could not be reached: name not found"
	if code != 200 || !strings.Contains(string(raw), want) || strings.Contains(string(raw), "10.255.255.53") || strings.Contains(string(raw), "lookup") {
		t.Errorf("an old attempt: %d %s, want %q and no resolver", code, raw, want)
	}
	page := dashText(t, dashboardSignIn(t, s2), s2.URL+"/dashboard/merchants/"+noName.MerchantID+"/events/"+url.PathEscape(old))
	if !strings.Contains(page, want) || strings.Contains(page, "10.255.255.53") {
		t.Errorf("the dashboard shows an old attempt as %.600s, want %q", page, want)
	}
}

// logOldEvent writes an event with one attempt into a stopped server's store, as an older
// version of the service logged it.
func logOldEvent(t *testing.T, dir string, ev rules.LoggedEvent, a rules.DeliveryAttempt) {
	t.Helper()
	db, err := openTestStore(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	if err := db.LogAttempt(context.Background(), ev, a); err != nil {
		t.Fatal(err)
	}
}

// nameserver is the first nameserver of /etc/resolv.conf, "" when none.
func nameserver() string {
	raw, _ := os.ReadFile("/etc/resolv.conf")
	for _, line := range strings.Split(string(raw), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "nameserver" {
			return f[1]
		}
	}
	return ""
}
