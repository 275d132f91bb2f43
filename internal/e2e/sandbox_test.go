package e2e

// The sandbox's helpers as the end-to-end tests use them (servertest's): the sandbox's
// accounts, its waits, a cancel, the test clock. The sandbox powers' own tests run in
// process (api/cancel_test.go, api/sandbox_clock_test.go).

import (
	"testing"
	"time"

	"payouts/internal/servertest"
)

var perAccountRequest = servertest.PerAccountRequest

// waitStatus polls the payout until it has status (servertest.Merchant.WaitStatus).
func (c *merchantClient) waitStatus(t testing.TB, id int64, status string, within time.Duration) payoutAnswer {
	t.Helper()
	return c.WaitStatus(t, id, status, within)
}

// cancel asks to cancel payout id.
func (c *merchantClient) cancel(t testing.TB, id int64) (int, []byte) {
	t.Helper()
	code, _, raw := c.do(t, "POST", "payouts/"+itoa(id)+"/cancel", nil, "")
	return code, raw
}

type clockAnswer = servertest.SandboxClock

// advance moves the sandbox clock and returns its view.
func (s *testServer) advance(t testing.TB, by string) clockAnswer {
	t.Helper()
	return servertest.AdvanceClock(t, s.client(), s.URL, s.AdminToken, by)
}
