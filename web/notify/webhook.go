package notify

import (
	"bytes"
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"payouts/rules"
)

// KeyBits is the size of the installation's notification key.
const KeyBits = 2048

// LoadOrCreateKey reads the installation's RSA key that signs merchant notifications, or
// creates it (PKCS#8 PEM, 0600) on the first start.
func LoadOrCreateKey(path string) (*rsa.PrivateKey, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		k, err := rsa.GenerateKey(rand.Reader, KeyBits)
		if err != nil {
			return nil, err
		}
		der, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			return nil, err
		}
		tmp, err := os.CreateTemp(filepath.Dir(path), ".notification-key-*")
		if err != nil {
			return nil, err
		}
		defer os.Remove(tmp.Name())
		if err := tmp.Chmod(0o600); err != nil {
			tmp.Close()
			return nil, err
		}
		if err := pem.Encode(tmp, &pem.Block{Type: "PRIVATE KEY", Bytes: der}); err != nil {
			tmp.Close()
			return nil, err
		}
		if err := tmp.Sync(); err != nil {
			tmp.Close()
			return nil, err
		}
		if err := tmp.Close(); err != nil {
			return nil, err
		}
		if err := os.Rename(tmp.Name(), path); err != nil {
			return nil, err
		}
		return k, nil
	}
	if err != nil {
		return nil, err
	}
	os.Chmod(path, 0o600)
	k, err := ParseKey(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

// ParseKey reads an RSA private key in PEM (PKCS#8, or PKCS#1 as older tools write it).
func ParseKey(raw []byte) (*rsa.PrivateKey, error) {
	block, _ := pem.Decode(raw)
	if block == nil {
		return nil, errors.New("not a PEM file")
	}
	parsed, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		if k, err1 := x509.ParsePKCS1PrivateKey(block.Bytes); err1 == nil {
			return k, nil
		}
		return nil, err
	}
	k, ok := parsed.(*rsa.PrivateKey)
	if !ok {
		return nil, errors.New("not an RSA key")
	}
	return k, nil
}

// PublicKeyPEM is the public half of the key, as served to merchants (PKIX "PUBLIC KEY").
func PublicKeyPEM(k *rsa.PrivateKey) []byte {
	der, _ := x509.MarshalPKIXPublicKey(&k.PublicKey)
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

// ParsePublicKeyPEM reads what PublicKeyPEM wrote (how a merchant loads the key).
func ParsePublicKeyPEM(raw []byte) (*rsa.PublicKey, error) {
	block, _ := pem.Decode(raw)
	if block == nil {
		return nil, errors.New("not a PEM block")
	}
	k, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, err
	}
	pub, ok := k.(*rsa.PublicKey)
	if !ok {
		return nil, errors.New("not an RSA public key")
	}
	return pub, nil
}

// Sign is the verification header of a notification: base64 of
// the RSA PKCS#1 v1.5 SHA-256 signature of merchantId followed by the raw body.
func Sign(k *rsa.PrivateKey, merchantID string, body []byte) (string, error) {
	sum := digest(merchantID, body)
	sig, err := rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, sum)
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(sig), nil
}

// Verify checks a verification header as a merchant does.
func Verify(pub *rsa.PublicKey, merchantID string, body []byte, header string) error {
	sig, err := base64.StdEncoding.DecodeString(header)
	if err != nil {
		return errors.New("the verification header is not base64")
	}
	return rsa.VerifyPKCS1v15(pub, crypto.SHA256, digest(merchantID, body), sig)
}

func digest(merchantID string, body []byte) []byte {
	h := sha256.New()
	h.Write([]byte(merchantID))
	h.Write(body)
	return h.Sum(nil)
}

// CertificatePEM is the key's self-signed X.509 certificate, since the original hands its
// merchants a certificate to take the public key from. It is built
// from the key alone — serial from the public key's hash, fixed validity, a deterministic
// PKCS#1 v1.5 signature — so every start of the same installation serves the same bytes.
func CertificatePEM(k *rsa.PrivateKey) ([]byte, error) {
	pub, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(pub)
	tmpl := &x509.Certificate{
		SerialNumber:          new(big.Int).SetBytes(sum[:16]),
		Subject:               pkix.Name{CommonName: "payouts merchant notifications", Organization: []string{"payouts"}},
		NotBefore:             time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC),
		NotAfter:              time.Date(2124, 1, 1, 0, 0, 0, 0, time.UTC),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		SubjectKeyId:          sum[:20],
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}

// NotificationTimeout bounds one delivery of a merchant notification.
const NotificationTimeout = 15 * time.Second

