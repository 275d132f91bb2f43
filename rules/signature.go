package rules

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"strconv"
	"sync"
)

// EmptyBodyHash is the SHA-256 of an empty body, as a GET signs it.
const EmptyBodyHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// Signature computes the request signature a merchant sends:
// hex(HMAC-SHA256(secret, METHOD + ":" + path + "?timestamp=" + ts + ":" + hex(SHA-256(body)))).
func Signature(secret, method, path string, timestamp int64, body []byte) string {
	mac := SignatureMAC(secret, method, path, timestamp, body)
	return hex.EncodeToString(mac[:])
}

// SignatureMAC is Signature before its hex: what a server compares a decoded signature with,
// without encoding one to decode it again on every request.
func SignatureMAC(secret, method, path string, timestamp int64, body []byte) [sha256.Size]byte {
	sum := sha256.Sum256(body)
	var bodyHash [2 * sha256.Size]byte
	hex.Encode(bodyHash[:], sum[:])
	return signatureMAC(secret, method, path, timestamp, bodyHash[:])
}

// SignatureOfHash is Signature with the body's hex SHA-256 already computed.
func SignatureOfHash(secret, method, path string, timestamp int64, bodyHash string) string {
	var buf [2 * sha256.Size]byte
	mac := signatureMAC(secret, method, path, timestamp, append(buf[:0], bodyHash...))
	return hex.EncodeToString(mac[:])
}

func signatureMAC(secret, method, path string, timestamp int64, bodyHash []byte) [sha256.Size]byte {
	var m signingMAC
	m.mac = hmac.New(sha256.New, []byte(secret))
	return m.sign(method, path, timestamp, bodyHash)
}

// signingMAC is an HMAC keyed with a secret and the buffer of what it signs.
type signingMAC struct {
	mac hash.Hash
	buf []byte
}

func (m *signingMAC) sign(method, path string, timestamp int64, bodyHash []byte) [sha256.Size]byte {
	buf := append(m.buf[:0], method...)
	buf = append(buf, ':')
	buf = append(buf, path...)
	buf = append(buf, "?timestamp="...)
	buf = strconv.AppendInt(buf, timestamp, 10)
	buf = append(buf, ':')
	buf = append(buf, bodyHash...)
	m.mac.Write(buf)
	m.buf = buf
	var out [sha256.Size]byte
	m.mac.Sum(out[:0])
	return out
}

// SignatureKey is a secret kept ready to sign: an HMAC keyed with it is reset for each
// signature rather than made again (the key's pads and two hash states, four allocations a
// signed request).
type SignatureKey struct {
	secret string
	macs   sync.Pool // of *signingMAC
}

// NewSignatureKey keeps secret ready to sign.
func NewSignatureKey(secret string) *SignatureKey {
	return &SignatureKey{secret: secret}
}

// MAC is SignatureMAC with k's secret.
func (k *SignatureKey) MAC(method, path string, timestamp int64, body []byte) [sha256.Size]byte {
	m, _ := k.macs.Get().(*signingMAC)
	if m == nil {
		m = &signingMAC{mac: hmac.New(sha256.New, []byte(k.secret))}
	}
	sum := sha256.Sum256(body)
	var bodyHash [2 * sha256.Size]byte
	hex.Encode(bodyHash[:], sum[:])
	m.mac.Reset()
	out := m.sign(method, path, timestamp, bodyHash[:])
	k.macs.Put(m)
	return out
}
