package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"payouts/rules"
)

// MaxBody is the largest request body accepted (contract section 3: 413 above it).
const MaxBody = 64 << 10

// SignatureWindow is how far a request's timestamp may be from the server clock.
const SignatureWindow = 5 * time.Minute

// HashAPIKey is how an API key is stored: its SHA-256 in hex. Keys are 32 random bytes, so
// a fast hash is enough; the secret cannot be hashed because the server recomputes the HMAC.
func HashAPIKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// MerchantSource reads merchants and opens their sealed secrets.
type MerchantSource interface {
	Merchant(id string) (*rules.Merchant, error)
	OpenSecret(m *rules.Merchant) (string, error)
}

// Keyring caches merchants with their opened secrets, so that verifying a signature costs
// one HMAC and no database read. Admin changes call Forget.
type Keyring struct {
	src MerchantSource
	mu  sync.RWMutex
	m   map[string]*keyEntry
}

type keyEntry struct {
	merchant *rules.Merchant
	secret   string
	keyHash  []byte
}

// NewKeyring makes a keyring over a merchant source.
func NewKeyring(src MerchantSource) *Keyring {
	return &Keyring{src: src, m: map[string]*keyEntry{}}
}

// Forget drops a merchant from the cache after it changed.
func (k *Keyring) Forget(id string) {
	k.mu.Lock()
	delete(k.m, id)
	k.mu.Unlock()
}

func (k *Keyring) get(id string) (*keyEntry, error) {
	k.mu.RLock()
	e := k.m[id]
	k.mu.RUnlock()
	if e != nil {
		return e, nil
	}
	m, err := k.src.Merchant(id)
	if err != nil {
		return nil, err
	}
	secret, err := k.src.OpenSecret(m)
	if err != nil {
		return nil, err
	}
	h, err := hex.DecodeString(m.APIKeyHash)
	if err != nil {
		return nil, err
	}
	e = &keyEntry{merchant: m, secret: secret, keyHash: h}
	k.mu.Lock()
	k.m[id] = e
	k.mu.Unlock()
	return e, nil
}

// Merchant returns the cached merchant.
func (k *Keyring) Merchant(id string) (*rules.Merchant, error) {
	e, err := k.get(id)
	if err != nil {
		return nil, err
	}
	return e.merchant, nil
}

// replayGuard remembers the signatures it accepted so that each is accepted once. Memory is
// bounded: entries are grouped by their signed timestamp (second), and when more than max
// are held the oldest second is dropped and every request signed at or before it is
// refused from then on. Under extreme load the effective window shrinks instead of memory
// growing; a replay is never accepted.
type replayGuard struct {
	mu      sync.Mutex
	max     int
	n       int
	floor   int64 // timestamps (milliseconds) at or below this are refused
	buckets map[int64]map[[16]byte]struct{}
	order   []int64 // seconds present, ascending
}

func newReplayGuard(max int) *replayGuard {
	return &replayGuard{max: max, buckets: map[int64]map[[16]byte]struct{}{}, floor: -1 << 62}
}

// accept records sig signed at ts (ms) and reports whether it was new; now (ms) expires
// seconds that left the window.
func (g *replayGuard) accept(sig []byte, ts, now int64) bool {
	var k [16]byte
	copy(k[:], sig)
	sec := ts / 1000
	g.mu.Lock()
	defer g.mu.Unlock()
	oldest := (now - SignatureWindow.Milliseconds()) / 1000
	for len(g.order) > 0 && g.order[0] < oldest {
		g.drop()
	}
	if ts <= g.floor {
		return false
	}
	b := g.buckets[sec]
	if b == nil {
		b = map[[16]byte]struct{}{}
		g.buckets[sec] = b
		i := len(g.order)
		for i > 0 && g.order[i-1] > sec {
			i--
		}
		g.order = append(g.order, 0)
		copy(g.order[i+1:], g.order[i:])
		g.order[i] = sec
	}
	if _, seen := b[k]; seen {
		return false
	}
	b[k] = struct{}{}
	g.n++
	for g.n > g.max && len(g.order) > 1 {
		g.floor = max(g.floor, g.order[0]*1000+999) // the whole dropped second
		g.drop()
	}
	return true
}

