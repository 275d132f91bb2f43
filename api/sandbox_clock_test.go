package api_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"payouts/internal/servertest"
	"payouts/rules"
)

// The test clock: a batch payout settles, a card session and a cash claim expire after an
// advance, each in seconds of wall time; the clock never goes back, survives a
// restart, returns to real time on DELETE, and --sandbox=false refuses it and ignores it.
func TestSandboxClockMovesTheServiceNotTheWallClock(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: e, Args: []string{"--sandbox-batch-delay", "1h"}})
		c := s.NewMerchant(t, map[string]any{"cashPayouts": true, "cardPayouts": true})

		batch := c.Create(t, servertest.PerBankRequest("CLOCK-BATCH"))
		cash := c.Create(t, servertest.ColCashRequest("CLOCK-CASH"))
		card := c.OpenCard(t, servertest.CardRequest("CLOCK-CARD"), 200)
		c.WaitStatus(t, batch.Payout.ID, "PENDING_BANK", 5*time.Second)
		c.WaitStatus(t, cash.Payout.ID, "PENDING_BANK", 5*time.Second)
		c.WaitStatus(t, card.Payout.ID, "AUTHORIZED", 5*time.Second)

		start := time.Now()
		view := s.Advance(t, "61m")
		if view.OffsetSeconds != 61*60 || view.Offset != "1h1m0s" {
			t.Fatalf("clock after 61m: %+v", view)
		}
		// An hour's delay passes in seconds of wall time: the bound leaves a busy machine room
		// (under the race detector with a dozen servers beside it, a round can take seconds),
		// and is still an hour short of what the wall clock would take.
		const within = 30 * time.Second
		got := c.WaitStatus(t, batch.Payout.ID, "PROCESSED", within) // signed with real time: still accepted
		c.WaitStatus(t, card.Payout.ID, "EXPIRED", within)
		if took := time.Since(start); took > within {
			t.Fatalf("the batch settled after %v of wall time", took)
		}
		if at, _ := time.Parse(time.RFC3339, got.Output.StatusChangeDateTime); at.Before(time.Now().Add(time.Hour)) {
			t.Fatalf("settled at %s: not by the service's clock", got.Output.StatusChangeDateTime)
		}
		if _, _, raw := c.Do(t, "GET", "payouts/"+strconv.FormatInt(cash.Payout.ID, 10), nil, ""); servertest.DecodePayout(t, raw).Output.Status != "PENDING_BANK" {
			t.Fatalf("the cash claim ended early: %s", raw)
		}
		start = time.Now()
		s.Advance(t, "8d")
		exp := c.WaitStatus(t, cash.Payout.ID, "EXPIRED", within)
		if took := time.Since(start); took > within || len(exp.Errors) != 1 || exp.Errors[0].Code != rules.CodeExpired {
			t.Fatalf("cash claim: %+v after %v", exp, took)
		}

		// Never back, and a clear error where.
		var never []servertest.Scenario
		for _, bad := range []string{"-1h", "0s", "soon", ""} {
			never = append(never, servertest.Scenario{Name: "advance " + strconv.Quote(bad), Method: "POST", Path: "/admin/v1/sandbox/clock", Admin: true,
				Body: map[string]any{"advance": bad}, WantStatus: 400, WantCode: rules.CodeClockAdvance, WantLocation: "body.advance",
				Then: func(t *testing.T, _ http.Header, raw []byte) {
					if p := servertest.DecodeProblem(t, raw); len(p.Errors) != 1 {
						t.Errorf("advance %q: %s, want one error", bad, raw)
					}
				}})
		}
		s.Run(t, never)

		// A restart keeps the clock; --sandbox=false ignores it and refuses the endpoint.
		s.RestartWith(t, nil, nil)
		var kept servertest.SandboxClock
		if code := s.Admin(t, "GET", "/admin/v1/sandbox/clock", nil, &kept); code != 200 || kept.OffsetSeconds != 61*60+8*86400 {
			t.Fatalf("after a restart: %d %+v", code, kept)
		}
		s.RestartWith(t, []string{"--sandbox=false"}, nil)
		if code, _, raw := s.RawAdmin(t, "GET", "/admin/v1/sandbox/clock", nil); code != 403 || servertest.DecodeProblem(t, raw).Code != rules.CodeSandboxOff {
			t.Fatalf("sandbox off: %d %s", code, raw)
		}
		real := c.Create(t, servertest.PerBankRequest("CLOCK-REAL"))
		if at, _ := time.Parse(time.RFC3339, real.Output.StatusChangeDateTime); at.After(time.Now().Add(time.Minute)) {
			t.Fatalf("with --sandbox=false the offset still applies: %s", real.Output.StatusChangeDateTime)
		}
		s.RestartWith(t, nil, nil)
		var back servertest.SandboxClock
		if code := s.Admin(t, "DELETE", "/admin/v1/sandbox/clock", nil, &back); code != 200 || back.OffsetSeconds != 0 || back.Offset != "0s" {
			t.Fatalf("DELETE: %d %+v", code, back)
		}
	})
}
