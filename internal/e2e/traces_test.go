package e2e

// OpenTelemetry traces, as an operator's collector receives them: an OTLP/HTTP receiver in
// the test decodes what the server exports (protobuf) and the tests follow one payout
// across its request, its store writes, its rail calls and its notification.

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// otlpReceiver is an OTLP/HTTP receiver of traces: it keeps every span it is sent, the
// raw bodies (to search for secrets) and the headers of each export. Anything but a POST
// to /v1/traces is answered 404, so the contract checker finds no document here.
type otlpReceiver struct {
	*httptest.Server
	mu      sync.Mutex
	spans   []*tracepb.Span
	res     []map[string]string // the resource of each export
	bodies  [][]byte
	headers []http.Header
}

func newOTLPReceiver(t testing.TB) *otlpReceiver {
	r := &otlpReceiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.Close)
	return r
}

func (r *otlpReceiver) serve(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" {
		http.NotFound(w, req)
		return
	}
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	raw, err := io.ReadAll(body)
	var export coltracepb.ExportTraceServiceRequest
	if err == nil {
		err = proto.Unmarshal(raw, &export)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.bodies = append(r.bodies, raw)
	r.headers = append(r.headers, req.Header.Clone())
	for _, rs := range export.ResourceSpans {
		res := map[string]string{}
		for _, kv := range rs.GetResource().GetAttributes() {
			res[kv.Key] = anyValue(kv.Value)
		}
		r.res = append(r.res, res)
		for _, ss := range rs.ScopeSpans {
			r.spans = append(r.spans, ss.Spans...)
		}
	}
	r.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(out)
}

// received is what the receiver got so far.
func (r *otlpReceiver) received() (spans []*tracepb.Span, resources []map[string]string, bodies [][]byte, headers []http.Header) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append(spans, r.spans...), append(resources, r.res...), append(bodies, r.bodies...), append(headers, r.headers...)
}

// anyValue is an attribute's value as text, whatever its type.
func anyValue(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return fmt.Sprint(x.IntValue)
	case *commonpb.AnyValue_BoolValue:
		return fmt.Sprint(x.BoolValue)
	case *commonpb.AnyValue_DoubleValue:
		return fmt.Sprint(x.DoubleValue)
	case *commonpb.AnyValue_BytesValue:
		return string(x.BytesValue)
	case *commonpb.AnyValue_ArrayValue:
		var parts []string
		for _, e := range x.ArrayValue.GetValues() {
			parts = append(parts, anyValue(e))
		}
		return strings.Join(parts, ",")
	case *commonpb.AnyValue_KvlistValue:
		var parts []string
		for _, kv := range x.KvlistValue.GetValues() {
			parts = append(parts, kv.Key+"="+anyValue(kv.Value))
		}
		return strings.Join(parts, ",")
	}
	return ""
}

func attr(s *tracepb.Span, key string) string {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return anyValue(kv.Value)
		}
	}
	return ""
}

// allAttributeValues are the values of every attribute of s: its own, its events' and its
// links'.
func allAttributeValues(s *tracepb.Span) []string {
	var out []string
	add := func(kvs []*commonpb.KeyValue) {
		for _, kv := range kvs {
			out = append(out, kv.Key+"="+anyValue(kv.Value))
		}
	}
	add(s.Attributes)
	for _, e := range s.Events {
		add(e.Attributes)
	}
	for _, l := range s.Links {
		add(l.Attributes)
	}
	return append(out, s.Name, s.GetStatus().GetMessage())
}

func spanID(b []byte) string { return hex.EncodeToString(b) }

// traceHook is a merchant's notification endpoint that keeps the traceparent of every
// notification it is sent, and accepts it.
type traceHook struct {
	mu           sync.Mutex
	traceparents []string
}

func (h *traceHook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	io.Copy(io.Discard, r.Body)
	h.mu.Lock()
	h.traceparents = append(h.traceparents, r.Header.Get("traceparent"))
	h.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

func (h *traceHook) received() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.traceparents...)
}

