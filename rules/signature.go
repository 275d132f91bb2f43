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
	sum := sha256.Sum256(body)
	return SignatureOfHash(secret, method, path, timestamp, hex.EncodeToString(sum[:]))
}

// SignatureOfHash is Signature with the body's hex SHA-256 already computed.
func SignatureOfHash(secret, method, path string, timestamp int64, bodyHash string) string {
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
	return hex.EncodeToString(mac.Sum(nil))
}
