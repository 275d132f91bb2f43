package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humachi"
	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
)

// Internal failures (a panic, an unexpected error) answer a 500 problem that says nothing
// internal, and are logged through the server's logger with the request id, never through
// the default logger.
func TestInternalErrorsLogThroughTheRequestLoggerWithItsID(t *testing.T) {
	var serverLog, defaultLog bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&defaultLog, nil)))
	defer slog.SetDefault(old)
	logger := slog.New(slog.NewJSONHandler(&serverLog, nil))
	baseLogger.Store(logger)

	r := chi.NewRouter()
	r.Use(middleware.RequestID)
	r.Use(accessLog(logger, nil, nil))
	r.Use(recoverer)
	r.Get("/panic", func(http.ResponseWriter, *http.Request) {
		var m map[string]*int
		_ = *m["x"] // a nil pointer, as GET /api/v1/notifications/balance once did
	})
	a := humachi.New(r, huma.DefaultConfig("t", "1"))
	huma.Get(a, "/fail", func(ctx context.Context, _ *struct{}) (*struct{}, error) {
		return nil, errors.New("disk on fire")
	})
	for _, path := range []string{"/panic", "/fail"} {
		serverLog.Reset()
		w := httptest.NewRecorder()
		r.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
		if w.Code != 500 || !strings.Contains(w.Body.String(), `"code":"5000"`) ||
			strings.Contains(w.Body.String(), "nil pointer") || strings.Contains(w.Body.String(), "disk on fire") {
			t.Errorf("%s: %d %s; want a 500 problem with code 5000 and nothing internal", path, w.Code, w.Body)
		}
		var found bool
		for _, line := range strings.Split(strings.TrimSpace(serverLog.String()), "\n") {
			var rec map[string]any
			if json.Unmarshal([]byte(line), &rec) != nil {
				t.Fatalf("%s: the server log is not JSON: %q", path, line)
			}
			if rec["level"] == "ERROR" && rec["msg"] != "request" {
				found = true
				if id, _ := rec["request_id"].(string); id == "" {
					t.Errorf("%s: internal error logged without the request id: %s", path, line)
				}
			}
		}
		if !found {
			t.Errorf("%s: no internal error in the server log:\n%s", path, serverLog.String())
		}
	}
	if defaultLog.Len() > 0 {
		t.Errorf("the default logger was used: %s", defaultLog.String())
	}
}

// A request refused before routing is logged under the route it asked for, with its path,
// and a path holding a set-up token is logged as its route; the request id is the server's,
// whatever X-Request-Id the caller sent.
func TestAccessLogKeepsTheRouteOfARefusedRequestAndHidesTokens(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, nil))
	var observed []string
	r := chi.NewRouter()
	r.Use(serverRequestID)
	r.Use(accessLog(logger, func(route string, status int, _ time.Duration) { observed = append(observed, route) }, nil))
	r.Use(func(next http.Handler) http.Handler { // refuses before routing, as the signature check does
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasPrefix(r.URL.Path, "/api/") {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			next.ServeHTTP(w, r)
		})
	})
	r.Get("/api/v1/{merchantId}/payouts/{id}", func(http.ResponseWriter, *http.Request) {})
	r.Get("/dashboard/setup/{token}", func(http.ResponseWriter, *http.Request) {})
	for _, path := range []string{"/api/v1/m1/payouts/7", "/dashboard/setup/s3cr3t-token", "/nowhere"} {
		req := httptest.NewRequest("GET", path, nil)
		req.Header.Set("X-Request-Id", "chosen-by-the-caller")
		r.ServeHTTP(httptest.NewRecorder(), req)
	}
	want := []map[string]string{
		{"route": "/api/v1/{merchantId}/payouts/{id}", "path": "/api/v1/m1/payouts/7"},
		{"route": "/dashboard/setup/{token}", "path": "/dashboard/setup/{token}"},
		{"route": "unmatched", "path": "/nowhere"},
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != len(want) || strings.Contains(buf.String(), "s3cr3t-token") {
		t.Fatalf("the access log:\n%s", buf.String())
	}
	for i, line := range lines {
		var rec map[string]any
		json.Unmarshal([]byte(line), &rec)
		if rec["route"] != want[i]["route"] || rec["path"] != want[i]["path"] || rec["request_id"] == "chosen-by-the-caller" || rec["request_id"] == "" {
			t.Errorf("line %d: %s; want route %s, path %s and a request id of the server's", i, line, want[i]["route"], want[i]["path"])
		}
		if observed[i] != "GET "+want[i]["route"] {
			t.Errorf("metrics observed %q, want GET %s", observed[i], want[i]["route"])
		}
	}
}

func TestRequestIDIsTheFormattedOne(t *testing.T) {
	for _, n := range []uint64{0, 7, 123456, 1234567, 1<<64 - 1} {
		want := fmt.Sprintf("%s-%06d", "ABCDEFGH", n)
		if got := requestID("ABCDEFGH", n); got != want {
			t.Errorf("requestID(%d) = %q, want %q", n, got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = requestID(requestIDPrefix, 42) }); n > 1 {
		t.Errorf("requestID allocates %.0f times, want 1", n)
	}
}
