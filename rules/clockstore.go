package rules

import (
	"context"
	"time"
)

// ClockStore keeps the sandbox clock's offset, so that a restart keeps the time a test moved
// to: payouts, sessions and claims were stamped by that clock, and going back would leave
// them in the future.
type ClockStore interface {
	SandboxClockOffset(ctx context.Context) (time.Duration, error)
	PutSandboxClockOffset(ctx context.Context, offset time.Duration) error
}
