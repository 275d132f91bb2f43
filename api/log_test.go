package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

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
