package server

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"payouts/api"
	"payouts/rules"
	"payouts/web/notify"
)

// Traces (docs/guides/operations.md#traces): OpenTelemetry spans of the requests, the store
// writes, the rail calls and the notification deliveries, exported over OTLP/HTTP by the
// SDK's batch span processor. Off unless --otlp-endpoint or the standard
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT / OTEL_EXPORTER_OTLP_ENDPOINT is set: then nothing is
// built, no middleware is added, and every place that could start a span finds a nil tracer.

// tracing is the running tracing of a server; nil when it is off.
type tracing struct {
	provider   *sdktrace.TracerProvider
	tracer     trace.Tracer
	propagator propagation.TextMapPropagator
}

// tracesPath is where an OTLP/HTTP receiver takes traces, under its base URL.
const tracesPath = "/v1/traces"

// tracingStopTimeout bounds the export of the last spans when the server stops before its
// drain (a failed start).
const tracingStopTimeout = 5 * time.Second

// startTracing starts the exporter when an endpoint is configured: the flag (a base URL, as
// OTEL_EXPORTER_OTLP_ENDPOINT), else OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (the traces URL
// itself), else OTEL_EXPORTER_OTLP_ENDPOINT. The variables read here are read through
// getenv (the server's environment), as are the headers (OTEL_EXPORTER_OTLP_HEADERS, then
// OTEL_EXPORTER_OTLP_TRACES_HEADERS per header) and the resource (OTEL_SERVICE_NAME,
// OTEL_RESOURCE_ATTRIBUTES); the exporter and the SDK read the other standard variables
// (timeout, compression, certificates, OTEL_BSP_*) themselves; the sampler is read here
// (OTEL_TRACES_SAMPLER, OTEL_TRACES_SAMPLER_ARG), and a caller never decides it
// (serverSampler).
func startTracing(cfg Config, getenv func(string) string, logger *slog.Logger) (*tracing, error) {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return nil, nil
	}
	endpoint, err := tracesURL(cfg.Tracing.OTLPEndpoint, getenv)
	if err != nil || endpoint == "" {
		return nil, err
	}
	headers := keyValues(getenv("OTEL_EXPORTER_OTLP_HEADERS"))
	maps.Copy(headers, keyValues(getenv("OTEL_EXPORTER_OTLP_TRACES_HEADERS")))
	exporter, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(endpoint), otlptracehttp.WithHeaders(headers))
	if err != nil {
		return nil, fmt.Errorf("traces: %w", err)
	}
	attrs := []attribute.KeyValue{attribute.String("service.name", "payouts"), attribute.String("service.version", Version())}
	for k, v := range keyValues(getenv("OTEL_RESOURCE_ATTRIBUTES")) {
		attrs = append(attrs, attribute.String(k, v))
	}
	if name := strings.TrimSpace(getenv("OTEL_SERVICE_NAME")); name != "" {
		attrs = append(attrs, attribute.String("service.name", name)) // the last of a key wins
	}
	if cfg.Storage.Instance != "" {
		attrs = append(attrs, attribute.String("service.instance.id", cfg.Storage.Instance))
	}
	res, err := resource.New(context.Background(), resource.WithTelemetrySDK(), resource.WithAttributes(attrs...))
	if err != nil {
		return nil, fmt.Errorf("traces: %w", err)
	}
	provider := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter), sdktrace.WithResource(res),
		sdktrace.WithSampler(serverSampler(getenv, logger)))
	// The SDK reports a failed export through its global handler, by default to the standard
	// logger; here to the server's, at most once a minute (an unreachable collector fails
	// every batch).
	otel.SetErrorHandler(exportErrors(logger))
	logger.Info("traces exported over OTLP/HTTP", "endpoint", redactEndpoint(endpoint))
	return &tracing{provider: provider, tracer: provider.Tracer("payouts"), propagator: propagation.TraceContext{}}, nil
}

