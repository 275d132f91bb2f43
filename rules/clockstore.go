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
	// SandboxClock is the offset kept and its generation.
	SandboxClock(ctx context.Context) (ClockState, error)
	// PutSandboxClockOffset stores an offset as it is (a restore, a test): a new generation.
	PutSandboxClockOffset(ctx context.Context, offset time.Duration) error
	// ChangeSandboxClock gives change the offset kept (zero when none) and keeps what it
	// answers, under a new generation, in one transaction that no other change of the clock
	// interleaves with, on one instance or several: two advances at once add up, and no
	// lock is held around the store for it. An error from change is answered as it is, and
	// nothing is written.
	ChangeSandboxClock(ctx context.Context, change func(offset time.Duration) (time.Duration, error)) (ClockState, error)
}

// ClockState is the sandbox clock as kept: its offset and the generation of that offset,
// which each change raises by one. Of two states, the one of the higher generation is the
// later, whatever the order their answers arrive in; a store written before generations
// were kept has the generation 0.
type ClockState struct {
	Offset time.Duration
	Gen    int64
}
