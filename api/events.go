package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/go-chi/chi/v5"

	"payouts/rules"
)

// Events are the operations over the event log: the merchant's events (kept,
// read and resent; also outside the sandbox), the sandbox inbox, the event stream that
// `payouts listen` follows, and the admin's delivery chaos.
type Events struct {
	Log     rules.EventLog
	Sandbox bool
	// Headers are the headers a delivery of the event carries (the signature among them).
	Headers func(merchantID, eventID string, body []byte) (map[string]string, error)
	// Resend queues one more delivery of a logged event; an error is the refusal.
	Resend func(ctx context.Context, e rules.LoggedEvent) error
	// Merchant reads a merchant (rules.ErrNotFound when there is none), for the admin API.
	Merchant func(ctx context.Context, id string) (*rules.Merchant, error)
	Streams  *EventStreams
}

// extension marks this project's own operations in the OpenAPI document.
var extension = map[string]any{"x-payouts-extension": true}

// DeliveryAttemptView is one delivery attempt on the wire.
type DeliveryAttemptView struct {
	At         string `json:"at" example:"2026-11-25T10:15:02.123Z" doc:"When the attempt started"`
	Status     int    `json:"status,omitempty" example:"200" doc:"The HTTP status the receiver answered; absent when none came"`
	Error      string `json:"error,omitempty" example:"the notificationUrl of merchant 1 could not be reached: name not found" doc:"Why it did not count as delivered: the class of the failure (name not found, connection refused, timed out, a TLS failure, HTTP status N), never the server's own network details"`
	DurationMS int64  `json:"durationMs" example:"42"`
	Cause      string `json:"cause,omitempty" enum:"resend,chaos-duplicate,chaos-fail-first" doc:"Why the attempt was made, when not the dispatcher's own try"`
}

// EventView is a logged event on the wire.
type EventView struct {
	EventID     string                `json:"eventId" example:"merchant.notification.1042.PROCESSED" doc:"The event id: the Idempotency-Key header of every delivery; the kind, then the payout (or b and the batch) and the status, joined by dots (events logged before joined them with ':')"`
	Cursor      string                `json:"cursor" example:"17" doc:"The event's place in the log: pass it as after to list the events after it"`
	Type        string                `json:"type" example:"payout.PROCESSED" doc:"payout. and the status the notification announces"`
	PayoutID    int64                 `json:"payoutId" example:"1042"`
	CreatedAt   string                `json:"createdAt" example:"2026-11-25T10:15:02Z"`
	DeliveredAt *string               `json:"deliveredAt" doc:"The first delivery a receiver accepted (2xx); null until then"`
	Body        *string               `json:"body,omitempty" doc:"The exact body sent (only in GET …/events/{eventId})"`
	Attempts    []DeliveryAttemptView `json:"attempts"`
}

func eventView(e rules.LoggedEvent, withBody bool) EventView {
	v := EventView{EventID: e.ID, Cursor: strconv.FormatInt(e.Seq, 10), Type: e.Type, PayoutID: e.PayoutID,
		CreatedAt: wireTime(e.CreatedAt), Attempts: make([]DeliveryAttemptView, 0, len(e.Attempts))}
	if !e.DeliveredAt.IsZero() {
		s := wireTime(e.DeliveredAt)
		v.DeliveredAt = &s
	}
	if withBody {
		s := string(e.Body)
		v.Body = &s
	}
	for _, a := range e.Attempts {
		v.Attempts = append(v.Attempts, DeliveryAttemptView{At: wireTime(a.At), Status: a.Status, Error: rules.PublicAttemptError(a.Error),
			DurationMS: a.Duration.Milliseconds(), Cause: a.Cause})
	}
	return v
}

// InboxItemView is what the sandbox inbox received.
type InboxItemView struct {
	EventID        string            `json:"eventId" example:"merchant.notification.1042.PROCESSED"`
	ReceivedAt     string            `json:"receivedAt" example:"2026-11-25T10:15:02Z"`
	Headers        map[string]string `json:"headers" doc:"The delivery's headers: Content-Type, verification (the signature), User-Agent, Idempotency-Key, and traceparent when the server exports traces"`
	Body           string            `json:"body" example:"{\"payout\":{\"Id\":\"1042\"},\"output\":{\"stage\":\"SUCCESS\"}}" doc:"The exact body received"`
	SignatureValid bool              `json:"signatureValid" example:"true" doc:"The verification header checked against merchantId + body with the key served at /api/v1/notifications/public-key, as a merchant does"`
}

