// Package sign signs merchant API requests the way the service checks them: the
// signature is hex(HMAC-SHA256(apiSecret, METHOD:path?timestamp=T:hex(SHA-256(body)))),
// sent with the timestamp in the query and the API key in the monnet-api-key header.
package sign

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"time"
)

// Header is the header that carries the API key.
const Header = "monnet-api-key"

// Query is the query string of a signed request of path: "timestamp=…&signature=…".
func Query(secret, method, path string, body []byte, now time.Time) string {
	return "timestamp=" + strconv.FormatInt(now.UnixMilli(), 10) + "&signature=" + Signature(secret, method, path, body, now)
}

// Signature is the signature of a request of path with body at now, to its millisecond.
func Signature(secret, method, path string, body []byte, now time.Time) string {
	bh := sha256.Sum256(body)
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(method + ":" + path + "?timestamp=" + strconv.FormatInt(now.UnixMilli(), 10) + ":" + hex.EncodeToString(bh[:])))
	return hex.EncodeToString(m.Sum(nil))
}
