package postgres

import (
	"context"
	"log/slog"

	"payouts/rules"
)

// The payout writes' spans, through a rules.Tracer that internal/server fills with
// OpenTelemetry: a hook rather than an import, so that the engine depends on no telemetry
// SDK and costs one nil check per write and per group when tracing is off (Options.Trace).
// As in store/bolt: each write waiting for the group writer gets a span in its caller's
// trace (store.write), each group one span (store.commit) linked to the spans of all the
// writes it carried, and each write's span is linked back to its commit. The writer sets
// what a write learns of its commit before it answers the write; no lock is taken.

var _ rules.ContextWrites = (*DB)(nil)

const dbSystem = "postgresql"

// opTrace is what a traced write carries to the writer, and back.
type opTrace struct {
	waiter context.Context // the write's span, for its commit to link to
	commit context.Context // the commit's span, set by the writer before it answers
	group  int             // the size of the group committed
}

// traceWrite starts the span of a write waiting for its group, a child of ctx's; the
// function it returns ends it, linked to the commit that carried the write.
func (w *groupWriter) traceWrite(ctx context.Context, op *groupOp) func(err error) {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, span := w.trace.Start(ctx, "store.write", slog.String(rules.AttrDBSystem, dbSystem))
	op.trace.waiter = ctx
	return func(err error) {
		if op.trace.commit != nil {
			span.Link(op.trace.commit)
			span.Set(slog.Int(rules.AttrGroupSize, op.trace.group))
		}
		span.End(err)
	}
}

// traceCommit starts the span of one group's commit, linked to the spans of its writes;
// the function it returns ends it.
func (w *groupWriter) traceCommit(group []*groupOp) func() {
	ctx, span := w.trace.Start(context.Background(), "store.commit",
		slog.String(rules.AttrDBSystem, dbSystem), slog.Int(rules.AttrGroupSize, len(group)))
	for _, op := range group {
		span.Link(op.trace.waiter)
		op.trace.commit, op.trace.group = ctx, len(group)
	}
	return func() { span.End(nil) }
}

// traceSteps starts the span of a lifecycle write (UpdatePayouts), which runs in its
// caller's goroutine, in a transaction of its own: a child of ctx's span.
func (s *DB) traceSteps(ctx context.Context, n int) func(err error) {
	if ctx == nil {
		ctx = context.Background()
	}
	_, span := s.trace.Start(ctx, "store.write", slog.String(rules.AttrDBSystem, dbSystem), slog.Int(rules.AttrPayouts, n))
	return span.End
}