// DeliveryChaosView is a merchant's delivery chaos on the wire.
type DeliveryChaosView struct {
	Enabled   bool    `json:"enabled" doc:"false: deliveries behave"`
	Duplicate float64 `json:"duplicate" example:"0.2" doc:"The share of deliveries sent twice, with the same event id"`
	Reorder   bool    `json:"reorder" example:"true" doc:"Each delivery waits a random 0–3 s first, so later events overtake earlier ones"`
	Delay     string  `json:"delay" example:"2s" doc:"Every delivery waits this long first"`
	FailFirst int     `json:"failFirst" example:"2" doc:"The first N attempts of each event are sent but counted as failed, so the receiver sees the event N+1 times"`
}

func chaosView(c rules.DeliveryChaos, on bool) DeliveryChaosView {
	return DeliveryChaosView{Enabled: on, Duplicate: c.Duplicate, Reorder: c.Reorder, Delay: c.Delay.String(), FailFirst: c.FailFirst}
}

const eventsDoc = "This project's extension, not in the original API. Every merchant notification the server tried is kept " +
	"for at least 30 days with the exact body sent and each delivery attempt (time, HTTP status or error, duration), " +
	"also outside the sandbox. Events enter the log at their first attempt."

// registerEvents adds the event operations and the event stream.
func registerEvents(r chi.Router, a huma.API, ev Events) {
	type listIn struct {
		MerchantID string `path:"merchantId"`
		After      string `query:"after" doc:"A cursor (an event's cursor, or the previous page's nextCursor): only the events after it" example:"17"`
		Limit      int    `query:"limit" minimum:"1" maximum:"200" default:"50"`
		Type       string `query:"type" doc:"Only events of this type" example:"payout.PROCESSED"`
		PayoutID   int64  `query:"payoutId" minimum:"0" doc:"Only the events of this payout" example:"1042"`
	}
	type listOut struct {
		Body struct {
			Items      []EventView `json:"items"`
			NextCursor *string     `json:"nextCursor" doc:"Pass as after for the next page; null on the last page"`
		}
	}
	huma.Register(a, huma.Operation{
		OperationID: "list-events", Method: http.MethodGet, Path: "/api/v1/{merchantId}/events",
		Summary: "List the merchant's notification events, oldest first (this project's extension)", Description: eventsDoc +
			" Newest last: page forward with after=nextCursor; a poller keeps the last cursor and asks for what came after it.",
		Tags: []string{"Events"}, Security: signedSecurity, Errors: []int{400, 401}, Extensions: extension,
	}, func(ctx context.Context, in *listIn) (*listOut, error) {
		q := rules.EventQuery{Limit: in.Limit, Type: in.Type, PayoutID: in.PayoutID}
		if in.After != "" {
			n, err := strconv.ParseInt(in.After, 10, 64)
			if err != nil || n < 0 {
				return nil, &rules.Error{Kind: rules.KindInvalid, Code: rules.CodeQueryParam, Field: "query.after",
					Message: "not a cursor of this API", Value: in.After}
			}
			q.After = n
		}
		es, err := ev.Log.LoggedEvents(ctx, merchantFrom(ctx).ID, q)
		if err != nil {
			return nil, err
		}
		out := &listOut{}
		out.Body.Items = make([]EventView, 0, len(es))
		for _, e := range es {
			out.Body.Items = append(out.Body.Items, eventView(e, false))
		}
		if len(es) == q.Limit {
			c := strconv.FormatInt(es[len(es)-1].Seq, 10)
			out.Body.NextCursor = &c
		}
		return out, nil
	})

	type oneIn struct {
		MerchantID string `path:"merchantId"`
		EventID    string `path:"eventId" example:"merchant.notification.1042.PROCESSED" doc:"The event's id (eventId of the event log, the Idempotency-Key of its deliveries). An id is letters, digits, dots, hyphens and underscores, which a path carries unencoded; an older id holding ':' is found sent as it is or percent-encoded (%3A), and the request is signed over the path as sent"`
	}
	type oneOut struct {
		Body EventView
	}
	find := func(ctx context.Context, id string) (rules.LoggedEvent, error) {
		e, err := ev.Log.LoggedEvent(ctx, merchantFrom(ctx).ID, id)
		if errors.Is(err, rules.ErrNotFound) {
			return e, rules.Errorf(rules.KindNotFound, rules.CodeEventNotFound, "no event %s (events are kept 30 days)", id)
		}
		return e, err
	}
	huma.Register(a, huma.Operation{
		OperationID: "get-event", Method: http.MethodGet, Path: "/api/v1/{merchantId}/events/{eventId}",
		Summary: "One event with the exact body sent and every delivery attempt (this project's extension)", Description: eventsDoc,
		Tags: []string{"Events"}, Security: signedSecurity, Errors: []int{401, 404}, Extensions: extension,
	}, func(ctx context.Context, in *oneIn) (*oneOut, error) {
		e, err := find(ctx, in.EventID)
		if err != nil {
			return nil, err
		}
		return &oneOut{Body: eventView(e, true)}, nil
	})

	type resendOut struct {
		Status int
		Body   struct {
			EventID string `json:"eventId" example:"merchant.notification.1042.PROCESSED"`
			Status  string `json:"status" example:"queued" doc:"The attempt is made at once, in the background; read the event to see it"`
		}
	}
	huma.Register(a, huma.Operation{
		OperationID: "resend-event", Method: http.MethodPost, Path: "/api/v1/{merchantId}/events/{eventId}/resend",
		Summary: "Deliver an event again (this project's extension)", Description: eventsDoc +
			" 202: one more attempt, with the same event id, body and signature, to the merchant's current notificationUrl; " +
			"it is added to the event's attempts with cause resend and is not retried. 409 (" + rules.CodeNoDeliveryURL +
			") when the merchant has no notificationUrl.",
		Tags: []string{"Events"}, Security: signedSecurity, Errors: []int{401, 404, 409, 429}, Extensions: extension,
		DefaultStatus: http.StatusAccepted,
	}, func(ctx context.Context, in *oneIn) (*resendOut, error) {
		e, err := find(ctx, in.EventID)
		if err != nil {
			return nil, err
		}
		if err := ev.Resend(ctx, e); err != nil {
			return nil, err
		}
		out := &resendOut{Status: http.StatusAccepted}
		out.Body.EventID, out.Body.Status = e.ID, "queued"
		return out, nil
	})

	type inboxIn struct {
		MerchantID string `path:"merchantId"`
		Limit      int    `query:"limit" minimum:"1" maximum:"200" default:"50"`
	}
	type inboxOut struct {
		Body struct {
			Items []InboxItemView `json:"items"`
		}
	}
	huma.Register(a, huma.Operation{
		OperationID: "sandbox-inbox", Method: http.MethodGet, Path: "/api/v1/{merchantId}/sandbox/inbox",
		Summary: "The sandbox's built-in webhook inbox, newest first (this project's extension, sandbox only)",
		Description: "A merchant whose notificationUrl is " + rules.SandboxInboxURL + " has its notifications delivered by the " +
			"real dispatcher, signed as always, to this inbox; each item says whether its signature verifies with the served public key. " +
			"Kept 30 days. 403 (" + rules.CodeSandboxOff + ") with --sandbox=false.",
		Tags: []string{"Sandbox"}, Security: signedSecurity, Errors: []int{401, 403}, Extensions: extension,
	}, func(ctx context.Context, in *inboxIn) (*inboxOut, error) {
		if !ev.Sandbox {
			return nil, sandboxOff()
		}
		items, err := ev.Log.InboxItems(ctx, merchantFrom(ctx).ID, in.Limit)
		if err != nil {
			return nil, err
		}
		out := &inboxOut{}
		out.Body.Items = make([]InboxItemView, 0, len(items))
		for _, it := range items {
			out.Body.Items = append(out.Body.Items, InboxItemView{EventID: it.EventID, ReceivedAt: wireTime(it.ReceivedAt),
				Headers: it.Headers, Body: string(it.Body), SignatureValid: it.SignatureValid})
		}
		return out, nil
	})

	registerChaos(a, ev)
	registerStream(r, a, ev)
}