// serverSampler is the sampler OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG name, as the
// SDK reads them (default parentbased_always_on), except for one parent: the one a request's
// traceparent named (api.CallerSpan). Anyone who can reach the server can send a sampled
// traceparent, so that parent's flag is not followed: the request is sampled as a trace of
// the server's own, with a ratio drawn on a trace id of the server's (a caller also chooses
// the trace id it sends, which a ratio sampler reads). The span stays in the caller's trace.
// The parents the server resumes itself (a payout's stored traceparent) are followed as the
// configuration says, so that a payout's later spans follow its create's decision.
func serverSampler(getenv func(string) string, logger *slog.Logger) sdktrace.Sampler {
	name := strings.ToLower(strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER")))
	ratio := 1.0
	if arg := strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER_ARG")); arg != "" && strings.HasSuffix(name, "traceidratio") {
		r, err := strconv.ParseFloat(arg, 64)
		if err != nil || r < 0 || r > 1 {
			logger.Warn("traces: OTEL_TRACES_SAMPLER_ARG is not a ratio from 0 to 1; every trace is sampled", "value", arg)
		} else {
			ratio = r
		}
	}
	var root sdktrace.Sampler
	switch strings.TrimPrefix(name, "parentbased_") {
	case "always_off":
		root = sdktrace.NeverSample()
	case "traceidratio":
		root = sdktrace.TraceIDRatioBased(ratio)
	case "", "always_on":
		root = sdktrace.AlwaysSample()
	default:
		logger.Warn("traces: OTEL_TRACES_SAMPLER names no sampler the server knows; parentbased_always_on is used", "value", name)
		name, root = "", sdktrace.AlwaysSample()
	}
	configured := root
	if name == "" || strings.HasPrefix(name, "parentbased_") {
		configured = sdktrace.ParentBased(root)
	}
	return callerSampler{configured: configured, root: root}
}

type callerSampler struct{ configured, root sdktrace.Sampler }

func (s callerSampler) ShouldSample(p sdktrace.SamplingParameters) sdktrace.SamplingResult {
	parent := trace.SpanContextFromContext(p.ParentContext)
	if !parent.IsValid() || !parent.Equal(api.CallerSpan(p.ParentContext)) {
		return s.configured.ShouldSample(p)
	}
	own := p
	own.ParentContext = trace.ContextWithSpanContext(p.ParentContext, trace.SpanContext{})
	rand.Read(own.TraceID[:])
	res := s.root.ShouldSample(own)
	res.Tracestate = parent.TraceState()
	return res
}

func (s callerSampler) Description() string {
	return "CallerSampler{" + s.configured.Description() + "}"
}

// tracesURL is the URL spans are posted to, or "" when none is configured.
func tracesURL(flag string, getenv func(string) string) (string, error) {
	base, name := flag, "--otlp-endpoint"
	if base == "" {
		if u := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")); u != "" {
			return u, checkEndpoint(u, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
		}
		base, name = strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT")), "OTEL_EXPORTER_OTLP_ENDPOINT"
	}
	if base == "" {
		return "", nil
	}
	if err := checkEndpoint(base, name); err != nil {
		return "", err
	}
	u, _ := url.Parse(base)
	u.Path = strings.TrimSuffix(u.Path, "/") + tracesPath
	return u.String(), nil
}

// checkEndpoint refuses an endpoint that is not an http or https URL with a host.
func checkEndpoint(raw, name string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%s must be an http:// or https:// URL of an OTLP/HTTP receiver, such as http://127.0.0.1:4318", name)
	}
	return nil
}

// redactEndpoint is an endpoint as it may be logged: without its user info and query.
func redactEndpoint(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	u.User, u.RawQuery = nil, ""
	return u.String()
}

// keyValues reads the OTEL_ lists of key=value pairs (headers, resource attributes): pairs
// separated by commas, values percent-encoded; a pair without '=' or a key is skipped.
func keyValues(s string) map[string]string {
	out := map[string]string{}
	for pair := range strings.SplitSeq(s, ",") {
		k, v, ok := strings.Cut(pair, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			continue
		}
		if dec, err := url.PathUnescape(v); err == nil {
			v = dec
		}
		out[k] = strings.TrimSpace(v)
	}
	return out
}

// exportErrors logs the SDK's errors (failed exports), at most one a minute.
func exportErrors(logger *slog.Logger) otel.ErrorHandler {
	var last atomic.Int64
	return otel.ErrorHandlerFunc(func(err error) {
		now := time.Now().UnixNano()
		if prev := last.Load(); now-prev < int64(time.Minute) || !last.CompareAndSwap(prev, now) {
			return
		}
		logger.Warn("traces: the OTLP receiver did not take spans (logged at most once a minute)", "err", err)
	})
}

// stop exports the spans still queued, by the deadline (zero: tracingStopTimeout from now).
func (t *tracing) stop(by time.Time, logger *slog.Logger) {
	if t == nil {
		return
	}
	if by.IsZero() {
		by = time.Now().Add(tracingStopTimeout)
	}
	ctx, cancel := context.WithDeadline(context.Background(), by)
	defer cancel()
	if err := t.provider.Shutdown(ctx); err != nil {
		logger.Warn("traces: the last spans were not all exported", "err", err)
	}
}