// accessLine is one line of the access log.
type accessLine struct {
	Msg       string `json:"msg"`
	Method    string `json:"method"`
	Path      string `json:"path"`
	Route     string `json:"route"`
	Status    int    `json:"status"`
	RequestID string `json:"request_id"`
	TraceID   string `json:"trace_id"`
}

// accessLines are the access log's lines of route (all routes when "").
func accessLines(t testing.TB, log, route string) []accessLine {
	t.Helper()
	var out []accessLine
	sc := bufio.NewScanner(strings.NewReader(log))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line accessLine
		if json.Unmarshal(sc.Bytes(), &line) != nil || line.Msg != "request" {
			continue
		}
		if route == "" || line.Route == route {
			out = append(out, line)
		}
	}
	return out
}

// accessLogIDs are the request ids of the access log lines of route (all routes when "").
func accessLogIDs(t testing.TB, log, route string) []string {
	t.Helper()
	var ids []string
	for _, l := range accessLines(t, log, route) {
		ids = append(ids, l.RequestID)
	}
	return ids
}

// accessLogTraceIDs are the trace ids of the access log lines of route (all routes when "").
func accessLogTraceIDs(t testing.TB, log, route string) []string {
	t.Helper()
	var ids []string
	for _, l := range accessLines(t, log, route) {
		ids = append(ids, l.TraceID)
	}
	return ids
}