func registerChaos(a huma.API, ev Events) {
	const doc = "This project's extension (sandbox only): makes one merchant's notifications misbehave on purpose, so that " +
		"its handler proves idempotent and order-independent. Each field is optional: duplicate (0–1) sends that share of " +
		"deliveries twice with the same event id; reorder makes each delivery wait a random 0–3 s so later events overtake; " +
		"delay (a Go duration up to 60s) makes every delivery late; failFirst (0–5) sends the first N attempts of each event " +
		"but counts them as failed, so the receiver sees it N+1 times. Off by default; DELETE ends it. Out of bounds: 400 (" +
		rules.CodeDeliveryChaos + ")."
	type idIn struct {
		ID string `path:"id"`
	}
	type putIn struct {
		ID   string `path:"id"`
		Body rules.DeliveryChaosInput
	}
	type out struct {
		Body DeliveryChaosView
	}
	check := func(ctx context.Context, id string) error {
		if !ev.Sandbox {
			return sandboxOff()
		}
		if _, err := ev.Merchant(ctx, id); err != nil {
			if errors.Is(err, rules.ErrNotFound) {
				return rules.Errorf(rules.KindNotFound, rules.CodeMerchantNotFound, "merchant %s not found", id)
			}
			return err
		}
		return nil
	}
	huma.Register(a, huma.Operation{
		OperationID: "sandbox-put-delivery-chaos", Method: http.MethodPut, Path: "/admin/v1/merchants/{id}/sandbox/delivery",
		Summary: "Make a merchant's notifications misbehave on purpose", Description: doc,
		Tags: []string{"Sandbox"}, Security: adminSecurity, Errors: []int{400, 401, 403, 404}, Extensions: extension,
	}, func(ctx context.Context, in *putIn) (*out, error) {
		if err := check(ctx, in.ID); err != nil {
			return nil, err
		}
		c, err := rules.ParseDeliveryChaos(in.Body)
		if err != nil {
			return nil, err
		}
		if err := ev.Log.PutDeliveryChaos(ctx, in.ID, c); err != nil {
			return nil, err
		}
		rules.Audit(ctx, "sandbox.chaos.put", "merchant:"+in.ID, in.ID, in.Body)
		return &out{Body: chaosView(c, true)}, nil
	})
	huma.Register(a, huma.Operation{
		OperationID: "sandbox-get-delivery-chaos", Method: http.MethodGet, Path: "/admin/v1/merchants/{id}/sandbox/delivery",
		Summary: "A merchant's delivery chaos", Description: doc,
		Tags: []string{"Sandbox"}, Security: adminSecurity, Errors: []int{401, 403, 404}, Extensions: extension,
	}, func(ctx context.Context, in *idIn) (*out, error) {
		if err := check(ctx, in.ID); err != nil {
			return nil, err
		}
		c, err := ev.Log.DeliveryChaos(ctx, in.ID)
		if errors.Is(err, rules.ErrNotFound) {
			return &out{Body: chaosView(rules.DeliveryChaos{}, false)}, nil
		}
		if err != nil {
			return nil, err
		}
		return &out{Body: chaosView(c, true)}, nil
	})
	huma.Register(a, huma.Operation{
		OperationID: "sandbox-delete-delivery-chaos", Method: http.MethodDelete, Path: "/admin/v1/merchants/{id}/sandbox/delivery",
		Summary: "End a merchant's delivery chaos", Description: doc,
		Tags: []string{"Sandbox"}, Security: adminSecurity, Errors: []int{401, 403, 404}, Extensions: extension,
	}, func(ctx context.Context, in *idIn) (*out, error) {
		if err := check(ctx, in.ID); err != nil {
			return nil, err
		}
		if err := ev.Log.DeleteDeliveryChaos(ctx, in.ID); err != nil {
			return nil, err
		}
		rules.Audit(ctx, "sandbox.chaos.delete", "merchant:"+in.ID, in.ID, nil)
		return &out{Body: chaosView(rules.DeliveryChaos{}, false)}, nil
	})
}