// snapshot writes every remembered signature as 8 bytes of its second and 16 of its
// signature, and the floor first, so that a restart can restore the guard.
func (g *replayGuard) snapshot() []byte {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := binary.BigEndian.AppendUint64(make([]byte, 0, 8+24*g.n), uint64(g.floor))
	for _, sec := range g.order {
		for sig := range g.buckets[sec] {
			out = binary.BigEndian.AppendUint64(out, uint64(sec))
			out = append(out, sig[:]...)
		}
	}
	return out
}

// restore loads a snapshot; now (ms) drops what left the window.
func (g *replayGuard) restore(b []byte, now int64) error {
	if len(b) < 8 || (len(b)-8)%24 != 0 {
		return errors.New("replay guard snapshot is corrupt")
	}
	g.mu.Lock()
	g.floor = max(g.floor, int64(binary.BigEndian.Uint64(b)))
	g.mu.Unlock()
	for rest := b[8:]; len(rest) > 0; rest = rest[24:] {
		sec := int64(binary.BigEndian.Uint64(rest))
		g.accept(rest[8:24], sec*1000, now)
	}
	return nil
}

// refuseUpTo refuses every signature made at or before ts (ms).
func (g *replayGuard) refuseUpTo(ts int64) {
	g.mu.Lock()
	g.floor = max(g.floor, ts)
	g.mu.Unlock()
}

func (g *replayGuard) drop() {
	sec := g.order[0]
	g.n -= len(g.buckets[sec])
	delete(g.buckets, sec)
	g.order = g.order[1:]
}

// addrLimiter limits events per client address, with a bounded table.
type addrLimiter struct {
	mu    sync.Mutex
	every rate.Limit
	burst int
	m     map[string]*rate.Limiter
}

func newAddrLimiter(perMinute int) *addrLimiter {
	return &addrLimiter{every: rate.Limit(float64(perMinute) / 60), burst: perMinute, m: map[string]*rate.Limiter{}}
}

func (a *addrLimiter) limiter(addr string) *rate.Limiter {
	a.mu.Lock()
	defer a.mu.Unlock()
	l := a.m[addr]
	if l == nil {
		if len(a.m) >= 100_000 {
			// Forget the addresses that are back to a full allowance.
			now := time.Now()
			for k, v := range a.m {
				if v.TokensAt(now) >= float64(a.burst) {
					delete(a.m, k)
				}
			}
			if len(a.m) >= 100_000 {
				a.m = map[string]*rate.Limiter{}
			}
		}
		l = rate.NewLimiter(a.every, a.burst)
		a.m[addr] = l
	}
	return l
}

// blocked reports whether the address used up its allowance of failures.
func (a *addrLimiter) blocked(addr string) bool {
	return a.limiter(addr).Tokens() < 1
}

// fail counts one failure and reports whether the address is now over its allowance.
func (a *addrLimiter) fail(addr string) bool { return !a.limiter(addr).Allow() }

// Authenticator verifies the signed requests of contract section 2.
type Authenticator struct {
	Keys      *Keyring
	Now       func() time.Time
	RateLimit float64 // requests per second per merchant; 0 is off

	replay   *replayGuard
	failures *addrLimiter
	mu       sync.Mutex
	perMerch map[string]*rate.Limiter
}

// NewAuthenticator makes an authenticator.
func NewAuthenticator(keys *Keyring, now func() time.Time, rateLimit float64) *Authenticator {
	return &Authenticator{Keys: keys, Now: now, RateLimit: rateLimit,
		replay: newReplayGuard(1 << 20), failures: newAddrLimiter(20), perMerch: map[string]*rate.Limiter{}}
}

// SaveReplayGuard is the state of the replay guard, for RestoreReplayGuard after a restart:
// without it a signature accepted just before the restart could be accepted again.
func (a *Authenticator) SaveReplayGuard() []byte { return a.replay.snapshot() }

// RestoreReplayGuard loads what SaveReplayGuard wrote at the last clean shutdown.
func (a *Authenticator) RestoreReplayGuard(b []byte) error {
	return a.replay.restore(b, a.Now().UnixMilli())
}

// RefuseSignedBefore refuses every request signed before t: after an unclean stop the
// signatures accepted before it are unknown, so none of that time is accepted again.
func (a *Authenticator) RefuseSignedBefore(t time.Time) { a.replay.refuseUpTo(t.UnixMilli() - 1) }

