package rules

import (
	"context"
	"log/slog"
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
	// Traceparent is the W3C traceparent of the span ctx carries, "" when it carries none. A
	// payout keeps its create's, so that the work done for it later continues that trace.
	Traceparent(ctx context.Context) string
	// Resume is ctx with the span traceparent names as its span (keeping ctx's deadline and
	// values), so that spans started from it continue that trace; ctx itself when
	// traceparent is "" or not a traceparent.
	Resume(ctx context.Context, traceparent string) context.Context
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

// A group writer's spans, the same for both engines. A write's caller waits in its own
// goroutine while the writer commits its group in another, with the writes of other callers.
// So each write gets a span of its own in the caller's trace (store.write, a child of the
// request or the lifecycle round that waits), and each group one span (store.commit) linked
// to the spans of all the writes it carried; each write's span is linked back to its commit.
// No lock is taken: the writer sets what a write learns of its commit before it answers the
// write, and the write reads it after.

// WriteTrace is what a traced write carries to a group writer, and back.
type WriteTrace struct {
	waiter context.Context // the write's span, for its commit to link to
	commit context.Context // the commit's span, set by the writer before it answers
	group  int             // the size of the group committed
}

// TraceWrite starts the span of a write waiting for its group, a child of ctx's, on the
// database system named; the function it returns ends it, linked to the commit that carried
// the write.
func TraceWrite(tr Tracer, ctx context.Context, system string, w *WriteTrace) func(err error) {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, span := tr.Start(ctx, "store.write", slog.String(AttrDBSystem, system))
	w.waiter = ctx
	return func(err error) {
		if w.commit != nil {
			span.Link(w.commit)
			span.Set(slog.Int(AttrGroupSize, w.group))
		}
		span.End(err)
	}
}

// TraceCommit starts the span of one group's commit, linked to the spans of its writes; the
// function it returns ends it.
func TraceCommit(tr Tracer, system string, writes []*WriteTrace) func() {
	ctx, span := tr.Start(context.Background(), "store.commit",
		slog.String(AttrDBSystem, system), slog.Int(AttrGroupSize, len(writes)))
	for _, w := range writes {
		span.Link(w.waiter)
		w.commit, w.group = ctx, len(writes)
	}
	return func() { span.End(nil) }
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
