package rules

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
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
	mac := hmac.New(sha256.New, []byte(secret))
	buf := make([]byte, 0, len(method)+len(path)+96)
	buf = append(buf, method...)
	buf = append(buf, ':')
	buf = append(buf, path...)
	buf = append(buf, "?timestamp="...)
	buf = strconv.AppendInt(buf, timestamp, 10)
	buf = append(buf, ':')
	buf = append(buf, bodyHash...)
	mac.Write(buf)
	var out [sha256.Size]byte
	mac.Sum(out[:0])
	return out
}