// merchantPath returns the merchant id of a signed path, or "" for a path that is not signed.
func merchantPath(path string) string {
	var rest string
	switch {
	case strings.HasPrefix(path, "/api/v1/"):
		rest = path[len("/api/v1/"):]
	case strings.HasPrefix(path, "/api-payout-plus-real-time/"):
		rest = path[len("/api-payout-plus-real-time/"):]
	default:
		return ""
	}
	id, _, _ := strings.Cut(rest, "/")
	if id == "notifications" {
		return "" // the public key of the merchant notifications is public
	}
	return id
}

var errAuth = errors.New("auth")

// Middleware verifies every request to a merchant path and puts the merchant in the context.
func (a *Authenticator) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := merchantPath(r.URL.Path)
		if id == "" {
			next.ServeHTTP(w, r)
			return
		}
		addr := clientAddr(r)
		if a.failures.blocked(addr) {
			writeProblem(w, retryAfter(problemOf(rules.KindRateLimited, rules.CodeRateLimited, "too many failed authentications from this address"), 60))
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, MaxBody+1))
		if err != nil {
			writeProblem(w, problemOf(rules.KindInvalid, rules.CodeMalformedJSON, "the body could not be read"))
			return
		}
		if len(body) > MaxBody {
			writeProblem(w, problemOf(rules.KindTooLarge, rules.CodeBodyTooLarge, "the body is over 64 KiB"))
			return
		}
		m, msg := a.verify(r, id, body)
		if m == nil {
			if a.failures.fail(addr) {
				writeProblem(w, retryAfter(problemOf(rules.KindRateLimited, rules.CodeRateLimited, "too many failed authentications from this address"), 60))
				return
			}
			writeProblem(w, problemOf(rules.KindUnauthorized, rules.CodeAuthentication, msg))
			return
		}
		if !a.allow(m.ID) {
			writeProblem(w, retryAfter(problemOf(rules.KindRateLimited, rules.CodeRateLimited, "rate limit of this merchant exceeded"), 1))
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r = r.WithContext(context.WithValue(r.Context(), ctxMerchant, m))
		if lc := logContext(r.Context()); lc != nil {
			lc.merchantID = m.ID
		}
		next.ServeHTTP(w, r)
	})
}

// verify checks key, timestamp, signature and replay; it returns the merchant or why not.
func (a *Authenticator) verify(r *http.Request, id string, body []byte) (*rules.Merchant, string) {
	key := r.Header.Get("monnet-api-key")
	if key == "" {
		key = r.Header.Get("X-Api-Key")
	}
	q := r.URL.Query()
	tsText, sigText := q.Get("timestamp"), q.Get("signature")
	if key == "" || tsText == "" || sigText == "" {
		return nil, "the monnet-api-key header and the timestamp and signature query parameters are required"
	}
	e, err := a.Keys.get(id)
	given := sha256.Sum256([]byte(key))
	if err != nil || subtle.ConstantTimeCompare(given[:], e.keyHash) != 1 {
		return nil, "the API key is not valid for this merchant"
	}
	ts, err := strconv.ParseInt(tsText, 10, 64)
	if err != nil {
		return nil, "timestamp must be epoch milliseconds"
	}
	now := a.Now().UnixMilli()
	if d := now - ts; d > SignatureWindow.Milliseconds() || d < -SignatureWindow.Milliseconds() {
		return nil, "timestamp is more than 5 minutes from the server clock"
	}
	sig, err := hex.DecodeString(sigText)
	if err != nil || len(sig) != sha256.Size {
		return nil, "signature must be 64 hex characters"
	}
	want, _ := hex.DecodeString(rules.Signature(e.secret, r.Method, r.URL.Path, ts, body))
	if subtle.ConstantTimeCompare(sig, want) != 1 {
		return nil, "the signature does not match the request"
	}
	if !a.replay.accept(sig, ts, now) {
		return nil, "this signature was already used: sign each request with a fresh timestamp"
	}
	return e.merchant, ""
}

func (a *Authenticator) allow(merchantID string) bool {
	if a.RateLimit <= 0 {
		return true
	}
	a.mu.Lock()
	l := a.perMerch[merchantID]
	if l == nil {
		l = rate.NewLimiter(rate.Limit(a.RateLimit), max(1, int(a.RateLimit)))
		a.perMerch[merchantID] = l
	}
	a.mu.Unlock()
	return l.Allow()
}

func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