// StreamedEvent is the data of one event of the stream: one delivery the server made (every
// attempt: retries, resends and the chaos's duplicates too), which `payouts listen` re-delivers.
type StreamedEvent struct {
	EventID    string            `json:"eventId" example:"merchant.notification.1042.PROCESSED"`
	MerchantID string            `json:"merchantId" example:"1"`
	Type       string            `json:"type" example:"payout.PROCESSED"`
	PayoutID   int64             `json:"payoutId" example:"1042"`
	Cause      string            `json:"cause,omitempty" doc:"Why this delivery was made, when not the dispatcher's own try: resend, chaos-duplicate, chaos-fail-first"`
	Headers    map[string]string `json:"headers" doc:"The headers of the server's own delivery, the verification signature among them"`
	Body       string            `json:"body" doc:"The exact body the server delivers"`
}

// EventStreams wakes the open event streams of a merchant when one of its events is logged.
type EventStreams struct {
	mu     sync.Mutex
	subs   map[string]map[chan struct{}]bool
	closed chan struct{}
	once   sync.Once
}

// NewEventStreams makes the streams' hub.
func NewEventStreams() *EventStreams {
	return &EventStreams{subs: map[string]map[chan struct{}]bool{}, closed: make(chan struct{})}
}

// Notify wakes the streams of a merchant.
func (s *EventStreams) Notify(merchantID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.subs[merchantID] {
		select {
		case c <- struct{}{}:
		default:
		}
	}
}

