package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"payouts/rules"
	"payouts/rules/merchants"
)

// MaxBody is the largest request body accepted (413 above it).
const MaxBody = 64 << 10

// SignatureWindow is how far a request's timestamp may be from the server clock.
const SignatureWindow = 5 * time.Minute

// MerchantSource reads merchants and opens their sealed secrets.
type MerchantSource interface {
	Merchant(id string) (*rules.Merchant, error)
	// OpenSecret opens a sealed secret of m (its current one or an old key's).
	OpenSecret(m *rules.Merchant, sealed []byte) (string, error)
}

// Keyring caches merchants with their opened secrets, so that verifying a signature costs
// one HMAC and no database read. Admin changes call Forget.
type Keyring struct {
	// TTL, when set, reloads a merchant older than it: another instance on the same database
	// may have changed its settings or keys (PostgreSQL). Zero keeps it until Forget.
	TTL time.Duration

	src MerchantSource
	mu  sync.RWMutex
	m   map[string]*keyEntry
	gen uint64 // counts Forgets: a merchant read before one is not cached
}

type keyEntry struct {
	loaded   time.Time
	merchant *rules.Merchant
	keys     []liveKey // the current key first, then the old keys of a rotation
}

type liveKey struct {
	hash      []byte
	secret    *rules.SignatureKey
	expiresAt time.Time // zero: the current key, or a role key (kept until revoked)
	signer    *Signer   // the merchant, this key's id and role: what the context carries
}

// NewKeyring makes a keyring over a merchant source.
func NewKeyring(src MerchantSource) *Keyring {
	return &Keyring{src: src, m: map[string]*keyEntry{}}
}

// Forget drops a merchant from the cache after it changed.
func (k *Keyring) Forget(id string) {
	k.mu.Lock()
	delete(k.m, id)
	k.gen++
	k.mu.Unlock()
}

func (k *Keyring) get(id string) (*keyEntry, error) {
	k.mu.RLock()
	e := k.m[id]
	gen := k.gen
	k.mu.RUnlock()
	if e != nil && (k.TTL <= 0 || time.Since(e.loaded) < k.TTL) {
		return e, nil
	}
	m, err := k.src.Merchant(id)
	if err != nil {
		return nil, err
	}
	e = &keyEntry{merchant: m, loaded: time.Now()}
	add := func(hash string, sealed []byte, expires time.Time, role rules.KeyRole) error {
		secret, err := k.src.OpenSecret(m, sealed)
		if err != nil {
			return err
		}
		h, err := hex.DecodeString(hash)
		if err != nil {
			return err
		}
		e.keys = append(e.keys, liveKey{hash: h, secret: rules.NewSignatureKey(secret), expiresAt: expires,
			signer: &Signer{Merchant: m, KeyID: rules.KeyID(hash), Role: role}})
		return nil
	}
	if err := add(m.APIKeyHash, m.SealedSecret, time.Time{}, rules.KeyRoleFull); err != nil {
		return nil, err
	}
	for _, old := range m.OldKeys {
		if err := add(old.APIKeyHash, old.SealedSecret, old.ExpiresAt, rules.KeyRoleFull); err != nil {
			return nil, err
		}
	}
	for _, rk := range m.RoleKeys {
		if err := add(rk.APIKeyHash, rk.SealedSecret, time.Time{}, rk.Role); err != nil {
			return nil, err
		}
	}
	k.mu.Lock()
	if k.gen == gen { // no change was forgotten while the merchant was read: it may be older than it
		k.m[id] = e
	}
	k.mu.Unlock()
	return e, nil
}

// key finds the merchant's key that matches the presented one and is not expired at now.
// Every key is compared, in constant time, whether or not an earlier one matched.
func (e *keyEntry) key(presented string, now time.Time) (liveKey, bool) {
	given := sha256.Sum256([]byte(presented))
	var found liveKey
	ok := false
	for _, k := range e.keys {
		if subtle.ConstantTimeCompare(given[:], k.hash) == 1 && (k.expiresAt.IsZero() || now.Before(k.expiresAt)) {
			found, ok = k, true
		}
	}
	return found, ok
}

// Merchant returns the cached merchant.
func (k *Keyring) Merchant(id string) (*rules.Merchant, error) {
	e, err := k.get(id)
	if err != nil {
		return nil, err
	}
	return e.merchant, nil
}

// AuthFailuresPerMinute is how many failed authentications one client may make a minute
// (per API key presented; per address on the admin API) before it is answered 429.
const AuthFailuresPerMinute = 20

// Authenticator verifies the signed requests (rules.Signature).
type Authenticator struct {
	Keys      *Keyring
	Now       func() time.Time
	RateLimit float64 // requests per second per merchant; 0 is off

	// Failures counts failed authentications per (client address, API key presented).
	Failures *FailureLimiter
	mu       sync.Mutex
	perMerch map[string]*rate.Limiter
}

