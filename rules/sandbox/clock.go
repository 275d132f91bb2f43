package sandbox

import (
	"context"
	"strconv"
	"strings"
	"sync"
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
// offset is an atomic; changes are serialised by their own mutex, which nothing on the
// write path ever takes.
type Clock struct {
	Real  func() time.Time
	Store rules.ClockStore
	// Moved is told after each change, outside the lock, to wake the workers that sleep
	// until a due time. May be nil.
	Moved func()

	// changing is held by Advance, Reset and Sync only, across their store calls: two
	// advances at once must add up. Now, Offset and the writer never take it.
	changing sync.Mutex
	offset   atomic.Int64
}

// NewClock makes the clock over real, starting at the offset st keeps.
func NewClock(ctx context.Context, real func() time.Time, st rules.ClockStore) (*Clock, error) {
	off, err := st.SandboxClockOffset(ctx)
	if err != nil {
		return nil, err
	}
	c := &Clock{Real: real, Store: st}
	c.offset.Store(int64(max(off, 0)))
	return c, nil
}

// Now is real time plus the offset; it never waits.
func (c *Clock) Now() time.Time {
	return c.Real().Add(c.Offset())
}

// Offset is how far the clock runs ahead of real time.
func (c *Clock) Offset() time.Duration {
	return time.Duration(c.offset.Load())
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

// Advance moves the clock forward by d (positive) and keeps the new offset.
func (c *Clock) Advance(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return &rules.Error{Kind: rules.KindInvalid, Code: rules.CodeClockAdvance, Field: "advance", Value: d.String(), Message: "must be positive: the clock never goes back"}
	}
	c.changing.Lock()
	// Another instance on the same database may have moved the clock: advance from the
	// offset kept, not from this instance's copy.
	cur := c.Offset()
	if stored, err := c.Store.SandboxClockOffset(ctx); err == nil && stored >= 0 {
		cur = stored
	}
	off := cur + d
	if off > MaxClockOffset || off < cur {
		c.changing.Unlock()
		return &rules.Error{Kind: rules.KindInvalid, Code: rules.CodeClockAdvance, Field: "advance", Value: d.String(),
			Message: "would put the clock more than 10 years ahead of real time"}
	}
	err := c.Store.PutSandboxClockOffset(ctx, off)
	if err == nil {
		c.offset.Store(int64(off))
	}
	c.changing.Unlock()
	if err == nil && c.Moved != nil {
		c.Moved()
	}
	return err
}

// Sync takes the offset kept in the store: several instances on one database each keep a
// copy of the clock, and one's Advance or Reset reaches the others through Sync (internal/server
// runs it every second on PostgreSQL). It tells Moved when the offset changed. While this instance
// changes the clock, Sync leaves it be: the change is newer than what Sync would read.
func (c *Clock) Sync(ctx context.Context) error {
	if !c.changing.TryLock() {
		return nil
	}
	off, err := c.Store.SandboxClockOffset(ctx)
	if err != nil {
		c.changing.Unlock()
		return err
	}
	changed := c.offset.Swap(int64(max(off, 0))) != int64(max(off, 0))
	c.changing.Unlock()
	if changed && c.Moved != nil {
		c.Moved()
	}
	return nil
}

// Reset returns the clock to real time.
func (c *Clock) Reset(ctx context.Context) error {
	c.changing.Lock()
	err := c.Store.PutSandboxClockOffset(ctx, 0)
	if err == nil {
		c.offset.Store(0)
	}
	c.changing.Unlock()
	if err == nil && c.Moved != nil {
		c.Moved()
	}
	return err
}
