package api

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
)

// logCtx collects what the access log line says about a request as it goes through.
type logCtx struct {
	merchantID string
}

type logKey struct{}

func logContext(ctx context.Context) *logCtx {
	lc, _ := ctx.Value(logKey{}).(*logCtx)
	return lc
}

// Observer is told about every finished request (metrics). May be nil.
type Observer func(route string, status int, d time.Duration)

// accessLog logs one line per request: method, path (never the query, which carries the
// signature, nor the body, which may carry card data), route, status, duration, request id.
func accessLog(logger *slog.Logger, observe Observer) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			lc := &logCtx{}
			r = r.WithContext(context.WithValue(r.Context(), logKey{}, lc))
			ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
			next.ServeHTTP(ww, r)
			d := time.Since(start)
			status := ww.Status()
			if status == 0 {
				status = http.StatusOK
			}
			route := ""
			if rc := chi.RouteContext(r.Context()); rc != nil {
				route = rc.RoutePattern()
			}
			if route == "" {
				route = "unmatched"
			}
			if observe != nil {
				observe(r.Method+" "+route, status, d)
			}
			level := slog.LevelInfo
			if status >= 500 {
				level = slog.LevelError
			}
			if !logger.Enabled(r.Context(), level) {
				return
			}
			logger.LogAttrs(r.Context(), level, "request",
				slog.String("request_id", middleware.GetReqID(r.Context())),
				slog.String("method", r.Method),
				slog.String("path", r.URL.Path),
				slog.String("route", route),
				slog.Int("status", status),
				slog.Duration("duration", d),
				slog.String("merchant_id", lc.merchantID),
				slog.String("remote", clientAddr(r)),
			)
		})
	}
}