// NewAuthenticator makes an authenticator.
func NewAuthenticator(keys *Keyring, now func() time.Time, rateLimit float64) *Authenticator {
	failures := NewFailureLimiter(AuthFailuresPerMinute)
	failures.Now = now
	return &Authenticator{Keys: keys, Now: now, RateLimit: rateLimit, Failures: failures, perMerch: map[string]*rate.Limiter{}}
}

// publicPaths are the unsigned paths under /api/v1/.
var publicPaths = map[string]bool{"/api/v1/notifications/public-key": true, "/api/v1/notifications/certificate": true}

// merchantPath returns the merchant id of a signed path, or "" for a path that is not signed.
// reserved is true for a path under a reserved segment that is not public: no such endpoint.
func merchantPath(path string) (id string, reserved bool) {
	var rest string
	switch {
	case publicPaths[path]:
		return "", false
	case strings.HasPrefix(path, "/api/v1/"):
		rest = path[len("/api/v1/"):]
	case strings.HasPrefix(path, "/api-payout-plus-real-time/"):
		rest = path[len("/api-payout-plus-real-time/"):]
	default:
		return "", false
	}
	id, _, _ = strings.Cut(rest, "/")
	for _, r := range merchants.ReservedIDs {
		if id == r {
			return "", true
		}
	}
	return id, false
}

// Middleware verifies every request to a merchant path and puts the merchant in the context.
func (a *Authenticator) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, reserved := merchantPath(r.URL.Path)
		if reserved {
			writeProblem(w, problemOf(rules.KindNotFound, rules.CodeNoSuchEndpoint, "no such endpoint: "+r.URL.Path))
			return
		}
		if id == "" {
			next.ServeHTTP(w, r)
			return
		}
		limit, over := int64(MaxBody), "the body is over 64 KiB"
		if isBatchCreate(r) {
			limit, over = rules.MaxBatchBody, "the body is over 10 MiB: a batch has at most 10,000 items"
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
		if err != nil {
			writeProblem(w, problemOf(rules.KindInvalid, rules.CodeMalformedJSON, "the body could not be read"))
			return
		}
		if int64(len(body)) > limit {
			code := rules.CodeBodyTooLarge
			if limit != MaxBody {
				code = rules.CodeBatchTooLarge
			}
			writeProblem(w, problemOf(rules.KindTooLarge, code, over))
			return
		}
		// A correctly signed request is always served: failures count against the client
		// address and the API key it presented, never against anyone else,
		// and only failures are refused once there are too many.
		signer, msg, err := a.verify(r, id, body)
		if rules.Unavailable(err) {
			// The merchant's keys could not be read: not the client's failure, and not a
			// revoked key. Nothing counts against the client.
			requestLogger(r.Context()).Warn("storage unavailable", "err", err)
			writeProblem(w, unavailableProblem())
			return
		}
		if signer == nil {
			key := clientAddr(r) + "\x00" + truncate(presentedKey(r), 100)
			if !a.Failures.Fail(key) {
				writeProblem(w, retryAfter(problemOf(rules.KindRateLimited, rules.CodeRateLimited,
					"too many failed authentications from this address with this API key"), int(a.Failures.RetryAfter(key).Seconds()+0.5)))
				return
			}
			writeProblem(w, problemOf(rules.KindUnauthorized, rules.CodeAuthentication, msg))
			return
		}
		m := signer.Merchant
		if !a.allow(m.ID) {
			writeProblem(w, retryAfter(problemOf(rules.KindRateLimited, rules.CodeRateLimited, "rate limit of this merchant exceeded"), 1))
			return
		}
		if signer.Role != rules.KeyRoleFull {
			// A key's role: checked once here, for every signed operation.
			if act := rules.ActionOf(r.Method, signedRest(r.URL.Path)); !signer.Role.Allows(act) {
				writeProblem(w, problemOf(rules.KindForbidden, rules.CodeKeyRoleRefused, signer.Role.Refusal(act, r.Method, r.URL.Path).Message))
				return
			}
		}
		rb := new(rereadBody)
		rb.Reset(body)
		r.Body = rb
		if lc := logContext(r.Context()); lc != nil {
			lc.merchantID, lc.signer = m.ID, signer
		} else {
			r = r.WithContext(context.WithValue(r.Context(), ctxMerchant, signer))
		}
		next.ServeHTTP(w, r)
	})
}

// rereadBody gives the handler the body the signature was checked over (io.NopCloser over
// a bytes.Reader, in one allocation).
type rereadBody struct{ bytes.Reader }

func (*rereadBody) Close() error { return nil }

// timestampMillis reads a signed timestamp: epoch milliseconds, or epoch seconds below 10^11
// (PHP clients send time(); 10^11 ms is 1973, 10^11 s is the year 5138).
func timestampMillis(ts int64) int64 {
	if ts < 1e11 {
		return ts * 1000
	}
	return ts
}

