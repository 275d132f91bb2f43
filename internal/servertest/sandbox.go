package servertest

import (
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// PerAccountRequest is a Peru bank payout to account of bank 003 (13 digits), whose last
// digits may be a sandbox trigger (9999 rejected, 9997 held for simulate).
func PerAccountRequest(orderID, account string) map[string]any {
	req := PerBankRequest(orderID)
	ba := req["destination"].(map[string]any)["bankAccount"].(map[string]any)
	ba["bankCode"], ba["accountNumber"] = "003", account
	return req
}

// WaitStatus polls GET /payouts/{id} until the payout has status, or fails the test.
func (c *Merchant) WaitStatus(t testing.TB, id int64, status string, within time.Duration) Payout {
	t.Helper()
	var last Payout
	if Poll(within, func() bool {
		_, _, raw := c.Do(t, "GET", "payouts/"+strconv.FormatInt(id, 10), nil, "")
		last = DecodePayout(t, raw)
		return last.Output.Status == status
	}) {
		return last
	}
	t.Fatalf("payout %d did not reach %s within %v: %s/%s", id, status, within, last.Output.Stage, last.Output.Status)
	return last
}

// RailCaughtUp creates req, a payout that is simply paid, and waits until it is. The worker
// takes payouts in the order they fall due, so every payout due before this one has then
// had its answer from the rail: a test checks that one stayed as it was without a pause in
// which it might have moved.
func (c *Merchant) RailCaughtUp(t testing.TB, req map[string]any) {
	t.Helper()
	c.WaitStatus(t, c.Create(t, req).Payout.ID, "PROCESSED", 10*time.Second)
}

// SandboxClock is the sandbox clock's view.
type SandboxClock struct {
	Now, RealNow, Offset string
	OffsetSeconds        int64
}

// AdvanceClock moves the sandbox clock of the server at base by ("2h") and returns its view.
func AdvanceClock(t testing.TB, client *http.Client, base, adminToken, by string) SandboxClock {
	t.Helper()
	code, _, raw := AdminRequest(t, client, base, adminToken, "POST", "/admin/v1/sandbox/clock", map[string]any{"advance": by})
	var out SandboxClock
	if code != 200 || json.Unmarshal(raw, &out) != nil {
		t.Fatalf("advance %s: %d %s", by, code, raw)
	}
	return out
}

// Advance moves the server's sandbox clock by ("2h") and returns its view.
func (s *Server) Advance(t testing.TB, by string) SandboxClock {
	t.Helper()
	return AdvanceClock(t, s.HTTP, s.URL, s.AdminToken, by)
}
