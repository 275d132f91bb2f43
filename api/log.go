package api

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	rtrace "runtime/trace"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"go.opentelemetry.io/otel/trace"
)

// logCtx collects what the access log line says about a request as it goes through, and
// gives the request's logger (the server's, with the request id), made when first asked
// for: most requests log only their access line. It also carries what the middleware found
// for the handlers (the client's address, the signer): one context value for a request,
// rather than a value and a copy of the request for each.
type logCtx struct {
	merchantID string
	requestID  string
	clientAddr string  // as clientAddrMiddleware found it
	signer     *Signer // as the Authenticator verified it
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
			requestLogger(r.Context()).Error("panic in handler", "panic", fmt.Sprint(v), "path", loggedPath(r, routeOf(r)), "stack", string(debug.Stack()))
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

// requestIDPrefix makes this process's request ids unlike another's.
var requestIDPrefix = func() string {
	b := make([]byte, 5)
	rand.Read(b)
	return base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b)
}()

// requestID is fmt.Sprintf("%s-%06d", prefix, n) in one allocation rather than four: it is
// made for every request.
func requestID(prefix string, n uint64) string {
	var buf [48]byte
	b := append(buf[:0], prefix...)
	b = append(b, '-')
	var digits [20]byte
	d := strconv.AppendUint(digits[:0], n, 10)
	for i := len(d); i < 6; i++ {
		b = append(b, '0')
	}
	return string(append(b, d...))
}

// serverRequestID gives each request an id of the server's own. A caller's X-Request-Id or
// trace id never becomes it: a client could otherwise log its requests under one id, or
// under another client's. The id starts the request's logCtx, which the middleware after
// it fill in (the client's address, the logger, the merchant): one context value and one
// copy of the request for them all, where each made its own.
func serverRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		lc := &logCtx{requestID: requestID(requestIDPrefix, middleware.NextRequestID())}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), logKey{}, lc)))
	})
}

// nosniff tells browsers to take every answer as the type it says (problem+json, CSV, a
// page), never to guess one from its bytes.
func nosniff(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		next.ServeHTTP(w, r)
	})
}

// unloggedParams are the path parameters that no log line, metric or span may hold: a
// dashboard set-up link's token (whoever has it can take the account) and a Bre-B key (a
// beneficiary's phone number, email or document). A path with one is recorded as its route.
var unloggedParams = []string{"{token}", "{key}"}

// routeOf is the route pattern of a request: the one it was served by, or, for a request
// refused before routing (a wrong signature, a limit), the one it would have gone to;
// "unmatched" for a path no route takes.
func routeOf(r *http.Request) string {
	rc := chi.RouteContext(r.Context())
	if rc == nil {
		return "unmatched"
	}
	if route := rc.RoutePattern(); route != "" {
		return route
	}
	if rc.Routes != nil {
		path := r.URL.RawPath
		if path == "" {
			path = r.URL.Path
		}
		if route := rc.Routes.Find(chi.NewRouteContext(), r.Method, path); route != "" {
			return route
		}
	}
	return "unmatched"
}

// loggedPath is the path of a request as the access log and its span record it: the path,
// or its route when the path carries a parameter that is never logged.
func loggedPath(r *http.Request, route string) string {
	for _, p := range unloggedParams {
		if strings.Contains(route, p) {
			return route
		}
	}
	return r.URL.Path
}

// accessLog logs one line per request: method, path (never the query, which carries the
// signature, nor the body, which may carry card data; loggedPath), route, status, duration,
// the server's request id. A request refused before routing keeps the route it asked for,
// in the line, the metrics and the span. With tracing (nil: off) it also spans the request,
// and the line has the span's trace id beside the request id.
func accessLog(logger *slog.Logger, observe Observer, tracing *Tracing) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			var span trace.Span
			if tracing != nil {
				r, span = tracing.startRequestSpan(r)
			}
			// While the runtime's execution trace records (--slow-trace, /debug/pprof/trace),
			// each request is a task in it, its route logged on it: a slow one is found by
			// its duration, not by hand.
			var task *rtrace.Task
			if rtrace.IsEnabled() {
				var ctx context.Context
				ctx, task = rtrace.NewTask(r.Context(), "request")
				r = r.WithContext(ctx)
			}
			lc := logContext(r.Context())
			if lc == nil { // without serverRequestID (tests): the id of chi's middleware, if any
				lc = &logCtx{requestID: middleware.GetReqID(r.Context())}
				r = r.WithContext(context.WithValue(r.Context(), logKey{}, lc))
			}
			lc.server = logger
			ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
			next.ServeHTTP(ww, r)
			d := time.Since(start)
			status := ww.Status()
			if status == 0 {
				status = http.StatusOK
			}
			route := routeOf(r)
			path := loggedPath(r, route)
			if task != nil {
				rtrace.Log(r.Context(), "route", r.Method+" "+route)
				task.End()
			}
			if observe != nil {
				observe(r.Method+" "+route, status, d)
			}
			if span != nil {
				endRequestSpan(span, r, route, path, status, lc)
			}
			level := slog.LevelInfo
			if status >= 500 {
				level = slog.LevelError
			}
			if !logger.Enabled(r.Context(), level) {
				return
			}
			attrs := []slog.Attr{
				slog.String("request_id", lc.requestID),
				slog.String("method", r.Method),
				slog.String("path", path),
				slog.String("route", route),
				slog.Int("status", status),
				slog.Duration("duration", d),
				slog.String("merchant_id", lc.merchantID),
				slog.String("remote", clientAddr(r)),
			}
			if span != nil {
				attrs = append(attrs, slog.String("trace_id", span.SpanContext().TraceID().String()))
			}
			logger.LogAttrs(r.Context(), level, "request", attrs...)
		})
	}
}