// ErrPrivateAddress is the dial error for an address notifications may not reach.
var ErrPrivateAddress = errors.New("the notification URL resolves to a private, loopback, link-local or unspecified address")

// NewHTTPClient is the client of merchant notifications: 15 s per delivery, no proxy, no
// redirects (a 3xx is not a 2xx), and, unless allowPrivate, no connection to an address
// that is not public: the check runs on the resolved IP at dial time, so a public name
// that resolves to an internal address is refused too.
func NewHTTPClient(allowPrivate bool) *http.Client {
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	if !allowPrivate {
		d.Control = refusePrivate
	}
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           d.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          32,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       60 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: NotificationTimeout,
	}
	return &http.Client{Transport: tr, Timeout: NotificationTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func refusePrivate(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("refused to dial %q: not an IP address", address)
	}
	if !PublicAddr(ap.Addr()) {
		return ErrPrivateAddress
	}
	return nil
}

// notPublic are ranges outside the checks of netip.Addr: shared (CGNAT), IETF protocol
// assignments, benchmarking, documentation, reserved, and the IPv6 ones that reach IPv4.
var notPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("64:ff9b::/96"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
	netip.MustParsePrefix("2001:db8::/32"),
	netip.MustParsePrefix("2002::/16"),
	netip.MustParsePrefix("fec0::/10"),
}

// PublicAddr reports whether a merchant notification may go to a.
func PublicAddr(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || !a.IsGlobalUnicast() || a.IsPrivate() || a.IsLoopback() ||
		a.IsLinkLocalUnicast() || a.IsUnspecified() || a.IsMulticast() {
		return false
	}
	for _, p := range notPublic {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// Notifier delivers merchant notifications: the payout's outcome POSTed, signed, to the
// merchant's notificationUrl. Only a 2xx counts as delivered. With Log
// set, every attempt is kept with the body sent (events.go); in the sandbox, the
// notificationUrl sandbox:inbox delivers to the server's inbox, and a merchant's delivery
// chaos makes deliveries late, duplicated, reordered or counted as failed on purpose.
type Notifier struct {
	Source Source
	// Body builds the notification of a payout when the event carries none.
	Body   func(p *rules.Payout) ([]byte, error)
	Key    *rsa.PrivateKey
	Client *http.Client

	Log     rules.EventLog        // keeps the events and their attempts; nil keeps nothing
	Sandbox bool                  // the inbox and the delivery chaos work only in the sandbox
	Now     func() time.Time      // the time of an attempt; nil is time.Now
	Rand    func() float64        // in [0, 1), for the chaos; nil uses math/rand/v2
	Logger  *slog.Logger          // where a failure to log an attempt goes; nil: slog.Default
	Logged  func(merchant string) // told after an attempt is logged (wakes the event streams)

	// TraceContext, when set (the server exports traces), adds the trace context of the span
	// ctx carries to an attempt's headers (traceparent), so that the merchant's traces
	// continue from the delivery's; the sandbox inbox keeps it with the other headers.
	TraceContext func(ctx context.Context, headers map[string]string)

	servedKey     *rsa.PublicKey
	servedKeyOnce sync.Once
}

// Deliver POSTs one notification.
func (n *Notifier) Deliver(ctx context.Context, ev rules.Event) error {
	m, err := n.Source.Merchant(ctx, ev.MerchantID)
	if err != nil {
		return missing(err, "merchant")
	}
	target := m.Settings.NotificationURL
	if target == "" {
		return rules.Permanent(errors.New("the merchant has no notificationUrl any more"))
	}
	body := []byte(ev.Data)
	if len(body) == 0 {
		p, err := n.Source.Payout(ctx, ev.MerchantID, ev.PayoutID)
		if err != nil {
			return missing(err, "payout")
		}
		if body, err = n.Body(p); err != nil {
			return err
		}
	}
	return n.deliver(ctx, ev, target, body, "")
}

// post sends one delivery and says what the receiver answered; err is why it does not count
// as delivered.
func (n *Notifier) post(ctx context.Context, ev rules.Event, target string, body []byte, headers map[string]string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, NotificationTimeout)
	defer cancel()
	what := "the notificationUrl of merchant " + ev.MerchantID
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return 0, &rules.DeliveryFailure{Public: what + " is not a valid URL"}
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := n.Client.Do(req)
	if err != nil {
		// The URL may carry the merchant's token: the error names the merchant, not the URL.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return 0, unreached(what, err)
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.StatusCode, &rules.DeliveryFailure{Public: what + " answered HTTP status " + strconv.Itoa(resp.StatusCode)}
	}
	return resp.StatusCode, nil
}
