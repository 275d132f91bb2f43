package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"payouts/internal/cli"
	"payouts/web/notify"
)

// TestListenForwardsSignedEventsAcrossAServerRestart runs `payouts listen` against a server,
// forwarding to a local receiver that verifies signatures as a merchant's app does; the
// server restarts in between, and an event logged while listen is away arrives once it is
// back (Last-Event-ID). The delivery chaos reaches the local app too. The command runs in
// process (startListen): it is a client of the server, whose restart is what the test is
// about. The server retries a failed delivery after 100 ms instead of 2 s.
func TestListenForwardsSignedEventsAcrossAServerRestart(t *testing.T) {
	t.Parallel()
	hook := &hookReceiver{tries: map[string]int{}, accepted: map[string][][]byte{}}
	local := localApp(t, hook)
	dir, addr := t.TempDir(), freeAddr(t)
	s := startServerWith(t, dir, fastRetries, "--addr", addr)
	pub, err := notify.ParsePublicKeyPEM(fetchPublicKey(t, s.URL))
	if err != nil {
		t.Fatal(err)
	}
	c := s.newMerchant(t, map[string]any{"notificationUrl": "sandbox:inbox"})
	hook.mu.Lock()
	hook.verify = func(body []byte, sig string) error { return notify.Verify(pub, c.MerchantID, body, sig) }
	hook.mu.Unlock()

	out := startListen(t, s, c, local.URL+"/webhooks")
	waitFor(t, "listen connected", 10*time.Second, func() bool { return strings.Count(out.String(), "ready:") == 1 })

	forwarded := func(id string) int { acc, _, _, _ := hook.snapshot(); return len(acc[id]) }
	// allForwarded waits until the server has delivered every event to the inbox and listen
	// has printed a line for each delivery there: what the local app got is then final.
	allForwarded := func() {
		t.Helper()
		s.waitOutboxEmpty(t, 10*time.Second)
		eventually(t, 10*time.Second, "listen forwards every delivery of the inbox", func() bool {
			return strings.Count(out.String(), "  → ") == len(c.inbox(t).Items)
		})
	}
	p1 := c.create(t, perBankRequest("LISTEN-1"))
	id1 := fmt.Sprintf("merchant.notification.%d.PROCESSED", p1.Payout.ID)
	waitFor(t, "the first event forwarded", 15*time.Second, func() bool { return forwarded(id1) == 1 })

	s.Stop(t)
	waitFor(t, "listen noticed the server going", 10*time.Second, func() bool { return strings.Contains(out.String(), "stream lost") })
	s = startServerWith(t, dir, fastRetries, "--addr", addr)
	c.Base = s.URL
	p2 := c.create(t, perBankRequest("LISTEN-2")) // perhaps logged before listen is back
	id2 := fmt.Sprintf("merchant.notification.%d.PROCESSED", p2.Payout.ID)
	waitFor(t, "the second event forwarded after the restart", 30*time.Second, func() bool { return forwarded(id2) == 1 })
	allForwarded()

	acc, _, badSigs, requests := hook.snapshot()
	if badSigs != 0 || len(acc[id1]) != 1 || len(acc[id2]) != 1 || requests != 2 {
		t.Errorf("the local app got %d requests, %d with a bad signature; %s ×%d, %s ×%d; want each once, verified",
			requests, badSigs, id1, len(acc[id1]), id2, len(acc[id2]))
	}
	// The forwarded body is the exact body the server delivered to its inbox.
	for _, it := range c.inbox(t).Items {
		if it.EventID == id2 && string(acc[id2][0]) != it.Body {
			t.Errorf("forwarded body differs from the delivered one")
		}
	}
	said := out.String()
	for _, id := range []string{id1, id2} {
		if !strings.Contains(said, id+"  payout.PROCESSED  → 200 OK") {
			t.Errorf("listen printed no line for %s with the local answer:\n%s", id, said)
		}
	}
	if strings.Count(said, "ready:") < 2 {
		t.Errorf("listen did not reconnect:\n%s", said)
	}

	// The delivery chaos reaches the local app through listen: a send counted as failed,
	// the real one after the retry, and its duplicate, all with the same event id.
	if code := s.admin(t, "PUT", "/admin/v1/merchants/"+c.MerchantID+"/sandbox/delivery", map[string]any{"failFirst": 1, "duplicate": 1}, nil); code != 200 {
		t.Fatal(code)
	}
	p3 := c.create(t, perBankRequest("LISTEN-3"))
	id3 := fmt.Sprintf("merchant.notification.%d.PROCESSED", p3.Payout.ID)
	waitFor(t, "three deliveries of the chaotic event", 30*time.Second, func() bool { return forwarded(id3) == 3 })
	allForwarded()
	if acc, _, badSigs, _ := hook.snapshot(); len(acc[id3]) != 3 || badSigs != 0 {
		t.Errorf("chaos through listen: %d deliveries, %d bad signatures; want 3 verified", len(acc[id3]), badSigs)
	}
	said = out.String()
	for _, cause := range []string{"[chaos-fail-first]", "[chaos-duplicate]"} {
		if !strings.Contains(said, id3+"  payout.PROCESSED  "+cause+"  → 200 OK") {
			t.Errorf("listen printed no %s line for %s:\n%s", cause, id3, said)
		}
	}
}

// startListen runs `payouts listen` for c's merchant against s, forwarding to forwardTo, until
// the test ends, and returns what it prints. It runs in process (cli.Main, all that the
// binary's main calls), stopped by its context as main's is by a signal: the command is a
// client of the server, and nothing about it needs a process of its own.
func startListen(t *testing.T, s *testServer, c *merchantClient, forwardTo string) *syncBuffer {
	t.Helper()
	out := &syncBuffer{}
	ctx, stop := context.WithCancel(context.Background())
	ended := make(chan int, 1)
	go func() {
		ended <- cli.Main(ctx, []string{"listen", "--base", s.URL, "--merchant", c.MerchantID, "--key", c.Key, "--secret", c.Secret,
			"--forward-to", forwardTo}, func(string) string { return "" }, out, out)
	}()
	t.Cleanup(func() {
		stop()
		if code := <-ended; code != 0 {
			t.Errorf("payouts listen ended with exit status %d", code)
		}
		if t.Failed() {
			t.Logf("payouts listen said:\n%s", out.String())
		}
	})
	return out
}

// localApp serves hook as a merchant's local app that `payouts listen` forwards to, until the
// test ends. The command forwards through this process's client, whose contract check asks
// each server it reaches for its OpenAPI document: the app has none, and that request is
// not a delivery.
func localApp(t *testing.T, hook *hookReceiver) *httptest.Server {
	local := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/openapi.json" {
			http.NotFound(w, r)
			return
		}
		hook.ServeHTTP(w, r)
	}))
	t.Cleanup(local.Close)
	return local
}
