package api

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"payouts/rules"
	"payouts/rules/merchants"
)

type benchSource struct{ m *rules.Merchant }

func (s benchSource) Merchant(string) (*rules.Merchant, error) { return s.m, nil }
func (s benchSource) OpenSecret(_ *rules.Merchant, sealed []byte) (string, error) {
	return string(sealed), nil
}

// BenchmarkSignedRequestAuth is the cost of authenticating one signed POST (the create
// path's auth): key lookup, HMAC, the role check, the context. Roles must not make it grow.
func BenchmarkSignedRequestAuth(b *testing.B) {
	m := &rules.Merchant{ID: "7", APIKeyHash: merchants.HashAPIKey("the-key"), SealedSecret: []byte("the-secret"), CreatedAt: time.Now()}
	a := NewAuthenticator(NewKeyring(benchSource{m}), time.Now, 0)
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	h := a.Middleware(next)
	body := []byte(`{"country":"PER","amount":100000,"currency":"PEN","orderId":"B-1"}`)
	path := "/api/v1/7/payouts"
	b.ReportAllocs()
	for b.Loop() {
		ts := time.Now().UnixMilli()
		req := httptest.NewRequest("POST", path+"?timestamp="+strconv.FormatInt(ts, 10)+"&signature="+rules.Signature("the-secret", "POST", path, ts, body), nil)
		req.Body = http.NoBody
		req.Header.Set("monnet-api-key", "the-key")
		req.Body = nopBody(body)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != 200 {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
	}
}

type bodyReader struct {
	b []byte
	i int
}

func (r *bodyReader) Read(p []byte) (int, error) {
	if r.i >= len(r.b) {
		return 0, io.EOF
	}
	n := copy(p, r.b[r.i:])
	r.i += n
	return n, nil
}
func (r *bodyReader) Close() error { return nil }

func nopBody(b []byte) io.ReadCloser { return &bodyReader{b: b} }
