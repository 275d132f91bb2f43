package bolt

import (
	"context"

	"payouts/rules"
)

// The group writer's spans, through a rules.Tracer that internal/server fills with
// OpenTelemetry: a hook rather than an import, so that the engine depends on no telemetry
// SDK and costs one nil check per write and per group when tracing is off (Options.Trace).
// rules.TraceWrite and rules.TraceCommit say how a write's span and its commit's are linked.

const dbSystem = "bbolt"

// traceWrite starts the span of a write waiting for its group (rules.TraceWrite).
func (c *committer) traceWrite(ctx context.Context, op *writeOp) func(err error) {
	return rules.TraceWrite(c.trace, ctx, dbSystem, &op.trace)
}

// traceCommit starts the span of one group's commit (rules.TraceCommit).
func (c *committer) traceCommit(group []*writeOp) func() {
	writes := make([]*rules.WriteTrace, len(group))
	for i, op := range group {
		writes[i] = &op.trace
	}
	return rules.TraceCommit(c.trace, dbSystem, writes)
}