// A payout created with an incoming traceparent, settled by the simulated rail and notified
// to a local receiver, followed in the spans the server exports: the request continues the
// caller's trace and its id is the access log's request id; the create's store write is a
// child of the request, linked both ways to the group commit that carried it; the rail's
// submit and outcome, with the payout's id, and the notification's delivery are children of
// the create's span, each rail call linked to the lifecycle round that made it; the delivery
// carries its own span's traceparent to the merchant, and to the sandbox inbox of another;
// a resend the merchant asks for is a span of its request's trace, whose traceparent the
// merchant receives with it. No attribute holds a secret.
func TestTracesFollowAPayoutAcrossRequestStoreRailAndNotification(t *testing.T) {
	t.Parallel()
	otlp := newOTLPReceiver(t)
	hook := &traceHook{}
	receiver := httptest.NewServer(hook)
	defer receiver.Close()
	s := startServer(t, "", "--otlp-endpoint", otlp.URL, "--allow-private-notification-urls")
	c := s.newMerchant(t, map[string]any{"notificationUrl": receiver.URL + "/hooks/payouts"})
	inboxed := s.newMerchant(t, map[string]any{"notificationUrl": "sandbox:inbox"})

	const callerTrace, callerSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	body, _ := json.Marshal(perBankRequest("trace-1"))
	req := c.request("POST", "payouts", body, "")
	signature := req.URL.Query().Get("signature")
	req.Header.Set("traceparent", "00-"+callerTrace+"-"+callerSpan+"-01")
	resp, err := c.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 201 {
		t.Fatalf("create: %d %s", resp.StatusCode, raw)
	}
	id := decodePayout(t, raw).Payout.ID
	inboxID := inboxed.create(t, perBankRequest("trace-2")).Payout.ID
	c.waitStage(t, id, "SUCCESS", 15*time.Second)
	// Each delivery is waited for until its attempt is logged, which is after its answer was
	// read: the hook holding the request is earlier, and the server stopped then would end the
	// delivery's span without the answer's status.
	eventID := fmt.Sprintf("merchant.notification.%d.PROCESSED", id)
	attempts := func() int { // 0 until the event is logged, with its first attempt
		var e eventAnswer
		code, _, raw := c.do(t, "GET", "events/"+eventID, nil, "")
		if code != 200 || json.Unmarshal(raw, &e) != nil {
			return 0
		}
		return len(e.Attempts)
	}
	waitFor(t, "the notification", 15*time.Second, func() bool { return attempts() == 1 })
	waitFor(t, "the inbox's notification", 15*time.Second, func() bool { return len(inboxed.inbox(t).Items) > 0 })
	inboxTraceparent := inboxed.inbox(t).Items[0].Headers["traceparent"]

	const resendTrace, resendSpan = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	req = c.request("POST", "events/"+eventID+"/resend", nil, "")
	req.Header.Set("traceparent", "00-"+resendTrace+"-"+resendSpan+"-01")
	resp, err = c.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 202 {
		t.Fatalf("resend: %d %s", resp.StatusCode, raw)
	}
	waitFor(t, "the resent notification", 15*time.Second, func() bool { return attempts() == 2 })
	s.Stop(t) // exports what is still queued
	spans, resources, bodies, _ := otlp.received()
	if len(spans) == 0 {
		t.Fatal("the receiver got no span")
	}
	for _, res := range resources {
		if res["service.name"] != "payouts" {
			t.Errorf("resource service.name = %q, want payouts", res["service.name"])
		}
	}
	byID := map[string]*tracepb.Span{}
	for _, sp := range spans {
		byID[spanID(sp.SpanId)] = sp
	}
	named := func(name string, keep func(*tracepb.Span) bool) []*tracepb.Span {
		var out []*tracepb.Span
		for _, sp := range spans {
			if sp.Name == name && (keep == nil || keep(sp)) {
				out = append(out, sp)
			}
		}
		return out
	}
	ofPayout := func(sp *tracepb.Span) bool { return attr(sp, "payout.id") == fmt.Sprint(id) }
	childOf := func(sp, parent *tracepb.Span) bool {
		return bytes.Equal(sp.TraceId, parent.TraceId) && bytes.Equal(sp.ParentSpanId, parent.SpanId)
	}

	// The request continues the caller's trace, whose id the access log has beside its own
	// request id.
	creates := named("POST /api/v1/{merchantId}/payouts", ofPayout)
	if len(creates) != 1 {
		t.Fatalf("%d spans of the create request, want 1", len(creates))
	}
	create := creates[0]
	if spanID(create.TraceId) != callerTrace || spanID(create.ParentSpanId) != callerSpan {
		t.Errorf("the create's span is in trace %x under %x; want the caller's %s under %s", create.TraceId, create.ParentSpanId, callerTrace, callerSpan)
	}
	if create.Kind != tracepb.Span_SPAN_KIND_SERVER {
		t.Errorf("the create's span is of kind %v, want server", create.Kind)
	}
	for k, want := range map[string]string{"http.request.method": "POST", "http.route": "/api/v1/{merchantId}/payouts",
		"http.response.status_code": "201", "merchant.id": c.MerchantID, "payout.id": fmt.Sprint(id)} {
		if got := attr(create, k); got != want {
			t.Errorf("the create's span: %s = %q, want %q", k, got, want)
		}
	}
	if ids := accessLogTraceIDs(t, s.Stderr.String(), "/api/v1/{merchantId}/payouts"); !slices.Contains(ids, callerTrace) {
		t.Errorf("the creates' trace ids in the access log are %v, none the caller's trace id %s", ids, callerTrace)
	}
	if ids := accessLogIDs(t, s.Stderr.String(), ""); slices.Contains(ids, callerTrace) || slices.Contains(ids, resendTrace) {
		t.Errorf("a request id of the access log is a caller's trace id: %v", ids)
	}
	logged := map[string]bool{}
	for _, tid := range accessLogTraceIDs(t, s.Stderr.String(), "") {
		logged[tid] = true
	}
	for _, sp := range spans {
		if sp.Kind == tracepb.Span_SPAN_KIND_SERVER && !logged[spanID(sp.TraceId)] {
			t.Errorf("request span %q: its trace id %x is no trace id of the access log", sp.Name, sp.TraceId)
		}
	}

	// The create's write waited in the request, for a group commit that links to it.
	writes := named("store.write", func(sp *tracepb.Span) bool { return childOf(sp, create) })
	if len(writes) != 1 {
		t.Fatalf("%d store.write spans under the create, want 1", len(writes))
	}
	write := writes[0]
	if attr(write, "store.group.size") == "" || len(write.Links) != 1 {
		t.Fatalf("the create's store.write: group size %q, %d links; want a size and its commit", attr(write, "store.group.size"), len(write.Links))
	}
	commit := byID[spanID(write.Links[0].SpanId)]
	if commit == nil || commit.Name != "store.commit" {
		t.Fatalf("the create's store.write links to %v, want a store.commit span", commit)
	}
	if got, want := attr(commit, "store.group.size"), attr(write, "store.group.size"); got != want {
		t.Errorf("the commit's group size %q, the write's %q", got, want)
	}
	linked := false
	for _, l := range commit.Links {
		linked = linked || (bytes.Equal(l.SpanId, write.SpanId) && bytes.Equal(l.TraceId, write.TraceId))
	}
	if !linked {
		t.Errorf("the store.commit span does not link to the create's store.write")
	}
	wantSystem := "bbolt"
	if onPostgresTests() {
		wantSystem = "postgresql"
	}
	if got := attr(commit, "db.system.name"); got != wantSystem {
		t.Errorf("the commit's db.system.name = %q, want %q", got, wantSystem)
	}

	// The rail's calls, in the create's trace however much later they ran, each linked to the
	// lifecycle round that made it, which has the round's store write.
	for _, call := range []string{"rail.submit", "rail.outcome"} {
		calls := named(call, ofPayout)
		if len(calls) == 0 {
			t.Errorf("no %s span of payout %d", call, id)
			continue
		}
		for _, sp := range calls {
			if !childOf(sp, create) {
				t.Errorf("%s of payout %d is in trace %x under %x, not a child of its create's span", call, id, sp.TraceId, sp.ParentSpanId)
			}
			var round *tracepb.Span
			if len(sp.Links) == 1 {
				round = byID[spanID(sp.Links[0].SpanId)]
			}
			if round == nil || round.Name != "lifecycle.round" {
				t.Errorf("%s of payout %d links to %v, want its lifecycle.round span", call, id, round)
			} else if len(named("store.write", func(w *tracepb.Span) bool { return childOf(w, round) })) != 1 {
				t.Errorf("the lifecycle round of %s has no store.write span of its own", call)
			}
			if got := attr(sp, "payout.channel"); got == "" {
				t.Errorf("%s has no payout.channel", call)
			}
		}
	}
	settled := named("rail.outcome", func(sp *tracepb.Span) bool {
		return ofPayout(sp) && attr(sp, "rail.settled") == "true" && attr(sp, "payout.status") == "PROCESSED"
	})
	if len(settled) != 1 {
		t.Errorf("%d rail.outcome spans settle payout %d as PROCESSED, want 1", len(settled), id)
	}

	// The notification's delivery, whose span the merchant receives as its parent.
	delivered := named("notification.deliver", func(sp *tracepb.Span) bool {
		return ofPayout(sp) && attr(sp, "event.kind") == "merchant.notification"
	})
	if len(delivered) != 1 {
		t.Fatalf("%d notification.deliver spans of payout %d, want 1", len(delivered), id)
	}
	d := delivered[0]
	if !childOf(d, create) {
		t.Errorf("the delivery's span is in trace %x under %x, not a child of its payout's create", d.TraceId, d.ParentSpanId)
	}
	for k, want := range map[string]string{"notification.attempt": "1", "http.response.status_class": "2xx", "merchant.id": c.MerchantID} {
		if got := attr(d, k); got != want {
			t.Errorf("the delivery's span: %s = %q, want %q", k, got, want)
		}
	}
	if got, want := hook.received()[0], fmt.Sprintf("00-%x-%x-01", d.TraceId, d.SpanId); got != want {
		t.Errorf("the notification's traceparent = %q, want the delivery span's %q", got, want)
	}
	toInbox := named("notification.deliver", func(sp *tracepb.Span) bool {
		return attr(sp, "payout.id") == fmt.Sprint(inboxID) && attr(sp, "event.kind") == "merchant.notification"
	})
	if len(toInbox) != 1 {
		t.Fatalf("%d notification.deliver spans of payout %d to the sandbox inbox, want 1", len(toInbox), inboxID)
	}
	if inboxCreates := named("POST /api/v1/{merchantId}/payouts", func(sp *tracepb.Span) bool {
		return attr(sp, "payout.id") == fmt.Sprint(inboxID)
	}); len(inboxCreates) != 1 || !childOf(toInbox[0], inboxCreates[0]) {
		t.Errorf("the inbox delivery is not a child of its payout's create (%d create spans)", len(inboxCreates))
	}
	if want := fmt.Sprintf("00-%x-%x-01", toInbox[0].TraceId, toInbox[0].SpanId); inboxTraceparent != want {
		t.Errorf("the inbox's notification has traceparent %q, want its delivery span's %q", inboxTraceparent, want)
	}

	// The resend: a child of the request that asked for it, in the caller's trace.
	resendRequests := named("POST /api/v1/{merchantId}/events/{eventId}/resend", nil)
	resends := named("notification.resend", ofPayout)
	if len(resendRequests) != 1 || len(resends) != 1 {
		t.Fatalf("%d spans of the resend request and %d notification.resend spans of payout %d, want 1 and 1",
			len(resendRequests), len(resends), id)
	}
	asked, resent := resendRequests[0], resends[0]
	if spanID(asked.TraceId) != resendTrace || spanID(asked.ParentSpanId) != resendSpan {
		t.Errorf("the resend request's span is in trace %x under %x; want the caller's %s under %s", asked.TraceId, asked.ParentSpanId, resendTrace, resendSpan)
	}
	if !childOf(resent, asked) {
		t.Errorf("the notification.resend span (trace %x, parent %x) is not a child of its request's span", resent.TraceId, resent.ParentSpanId)
	}
	if resent.Kind != tracepb.Span_SPAN_KIND_CLIENT {
		t.Errorf("the resend's span is of kind %v, want client", resent.Kind)
	}
	for k, want := range map[string]string{"event.id": eventID, "event.kind": "merchant.notification", "notification.attempt": "2",
		"http.response.status_class": "2xx", "merchant.id": c.MerchantID} {
		if got := attr(resent, k); got != want {
			t.Errorf("the resend's span: %s = %q, want %q", k, got, want)
		}
	}
	if got, want := hook.received()[1], fmt.Sprintf("00-%x-%x-01", resent.TraceId, resent.SpanId); got != want {
		t.Errorf("the resent notification's traceparent = %q, want the resend span's %q", got, want)
	}

	// No secret anywhere: not in an attribute, and not in the bytes exported.
	secrets := map[string]string{"API key": c.Key, "API secret": c.Secret, "signature": signature, "admin token": s.AdminToken,
		"document number": "45678912", "account number": "19312345678012", "beneficiary email": "ana.quispe@gmail.com"}
	for what, secret := range secrets {
		for _, sp := range spans {
			for _, v := range allAttributeValues(sp) {
				if strings.Contains(v, secret) {
					t.Errorf("span %q records the %s: %q", sp.Name, what, v)
				}
			}
		}
		for _, b := range bodies {
			if bytes.Contains(b, []byte(secret)) {
				t.Errorf("an export carries the %s", what)
				break
			}
		}
	}
	for _, sp := range spans {
		for _, v := range allAttributeValues(sp) {
			if strings.Contains(v, "signature=") || strings.Contains(v, "timestamp=") {
				t.Errorf("span %q records a query: %q", sp.Name, v)
			}
		}
	}
}

