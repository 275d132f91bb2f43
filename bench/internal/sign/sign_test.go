package sign_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"

	"payouts/bench/internal/sign"
)

func TestQuerySignsMethodPathTimestampAndBody(t *testing.T) {
	at := time.UnixMilli(1764000000123)
	body := []byte(`{"amount":1}`)
	bh := sha256.Sum256(body)
	m := hmac.New(sha256.New, []byte("s3cret"))
	m.Write([]byte("POST:/api/v1/M1/payouts?timestamp=1764000000123:" + hex.EncodeToString(bh[:])))
	want := "timestamp=1764000000123&signature=" + hex.EncodeToString(m.Sum(nil))
	if got := sign.Query("s3cret", "POST", "/api/v1/M1/payouts", body, at); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
