package sandbox

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"payouts/rules"
)

// MaxClockOffset bounds how far the sandbox clock may run ahead of real time.
const MaxClockOffset = 10 * 365 * 24 * time.Hour

// Clock is the service's clock in the sandbox: real time plus an offset
// that Advance only grows and Reset sets back to zero. Every part of the service that falls
// due (the rails, card sessions, cash claims, the outbox's retries) reads it; signatures and
// tokens keep real time, since a client signs with its own clock.
//
// Now never waits: the group writer reads the clock inside its transaction, so a reader
// that waited for a change in progress (which writes the store) would wait for the writer
// that waits for it (one advance under create traffic once wedged every write). The
// offset is an atomic, and nothing is locked around the store: each change is one
// transaction of the store's (ChangeSandboxClock), which answers the offset it wrote and its
// generation, and the copy here only ever takes a later generation than it holds, so two
// changes whose answers come back out of order never move it backwards.
type Clock struct {
	Real  func() time.Time
	Store rules.ClockStore
	// Moved is told after each change to wake the workers that sleep until a due time. May
	// be nil.
	Moved func()

	state atomic.Pointer[rules.ClockState]
}

// NewClock makes the clock over real, starting at the offset st keeps.
func NewClock(ctx context.Context, real func() time.Time, st rules.ClockStore) (*Clock, error) {
	cur, err := st.SandboxClock(ctx)
	if err != nil {
		return nil, err
	}
	c := &Clock{Real: real, Store: st}
	c.take(cur)
	return c, nil
}

// take keeps st as the clock's state when it is later than the one held (or none is), and
// says whether the offset changed. A negative offset kept counts as none.
func (c *Clock) take(st rules.ClockState) bool {
	st.Offset = max(st.Offset, 0)
	for {
		cur := c.state.Load()
		if cur != nil && st.Gen <= cur.Gen {
			return false
		}
		if c.state.CompareAndSwap(cur, &st) {
			return cur == nil || cur.Offset != st.Offset
		}
	}
}

// Now is real time plus the offset; it never waits.
func (c *Clock) Now() time.Time {
	return c.Real().Add(c.Offset())
}

// Offset is how far the clock runs ahead of real time.
func (c *Clock) Offset() time.Duration {
	if st := c.state.Load(); st != nil {
		return st.Offset
	}
	return 0
}

// ParseAdvance reads an advance: a Go duration ("90m", "48h") or whole days ("8d"). It must be
// positive: the clock never goes back.
func ParseAdvance(s string) (time.Duration, error) {
	bad := &rules.Error{Kind: rules.KindInvalid, Code: rules.CodeClockAdvance, Field: "advance", Value: s,
		Message: `must be a positive duration: a Go duration such as "90m" or "48h", or whole days such as "8d"`}
	var d time.Duration
	if days, ok := strings.CutSuffix(s, "d"); ok && days != "" && rules.IsDigits(days) {
		n, err := strconv.Atoi(days)
		if err != nil || n > int(MaxClockOffset/(24*time.Hour)) {
			return 0, bad
		}
		d = time.Duration(n) * 24 * time.Hour
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, bad
		}
	}
	if d <= 0 {
		return 0, bad
	}
	return d, nil
}

// Advance moves the clock forward by d (positive) and keeps the new offset. Another instance
// on the same database may have moved the clock: the store adds d to the offset it keeps,
// not to this instance's copy.
func (c *Clock) Advance(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return &rules.Error{Kind: rules.KindInvalid, Code: rules.CodeClockAdvance, Field: "advance", Value: d.String(), Message: "must be positive: the clock never goes back"}
	}
	st, err := c.Store.ChangeSandboxClock(ctx, func(cur time.Duration) (time.Duration, error) {
		cur = max(cur, 0)
		off := cur + d
		if off > MaxClockOffset || off < cur {
			return 0, &rules.Error{Kind: rules.KindInvalid, Code: rules.CodeClockAdvance, Field: "advance", Value: d.String(),
				Message: "would put the clock more than 10 years ahead of real time"}
		}
		return off, nil
	})
	if err != nil {
		return err
	}
	c.take(st)
	if c.Moved != nil {
		c.Moved()
	}
	return nil
}

// Sync takes the offset kept in the store: several instances on one database each keep a
// copy of the clock, and one's Advance or Reset reaches the others through Sync (internal/server
// runs it every second on PostgreSQL). It tells Moved when the offset changed. A read older
// than a change this instance made meanwhile is of an earlier generation, and left be.
func (c *Clock) Sync(ctx context.Context) error {
	st, err := c.Store.SandboxClock(ctx)
	if err != nil {
		return err
	}
	if c.take(st) && c.Moved != nil {
		c.Moved()
	}
	return nil
}

// Reset returns the clock to real time.
func (c *Clock) Reset(ctx context.Context) error {
	st, err := c.Store.ChangeSandboxClock(ctx, func(time.Duration) (time.Duration, error) { return 0, nil })
	if err != nil {
		return err
	}
	c.take(st)
	if c.Moved != nil {
		c.Moved()
	}
	return nil
}