// Tracing is off unless an endpoint is given, by flag or by the standard variables. The
// real binary, whose environment names the receiver (OTEL_EXPORTER_OTLP_ENDPOINT), a
// service name and a header for the collector, exports spans with them; the same binary
// without the variables exports nothing, sends its notifications without traceparent and
// keeps its own request ids.
func TestTracesOnlyWhenAnEndpointIsConfigured(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the binary")
	}
	bin, err := payoutsBinary()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		env  []string
		on   bool
	}{
		{"variables", []string{"OTEL_EXPORTER_OTLP_ENDPOINT={otlp}", "OTEL_SERVICE_NAME=payouts-eu",
			"OTEL_EXPORTER_OTLP_HEADERS=authorization=Bearer%20collector-token"}, true},
		{"nothing", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			otlp := newOTLPReceiver(t)
			hook := &traceHook{}
			receiver := httptest.NewServer(hook)
			defer receiver.Close()
			env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
			for _, e := range tc.env {
				env = append(env, strings.ReplaceAll(e, "{otlp}", otlp.URL))
			}
			dir, token := t.TempDir(), "test-admin-token-0123456789"
			args := append([]string{"serve", "--addr", "127.0.0.1:0", "--data", dir, "--admin-token", token, "--no-demo",
				"--log-format", "json", "--sandbox-delay", "200ms", "--sandbox-batch-delay", "500ms", "--allow-private-notification-urls"}, engineArgs(t, dir, nil)...)
			cmd := exec.Command(bin, args...)
			cmd.Env = env
			stderr := &syncBuffer{}
			stdout, _ := cmd.StdoutPipe()
			cmd.Stderr = stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			stopped := false
			stop := func() {
				if !stopped {
					stopped = true
					cmd.Process.Signal(os.Interrupt)
					cmd.Wait()
				}
			}
			defer stop()
			s := &testServer{AdminToken: token, Stderr: stderr}
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				if m := listenLine.FindStringSubmatch(sc.Text()); m != nil {
					s.URL = m[1]
					break
				}
			}
			if s.URL == "" {
				t.Fatalf("the binary did not start: %s", stderr.String())
			}
			go io.Copy(io.Discard, stdout)
			contract.own(s.URL, t)
			waitFor(t, "ready", 10*time.Second, func() bool {
				resp, err := http.Get(s.URL + "/readyz")
				if err != nil {
					return false
				}
				resp.Body.Close()
				return resp.StatusCode == 200
			})
			c := s.newMerchant(t, map[string]any{"notificationUrl": receiver.URL + "/hooks/payouts"})
			p := c.create(t, perBankRequest("env-1"))
			c.waitStage(t, p.Payout.ID, "SUCCESS", 15*time.Second)
			waitFor(t, "the notification", 15*time.Second, func() bool { return len(hook.received()) > 0 })
			stop()

			spans, resources, _, headers := otlp.received()
			requestIDs := accessLogIDs(t, stderr.String(), "/api/v1/{merchantId}/payouts")
			traceIDs := accessLogTraceIDs(t, stderr.String(), "/api/v1/{merchantId}/payouts")
			if !tc.on {
				if len(headers) != 0 || len(spans) != 0 {
					t.Errorf("without an endpoint the receiver got %d exports (%d spans)", len(headers), len(spans))
				}
				if tp := hook.received()[0]; tp != "" {
					t.Errorf("without tracing the notification carries traceparent %q", tp)
				}
				if len(requestIDs) != 1 || isTraceID(requestIDs[0]) || traceIDs[0] != "" {
					t.Errorf("without tracing the request ids are the server's and no trace id is logged; the create's are %v and %v", requestIDs, traceIDs)
				}
				return
			}
			if len(spans) == 0 {
				t.Fatalf("the receiver got no span:\n%s", stderr.String())
			}
			for _, h := range headers {
				if got := h.Get("Authorization"); got != "Bearer collector-token" {
					t.Errorf("an export's Authorization = %q, want the header of OTEL_EXPORTER_OTLP_HEADERS", got)
				}
			}
			for _, res := range resources {
				if res["service.name"] != "payouts-eu" {
					t.Errorf("resource service.name = %q, want OTEL_SERVICE_NAME's", res["service.name"])
				}
			}
			if tp := hook.received()[0]; !strings.HasPrefix(tp, "00-") {
				t.Errorf("the notification carries traceparent %q", tp)
			}
			if len(requestIDs) != 1 || isTraceID(requestIDs[0]) || !isTraceID(traceIDs[0]) {
				t.Errorf("with tracing the request id is still the server's, the trace id beside it; the create's are %v and %v", requestIDs, traceIDs)
			}
			if strings.Contains(stderr.String(), "collector-token") {
				t.Errorf("the log shows the collector's header")
			}
		})
	}
}

