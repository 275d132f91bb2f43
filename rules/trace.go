package rules

import (
	"context"
	"log/slog"
	"time"
)

// Tracer starts the spans of the work rules does and the store engines do for it: a
// lifecycle round, its rail calls, a group commit and the writes that waited for it.
// internal/server fills it with OpenTelemetry; rules and the engines see only this, since
// rules imports nothing but the standard library and the engines stay free of a telemetry
// SDK. A nil Tracer traces nothing, at the cost of the nil check before each span.
type Tracer interface {
	// Start begins a span named name, a child of the span ctx carries (or the first of a
	// trace), with attrs. The context returned carries the new span.
	Start(ctx context.Context, name string, attrs ...slog.Attr) (context.Context, Span)
}

// Span is a span a Tracer began. Its attributes never hold a secret, an API key, a
// signature, a card number, a CVV, nor a beneficiary's document or account number: ids,
// counts, channels and statuses only.
type Span interface {
	// Set adds attributes.
	Set(attrs ...slog.Attr)
	// Link links the span to the span ctx carries, if any: work done for several callers at
	// once (a group commit and the writes it carried).
	Link(ctx context.Context)
	// End ends the span; a non-nil err marks it failed.
	End(err error)
}

// ContextWrites is a Store whose payout writes take the caller's context: with tracing on,
// an engine links each group commit to the spans of the requests and rounds that waited for
// it, which only the caller's context names. Both engines implement it; the plain
// CreatePayout and UpdatePayouts are the same writes with no context.
type ContextWrites interface {
	CreatePayoutContext(ctx context.Context, p *Payout, due time.Time, events []Event, admit Step) (*Payout, bool, error)
	UpdatePayoutsContext(ctx context.Context, ids []int64, step Step) error
}

// createPayout stores a new payout through s, with ctx when s takes one.
func createPayout(ctx context.Context, s Store, p *Payout, due time.Time, events []Event, admit Step) (*Payout, bool, error) {
	if cw, ok := s.(ContextWrites); ok {
		return cw.CreatePayoutContext(ctx, p, due, events, admit)
	}
	return s.CreatePayout(p, due, events, admit)
}

// updatePayouts runs step on the payouts ids through s, with ctx when s takes one.
func updatePayouts(ctx context.Context, s interface {
	UpdatePayouts(ids []int64, step Step) error
}, ids []int64, step Step) error {
	if cw, ok := s.(ContextWrites); ok {
		return cw.UpdatePayoutsContext(ctx, ids, step)
	}
	return s.UpdatePayouts(ids, step)
}

// Attribute keys of the spans rules and the engines start (internal/server names the
// request's and the notifications' own).
const (
	AttrPayoutID   = "payout.id"
	AttrChannel    = "payout.channel"
	AttrStatus     = "payout.status"
	AttrPayouts    = "payouts.count"
	AttrGroupSize  = "store.group.size"
	AttrDBSystem   = "db.system.name"
	AttrRailCall   = "rail.call"
	AttrRailSettle = "rail.settled"
)
