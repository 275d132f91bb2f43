package rules

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"time"
)

// The event log: every merchant notification the dispatcher tried, with the
// exact body it sent and each delivery attempt, kept for EventLogRetention, so that a
// merchant can list, read and resend its events (also outside the sandbox). The sandbox adds
// the built-in inbox (notificationUrl SandboxInboxURL) and per-merchant delivery chaos.

// EventLogRetention is how long a logged event is kept after it was first tried.
const EventLogRetention = 30 * 24 * time.Hour

// SandboxInboxURL is the notificationUrl that delivers to the server's own inbox (sandbox).
const SandboxInboxURL = "sandbox:inbox"

// DeliveryAttempt is one try to deliver an event.
type DeliveryAttempt struct {
	At       time.Time     `json:"at"`
	Status   int           `json:"status,omitempty"` // the HTTP status answered; 0 when none came
	Error    string        `json:"error,omitempty"`  // why it did not count as delivered
	Duration time.Duration `json:"duration"`
	// Cause says why the attempt was made besides the dispatcher's own tries: "resend",
	// "chaos-duplicate", "chaos-fail-first".
	Cause string `json:"cause,omitempty"`
}

// Attempt causes.
const (
	CauseResend         = "resend"
	CauseChaosDuplicate = "chaos-duplicate"
	CauseChaosFailFirst = "chaos-fail-first"
)

// Delivered reports whether the attempt counted as a delivery.
func (a DeliveryAttempt) Delivered() bool { return a.Error == "" && a.Status >= 200 && a.Status <= 299 }

// LoggedEvent is an event as the log keeps it. Seq orders the log (the order events were
// first tried) and is the cursor of the listing and the SSE stream's event id.
type LoggedEvent struct {
	Seq         int64             `json:"seq"`
	ID          string            `json:"id"`
	MerchantID  string            `json:"merchantId"`
	PayoutID    int64             `json:"payoutId"`
	Type        string            `json:"type"`
	Body        []byte            `json:"body"`
	CreatedAt   time.Time         `json:"createdAt"`
	Attempts    []DeliveryAttempt `json:"attempts"`
	DeliveredAt time.Time         `json:"deliveredAt"`
}

// EventType is the type of a merchant notification: "payout." and the status it announces
// (its id is merchant.notification.<payout>.<status>), "batch.COMPLETED", or "link." and
// what a payout link's event announces (LinkEvent).
func EventType(eventID string) string {
	kind, parts, ok := splitEventID(eventID)
	switch {
	case ok && kind == EventBatchNotification:
		return "batch." + parts[len(parts)-1]
	case ok && kind == EventLinkNotification:
		return "link." + parts[len(parts)-1]
	case ok && len(parts) > 1:
		return "payout." + parts[len(parts)-1]
	case ok:
		return "payout"
	}
	if i := strings.LastIndexByte(eventID, ':'); i >= 0 {
		return "payout." + eventID[i+1:]
	}
	return "payout"
}

// EventQuery filters a merchant's logged events: after the cursor After, oldest first.
type EventQuery struct {
	After    int64
	Limit    int
	Type     string
	PayoutID int64
}

// Matches reports whether e passes the query's filters (not its cursor).
func (q EventQuery) Matches(e LoggedEvent) bool {
	return (q.Type == "" || e.Type == q.Type) && (q.PayoutID == 0 || e.PayoutID == q.PayoutID)
}

// FedAttempt is one delivery attempt in the merchant's feed: its cursor, its event (with
// no attempts) and the attempt.
type FedAttempt struct {
	Cursor  int64
	Event   LoggedEvent
	Attempt DeliveryAttempt
}

// InboxItem is a notification as the sandbox inbox received it.
type InboxItem struct {
	EventID        string            `json:"eventId"`
	ReceivedAt     time.Time         `json:"receivedAt"`
	Headers        map[string]string `json:"headers"`
	Body           []byte            `json:"body"`
	SignatureValid bool              `json:"signatureValid"`
}

// EventLog keeps the logged events, the sandbox inbox and the delivery chaos settings.
type EventLog interface {
	// LogAttempt appends an attempt to ev's record, creating the record (with body) on its
	// first attempt; a delivered attempt sets DeliveredAt when it has none.
	LogAttempt(ctx context.Context, ev LoggedEvent, a DeliveryAttempt) error
	// LoggedEvents lists a merchant's events after q.After, oldest first, at most q.Limit.
	LoggedEvents(ctx context.Context, merchantID string, q EventQuery) ([]LoggedEvent, error)
	// LoggedEvent reads one of a merchant's events (ErrNotFound when none).
	LoggedEvent(ctx context.Context, merchantID, id string) (LoggedEvent, error)
	// PruneEventLog forgets the events first tried, and the inbox items received, before cutoff.
	PruneEventLog(ctx context.Context, cutoff time.Time) (int, error)
	// AttemptsAfter lists a merchant's delivery attempts after the feed cursor after, in the
	// order they were logged, at most limit: the event stream that `payouts listen` follows
	// carries every delivery a receiver got, the chaos's duplicates and resends among them.
	AttemptsAfter(ctx context.Context, merchantID string, after int64, limit int) ([]FedAttempt, error)

	PutInboxItem(ctx context.Context, merchantID string, it InboxItem) error
	// InboxItems lists a merchant's inbox, newest first.
	InboxItems(ctx context.Context, merchantID string, limit int) ([]InboxItem, error)

	// DeliveryChaos is a merchant's chaos (ErrNotFound when off).
	DeliveryChaos(ctx context.Context, merchantID string) (DeliveryChaos, error)
	PutDeliveryChaos(ctx context.Context, merchantID string, c DeliveryChaos) error
	DeleteDeliveryChaos(ctx context.Context, merchantID string) error
}

