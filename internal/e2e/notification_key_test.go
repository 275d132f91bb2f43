package e2e

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"payouts/internal/server"
	"payouts/web/notify"
)

// signedReceiver keeps every notification it gets with its verification header, and
// accepts it.
type signedReceiver struct {
	mu   sync.Mutex
	got  [][2][]byte // body, verification header
	seen chan struct{}
}

func (r *signedReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.got = append(r.got, [2][]byte{body, []byte(req.Header.Get("verification"))})
	r.mu.Unlock()
	select {
	case r.seen <- struct{}{}:
	default:
	}
	w.WriteHeader(http.StatusOK)
}

// next waits for the next notification.
func (r *signedReceiver) next(t *testing.T) (body []byte, sig string) {
	t.Helper()
	select {
	case <-r.seen:
	case <-time.After(15 * time.Second):
		t.Fatal("no notification within 15 s")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	last := r.got[len(r.got)-1]
	return last[0], string(last[1])
}

// The key that signs notifications is pinned like the sealing keys: a server never makes a
// new one for a store that used one (bbolt: the file deleted), never starts with another
// (either engine), and a rotation is a command that installs a new key, records it and
// prints the certificate merchants verify with from the next start; the old key is then
// refused.
func TestNotificationKeyIsPinnedAndRotatedOnPurpose(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	recv := &signedReceiver{seen: make(chan struct{}, 8)}
	hook := httptest.NewServer(recv)
	defer hook.Close()
	args := []string{"--allow-private-notification-urls"}
	keyFile := filepath.Join(dir, server.NotificationKeyFile)
	rotate := []string{"notification-key", "rotate", "--data", dir}
	if onPostgresTests() {
		keyFile = filepath.Join(databaseDirKeys(t, dir), server.NotificationKeyFile)
		rotate = []string{"notification-key", "rotate", "--database", databaseFor(t, dir), "--notification-key-file", keyFile}
	}
	refused := func() string {
		return refusedStart(t, append(append([]string{"--data", dir}, args...), engineArgs(t, dir, nil)...)...)
	}

	s := startServer(t, dir, args...)
	c := s.newMerchant(t, map[string]any{"notificationUrl": hook.URL + "/hook"})
	oldCert := fetchCertificate(t, s.URL)
	p := c.create(t, perBankRequest("PINNED-1"))
	body, sig := recv.next(t)
	if err := notify.Verify(oldCert.PublicKey.(*rsa.PublicKey), c.MerchantID, body, sig); err != nil {
		t.Fatalf("the first notification does not verify with the served certificate: %v", err)
	}
	c.waitStage(t, p.Payout.ID, "SUCCESS", 10*time.Second)
	s.Stop(t)
	saved, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}

	if !onPostgresTests() { // on PostgreSQL the file is a flag's, which must exist
		os.Remove(keyFile)
		msg := refused()
		for _, want := range []string{keyFile, "is missing", "fingerprint", "--notification-key-file", "payouts notification-key rotate",
			"/api/v1/notifications/certificate"} {
			if !strings.Contains(msg, want) {
				t.Errorf("missing key: %q does not say %q", msg, want)
			}
		}
		if _, err := os.Stat(keyFile); err == nil {
			t.Errorf("a new %s was made", keyFile)
		}
	}
	os.Remove(keyFile)
	os.WriteFile(keyFile, otherNotificationKey(t), 0o600)
	if msg := refused(); !strings.Contains(msg, "is not the one that signs the notifications") || !strings.Contains(msg, "notification-key rotate") {
		t.Errorf("another key: %q", msg)
	}
	os.Remove(keyFile)
	os.WriteFile(keyFile, saved, 0o600)

	// The rotation: a new key, the old one kept beside it, and what merchants must do.
	var out bytes.Buffer
	if err := runMain(t.Context(), rotate, &out, &out); err != nil {
		t.Fatalf("rotate: %v\n%s", err, out.String())
	}
	for _, want := range []string{"GET /api/v1/notifications/certificate", "one signature", "-----BEGIN CERTIFICATE-----"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the rotation's output does not say %q:\n%s", want, out.String())
		}
	}
	printed, _ := pem.Decode(out.Bytes()[strings.Index(out.String(), "-----BEGIN CERTIFICATE-----"):])
	retired, _ := filepath.Glob(keyFile + ".retired-*")
	if len(retired) != 1 {
		t.Fatalf("retired keys %v, want the old one", retired)
	}
	if b, _ := os.ReadFile(retired[0]); !bytes.Equal(b, saved) {
		t.Errorf("%s is not the old key", retired[0])
	}

	s = startServer(t, dir, args...)
	c = c.with(func(m *merchantClient) { m.Base = s.URL })
	newCert := fetchCertificate(t, s.URL)
	if printed == nil || !bytes.Equal(printed.Bytes, newCert.Raw) {
		t.Errorf("the server does not serve the certificate the rotation printed")
	}
	if newCert.Equal(oldCert) {
		t.Fatalf("the certificate did not change")
	}
	c.create(t, perBankRequest("PINNED-2"))
	body, sig = recv.next(t)
	if err := notify.Verify(newCert.PublicKey.(*rsa.PublicKey), c.MerchantID, body, sig); err != nil {
		t.Errorf("a notification after the rotation does not verify with the new certificate: %v", err)
	}
	if notify.Verify(oldCert.PublicKey.(*rsa.PublicKey), c.MerchantID, body, sig) == nil {
		t.Errorf("a notification after the rotation verifies with the old certificate")
	}
	s.Stop(t)

	// The old key is now the foreign one.
	os.Remove(keyFile)
	os.WriteFile(keyFile, saved, 0o600)
	if msg := refused(); !strings.Contains(msg, "is not the one that signs the notifications") {
		t.Errorf("the old key after the rotation: %q", msg)
	}
}

// otherNotificationKey is a PEM RSA key that is not the server's.
func otherNotificationKey(t *testing.T) []byte {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, notify.KeyBits)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}
