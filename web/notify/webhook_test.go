package notify_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"payouts/rules"
	"payouts/web/notify"
)

func TestNotificationKeyIsCreatedOnceWithMode0600(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notification-key.pem")
	k1, err := notify.LoadOrCreateKey(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v, %v; want 0600", st.Mode().Perm(), err)
	}
	if k1.N.BitLen() < 2048 {
		t.Errorf("key of %d bits", k1.N.BitLen())
	}
	k2, err := notify.LoadOrCreateKey(path)
	if err != nil || !k1.Equal(k2) {
		t.Fatalf("the second start did not read the same key: %v", err)
	}
	raw, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(raw), "-----BEGIN PRIVATE KEY-----") {
		t.Errorf("not a PEM private key file")
	}
	pub, err := notify.ParsePublicKeyPEM(notify.PublicKeyPEM(k1))
	if err != nil || !pub.Equal(&k1.PublicKey) {
		t.Errorf("the served PEM is not the key's public half: %v", err)
	}
}

func TestNotificationSignatureVerifiesOnlyForItsMerchantAndBody(t *testing.T) {
	k, err := notify.LoadOrCreateKey(filepath.Join(t.TempDir(), "k.pem"))
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"payout":{"Id":73}}`)
	sig, err := notify.Sign(k, "22", body)
	if err != nil {
		t.Fatal(err)
	}
	if err := notify.Verify(&k.PublicKey, "22", body, sig); err != nil {
		t.Errorf("valid signature refused: %v", err)
	}
	if notify.Verify(&k.PublicKey, "23", body, sig) == nil {
		t.Errorf("signature accepted for another merchant")
	}
	if notify.Verify(&k.PublicKey, "22", []byte(`{"payout":{"Id":74}}`), sig) == nil {
		t.Errorf("signature accepted for another body")
	}
	// merchantId + body, not body alone: "2" + "2{…" must not verify as "22" + "{…".
	if notify.Verify(&k.PublicKey, "2", append([]byte("2"), body...), sig) != nil {
		t.Errorf("the signed message is not merchantId followed by the body")
	}
}

func TestPublicAddrRefusesPrivateLoopbackLinkLocalAndUnspecified(t *testing.T) {
	for _, tc := range []struct {
		addr string
		ok   bool
	}{
		{"8.8.8.8", true},
		{"2606:4700:4700::1111", true},
		{"127.0.0.1", false},
		{"::1", false},
		{"10.1.2.3", false},
		{"172.16.0.1", false},
		{"192.168.1.1", false},
		{"169.254.169.254", false},
		{"fe80::1", false},
		{"fc00::1", false},
		{"0.0.0.0", false},
		{"::", false},
		{"100.64.0.1", false},
		{"::ffff:127.0.0.1", false},
		{"::ffff:10.0.0.1", false},
		{"64:ff9b::a9fe:a9fe", false},
		{"224.0.0.1", false},
		{"255.255.255.255", false},
	} {
		if got := notify.PublicAddr(netip.MustParseAddr(tc.addr)); got != tc.ok {
			t.Errorf("PublicAddr(%s) = %v, want %v", tc.addr, got, tc.ok)
		}
	}
}

func TestNotificationClientChecksTheResolvedAddressAtDialTime(t *testing.T) {
	var hits int
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits++
		mu.Unlock()
	}))
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	strict := notify.NewHTTPClient(false)
	// By IP, and by a name that resolves to loopback: both refused when dialing.
	for _, u := range []string{srv.URL, "http://localhost:" + port + "/hook"} {
		_, err := strict.Post(u, "application/json", strings.NewReader("{}"))
		if err == nil || !errors.Is(err, notify.ErrPrivateAddress) {
			t.Errorf("POST %s: %v, want ErrPrivateAddress", u, err)
		}
	}
	resp, err := notify.NewHTTPClient(true).Post(srv.URL, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatalf("with private addresses allowed: %v", err)
	}
	resp.Body.Close()
	mu.Lock()
	defer mu.Unlock()
	if hits != 1 {
		t.Errorf("receiver hit %d times, want only the allowed request", hits)
	}
}

// receiver records notifications and answers with status(n) for the n-th one.
type receiver struct {
	mu     sync.Mutex
	bodies [][]byte
	sigs   []string
	keys   []string
	status func(n int) int
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	rc.bodies = append(rc.bodies, b)
	rc.sigs = append(rc.sigs, r.Header.Get("verification"))
	rc.keys = append(rc.keys, r.Header.Get("Idempotency-Key"))
	n := len(rc.bodies)
	rc.mu.Unlock()
	w.WriteHeader(rc.status(n))
}

func TestNotifierPostsTheSignedBodyAndCountsOnly2xx(t *testing.T) {
	k, err := notify.LoadOrCreateKey(filepath.Join(t.TempDir(), "k.pem"))
	if err != nil {
		t.Fatal(err)
	}
	rc := &receiver{status: func(n int) int { return []int{503, 302, 404, 204}[min(n, 4)-1] }}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	m := &rules.Merchant{ID: "22", Settings: rules.Settings{NotificationURL: srv.URL + "/hook?token=s3cr3t"}}
	n := &notify.Notifier{Source: fakeSource{m: m}, Key: k, Client: notify.NewHTTPClient(true)}
	ev := rules.Event{ID: "merchant.notification:73:PROCESSED", Kind: rules.EventMerchantNotification, MerchantID: "22", PayoutID: 73,
		Data: []byte(`{"payout":{"Id":73},"output":{"stage":"SUCCESS"},"errors":[]}`)}
	for i, want := range []bool{false, false, false, true} {
		err := n.Deliver(context.Background(), ev)
		if (err == nil) != want {
			t.Fatalf("delivery %d: %v, want success %v", i+1, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("the error shows the URL's token: %v", err)
		}
	}
	for i, b := range rc.bodies {
		if string(b) != string(ev.Data) {
			t.Errorf("body %d = %s, want the event's snapshot", i, b)
		}
		if err := notify.Verify(&k.PublicKey, "22", b, rc.sigs[i]); err != nil {
			t.Errorf("delivery %d: verification header does not verify: %v", i, err)
		}
		if rc.keys[i] != ev.ID {
			t.Errorf("Idempotency-Key %q", rc.keys[i])
		}
	}

	m.Settings.NotificationURL = ""
	if err := n.Deliver(context.Background(), ev); !rules.IsPermanent(err) {
		t.Errorf("merchant without a notificationUrl: %v, want a permanent failure", err)
	}
}

func TestNotifierRefusesLoopbackUnlessAllowed(t *testing.T) {
	k, _ := notify.LoadOrCreateKey(filepath.Join(t.TempDir(), "k.pem"))
	rc := &receiver{status: func(int) int { return 200 }}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	m := &rules.Merchant{ID: "22", Settings: rules.Settings{NotificationURL: srv.URL}}
	n := &notify.Notifier{Source: fakeSource{m: m}, Key: k, Client: notify.NewHTTPClient(false)}
	err := n.Deliver(context.Background(), rules.Event{ID: "e", Kind: rules.EventMerchantNotification, MerchantID: "22", Data: []byte(`{}`)})
	if !errors.Is(err, notify.ErrPrivateAddress) || rules.IsPermanent(err) {
		t.Errorf("loopback notification URL: %v, want a retried ErrPrivateAddress", err)
	}
	if len(rc.bodies) != 0 {
		t.Errorf("the loopback receiver got %d requests", len(rc.bodies))
	}
}

func TestNotifierBuildsTheBodyWhenTheEventHasNone(t *testing.T) {
	k, _ := notify.LoadOrCreateKey(filepath.Join(t.TempDir(), "k.pem"))
	rc := &receiver{status: func(int) int { return 200 }}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	p := perPayout(rules.StatusProcessed, "")
	m := &rules.Merchant{ID: "22", Settings: rules.Settings{NotificationURL: srv.URL}}
	n := &notify.Notifier{Source: fakeSource{p: p, m: m}, Key: k, Client: notify.NewHTTPClient(true),
		Body: func(p *rules.Payout) ([]byte, error) { return []byte(`{"status":"` + string(p.Status) + `"}`), nil }}
	if err := n.Deliver(context.Background(), rules.Event{ID: "e", Kind: rules.EventMerchantNotification, MerchantID: "22", PayoutID: 73}); err != nil {
		t.Fatal(err)
	}
	if len(rc.bodies) != 1 || string(rc.bodies[0]) != `{"status":"PROCESSED"}` {
		t.Errorf("bodies %q", rc.bodies)
	}
}

func TestPublicKeyPEM(t *testing.T) {
	k, _ := notify.LoadOrCreateKey(filepath.Join(t.TempDir(), "k.pem"))
	if got := string(notify.PublicKeyPEM(k)); !strings.HasPrefix(got, "-----BEGIN PUBLIC KEY-----") {
		t.Errorf("%q", got)
	}
}
