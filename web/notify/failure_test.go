package notify_test

import (
	"bytes"
	"context"
	"io"
	stdlog "log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"payouts/internal/freeport"
	"payouts/rules"
	"payouts/web/notify"
)

// A failed delivery is logged in the event log as its class, with none of the service's own
// network details; the error itself, for the server's log, keeps them.
func TestFailedDeliveryShowsItsClassOnly(t *testing.T) {
	refusedAddr, releaseRefused, err := freeport.Refusing()
	if err != nil {
		t.Fatal(err)
	}
	defer releaseRefused()
	refusedURL := "http://" + refusedAddr + "/hook"
	unavailable := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) }))
	defer unavailable.Close()
	untrusted := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	untrusted.Config.ErrorLog = stdlog.New(io.Discard, "", 0) // the refused handshake is expected
	untrusted.StartTLS()
	defer untrusted.Close()
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	defer slow.Close()
	defer close(release)
	// No resolver is asked: the dial fails as Go's resolver does for a name that does not exist.
	noSuchHost := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		return nil, &net.OpError{Op: "dial", Net: network, Err: &net.DNSError{Err: "no such host", Name: "hooks.example", Server: "10.255.255.53:53", IsNotFound: true}}
	}}}
	shortTimeout := notify.NewHTTPClient(true)
	shortTimeout.Timeout = 200 * time.Millisecond

	for _, tc := range []struct {
		name, url string
		client    *http.Client
		public    string // what the event log keeps
		logged    string // what the error keeps for the server's log
	}{
		{"a name that does not resolve", "https://hooks.example/", noSuchHost,
			"the notificationUrl of merchant 22 could not be reached: name not found", "10.255.255.53:53"},
		{"a refused connection", refusedURL, notify.NewHTTPClient(true),
			"the notificationUrl of merchant 22 could not be reached: connection refused", strings.TrimPrefix(refusedURL[:strings.LastIndex(refusedURL, "/")], "http://")},
		{"an untrusted certificate", untrusted.URL, notify.NewHTTPClient(true),
			"the notificationUrl of merchant 22 could not be reached: TLS: certificate not trusted", "x509"},
		{"no answer in time", slow.URL, shortTimeout,
			"the notificationUrl of merchant 22 could not be reached: timed out", "Client.Timeout"},
		{"an address that is not public", unavailable.URL, notify.NewHTTPClient(false),
			"the notificationUrl of merchant 22 could not be reached: " + rules.FailureNotPublic, "resolves to a private"},
		{"an HTTP status", unavailable.URL, notify.NewHTTPClient(true),
			"the notificationUrl of merchant 22 answered HTTP status 503", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, err := notify.LoadOrCreateKey(filepath.Join(t.TempDir(), "k.pem"))
			if err != nil {
				t.Fatal(err)
			}
			var logBuf bytes.Buffer
			m := &rules.Merchant{ID: "22", Settings: rules.Settings{NotificationURL: tc.url}}
			log := newMemLog()
			n := &notify.Notifier{Source: fakeSource{m: m}, Key: k, Client: tc.client, Log: log,
				Logger: slog.New(slog.NewTextHandler(&logBuf, nil))}
			ev := rules.Event{ID: "merchant.notification.73.PROCESSED", Kind: rules.EventMerchantNotification, MerchantID: "22", PayoutID: 73,
				Data: []byte(`{}`)}
			err = n.Deliver(context.Background(), ev)
			if err == nil || !strings.Contains(err.Error(), tc.logged) {
				t.Fatalf("the error %v does not keep %q for the log", err, tc.logged)
			}
			if got := rules.PublicDeliveryError(err); got != tc.public {
				t.Errorf("public form %q, want %q", got, tc.public)
			}
			e, _ := log.LoggedEvent(context.Background(), "22", ev.ID)
			if len(e.Attempts) != 1 || e.Attempts[0].Error != tc.public {
				t.Fatalf("attempts %+v, want one with %q", e.Attempts, tc.public)
			}
			// A resend is not the dispatcher's: the notifier logs its whole error itself.
			if err := n.Resend(context.Background(), rules.LoggedEvent{ID: ev.ID, MerchantID: "22", PayoutID: 73, Body: []byte(`{}`)}); err == nil {
				t.Fatal("the resend succeeded")
			}
			if !strings.Contains(logBuf.String(), "attempt failed") || !strings.Contains(logBuf.String(), tc.logged) {
				t.Errorf("the server's log lacks the resend's error: %s", logBuf.String())
			}
		})
	}
}
