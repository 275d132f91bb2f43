package bolt

import (
	"context"
	"log/slog"

	"payouts/rules"
)

// The group writer's spans, through a rules.Tracer that internal/server fills with
// OpenTelemetry: a hook rather than an import, so that the engine depends on no telemetry
// SDK and costs one nil check per write and per group when tracing is off (Options.Trace).
//
// A write's caller waits in its own goroutine while the writer commits its group in
// another, with the writes of other callers. So each write gets a span of its own in the
// caller's trace (store.write, a child of the request or the lifecycle round that waits),
// and each group one span (store.commit) linked to the spans of all the writes it carried;
// each write's span is linked back to its commit. No lock is taken: the writer sets what a
// write learns of its commit before it answers the write, and the write reads it after.

// opTrace is what a traced write carries to the writer, and back.
type opTrace struct {
	waiter context.Context // the write's span, for its commit to link to
	commit context.Context // the commit's span, set by the writer before it answers
	group  int             // the size of the group committed
}

// traceWrite starts the span of a write waiting for its group, a child of ctx's; the
// function it returns ends it, linked to the commit that carried the write.
func (c *committer) traceWrite(ctx context.Context, op *writeOp) func(err error) {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, span := c.trace.Start(ctx, "store.write", slog.String(rules.AttrDBSystem, "bbolt"))
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
func (c *committer) traceCommit(group []*writeOp) func() {
	ctx, span := c.trace.Start(context.Background(), "store.commit",
		slog.String(rules.AttrDBSystem, "bbolt"), slog.Int(rules.AttrGroupSize, len(group)))
	for _, op := range group {
		span.Link(op.trace.waiter)
		op.trace.commit, op.trace.group = ctx, len(group)
	}
	return func() { span.End(nil) }
}

var _ rules.ContextWrites = (*DB)(nil)
