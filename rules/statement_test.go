package rules_test

import (
	"strings"
	"testing"
	"time"

	"payouts/rules"
)

// ledgerWeek is a balance's entries over three days (UTC−5): a funding and two payouts on the
// first, one paid and one rejected on the second, the paid one returned on the third.
func ledgerWeek() (rules.Balance, []rules.Entry, []*rules.Payout) {
	day := func(d, h int) time.Time { return time.Date(2026, 3, d, h, 0, 0, 0, rules.StatementZone) }
	es := []rules.Entry{
		{At: day(2, 9), Type: rules.EntryFunding, Amount: 10_000},
		{At: day(2, 10), Type: rules.EntryReservation, Amount: -3000, PayoutID: 1, OrderID: "A"},
		{At: day(2, 23), Type: rules.EntryReservation, Amount: -2000, PayoutID: 2, OrderID: "B"},
		{At: day(3, 1), Type: rules.EntryDebit, Amount: -3000, PayoutID: 1, OrderID: "A"},
		{At: day(3, 2), Type: rules.EntryRelease, Amount: 2000, PayoutID: 2, OrderID: "B"},
		{At: day(3, 3), Type: rules.EntryWithdrawal, Amount: -1000},
		{At: day(4, 12), Type: rules.EntryReversal, Amount: 3000, PayoutID: 1, OrderID: "A"},
	}
	rules.ChainEntries(es, 0, 0, 0)
	b := rules.Balance{Country: "PER", Currency: "PEN", Available: 9000, Balance: 9000, Entries: 7}
	ps := []*rules.Payout{
		{ID: 1, OrderID: "A", Amount: 3000, Stage: rules.StageRejected, Status: rules.StatusReversed, CreatedAt: day(2, 10)},
		{ID: 2, OrderID: "B", Amount: 2000, Stage: rules.StageRejected, Status: rules.StatusRejectedBank, CreatedAt: day(2, 23)},
		{ID: 3, OrderID: "C", Amount: 500, Stage: rules.StageRejected, Status: rules.StatusDataError, CreatedAt: day(3, 5)},
	}
	return b, es, ps
}

func TestStatementsOfAWeekAddUpDayToDay(t *testing.T) {
	b, es, _ := ledgerWeek()
	now := time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC)
	var prev *rules.Statement
	for d := 1; d <= 5; d++ {
		day, err := rules.StatementDay(time.Date(2026, 3, d, 0, 0, 0, 0, time.UTC).Format(time.DateOnly))
		if err != nil {
			t.Fatal(err)
		}
		s := rules.BuildStatement("PEN", day, es, now)
		if got := s.Opening + s.Funded + s.Withdrawn + s.Paid + s.Reversed + s.Opened; got != s.Closing {
			t.Errorf("%s: opening and movements make %d, closing %d", s.Date, got, s.Closing)
		}
		if got := s.OpeningAvailable + s.Funded + s.Withdrawn + s.Reserved + s.Released + s.Reversed + s.Opened; got != s.ClosingAvailable {
			t.Errorf("%s: available: opening and movements make %d, closing %d", s.Date, got, s.ClosingAvailable)
		}
		if prev != nil && (prev.Closing != s.Opening || prev.ClosingAvailable != s.OpeningAvailable) {
			t.Errorf("%s opens at %d/%d, the day before closed at %d/%d", s.Date, s.Opening, s.OpeningAvailable, prev.Closing, prev.ClosingAvailable)
		}
		prev = &s
	}
	if prev.Closing != b.Balance {
		t.Errorf("the last day closes at %d, the balance is %d", prev.Closing, b.Balance)
	}
	s := rules.BuildStatement("PEN", time.Date(2026, 3, 3, 0, 0, 0, 0, rules.StatementZone), es, now)
	want := rules.Statement{Opening: 10_000, OpeningAvailable: 5000, Paid: -3000, Released: 2000, Withdrawn: -1000, Closing: 6000, ClosingAvailable: 6000}
	if s.Opening != want.Opening || s.OpeningAvailable != want.OpeningAvailable || s.Paid != want.Paid || s.Released != want.Released ||
		s.Withdrawn != want.Withdrawn || s.Closing != want.Closing || s.ClosingAvailable != want.ClosingAvailable ||
		s.Counts[rules.EntryDebit] != 1 || s.Counts[rules.EntryRelease] != 1 || s.Timezone != "-05:00" || !s.Complete {
		t.Errorf("the 3rd: %+v", s)
	}
	// 23:00 on the 2nd in UTC−5 is 04:00 UTC on the 3rd: still the 2nd's.
	if s := rules.BuildStatement("PEN", time.Date(2026, 3, 2, 0, 0, 0, 0, rules.StatementZone), es, now); s.Counts[rules.EntryReservation] != 2 {
		t.Errorf("the 2nd has %d reservations, want 2 (the day is UTC−5)", s.Counts[rules.EntryReservation])
	}
}