// Close ends every stream (the server is shutting down: the clients reconnect elsewhere or later).
func (s *EventStreams) Close() { s.once.Do(func() { close(s.closed) }) }

func (s *EventStreams) subscribe(merchantID string) (chan struct{}, func()) {
	c := make(chan struct{}, 1)
	s.mu.Lock()
	if s.subs[merchantID] == nil {
		s.subs[merchantID] = map[chan struct{}]bool{}
	}
	s.subs[merchantID][c] = true
	s.mu.Unlock()
	return c, func() {
		s.mu.Lock()
		delete(s.subs[merchantID], c)
		if len(s.subs[merchantID]) == 0 {
			delete(s.subs, merchantID)
		}
		s.mu.Unlock()
	}
}

// Stream timings: a comment line keeps proxies from closing an idle stream; the log is read
// again at least every streamPoll, for the events another instance logged.
const (
	streamHeartbeat = 15 * time.Second
	streamPoll      = 2 * time.Second
)

// EventStreamPath is the merchant's event stream: a request that lasts as long as its client
// follows it, so its duration says nothing of the server's speed.
const EventStreamPath = "/api/v1/{merchantId}/events/stream"

func registerStream(r chi.Router, a huma.API, ev Events) {
	const path = EventStreamPath
	a.OpenAPI().AddOperation(&huma.Operation{
		OperationID: "event-stream", Method: http.MethodGet, Path: path,
		Summary: "Follow the merchant's events as Server-Sent Events (this project's extension, sandbox only)",
		Description: "What `payouts listen` follows: one SSE event for each delivery the server makes of the merchant's " +
			"notifications (every attempt: retries, resends and the delivery chaos's duplicates and failures too, so a local app " +
			"sees what the notificationUrl sees). Each SSE event has id (the stream's cursor), event: merchant.notification " +
			"and data: a StreamedEvent JSON (eventId, merchantId, type, payoutId, cause, headers, body) carrying the headers and exact body " +
			"of the server's own delivery, so a re-delivery verifies as that one does. Send Last-Event-ID (or ?after=) to resume " +
			"after a cursor; without it the stream starts with the deliveries from then on. A comment line comes every 15 s. " +
			"Signed like every merchant call; 403 (" + rules.CodeSandboxOff + ") with --sandbox=false.",
		Tags: []string{"Events"}, Security: signedSecurity, Extensions: extension,
		Parameters: []*huma.Param{
			{Name: "merchantId", In: "path", Required: true, Schema: &huma.Schema{Type: "string"}},
			{Name: "Last-Event-ID", In: "header", Schema: &huma.Schema{Type: "string"}, Description: "Resume after this cursor", Example: "17"},
			{Name: "after", In: "query", Schema: &huma.Schema{Type: "string"}, Description: "Resume after this cursor (when the client cannot set Last-Event-ID)"},
		},
		Responses: map[string]*huma.Response{"200": {Description: "The event stream", Content: map[string]*huma.MediaType{
			"text/event-stream": {Schema: &huma.Schema{Type: "string"},
				Example: "id: 17\nevent: merchant.notification\ndata: {\"eventId\":\"merchant.notification.1042.PROCESSED\",\"merchantId\":\"1\",\"type\":\"payout.PROCESSED\",\"payoutId\":1042,\"headers\":{\"Content-Type\":\"application/json\",\"Idempotency-Key\":\"merchant.notification.1042.PROCESSED\",\"User-Agent\":\"payouts-notifications/1\",\"verification\":\"…\"},\"body\":\"{…}\"}\n\n"}}}},
	})
	r.Get(path, func(w http.ResponseWriter, req *http.Request) {
		m := merchantFrom(req.Context())
		if m == nil { // the middleware signs every merchant path; this is a safety net
			writeProblem(w, problemOf(rules.KindUnauthorized, rules.CodeAuthentication, "unsigned"))
			return
		}
		if !ev.Sandbox {
			writeProblem(w, problemOf(rules.KindForbidden, rules.CodeSandboxOff, "sandbox controls are off: the server runs with --sandbox=false"))
			return
		}
		after := int64(-1) // the tail: only what is logged from now on
		for _, v := range []string{req.Header.Get("Last-Event-ID"), req.URL.Query().Get("after")} {
			if v == "" {
				continue
			}
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				p := problemOf(rules.KindInvalid, rules.CodeQueryParam, "Last-Event-ID and after are cursors of this API")
				writeProblem(w, p)
				return
			}
			after = n
			break
		}
		wake, done := ev.Streams.subscribe(m.ID)
		defer done()
		if after < 0 {
			tail, err := lastCursor(req.Context(), ev.Log, m.ID)
			if err != nil {
				writeProblem(w, problemOf(rules.KindInternal, rules.CodeInternal, "internal error"))
				return
			}
			after = tail
		}
		rc := http.NewResponseController(w)
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("X-Accel-Buffering", "no")
		w.WriteHeader(http.StatusOK)
		write := func(s string) bool {
			rc.SetWriteDeadline(time.Now().Add(streamHeartbeat + 10*time.Second))
			if _, err := w.Write([]byte(s)); err != nil {
				return false
			}
			return rc.Flush() == nil
		}
		// The opening names the cursor the stream starts after, so that a client that has
		// forwarded nothing yet resumes from there, not from a later tail.
		if !write(fmt.Sprintf(": payouts event stream of merchant %s\nretry: 1000\nid: %d\n\n", m.ID, after)) {
			return
		}
		heartbeat := time.NewTicker(streamHeartbeat)
		defer heartbeat.Stop()
		poll := time.NewTicker(streamPoll)
		defer poll.Stop()
		for {
			for {
				fs, err := ev.Log.AttemptsAfter(req.Context(), m.ID, after, 100)
				if err != nil {
					return // the client reconnects with its Last-Event-ID
				}
				for _, f := range fs {
					e := f.Event
					h, err := ev.Headers(m.ID, e.ID, e.Body)
					if err != nil {
						return
					}
					data, _ := json.Marshal(StreamedEvent{EventID: e.ID, MerchantID: m.ID, Type: e.Type, PayoutID: e.PayoutID,
						Cause: f.Attempt.Cause, Headers: h, Body: string(e.Body)})
					if !write(fmt.Sprintf("id: %d\nevent: %s\ndata: %s\n\n", f.Cursor, rules.EventMerchantNotification, data)) {
						return
					}
					after = f.Cursor
				}
				if len(fs) < 100 {
					break
				}
			}
			select {
			case <-req.Context().Done():
				return
			case <-ev.Streams.closed:
				return
			case <-heartbeat.C:
				if !write(": keep-alive\n\n") {
					return
				}
			case <-wake:
			case <-poll.C:
			}
		}
	})
}

// lastCursor is the feed cursor of a merchant's newest delivery attempt, 0 when none.
func lastCursor(ctx context.Context, log rules.EventLog, merchantID string) (int64, error) {
	var after int64
	for {
		fs, err := log.AttemptsAfter(ctx, merchantID, after, 500)
		if err != nil {
			return 0, err
		}
		if len(fs) == 0 {
			return after, nil
		}
		after = fs[len(fs)-1].Cursor
	}
}