// DeliveryChaos makes a merchant's notifications misbehave on purpose (sandbox), so that
// its handler proves itself idempotent and order-independent.
type DeliveryChaos struct {
	Duplicate float64       `json:"duplicate"` // the share of deliveries sent twice, 0–1
	Reorder   bool          `json:"reorder"`   // deliveries wait a random while, so later ones overtake
	Delay     time.Duration `json:"delay"`     // every delivery waits this long first
	FailFirst int           `json:"failFirst"` // the first N attempts of each event count as failed
}

// Bounds of DeliveryChaos.
const (
	MaxChaosDelay     = 60 * time.Second
	MaxChaosFailFirst = 5
	// ChaosReorderWindow bounds the random wait of Reorder.
	ChaosReorderWindow = 3 * time.Second
)

// DeliveryChaosInput is the admin's body; each field optional.
type DeliveryChaosInput struct {
	Duplicate *float64 `json:"duplicate,omitempty" example:"0.2" doc:"The share of deliveries sent twice, 0–1"`
	Reorder   *bool    `json:"reorder,omitempty" example:"true" doc:"Deliveries wait a random 0–3 s, so later ones overtake"`
	Delay     *string  `json:"delay,omitempty" example:"2s" doc:"Every delivery waits this long first (a Go duration, up to 60s)"`
	FailFirst *int     `json:"failFirst,omitempty" example:"2" doc:"The first N attempts of each event count as failed, 0–5"`
}

// ParseDeliveryChaos checks the admin's body and says every problem at once (2997).
func ParseDeliveryChaos(in DeliveryChaosInput) (DeliveryChaos, error) {
	var c DeliveryChaos
	var errs []*Error
	bad := func(field, msg string, v any) {
		errs = append(errs, &Error{Kind: KindInvalid, Code: CodeDeliveryChaos, Field: field, Message: msg, Value: v})
	}
	if in.Duplicate != nil {
		if d := *in.Duplicate; math.IsNaN(d) || d < 0 || d > 1 {
			bad("duplicate", "must be a share between 0 and 1", d)
		} else {
			c.Duplicate = d
		}
	}
	if in.Reorder != nil {
		c.Reorder = *in.Reorder
	}
	if in.Delay != nil && *in.Delay != "" {
		d, err := time.ParseDuration(*in.Delay)
		switch {
		case err != nil:
			bad("delay", "must be a Go duration such as \"2s\" or \"500ms\"", *in.Delay)
		case d < 0 || d > MaxChaosDelay:
			bad("delay", "must be between 0 and 60s", *in.Delay)
		default:
			c.Delay = d
		}
	}
	if in.FailFirst != nil {
		if n := *in.FailFirst; n < 0 || n > MaxChaosFailFirst {
			bad("failFirst", "must be between 0 and 5", n)
		} else {
			c.FailFirst = n
		}
	}
	if len(errs) > 0 {
		return c, &Problem{Kind: KindInvalid, Title: "Missing or invalid data", Detail: "invalid delivery chaos", Errors: errs}
	}
	return c, nil
}

// MarshalJSON writes the delay as a Go duration string ("2s").
func (c DeliveryChaos) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Duplicate float64 `json:"duplicate"`
		Reorder   bool    `json:"reorder"`
		Delay     string  `json:"delay"`
		FailFirst int     `json:"failFirst"`
	}{c.Duplicate, c.Reorder, c.Delay.String(), c.FailFirst})
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (c *DeliveryChaos) UnmarshalJSON(b []byte) error {
	var v struct {
		Duplicate float64 `json:"duplicate"`
		Reorder   bool    `json:"reorder"`
		Delay     string  `json:"delay"`
		FailFirst int     `json:"failFirst"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	d, err := time.ParseDuration(v.Delay)
	if v.Delay != "" && err != nil {
		return err
	}
	*c = DeliveryChaos{Duplicate: v.Duplicate, Reorder: v.Reorder, Delay: d, FailFirst: v.FailFirst}
	return nil
}

// DumpedInboxItem is one item of a merchant's sandbox inbox.
type DumpedInboxItem struct {
	MerchantID string    `json:"merchantId"`
	Item       InboxItem `json:"item"`
}

// DumpedDeliveryChaos is a merchant's delivery chaos.
type DumpedDeliveryChaos struct {
	MerchantID string        `json:"merchantId"`
	Chaos      DeliveryChaos `json:"chaos"`
}
