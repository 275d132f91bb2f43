package postgres

import (
	"context"
	"log/slog"

	"payouts/rules"
)

// The payout writes' spans, through a rules.Tracer that internal/server fills with
// OpenTelemetry: a hook rather than an import, so that the engine depends on no telemetry
// SDK and costs one nil check per write and per group when tracing is off (Options.Trace).
// rules.TraceWrite and rules.TraceCommit say how a write's span and its commit's are linked.

const dbSystem = "postgresql"

// traceWrite starts the span of a write waiting for its group (rules.TraceWrite).
func (w *groupWriter) traceWrite(ctx context.Context, op *groupOp) func(err error) {
	return rules.TraceWrite(w.trace, ctx, dbSystem, &op.trace)
}

// traceCommit starts the span of one group's commit (rules.TraceCommit).
func (w *groupWriter) traceCommit(group []*groupOp) func() {
	writes := make([]*rules.WriteTrace, len(group))
	for i, op := range group {
		writes[i] = &op.trace
	}
	return rules.TraceCommit(w.trace, dbSystem, writes)
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