func isTraceID(s string) bool {
	b, err := hex.DecodeString(s)
	return err == nil && len(b) == 16
}

// startBinary runs the binary (payoutsBinary) with env (and PATH, HOME) and args after the usual ones,
// and waits until it is ready; stop ends it (interrupt, as Ctrl-C) and is called at the end of
// the test if the test did not.
func startBinary(t *testing.T, env []string, args ...string) (s *testServer, stop func()) {
	t.Helper()
	bin, err := payoutsBinary()
	if err != nil {
		t.Fatal(err)
	}
	dir, token := t.TempDir(), "test-admin-token-0123456789"
	all := append([]string{"serve", "--addr", "127.0.0.1:0", "--data", dir, "--admin-token", token, "--no-demo",
		"--log-format", "json", "--sandbox-delay", "200ms", "--sandbox-batch-delay", "500ms"}, args...)
	cmd := exec.Command(bin, append(all, engineArgs(t, dir, nil)...)...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
	stderr := &syncBuffer{}
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			cmd.Process.Signal(os.Interrupt)
			cmd.Wait()
		}
	}
	t.Cleanup(stop)
	s = &testServer{AdminToken: token, Stderr: stderr, Data: dir}
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if m := listenLine.FindStringSubmatch(sc.Text()); m != nil {
			s.URL = m[1]
			break
		}
	}
	if s.URL == "" {
		t.Fatalf("the binary did not start: %s", stderr.String())
	}
	go io.Copy(io.Discard, stdout)
	contract.own(s.URL, t)
	waitFor(t, "ready", 10*time.Second, func() bool {
		resp, err := http.Get(s.URL + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
	return s, stop
}

// A caller decides neither the request ids of the server's log nor what the server exports.
// With a sampler ratio of 0, twenty unauthenticated requests carrying one sampled traceparent
// and one X-Request-Id are not exported, and each is logged under a request id of the
// server's own, with the caller's trace id in a field of its own; an authenticated request
// with the same traceparent is not exported either (the ratio decides for every caller). With
// the default sampler, the same requests are exported in the caller's trace.
func TestTracesCallerChoosesNeitherRequestIDNorSampling(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the binary")
	}
	const callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	for _, tc := range []struct {
		name    string
		env     []string
		exports bool
	}{
		{"ratio 0", []string{"OTEL_TRACES_SAMPLER=parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG=0"}, false},
		{"default", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			otlp := newOTLPReceiver(t)
			s, stop := startBinary(t, append([]string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + otlp.URL}, tc.env...))
			c := s.newMerchant(t, map[string]any{})
			for i := range 20 {
				req, _ := http.NewRequest("GET", s.URL+"/api/v1/"+c.MerchantID+"/payouts/1", nil)
				req.Header.Set("traceparent", fmt.Sprintf("00-%s-%016x-01", callerTrace, i+1))
				req.Header.Set("X-Request-Id", "chosen-by-the-caller")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusUnauthorized {
					t.Fatalf("an unsigned request: %d, want 401", resp.StatusCode)
				}
			}
			req := c.request("GET", "balance", nil, "")
			req.Header.Set("traceparent", "00-"+callerTrace+"-00000000000000ff-01")
			if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
				t.Fatalf("a signed request: %v %v", err, resp)
			} else {
				resp.Body.Close()
			}
			stop()

			lines := accessLines(t, s.Stderr.String(), "/api/v1/{merchantId}/payouts/{id}")
			ids := map[string]bool{}
			for _, l := range lines {
				ids[l.RequestID] = true
				if l.RequestID == callerTrace || l.RequestID == "chosen-by-the-caller" || l.TraceID != callerTrace {
					t.Errorf("access log: request_id %q, trace_id %q; want the server's own id and the caller's trace id %s", l.RequestID, l.TraceID, callerTrace)
				}
			}
			if len(lines) != 20 || len(ids) != 20 {
				t.Errorf("%d access log lines of the refused route under %d request ids, want 20 under 20", len(lines), len(ids))
			}
			spans, _, _, _ := otlp.received()
			var callers int
			for _, sp := range spans {
				if spanID(sp.TraceId) == callerTrace {
					callers++
				}
			}
			if !tc.exports && len(spans) != 0 {
				t.Errorf("with a ratio of 0 the server exported %d spans (%d in the caller's trace)", len(spans), callers)
			}
			if tc.exports && callers != 21 {
				t.Errorf("with the default sampler %d spans are in the caller's trace, want 21", callers)
			}
		})
	}
}

