// Command receiver is the smallest correct receiver of payouts notifications, in Go with the
// standard library only. It verifies the signature over the merchant id and the raw body
// with the service's public key, answers 2xx to a duplicate, keeps the newest outcome of a
// payout whatever order outcomes arrive in, ignores fields it does not know, and logs a
// payout it never created instead of failing.
//
//	PAYOUTS_MERCHANT_ID=1 PAYOUTS_PUBLIC_KEY_URL=http://127.0.0.1:8080/api/v1/notifications/public-key \
//	  ADDR=127.0.0.1:8081 go run ./docs/examples/receivers/go
package main

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"sync"
)

// notification holds the fields this receiver uses; the others, and those the service adds
// later, are ignored.
type notification struct {
	Payout struct {
		ID      string `json:"id"`
		OrderID string `json:"orderId"`
	} `json:"payout"`
	Output struct {
		Stage                string `json:"stage"`
		Status               string `json:"status"`
		StatusChangeDateTime string `json:"statusChangeDateTime"`
	} `json:"output"`
}

type receiver struct {
	merchantID string
	key        *rsa.PublicKey

	mu     sync.Mutex
	seen   map[string]bool   // Idempotency-Key of every notification applied (a real one: a table)
	latest map[string]string // payout id → statusChangeDateTime of the outcome applied
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	// The signature covers these exact bytes: verify them, never a re-encoding of them.
	raw, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		http.Error(w, "unreadable body", http.StatusBadRequest)
		return
	}
	if err := rc.verify(raw, r.Header.Get("verification")); err != nil {
		http.Error(w, "signature: "+err.Error(), http.StatusUnauthorized)
		return
	}
	var n notification
	if err := json.Unmarshal(raw, &n); err != nil {
		http.Error(w, "not JSON", http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	key := r.Header.Get("Idempotency-Key")
	if rc.seen[key] {
		w.WriteHeader(http.StatusOK) // a duplicate: applied already
		return
	}
	rc.seen[key] = true
	// Outcomes arrive in any order: keep the newest (RFC 3339 times in UTC compare as text).
	if prev, ok := rc.latest[n.Payout.ID]; !ok || n.Output.StatusChangeDateTime > prev {
		rc.latest[n.Payout.ID] = n.Output.StatusChangeDateTime
		// Here: look up the order by n.Payout.OrderID and apply n.Output.Status. An order this
		// system never created is logged, and the notification still acknowledged.
		log.Printf("payout %s (order %s): %s %s", n.Payout.ID, n.Payout.OrderID, n.Output.Stage, n.Output.Status)
	}
	w.WriteHeader(http.StatusOK)
}

// verify checks the verification header: base64 RSA PKCS#1 v1.5 SHA-256 over this
// merchant's own id followed by the raw body.
func (rc *receiver) verify(raw []byte, header string) error {
	if header == "" {
		return errors.New("no verification header")
	}
	sig, err := base64.StdEncoding.DecodeString(header)
	if err != nil {
		return errors.New("not base64")
	}
	h := sha256.New()
	h.Write([]byte(rc.merchantID))
	h.Write(raw)
	return rsa.VerifyPKCS1v15(rc.key, crypto.SHA256, h.Sum(nil), sig)
}

// publicKey reads the service's notification public key (PEM) from a file or its URL.
func publicKey() (*rsa.PublicKey, error) {
	var raw []byte
	var err error
	if f := os.Getenv("PAYOUTS_PUBLIC_KEY_FILE"); f != "" {
		raw, err = os.ReadFile(f)
	} else {
		var resp *http.Response
		if resp, err = http.Get(os.Getenv("PAYOUTS_PUBLIC_KEY_URL")); err == nil {
			defer resp.Body.Close()
			raw, err = io.ReadAll(resp.Body)
		}
	}
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(raw)
	if block == nil {
		return nil, errors.New("the public key is not PEM")
	}
	k, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, err
	}
	pub, ok := k.(*rsa.PublicKey)
	if !ok {
		return nil, errors.New("the public key is not RSA")
	}
	return pub, nil
}

func main() {
	key, err := publicKey()
	if err != nil {
		log.Fatal(err)
	}
	addr := os.Getenv("ADDR")
	if addr == "" {
		addr = "127.0.0.1:8081"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("listening on http://%s\n", ln.Addr())
	rc := &receiver{merchantID: os.Getenv("PAYOUTS_MERCHANT_ID"), key: key, seen: map[string]bool{}, latest: map[string]string{}}
	log.Fatal(http.Serve(ln, rc))
}