// verify checks key, timestamp and signature; it returns the merchant or why not, and the
// storage's error when the merchant's keys could not be read. A
// signature is not single-use: the original scheme signs neither the query nor a nonce, and
// clients resend the same signed request after a time-out.
//
// The reason names the part that failed, for the integrator, checked in an order that tells a guesser
// nothing: what the request itself shows first (the header, the timestamp and its window, the
// signature's form), then key and signature together, with one answer whether the key is
// unknown, another merchant's, or known with a wrong signature — a known key is never
// confirmed to a bad signature.
func (a *Authenticator) verify(r *http.Request, id string, body []byte) (*Signer, string, error) {
	key := presentedKey(r)
	tsText, sigText := queryGet(r.URL.RawQuery, "timestamp"), queryGet(r.URL.RawQuery, "signature")
	switch {
	case key == "":
		return nil, "the monnet-api-key header (the merchant's API key; X-Api-Key is accepted too) is missing", nil
	case tsText == "":
		return nil, "the timestamp query parameter (epoch milliseconds or seconds) is missing", nil
	}
	ts, err := strconv.ParseInt(tsText, 10, 64)
	if err != nil || ts < 0 {
		return nil, "the timestamp query parameter must be epoch milliseconds (13 digits) or seconds (10 digits)", nil
	}
	now := a.Now()
	if d := now.UnixMilli() - timestampMillis(ts); d > SignatureWindow.Milliseconds() || d < -SignatureWindow.Milliseconds() {
		return nil, fmt.Sprintf("the timestamp is %s from the server's clock, outside the window of ±5 minutes (server time %s, epoch ms %d)",
			time.Duration(abs(d)*int64(time.Millisecond)).Round(time.Second), now.UTC().Format("2006-01-02T15:04:05.000Z"), now.UnixMilli()), nil
	}
	if sigText == "" {
		return nil, "the signature query parameter is missing", nil
	}
	sig, err := hex.DecodeString(sigText)
	if err != nil || len(sig) != sha256.Size {
		return nil, "the signature query parameter must be 64 hex characters (HMAC-SHA256)", nil
	}
	// The path signed is the path as sent, percent-encoding and all: a client that encodes
	// an event id's ":" as %3A (generated clients do) signs what it sends. The decoded path,
	// which clients that sign before encoding use, is accepted too.
	sent := sentPath(r)
	// Built only on a failure: a correctly signed request (the hot path) hashes its body once.
	mismatch := func() string {
		also := ""
		if sent != r.URL.Path {
			also = fmt.Sprintf(" (the path as sent; the decoded %q is accepted too)", r.URL.Path)
		}
		return fmt.Sprintf("the signature does not match, or the API key is not this merchant's: the server signs %q%s "+
			"with the secret of merchant %s's key (HMAC-SHA256, hex)", r.Method+":"+sent+"?timestamp="+strconv.FormatInt(ts, 10)+":"+bodyHash(body), also, id)
	}
	e, err := a.Keys.get(id)
	if err != nil {
		return nil, mismatch(), err
	}
	k, ok := e.key(key, now)
	if !ok {
		return nil, mismatch(), nil
	}
	want := k.secret.MAC(r.Method, sent, ts, body)
	if subtle.ConstantTimeCompare(sig, want[:]) != 1 {
		if sent == r.URL.Path {
			return nil, mismatch(), nil
		}
		want = k.secret.MAC(r.Method, r.URL.Path, ts, body)
		if subtle.ConstantTimeCompare(sig, want[:]) != 1 {
			return nil, mismatch(), nil
		}
	}
	return k.signer, "", nil
}

// queryGet is url.ParseQuery(raw).Get(name), without the map of every parameter and its
// values that a signed request's two would cost (four allocations). A query of many
// parameters goes through ParseQuery itself, whose limit on their number then applies.
func queryGet(raw, name string) string {
	if strings.Count(raw, "&") >= 64 {
		q, _ := url.ParseQuery(raw)
		return q.Get(name)
	}
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		if pair == "" || strings.Contains(pair, ";") {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		if k, err := url.QueryUnescape(k); err != nil || k != name { // no copy without an escape
			continue
		}
		if v, err := url.QueryUnescape(v); err == nil {
			return v
		}
	}
	return ""
}

// sentPath is the request's path as the client sent it, before any percent-decoding: the
// request line's target (an absolute URL's only from a proxy), else the URL's own escaping.
func sentPath(r *http.Request) string {
	if p, _, _ := strings.Cut(r.RequestURI, "?"); strings.HasPrefix(p, "/") {
		return p
	}
	return r.URL.EscapedPath()
}

// signedRest is a signed path below its merchant id ("" for the real-time card path).
func signedRest(path string) string {
	for _, p := range []string{"/api/v1/", "/api-payout-plus-real-time/"} {
		if strings.HasPrefix(path, p) {
			_, rest, _ := strings.Cut(path[len(p):], "/")
			return rest
		}
	}
	return ""
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
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
	return l.AllowN(a.Now(), 1)
}

// presentedKey is the API key a request presents (header monnet-api-key, or X-Api-Key).
func presentedKey(r *http.Request) string {
	if k := r.Header.Get("monnet-api-key"); k != "" {
		return k
	}
	return r.Header.Get("X-Api-Key")
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// bodyHash is the lowercase hex SHA-256 of a body, as the signed message carries it.
func bodyHash(body []byte) string {
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:])
}