// A request refused before routing (a wrong signature, an unsigned one) keeps the route it
// asked for, and its path, in the access log, the metrics and its span: an operator sees
// which endpoint the 401s hit.
func TestRefusedRequestsKeepTheirRouteInLogMetricsAndSpan(t *testing.T) {
	t.Parallel()
	otlp := newOTLPReceiver(t)
	s := startServer(t, "", "--otlp-endpoint", otlp.URL)
	c := s.newMerchant(t, map[string]any{})
	wrong := c.with(func(c *merchantClient) { c.Secret = "bm90IHRoZSBzZWNyZXQgb2YgdGhpcyBtZXJjaGFudCE=" })
	if code, _, raw := wrong.do(t, "POST", "payouts", perBankRequest("refused-1"), ""); code != 401 {
		t.Fatalf("a wrong signature: %d %s", code, raw)
	}
	const route = "/api/v1/{merchantId}/payouts"
	path := "/api/v1/" + c.MerchantID + "/payouts"
	if v := s.mustMetric(t, `payouts_http_requests_total{route="POST `+route+`",status="401"}`); v != 1 {
		t.Errorf("the refused create is counted %v times under its route, want 1", v)
	}
	s.Stop(t)
	lines := accessLines(t, s.Stderr.String(), route)
	if len(lines) != 1 || lines[0].Status != 401 || lines[0].Path != path {
		t.Errorf("the access log of the refused create: %+v, want one line with route %s and path %s", lines, route, path)
	}
	if n := len(accessLines(t, s.Stderr.String(), "unmatched")); n != 0 {
		t.Errorf("%d requests logged as unmatched", n)
	}
	spans, _, _, _ := otlp.received()
	var found bool
	for _, sp := range spans {
		if sp.Name == "POST "+route && attr(sp, "http.response.status_code") == "401" {
			found = true
			if attr(sp, "http.route") != route || attr(sp, "url.path") != path {
				t.Errorf("the refused create's span: http.route %q, url.path %q; want %s and %s", attr(sp, "http.route"), attr(sp, "url.path"), route, path)
			}
		}
	}
	if !found {
		t.Errorf("no span of the refused create named POST %s", route)
	}
}
