package api

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Tracing spans every request (Deps.Tracing): one server span, continuing the trace of an
// incoming traceparent, whose trace id is the request id of the access log.
//
// A span names the route pattern, never the path, and records no query, header or body:
// the query carries the signature, the headers the API key, the bodies card numbers and
// beneficiaries' documents, and a path may carry a card form's session. Its attributes are
// the method, the route, the status, and the merchant and payout ids when known. (This is
// why the span is made here rather than by otelhttp, whose server spans record the query.)
type Tracing struct {
	Tracer     trace.Tracer
	Propagator propagation.TextMapPropagator
}

// Attribute keys of the request spans.
const (
	attrMethod     = attribute.Key("http.request.method")
	attrRoute      = attribute.Key("http.route")
	attrStatus     = attribute.Key("http.response.status_code")
	attrMerchantID = attribute.Key("merchant.id")
	attrPayoutID   = attribute.Key("payout.id")
)

// startRequestSpan begins the span of r, a child of the trace its traceparent names if
// any, and makes its trace id the request id.
func (t *Tracing) startRequestSpan(r *http.Request) (*http.Request, trace.Span) {
	ctx := t.Propagator.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	ctx, span := t.Tracer.Start(ctx, r.Method, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attrMethod.String(r.Method)))
	ctx = context.WithValue(ctx, middleware.RequestIDKey, span.SpanContext().TraceID().String())
	return r.WithContext(ctx), span
}

// endRequestSpan ends the span of a request that went to route and was answered status.
func endRequestSpan(span trace.Span, r *http.Request, route string, status int, lc *logCtx) {
	span.SetName(r.Method + " " + route)
	span.SetAttributes(attrRoute.String(route), attrStatus.Int(status))
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
