package api

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"go.opentelemetry.io/otel/trace"
)

// logCtx collects what the access log line says about a request as it goes through, and
// gives the request's logger (the server's, with the request id), made when first asked
// for: most requests log only their access line.
type logCtx struct {
	merchantID string
	requestID  string
	server     *slog.Logger
	once       sync.Once
	logger     *slog.Logger
	payoutID   int64 // the payout a create made, for the request's span (trace.go)
}

func (lc *logCtx) requestLogger() *slog.Logger {
	lc.once.Do(func() { lc.logger = lc.server.With("request_id", lc.requestID) })
	return lc.logger
}

// baseLogger logs what happens outside a request (huma errors without one). New sets it to
// the server's logger so that nothing goes to the default logger.
var baseLogger atomic.Pointer[slog.Logger]

// requestLogger is the logger of the request in ctx: the server's (--log-format), with the
// request id.
func requestLogger(ctx context.Context) *slog.Logger {
	if lc := logContext(ctx); lc != nil && lc.server != nil {
		return lc.requestLogger()
	}
	if l := baseLogger.Load(); l != nil {
		return l
	}
	return slog.Default()
}

// recoverer turns a panic in a handler into a 500 problem, logged with its stack through
// the request's logger, never the default one.
func recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v) // the handler chose to abort the response
			}
			requestLogger(r.Context()).Error("panic in handler", "panic", fmt.Sprint(v), "path", r.URL.Path, "stack", string(debug.Stack()))
			if r.Header.Get("Connection") != "Upgrade" {
				writeProblem(w, internalProblem())
			}
		}()
		next.ServeHTTP(w, r)
	})
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
// With tracing (nil: off) it also spans the request, and the request id is its trace id.
func accessLog(logger *slog.Logger, observe Observer, tracing *Tracing) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			var span trace.Span
			if tracing != nil {
				r, span = tracing.startRequestSpan(r)
			}
			lc := &logCtx{requestID: middleware.GetReqID(r.Context()), server: logger}
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
			if span != nil {
				endRequestSpan(span, r, route, status, lc)
			}
			level := slog.LevelInfo
			if status >= 500 {
				level = slog.LevelError
			}
			if !logger.Enabled(r.Context(), level) {
				return
			}
			logger.LogAttrs(r.Context(), level, "request",
				slog.String("request_id", lc.requestID),
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
