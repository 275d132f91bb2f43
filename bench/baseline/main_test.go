package main

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"payouts/bench/internal/sign"
)

// The bare stack's check refuses what the service refuses: another key, another secret, a
// timestamp out of its window, a body that is not the one signed.
func TestSignedChecksAsTheServiceDoes(t *testing.T) {
	const key, secret, path = "pk_k", "s3cret", "/api/v1/M1/payouts"
	body := `{"amount":1}`
	for _, tc := range []struct {
		name              string
		key, secret, body string
		at                time.Time
		want              bool
	}{
		{"signed as it should be", key, secret, body, time.Now(), true},
		{"another API key", "pk_other", secret, body, time.Now(), false},
		{"another secret", key, "other", body, time.Now(), false},
		{"a timestamp too old", key, secret, body, time.Now().Add(-signatureWindow - time.Second), false},
		{"a timestamp too far ahead", key, secret, body, time.Now().Add(signatureWindow + time.Second), false},
		{"a body other than the one signed", key, secret, `{"amount":2}`, time.Now(), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", path+"?"+sign.Query(tc.secret, "POST", path, []byte(body), tc.at), strings.NewReader(tc.body))
			r.Header.Set(sign.Header, tc.key)
			if got := signed(r, key, secret); got != tc.want {
				t.Errorf("signed = %v, want %v", got, tc.want)
			}
		})
	}
}
