package main

// End-to-end tests of issue 11 (hardening): each item through the real server.

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// tarpit accepts connections and never answers: a merchant endpoint that hangs every
// notification until the 15 s timeout.
type tarpit struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func newTarpit(t testing.TB) *tarpit {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tp := &tarpit{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			tp.mu.Lock()
			tp.conns = append(tp.conns, c)
			tp.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		tp.mu.Lock()
		for _, c := range tp.conns {
			c.Close()
		}
		tp.mu.Unlock()
	})
	return tp
}

func (tp *tarpit) accepted() int {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return len(tp.conns)
}

// Item 2: a merchant whose endpoint accepts and never answers, with 16 rejected payouts
// to notify, does not delay another merchant's notification by more than 2 s.
func TestTarpitMerchantDoesNotDelayAnotherMerchantsNotification(t *testing.T) {
	tp := newTarpit(t)
	hook := &hookReceiver{tries: map[string]int{}, accepted: map[string][][]byte{},
		verify: func([]byte, string) error { return nil }}
	recv := httptest.NewServer(hook)
	defer recv.Close()
	s := startServer(t, "", "--allow-private-notification-urls")
	slow := s.newMerchant(t, map[string]any{"notificationUrl": "http://" + tp.ln.Addr().String() + "/hook"})
	other := s.newMerchant(t, map[string]any{"notificationUrl": recv.URL + "/hook"})

	rejected := func(order string) map[string]any {
		r := perBankRequest(order)
		r["destination"] = map[string]any{"bankAccount": map[string]any{"bankCode": "002", "accountType": 2, "accountNumber": "19312345679999"}}
		return r
	}
	var ids []int64
	for i := 0; i < 16; i++ {
		ids = append(ids, slow.create(t, rejected("TARPIT-"+strconv.Itoa(i))).Payout.ID)
	}
	for _, id := range ids {
		slow.waitStage(t, id, "REJECTED", 10*time.Second)
	}
	waitFor(t, "the tarpit holds notifications", 5*time.Second, func() bool { return tp.accepted() >= 2 })
	time.Sleep(300 * time.Millisecond) // every worker the tarpit may take is taken

	id := other.create(t, rejected("OTHER-1")).Payout.ID
	other.waitStage(t, id, "REJECTED", 10*time.Second)
	finished := time.Now()
	waitFor(t, "the other merchant's notification", 2*time.Second, func() bool {
		_, _, _, n := hook.snapshot()
		return n > 0
	})
	t.Logf("other merchant notified %v after its payout finished; the tarpit holds %d connections",
		time.Since(finished).Round(time.Millisecond), tp.accepted())
	if n := tp.accepted(); n > 4 {
		t.Errorf("the tarpit merchant holds %d workers at once, want at most its share of 4", n)
	}
}

// signedStatus sends a signed GET of the balance with extra headers and says its status.
func (c *merchantClient) statusWith(t testing.TB, headers map[string]string) int {
	t.Helper()
	req := c.request("GET", "balance", nil, "")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// Item 3: failed authentications count per (client address, API key presented); a correctly
// signed request is never refused for anyone's failures; the address comes from
// X-Forwarded-For only through --trusted-proxies.
func TestAuthFailuresCountPerAddressAndKeyBehindTrustedProxies(t *testing.T) {
	s := startServer(t, "", "--trusted-proxies", "127.0.0.1/32")
	a := s.newMerchant(t, nil)
	b := s.newMerchant(t, nil)
	badA := a.with(func(c *merchantClient) { c.Secret = "not the secret" })
	badB := b.with(func(c *merchantClient) { c.Secret = "not the secret" })
	fromX := map[string]string{"X-Forwarded-For": "203.0.113.7"}

	statuses := map[int]int{}
	for i := 0; i < 25; i++ {
		statuses[badA.statusWith(t, fromX)]++
	}
	if statuses[401] != 20 || statuses[429] != 5 {
		t.Errorf("25 wrong signatures answered %v, want 20 × 401 then 5 × 429", statuses)
	}
	// The same client and key, correctly signed: served.
	if code := a.statusWith(t, fromX); code != 200 {
		t.Errorf("a correctly signed request after the failures: %d, want 200", code)
	}
	// Another merchant behind the same proxy and client address: its own count.
	if code := badB.statusWith(t, fromX); code != 401 {
		t.Errorf("another API key from the same address: %d, want 401", code)
	}
	// Another client behind the proxy, same key: its own count.
	if code := badA.statusWith(t, map[string]string{"X-Forwarded-For": "203.0.113.8"}); code != 401 {
		t.Errorf("another client address (X-Forwarded-For) with the same key: %d, want 401", code)
	}
	if code := badA.statusWith(t, map[string]string{"Forwarded": `for="203.0.113.7:5000"`}); code != 429 {
		t.Errorf("the blocked client named by Forwarded: %d, want 429", code)
	}

	// A server that does not trust the peer ignores the headers: rotating them does not
	// escape the count.
	s2 := startServer(t, "", "--trusted-proxies", "10.0.0.0/8")
	c := s2.newMerchant(t, nil)
	bad := c.with(func(c *merchantClient) { c.Secret = "not the secret" })
	last := 0
	for i := 0; i < 21; i++ {
		last = bad.statusWith(t, map[string]string{"X-Forwarded-For": "198.51.100." + strconv.Itoa(i)})
	}
	if last != 429 {
		t.Errorf("21st failure with spoofed X-Forwarded-For from an untrusted peer: %d, want 429", last)
	}
}

// Item 3: wrong admin tokens are limited like signatures (429 past 20 a minute per
// address); the right token still works; a short --admin-token is refused at start.
func TestAdminTokenFailuresLimitedAndShortTokenRefused(t *testing.T) {
	s := startServer(t, "")
	statuses := map[int]int{}
	for i := 0; i < 25; i++ {
		req, _ := http.NewRequest("GET", s.URL+"/admin/v1/merchants/1", nil)
		req.Header.Set("Authorization", "Bearer wrong-token-"+strconv.Itoa(i))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		statuses[resp.StatusCode]++
		if resp.StatusCode == 429 && resp.Header.Get("Retry-After") == "" {
			t.Errorf("429 without Retry-After")
		}
	}
	if statuses[401] != 20 || statuses[429] != 5 {
		t.Errorf("25 wrong admin tokens answered %v, want 20 × 401 then 5 × 429", statuses)
	}
	if code := s.admin(t, "GET", "/admin/v1/merchants/none", nil, nil); code != 404 {
		t.Errorf("the right admin token after the failures: %d, want 404 (served)", code)
	}

	var out, errOut syncBuffer
	err := run(t.Context(), []string{"serve", "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--admin-token", "short-token-23-chars-xx", "--no-demo"},
		func(string) string { return "" }, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "at least 24 characters") {
		t.Errorf("a 23-character admin token: %v, want refused", err)
	}
}