// rules is the tracer of the lifecycle and the store engines; nil when tracing is off (an
// interface holding a nil *tracing would not be).
func (t *tracing) rules() rules.Tracer {
	if t == nil {
		return nil
	}
	return spanStarter{t.tracer}
}

// wireTracing spans the requests and the lifecycle; the store engines were given their
// tracer when opened (open), the notifications theirs when wired (traceDeliveries,
// traceNotifier).
func (w *wiring) wireTracing() {
	t := w.run.tracing
	if t == nil {
		return
	}
	w.lc.Trace = t.rules()
	w.svc.Trace = t.rules()
	w.deps.Tracing = &api.Tracing{Tracer: t.tracer, Propagator: t.propagator}
}

// traceDeliveries spans each delivery of the given deliverers; as given when tracing is off.
func (w *wiring) traceDeliveries(ds map[string]rules.Deliverer) map[string]rules.Deliverer {
	t := w.run.tracing
	if t == nil {
		return ds
	}
	out := make(map[string]rules.Deliverer, len(ds))
	for kind, d := range ds {
		out[kind] = tracedDeliverer{next: d, tracer: t.tracer}
	}
	return out
}

// traceNotifier makes each merchant notification carry the traceparent of its delivery's
// span, and its client tell that span the status it was answered; nothing when tracing is
// off.
func (w *wiring) traceNotifier(n *notify.Notifier) {
	t := w.run.tracing
	if t == nil {
		return
	}
	n.TraceContext = func(ctx context.Context, headers map[string]string) {
		t.propagator.Inject(ctx, propagation.MapCarrier(headers))
	}
	client := *n.Client
	client.Transport = answerTransport{next: n.Client.Transport}
	n.Client = &client
}

// spanStarter is rules.Tracer over OpenTelemetry.
type spanStarter struct{ tracer trace.Tracer }

func (s spanStarter) Start(ctx context.Context, name string, attrs ...slog.Attr) (context.Context, rules.Span) {
	ctx, span := s.tracer.Start(ctx, name, trace.WithAttributes(otelAttributes(attrs)...))
	return ctx, ruleSpan{span}
}

// Traceparent is the W3C traceparent of ctx's span, written by the W3C propagator whatever
// propagators the requests are read with, so that what is stored has one format.
func (spanStarter) Traceparent(ctx context.Context) string {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ""
	}
	carrier := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, carrier)
	return carrier.Get(traceparentHeader)
}

func (spanStarter) Resume(ctx context.Context, traceparent string) context.Context {
	return resumeTrace(ctx, traceparent)
}

const traceparentHeader = "traceparent"

// resumeTrace is ctx with the span traceparent names (stored with a payout or an event) as its
// remote parent; ctx when traceparent is empty or malformed.
func resumeTrace(ctx context.Context, traceparent string) context.Context {
	if traceparent == "" {
		return ctx
	}
	sc := trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(),
		propagation.MapCarrier{traceparentHeader: traceparent}))
	if !sc.IsValid() {
		return ctx
	}
	return trace.ContextWithRemoteSpanContext(ctx, sc)
}

// ruleSpan is rules.Span over OpenTelemetry.
type ruleSpan struct{ span trace.Span }

func (s ruleSpan) Set(attrs ...slog.Attr) { s.span.SetAttributes(otelAttributes(attrs)...) }

func (s ruleSpan) Link(ctx context.Context) {
	if ctx == nil {
		return
	}
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		s.span.AddLink(trace.Link{SpanContext: sc})
	}
}

func (s ruleSpan) End(err error) {
	if err != nil {
		s.span.SetStatus(codes.Error, err.Error())
	}
	s.span.End()
}

func otelAttributes(attrs []slog.Attr) []attribute.KeyValue {
	out := make([]attribute.KeyValue, 0, len(attrs))
	for _, a := range attrs {
		v := a.Value.Resolve()
		switch v.Kind() {
		case slog.KindString:
			out = append(out, attribute.String(a.Key, v.String()))
		case slog.KindInt64:
			out = append(out, attribute.Int64(a.Key, v.Int64()))
		case slog.KindUint64:
			out = append(out, attribute.Int64(a.Key, int64(v.Uint64())))
		case slog.KindBool:
			out = append(out, attribute.Bool(a.Key, v.Bool()))
		case slog.KindFloat64:
			out = append(out, attribute.Float64(a.Key, v.Float64()))
		default:
			out = append(out, attribute.String(a.Key, v.String()))
		}
	}
	return out
}

