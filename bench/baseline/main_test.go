package main

import (
	"net/http/httptest"
	"strconv"
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

// The bare stack's /metrics says what its runtime allocated under the names the payouts
// server's has, and each create counts once, created and finished.
func TestMetricsCountAsTheServiceDoes(t *testing.T) {
	var before, after strings.Builder
	writeMetrics(&before, 0)
	sink = make([]byte, 1<<20)
	writeMetrics(&after, 7)
	read := func(text, name string) uint64 {
		t.Helper()
		for _, l := range strings.Split(text, "\n") {
			if v, ok := strings.CutPrefix(l, name+" "); ok {
				n, err := strconv.ParseUint(v, 10, 64)
				if err != nil {
					t.Fatalf("%s: %q", name, l)
				}
				return n
			}
		}
		t.Fatalf("no %s in %q", name, text)
		return 0
	}
	b, a := before.String(), after.String()
	if got := read(a, "go_memstats_alloc_bytes_total") - read(b, "go_memstats_alloc_bytes_total"); got < 1<<20 {
		t.Errorf("allocated bytes grew by %d over a 1 MiB allocation", got)
	}
	if read(a, "go_memstats_mallocs_total") <= read(b, "go_memstats_mallocs_total") {
		t.Error("the allocation count did not grow")
	}
	if read(a, "payouts_created_total") != 7 || read(a, "payouts_finished_total") != 7 {
		t.Errorf("created and finished: %q", a)
	}
}

// sink keeps the test's allocation from being left out by the compiler.
var sink []byte
