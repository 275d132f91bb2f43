package api

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Tracing spans every request (Deps.Tracing): one server span, continuing the trace of an
// incoming traceparent. The access log names its trace id beside the request id.
//
// A span names the route pattern and records no query, header or body: the query carries
// the signature and a card form's session, the headers the API key, the bodies card numbers
// and beneficiaries' documents. Its path (url.path) is the access log's, a route where the
// path carries a secret (loggedPath). Its attributes are the method, the route, the path,
// the status, and the merchant and payout ids when known. (This is why the span is made here
// rather than by otelhttp, whose server spans record the query.)
//
// A caller's traceparent gives the span its trace and its parent, never the decision to
// sample it: the sampler (CallerSpan) decides as for a trace of the server's own, so that
// whoever can reach the server cannot choose what it exports.
type Tracing struct {
	Tracer     trace.Tracer
	Propagator propagation.TextMapPropagator
}

// Attribute keys of the request spans.
const (
	attrMethod     = attribute.Key("http.request.method")
	attrRoute      = attribute.Key("http.route")
	attrStatus     = attribute.Key("http.response.status_code")
	attrPath       = attribute.Key("url.path")
	attrScheme     = attribute.Key("url.scheme")
	attrMerchantID = attribute.Key("merchant.id")
	attrPayoutID   = attribute.Key("payout.id")
)

type callerSpanKey struct{}

// CallerSpan is the span context an incoming request's traceparent named, in the context of
// its span's start (invalid when it had none): a sampler tells by it the caller's parent,
// whose sampled flag the caller chose, from a parent the server resumed itself.
func CallerSpan(ctx context.Context) trace.SpanContext {
	sc, _ := ctx.Value(callerSpanKey{}).(trace.SpanContext)
	return sc
}

// startRequestSpan begins the span of r, a child of the trace its traceparent names if any.
func (t *Tracing) startRequestSpan(r *http.Request) (*http.Request, trace.Span) {
	ctx := t.Propagator.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		ctx = context.WithValue(ctx, callerSpanKey{}, sc)
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	ctx, span := t.Tracer.Start(ctx, r.Method, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attrMethod.String(r.Method), attrScheme.String(scheme)))
	return r.WithContext(ctx), span
}

// endRequestSpan ends the span of a request that went to route (or asked for it, when
// refused before routing), at path (loggedPath), and was answered status.
func endRequestSpan(span trace.Span, r *http.Request, route, path string, status int, lc *logCtx) {
	span.SetName(r.Method + " " + route)
	span.SetAttributes(attrRoute.String(route), attrPath.String(path), attrStatus.Int(status))
	if lc.merchantID != "" {
		span.SetAttributes(attrMerchantID.String(lc.merchantID))
	}
	if id := lc.payoutID; id > 0 {
		span.SetAttributes(attrPayoutID.Int64(id))
	} else if strings.HasPrefix(route, "/api/v1/{merchantId}/payouts/{id}") {
		if id, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64); err == nil {
			span.SetAttributes(attrPayoutID.Int64(id))
		}
	}
	if status >= 500 {
		span.SetStatus(codes.Error, http.StatusText(status))
	}
	span.End()
}

// notePayout names the payout a request made, for its span.
func notePayout(ctx context.Context, id int64) {
	if lc := logContext(ctx); lc != nil {
		lc.payoutID = id
	}
}