// Attribute keys of the delivery spans.
const (
	attrEventKind   = attribute.Key("event.kind")
	attrEventID     = attribute.Key("event.id")
	attrAttempt     = attribute.Key("notification.attempt")
	attrMerchantID  = attribute.Key("merchant.id")
	attrPayoutID    = attribute.Key(rules.AttrPayoutID)
	attrStatusCode  = attribute.Key("http.response.status_code")
	attrStatusClass = attribute.Key("http.response.status_class")
)

// tracedDeliverer spans each delivery of an outbox event: its kind, its attempt (1 for the
// first), its merchant and payout, and, when it went over HTTP, the status of the answer.
// Never its body, its signature or the URL, which may carry the merchant's token. An event of
// a payout created by a traced request is delivered in that request's trace.
type tracedDeliverer struct {
	next   rules.Deliverer
	tracer trace.Tracer
}

// deliveryAnswer is where answerTransport leaves the status of a delivery's answer for its
// span; the delivery and its requests run in one goroutine.
type deliveryAnswer struct{ status int }

type deliveryAnswerKey struct{}

func (d tracedDeliverer) Deliver(ctx context.Context, ev rules.Event) error {
	return traceDelivery(resumeTrace(ctx, ev.Traceparent), d.tracer, "notification.deliver", func(ctx context.Context) error { return d.next.Deliver(ctx, ev) },
		attrEventKind.String(ev.Kind), attrEventID.String(ev.ID), attrAttempt.Int(ev.Attempts+1),
		attrMerchantID.String(ev.MerchantID), attrPayoutID.Int64(ev.PayoutID))
}

// queuedResend is a resend a request asked for, with that request's span context (invalid
// when traces are not exported).
type queuedResend struct {
	event rules.LoggedEvent
	from  trace.SpanContext
}

// traceResend spans a resend (notification.resend) as a child of the request that asked for
// it: the request's trace shows the delivery, whose traceparent the merchant receives. When
// traces are not exported it only runs resend.
func (w *wiring) traceResend(ctx context.Context, r queuedResend, resend func(context.Context) error) error {
	t := w.run.tracing
	if t == nil {
		return resend(ctx)
	}
	ev := r.event
	return traceDelivery(trace.ContextWithSpanContext(ctx, r.from), t.tracer, "notification.resend", resend,
		attrEventKind.String(rules.EventMerchantNotification), attrEventID.String(ev.ID),
		attrAttempt.Int(len(ev.Attempts)+1), attrMerchantID.String(ev.MerchantID), attrPayoutID.Int64(ev.PayoutID))
}

// traceDelivery runs deliver in a client span named name, which it tells the status the
// delivery's request was answered (answerTransport), and why it failed, if it did.
func traceDelivery(ctx context.Context, tracer trace.Tracer, name string, deliver func(context.Context) error, attrs ...attribute.KeyValue) error {
	ctx, span := tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	answer := &deliveryAnswer{}
	err := deliver(context.WithValue(ctx, deliveryAnswerKey{}, answer))
	if answer.status != 0 {
		span.SetAttributes(attrStatusCode.Int(answer.status), attrStatusClass.String(fmt.Sprintf("%dxx", answer.status/100)))
	}
	if err != nil {
		span.SetStatus(codes.Error, deliveryFailure(err, answer.status))
	}
	span.End()
	return err
}

// deliveryFailure says why a delivery failed without the error's text, which may quote
// the receiver.
func deliveryFailure(err error, status int) string {
	switch {
	case status != 0:
		return fmt.Sprintf("answered %d", status)
	case errors.Is(err, context.DeadlineExceeded):
		return "timed out"
	case rules.IsPermanent(err):
		return "permanent failure"
	}
	return "not delivered"
}

// answerTransport is the notification client's transport with tracing: it tells the
// delivery the status its request was answered.
type answerTransport struct{ next http.RoundTripper }

func (t answerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	next := t.next
	if next == nil {
		next = http.DefaultTransport
	}
	resp, err := next.RoundTrip(req)
	if a, ok := req.Context().Value(deliveryAnswerKey{}).(*deliveryAnswer); ok && err == nil {
		a.status = resp.StatusCode
	}
	return resp, err
}
