package servertest

import (
	"sync/atomic"
	"time"
)

// Clock is real time that a test moves forward: given to a server as its real clock
// (server.Options.Now), it lets the test pass over what keeps real time rather than the
// sandbox clock (a key's grace, a sign-in's wait) without sleeping through it. Clients sign
// with time.Now; the half minute at most that a test runs ahead stays well inside the
// signature's window of five minutes.
type Clock struct {
	ahead atomic.Int64
	held  atomic.Int64 // the time it stands at, in Unix nanoseconds, once held; 0: it runs
}

// Now is the time the clock shows.
func (c *Clock) Now() time.Time {
	if h := c.held.Load(); h != 0 {
		return time.Unix(0, h)
	}
	return time.Now().Add(time.Duration(c.ahead.Load()))
}

// Advance moves the clock d ahead.
func (c *Clock) Advance(d time.Duration) {
	if c.held.Load() != 0 {
		c.held.Add(int64(d))
		return
	}
	c.ahead.Add(int64(d))
}

// Hold stops the clock where it is: from then on only Advance moves it, so that what a test
// asserts of real time (a wait not yet over, an allowance a minute) does not depend on how
// fast a busy machine runs the test. The sandbox's rails run on it too: a test that holds
// its server's clock pays no payout out unless it advances it.
func (c *Clock) Hold() { c.held.Store(c.Now().UnixNano()) }
