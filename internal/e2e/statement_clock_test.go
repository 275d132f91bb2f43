package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"payouts/rules"
)

// Statements are days of the ledger, which does not go back with the sandbox's test clock:
// after a payout is paid today and returned (REVERSED) three days later on a clock run
// ahead, and the clock reset, the day of the return is still answered and closes on the
// balance, today's is complete (no entry can land on it any more), a funding after the reset
// joins the ledger's last day, and `payouts reconcile` with its default range reaches that day
// and finds nothing to say.
func TestStatementsAfterTheSandboxClockIsReset(t *testing.T) {
	t.Parallel()
	n := time.Now().In(rules.StatementZone)
	if midnight := time.Date(n.Year(), n.Month(), n.Day()+1, 0, 0, 0, 0, rules.StatementZone); time.Until(midnight) < time.Minute {
		time.Sleep(time.Until(midnight) + time.Second) // stays: today must stay today (UTC−5) on the wall clock the CLI reads, for the test's few seconds
	}
	dir := t.TempDir()
	s := startServer(t, dir)
	c := s.newMerchant(t, map[string]any{})
	today := time.Now().In(rules.StatementZone).Format(time.DateOnly)
	p := c.create(t, perAccountRequest("RESET-9994", "1231234569994")) // processed, then reversed three days later
	c.waitStatus(t, p.Payout.ID, "PROCESSED", 10*time.Second)
	s.advance(t, "4d")
	c.waitStatus(t, p.Payout.ID, "REVERSED", 10*time.Second)
	if code := s.admin(t, "DELETE", "/admin/v1/sandbox/clock", nil, nil); code != 200 {
		t.Fatalf("reset the clock: %d", code)
	}

	balance := func() rules.Balance {
		t.Helper()
		code, _, raw := c.do(t, "GET", "balance", nil, "")
		var bs []rules.Balance
		if code != 200 || json.Unmarshal(raw, &bs) != nil {
			t.Fatalf("balance: %d %s", code, raw)
		}
		for _, b := range bs {
			if b.Currency == "PEN" {
				return b
			}
		}
		t.Fatalf("no PEN balance: %s", raw)
		return rules.Balance{}
	}
	statement := func(date string) statementAnswer {
		t.Helper()
		code, _, raw := c.do(t, "GET", "statements/PEN/"+date, nil, "")
		var st statementAnswer
		if code != 200 || json.Unmarshal(raw, &st) != nil {
			t.Fatalf("statement of %s after the reset: %d %s", date, code, raw)
		}
		return st
	}
	entries := c.entriesOf(t, "PEN", 100)
	last, err := time.Parse(time.RFC3339Nano, entries[len(entries)-1].At)
	if err != nil {
		t.Fatal(err)
	}
	returned := last.In(rules.StatementZone).Format(time.DateOnly)
	if returned == today || entries[len(entries)-1].Type != "reversal" {
		t.Fatalf("the return's entry %+v, on %s: want a reversal days ahead of %s", entries[len(entries)-1], returned, today)
	}

	check := func(when string) {
		t.Helper()
		b := balance()
		st := statement(returned)
		if st.Closing != b.Balance || st.ClosingAvailable != b.Available || st.Complete {
			t.Errorf("%s: the return's day %s closes at %d (available %d, complete %v); the balance is %d (available %d)",
				when, returned, st.Closing, st.ClosingAvailable, st.Complete, b.Balance, b.Available)
		}
		if td := statement(today); !td.Complete || td.Closing != 1_000_000_000-p.Payout.Amount {
			t.Errorf("%s: today closes at %d (complete %v), want %d (funded, then paid) and complete: the ledger is past it",
				when, td.Closing, td.Complete, 1_000_000_000-p.Payout.Amount)
		}
		after, _ := time.ParseInLocation(time.DateOnly, returned, rules.StatementZone)
		code, _, raw := c.do(t, "GET", "statements/PEN/"+after.AddDate(0, 0, 1).Format(time.DateOnly), nil, "")
		if pr := decodeProblem(t, raw); code != 400 || pr.Code != rules.CodeStatementFuture {
			t.Errorf("%s: the day after the ledger's: %d %s, want 400 %s", when, code, raw, rules.CodeStatementFuture)
		}
	}
	check("after the reset")
	if code := s.admin(t, "POST", "/admin/v1/merchants/"+c.MerchantID+"/balance",
		map[string]any{"country": "PER", "currency": "PEN", "amount": 12_345}, nil); code != 200 {
		t.Fatalf("fund: %d", code)
	}
	check("after a funding")

	// payouts reconcile with its default range: to the ledger's day, which closes on the balance.
	b := balance()
	args := []string{"reconcile", "--merchant", c.MerchantID, "--currency", "PEN"}
	if onPostgresTests() {
		args = append(args, "--database-url", databaseFor(t, dir))
	} else {
		s.Stop(t)
		args = append(args, "--data", dir)
	}
	var out bytes.Buffer
	if err := runMain(t.Context(), args, &out, &out); err != nil || !strings.Contains(out.String(), "it adds up") {
		t.Fatalf("reconcile after the reset: %v\n%s", err, out.String())
	}
	var lastDay string
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(line, "  20") {
			lastDay = line
		}
	}
	if !strings.HasPrefix(lastDay, "  "+returned+" ") || !strings.Contains(lastDay, fmt.Sprintf("closing %d ", b.Balance)) {
		t.Errorf("reconcile's last day %q, want %s closing at the balance %d:\n%s", lastDay, returned, b.Balance, out.String())
	}
}