// The clock back on the 2nd (a sandbox reset) with the ledger's last entry on the 4th: the
// ledger's days reach the 4th, which closes on the balance and is the day in progress; the
// 2nd is complete; the 5th has not begun.
func TestStatementsFollowTheLedgerWhenTheClockGoesBack(t *testing.T) {
	b, es, _ := ledgerWeek()
	now := time.Date(2026, 3, 2, 15, 0, 0, 0, rules.StatementZone)
	if at := rules.LedgerNow(now, es); !at.Equal(es[len(es)-1].At) {
		t.Errorf("LedgerNow %v, want the last entry's %v", at, es[len(es)-1].At)
	}
	if at := rules.LedgerNow(now.AddDate(0, 0, 5), es); !at.Equal(now.AddDate(0, 0, 5)) {
		t.Errorf("LedgerNow with the clock past the entries: %v", at)
	}
	s, err := rules.StatementOf("PEN", "2026-03-04", "path.date", es, now)
	if err != nil || s.Closing != b.Balance || s.ClosingAvailable != b.Available || s.Complete {
		t.Errorf("the ledger's day: %+v %v, want closing on the balance and not complete", s, err)
	}
	if s, err := rules.StatementOf("PEN", "2026-03-02", "path.date", es, now); err != nil || !s.Complete {
		t.Errorf("the clock's day, behind the ledger: %+v %v, want complete", s, err)
	}
	_, err = rules.StatementOf("PEN", "2026-03-05", "path.date", es, now)
	if e, ok := err.(*rules.Error); !ok || e.Code != rules.CodeStatementFuture || e.Field != "path.date" || !strings.Contains(e.Message, "2026-03-04") {
		t.Errorf("the day after the ledger's: %v", err)
	}
	if _, err := rules.StatementOf("PEN", "2026-3-5", "date", es, now); err == nil || err.(*rules.Error).Field != "date" {
		t.Errorf("not a date: %v", err)
	}
}

func TestStatementDayRefusesWhatIsNotADate(t *testing.T) {
	for _, bad := range []string{"2026-3-4", "2026-02-30", "yesterday", "2026-03-04T00:00:00Z", ""} {
		_, err := rules.StatementDay(bad)
		if e, ok := err.(*rules.Error); !ok || e.Code != rules.CodeStatementDate {
			t.Errorf("%q: %v, want %s", bad, err, rules.CodeStatementDate)
		}
	}
}

func TestReconcileFindsNothingInALedgerThatAddsUp(t *testing.T) {
	b, es, ps := ledgerWeek()
	from, to := time.Date(2026, 3, 1, 0, 0, 0, 0, rules.StatementZone), time.Date(2026, 3, 7, 0, 0, 0, 0, rules.StatementZone)
	r := rules.Reconcile("m1", b, es, ps, from, to, to.AddDate(0, 0, 3))
	if len(r.Findings) != 0 || len(r.Days) != 7 || r.Payouts != 3 {
		t.Fatalf("findings %v, %d days, %d payouts", r.Findings, len(r.Days), r.Payouts)
	}
}

func TestReconcileNamesEveryDifference(t *testing.T) {
	from, to := time.Date(2026, 3, 1, 0, 0, 0, 0, rules.StatementZone), time.Date(2026, 3, 7, 0, 0, 0, 0, rules.StatementZone)
	for _, c := range []struct {
		name   string
		damage func(b *rules.Balance, es []rules.Entry, ps []*rules.Payout) []rules.Entry
		want   []string // in the findings, in order
	}{
		{"an entry deleted: the payout's release and the days after it", func(b *rules.Balance, es []rules.Entry, ps []*rules.Payout) []rules.Entry {
			return append(es[:4:4], es[5:]...)
		}, []string{"entry 6", "day 2026-03-04: the day opens where the day before closed", "payout 2 (orderId B)", "or reservation -2000, release 2000, found reservation -2000"}},
		{"a payout paid twice", func(b *rules.Balance, es []rules.Entry, ps []*rules.Payout) []rules.Entry {
			ps[1].Status, ps[1].Stage = rules.StatusProcessed, rules.StageSuccess
			return es
		}, []string{"payout 2 (orderId B)", "expected reservation -2000, debit -2000, found reservation -2000, release 2000"}},
		{"a balance that is not its last entry's", func(b *rules.Balance, es []rules.Entry, ps []*rules.Payout) []rules.Entry {
			b.Balance += 1
			return es
		}, []string{"the last entry carries the balance: expected available 9000, balance 9001"}},
		{"a payout held but with no reservation", func(b *rules.Balance, es []rules.Entry, ps []*rules.Payout) []rules.Entry {
			ps[2].Status, ps[2].Stage, ps[2].Reserved = rules.StatusPendingBank, rules.StageInProgress, 500
			return es
		}, []string{"payout 3 (orderId C)", "expected reservation -500, found none"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, es, ps := ledgerWeek()
			es = c.damage(&b, es, ps)
			r := rules.Reconcile("m1", b, es, ps, from, to, to.AddDate(0, 0, 3))
			var all []string
			for _, f := range r.Findings {
				all = append(all, f.String())
			}
			text := strings.Join(all, "\n")
			for _, w := range c.want {
				if !strings.Contains(text, w) {
					t.Errorf("findings\n%s\nsay nothing of %q", text, w)
				}
			}
		})
	}
}
