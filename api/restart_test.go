package api_test

import (
	"strconv"
	"testing"
	"time"

	"payouts/internal/servertest"
)

// TestEndToEndCreateRestartRead is the foundation's path: merchant through the admin API,
// signed create, replay, conflict, restart over the same store, read back, the lifecycle
// resumed.
func TestEndToEndCreateRestartRead(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: e})
		c := s.NewMerchant(t, map[string]any{"emailNotifications": true})

		code, hdr, raw := c.Do(t, "POST", "payouts", servertest.PerBankRequest("E2E-1"), "")
		if code != 201 {
			t.Fatalf("create: got %d %s, want 201", code, raw)
		}
		created := servertest.DecodePayout(t, raw)
		if created.Payout.ID == 0 || created.Output.Stage != "IN_PROGRESS" || created.Output.Status != "CREATED" {
			t.Fatalf("create answer: %+v", created)
		}
		if want := "/api/v1/" + c.MerchantID + "/payouts/" + strconv.FormatInt(created.Payout.ID, 10); hdr.Get("Location") != want {
			t.Errorf("Location = %q, want %q", hdr.Get("Location"), want)
		}

		code, hdr, raw = c.Do(t, "POST", "payouts", servertest.PerBankRequest("E2E-1"), "")
		if code != 200 || hdr.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay: got %d %q %s, want 200 replayed", code, hdr.Get("Idempotent-Replayed"), raw)
		}
		if again := servertest.DecodePayout(t, raw); again.Payout.ID != created.Payout.ID {
			t.Fatalf("replay returned payout %d, want %d", again.Payout.ID, created.Payout.ID)
		}

		other := servertest.PerBankRequest("E2E-1")
		other["amount"] = 200000
		code, _, raw = c.Do(t, "POST", "payouts", other, "")
		if p := servertest.DecodeProblem(t, raw); code != 409 || p.Code != "2005" {
			t.Fatalf("conflict: got %d %s, want 409 2005", code, raw)
		}

		s.Restart(t, nil)
		code, _, raw = c.Do(t, "GET", "payouts/"+strconv.FormatInt(created.Payout.ID, 10), nil, "")
		if code != 200 {
			t.Fatalf("read after restart: %d %s", code, raw)
		}
		got := servertest.DecodePayout(t, raw)
		if got.Payout.OrderID != "E2E-1" || got.Payout.Amount != 100000 {
			t.Fatalf("read after restart: %+v", got)
		}
		// The lifecycle resumes after the restart and finishes the payout.
		c.WaitStage(t, created.Payout.ID, "SUCCESS", 10*time.Second)
	})
}
