package rules

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// StatementZone is the day of a statement: UTC−5, the civil time of Colombia and Peru (no
// daylight saving), for COP and PEN and also for USD, which only Peru's merchants hold.
var StatementZone = time.FixedZone("-05:00", -5*3600)

// StatementDay parses a statement's date (YYYY-MM-DD) as the day in StatementZone that
// starts at the time returned.
func StatementDay(date string) (time.Time, error) {
	d, err := time.ParseInLocation(time.DateOnly, date, StatementZone)
	if err != nil || d.Format(time.DateOnly) != date {
		return time.Time{}, &Error{Kind: KindInvalid, Code: CodeStatementDate, Field: "path.date", Value: date,
			Message: "must be a date as YYYY-MM-DD"}
	}
	return d, nil
}

// Statement is a balance's day, built from its ledger entries:
//
//	closing          = opening + funded + withdrawn + paid + reversed + opened
//	closingAvailable = openingAvailable + funded + withdrawn + reserved + released + reversed + opened
//
// Every movement is signed as its entries are (withdrawn, reserved and paid negative);
// opened is an opening entry's amount (a balance kept before entries existed, upgraded that
// day). Opening is the balance after the last entry before the day, so the equations are a
// check: a missing or altered entry makes a day's closing differ from the next day's opening.
type Statement struct {
	Currency         string            `json:"currency"`
	Date             string            `json:"date"`
	Timezone         string            `json:"timezone"`
	Complete         bool              `json:"complete"`
	Opening          int64             `json:"opening"`
	OpeningAvailable int64             `json:"openingAvailable"`
	Funded           int64             `json:"funded"`
	Withdrawn        int64             `json:"withdrawn"`
	Reserved         int64             `json:"reserved"`
	Released         int64             `json:"released"`
	Paid             int64             `json:"paid"`
	Reversed         int64             `json:"reversed"`
	Opened           int64             `json:"opened"`
	Closing          int64             `json:"closing"`
	ClosingAvailable int64             `json:"closingAvailable"`
	Counts           map[EntryType]int `json:"counts"`
	FirstEntry       int64             `json:"firstEntry,omitempty"`
	LastEntry        int64             `json:"lastEntry,omitempty"`
}

// LedgerNow is where a balance's ledger stands in time: the later of the service's clock now
// and the balance's last entry. Its days are the statements' days. An entry is never stamped
// before the one before it (OrderEntryTimes), so when the sandbox's test clock goes back
// (DELETE /admin/v1/sandbox/clock) the entries written while it was ahead keep their days,
// and every movement after the reset is stamped at the last entry's time until real time
// catches up: the ledger does not go back with the clock. Its last day is then the one whose
// statement closes on the balance, and the days before it are complete, since no entry can
// land on them any more. Without a reset, LedgerNow is the clock.
func LedgerNow(now time.Time, entries []Entry) time.Time {
	if n := len(entries); n > 0 && entries[n-1].At.After(now) {
		return entries[n-1].At
	}
	return now
}

// StatementOf is the statement of date (YYYY-MM-DD in StatementZone) from a balance's
// entries (all of them, in id order), at the service's clock now: a day the ledger has not
// reached (LedgerNow) is refused (CodeStatementFuture), and so is a date that is not one;
// field is where the date came from ("path.date").
func StatementOf(currency, date, field string, entries []Entry, now time.Time) (Statement, error) {
	day, err := StatementDay(date)
	if err != nil {
		err.(*Error).Field = field
		return Statement{}, err
	}
	at := LedgerNow(now, entries)
	if day.After(at) {
		return Statement{}, &Error{Kind: KindInvalid, Code: CodeStatementFuture, Field: field, Value: date,
			Message: "the day has not begun yet (the ledger is at " + at.In(StatementZone).Format(time.DateOnly) + " in UTC−5)"}
	}
	return BuildStatement(currency, day, entries, at), nil
}

// BuildStatement builds the statement of the day starting at day from a balance's entries
// (all of them, in id order); now (LedgerNow) says whether the day is over.
func BuildStatement(currency string, day time.Time, entries []Entry, now time.Time) Statement {
	end := day.AddDate(0, 0, 1)
	s := Statement{Currency: currency, Date: day.Format(time.DateOnly), Timezone: "-05:00", Complete: !now.Before(end),
		Counts: map[EntryType]int{}}
	for _, t := range EntryTypes {
		s.Counts[t] = 0
	}
	for _, e := range entries {
		if e.At.Before(day) {
			s.Opening, s.OpeningAvailable = e.Balance, e.Available
		}
	}
	s.Closing, s.ClosingAvailable = s.Opening, s.OpeningAvailable
	for _, e := range entries {
		if e.At.Before(day) || !e.At.Before(end) {
			continue
		}
		if s.FirstEntry == 0 {
			s.FirstEntry = e.ID
		}
		s.LastEntry = e.ID
		s.Counts[e.Type]++
		switch e.Type {
		case EntryFunding:
			s.Funded += e.Amount
		case EntryWithdrawal:
			s.Withdrawn += e.Amount
		case EntryReservation:
			s.Reserved += e.Amount
		case EntryRelease:
			s.Released += e.Amount
		case EntryDebit:
			s.Paid += e.Amount
		case EntryReversal:
			s.Reversed += e.Amount
		case EntryOpening:
			s.Opened += e.Amount
		}
		da, db := e.Deltas()
		s.Closing, s.ClosingAvailable = s.Closing+db, s.ClosingAvailable+da
	}
	return s
}

// StatementCSVHeader and CSV are a statement as one CSV row (Accept: text/csv).
var StatementCSVHeader = []string{"currency", "date", "timezone", "complete", "opening", "openingAvailable", "funded", "withdrawn",
	"reserved", "released", "paid", "reversed", "opened", "closing", "closingAvailable",
	"fundings", "withdrawals", "reservations", "releases", "debits", "reversals", "openings"}

// CSV is the statement's row under StatementCSVHeader.
func (s Statement) CSV() []string {
	n := func(v int64) string { return fmt.Sprint(v) }
	c := func(t EntryType) string { return fmt.Sprint(s.Counts[t]) }
	return []string{s.Currency, s.Date, s.Timezone, fmt.Sprint(s.Complete), n(s.Opening), n(s.OpeningAvailable), n(s.Funded), n(s.Withdrawn),
		n(s.Reserved), n(s.Released), n(s.Paid), n(s.Reversed), n(s.Opened), n(s.Closing), n(s.ClosingAvailable),
		c(EntryFunding), c(EntryWithdrawal), c(EntryReservation), c(EntryRelease), c(EntryDebit), c(EntryReversal), c(EntryOpening)}
}

// Finding is one difference a reconciliation found: what was expected and what was found,
// with the payout (and its orderId) or the day or entry it concerns.
type Finding struct {
	Date     string `json:"date,omitempty"`
	EntryID  int64  `json:"entryId,omitempty"`
	PayoutID int64  `json:"payoutId,omitempty"`
	OrderID  string `json:"orderId,omitempty"`
	What     string `json:"what"`
	Expected string `json:"expected"`
	Found    string `json:"found"`
}

func (f Finding) String() string {
	var where []string
	if f.Date != "" {
		where = append(where, "day "+f.Date)
	}
	if f.PayoutID != 0 {
		where = append(where, fmt.Sprintf("payout %d (orderId %s)", f.PayoutID, f.OrderID))
	}
	if f.EntryID != 0 {
		where = append(where, fmt.Sprintf("entry %d", f.EntryID))
	}
	return fmt.Sprintf("%s: %s: expected %s, found %s", strings.Join(where, ", "), f.What, f.Expected, f.Found)
}

// Reconciliation is the proof (or not) that a balance's range of days adds up.
type Reconciliation struct {
	MerchantID string      `json:"merchantId"`
	Currency   string      `json:"currency"`
	From       string      `json:"from"`
	To         string      `json:"to"`
	Days       []Statement `json:"days"`
	Entries    int         `json:"entries"`
	Payouts    int         `json:"payouts"`
	Findings   []Finding   `json:"findings"`
}

// Reconcile proves for the days from..to (StatementZone, inclusive) of one balance that:
// the entries chain (each one's running figures its predecessor's plus its movement, ids
// without gaps, times in order) and end on the balance; each day's closing is the next
// day's opening; and each payout with a movement in the range, or created in it, moved as
// its state says (ExpectedMoves). Every difference is a Finding.
func Reconcile(merchantID string, b Balance, entries []Entry, payouts []*Payout, from, to, now time.Time) Reconciliation {
	r := Reconciliation{MerchantID: merchantID, Currency: b.Currency, From: from.Format(time.DateOnly), To: to.Format(time.DateOnly),
		Entries: len(entries), Findings: []Finding{}}
	prev := Entry{}
	for _, e := range entries {
		if _, err := CheckEntryChain(prev, []Entry{e}); err != nil {
			da, db := e.Deltas()
			r.Findings = append(r.Findings, Finding{EntryID: e.ID, PayoutID: e.PayoutID, OrderID: e.OrderID, What: "the entry's running figures",
				Expected: fmt.Sprintf("id %d, available %d, balance %d", prev.ID+1, prev.Available+da, prev.Balance+db),
				Found:    fmt.Sprintf("id %d, available %d, balance %d", e.ID, e.Available, e.Balance)})
		}
		if e.At.Before(prev.At) {
			r.Findings = append(r.Findings, Finding{EntryID: e.ID, What: "entries in time order",
				Expected: "at or after " + prev.At.Format(time.RFC3339Nano), Found: e.At.Format(time.RFC3339Nano)})
		}
		prev = e
	}
	if prev.Available != b.Available || prev.Balance != b.Balance {
		r.Findings = append(r.Findings, Finding{EntryID: prev.ID, What: "the last entry carries the balance",
			Expected: fmt.Sprintf("available %d, balance %d", b.Available, b.Balance),
			Found:    fmt.Sprintf("available %d, balance %d", prev.Available, prev.Balance)})
	}
	for day := from; !day.After(to); day = day.AddDate(0, 0, 1) {
		s := BuildStatement(b.Currency, day, entries, now)
		if n := len(r.Days); n > 0 {
			last := r.Days[n-1]
			if last.Closing != s.Opening || last.ClosingAvailable != s.OpeningAvailable {
				r.Findings = append(r.Findings, Finding{Date: s.Date, What: "the day opens where the day before closed",
					Expected: fmt.Sprintf("opening %d, available %d", last.Closing, last.ClosingAvailable),
					Found:    fmt.Sprintf("opening %d, available %d", s.Opening, s.OpeningAvailable)})
			}
		}
		r.Days = append(r.Days, s)
	}
	// The day after the range opens where its last day closed, too (the entries after it
	// are the next range's); so does the balance when the range reaches today.
	if n := len(r.Days); n > 0 {
		next := BuildStatement(b.Currency, to.AddDate(0, 0, 1), entries, now)
		if last := r.Days[n-1]; last.Closing != next.Opening || last.ClosingAvailable != next.OpeningAvailable {
			r.Findings = append(r.Findings, Finding{Date: next.Date, What: "the day after the range opens where the range closed",
				Expected: fmt.Sprintf("opening %d, available %d", last.Closing, last.ClosingAvailable),
				Found:    fmt.Sprintf("opening %d, available %d", next.Opening, next.OpeningAvailable)})
		}
	}
	end := to.AddDate(0, 0, 1)
	inRange := func(t time.Time) bool { return !t.Before(from) && t.Before(end) }
	moves := map[int64][]Entry{}
	touched := map[int64]bool{}
	for _, e := range entries {
		if e.PayoutID != 0 {
			moves[e.PayoutID] = append(moves[e.PayoutID], e)
			if inRange(e.At) {
				touched[e.PayoutID] = true
			}
		}
	}
	known := map[int64]bool{}
	for _, p := range payouts {
		known[p.ID] = true
		if !touched[p.ID] && !inRange(p.CreatedAt) {
			continue
		}
		r.Payouts++
		want, found := ExpectedMoves(p), describeMoves(moves[p.ID])
		if !slices.Contains(want, found) {
			r.Findings = append(r.Findings, Finding{PayoutID: p.ID, OrderID: p.OrderID,
				What:     fmt.Sprintf("the movements of a %s/%s payout of %d", p.Stage, p.Status, p.Amount),
				Expected: strings.Join(want, " or "), Found: found})
		}
	}
	for id := range touched {
		if !known[id] {
			r.Findings = append(r.Findings, Finding{PayoutID: id, OrderID: moves[id][0].OrderID, What: "the payout of a movement",
				Expected: "a stored payout of this balance", Found: "none"})
		}
	}
	slices.SortStableFunc(r.Findings, func(a, b Finding) int { return int(a.PayoutID - b.PayoutID) })
	return r
}

// ExpectedMoves are the movements a payout's state allows, each as describeMoves writes
// them: PROCESSED reserved then debited once; REVERSED also returned; any other end either
// nothing (it never held its amount: rejected by the rules, or waiting for balance) or
// reserved then released once; in progress, reserved (and nothing more) exactly when it
// holds its amount now.
func ExpectedMoves(p *Payout) []string {
	a := fmt.Sprint(p.Amount)
	reserved, debited := "reservation -"+a, "debit -"+a
	switch {
	case p.Status == StatusProcessed:
		return []string{reserved + ", " + debited}
	case p.Status == StatusReversed:
		return []string{reserved + ", " + debited + ", reversal " + a}
	case p.Status.Final():
		return []string{"none", reserved + ", release " + a}
	case p.Reserved > 0:
		return []string{"reservation -" + fmt.Sprint(p.Reserved)}
	}
	return []string{"none"}
}

// describeMoves writes a payout's movements in order: "reservation -500, debit -500".
func describeMoves(es []Entry) string {
	if len(es) == 0 {
		return "none"
	}
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = fmt.Sprintf("%s %d", e.Type, e.Amount)
	}
	return strings.Join(parts, ", ")
}

// MaxReconcileDays bounds a reconciliation's range.
const MaxReconcileDays = 366

// ReconcileRange reads a reconciliation's days (YYYY-MM-DD in StatementZone, either empty
// for its default: the days of first and last) as the starts of its first and last day.
func ReconcileRange(fromDay, toDay string, first, last time.Time) (from, to time.Time, err error) {
	day := func(s string, def time.Time, field string) (time.Time, error) {
		if s == "" {
			d := def.In(StatementZone)
			return time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, StatementZone), nil
		}
		d, err := StatementDay(s)
		if err != nil {
			err.(*Error).Field = field
		}
		return d, err
	}
	if from, err = day(fromDay, first, "from"); err != nil {
		return from, to, err
	}
	if to, err = day(toDay, last, "to"); err != nil {
		return from, to, err
	}
	if to.Before(from) || to.Sub(from) > MaxReconcileDays*24*time.Hour {
		return from, to, &Error{Kind: KindInvalid, Code: CodeReconcileRange, Field: "to", Value: toDay,
			Message: fmt.Sprintf("from %s to %s: from must be on or before to, at most %d days apart", from.Format(time.DateOnly), to.Format(time.DateOnly), MaxReconcileDays)}
	}
	return from, to, nil
}

// ReconcileSource is what a reconciliation reads of a store.
type ReconcileSource interface {
	LedgerEntries
	Balances(ctx context.Context, merchantID string) ([]Balance, error)
	ListPayouts(ctx context.Context, merchantID string, f ListFilter) (Page, error)
}

// ReconcileBalance reads one balance, its entries and the merchant's payouts in its currency
// from s, and reconciles the days fromDay..toDay (ReconcileRange: by default from the day of
// the first entry to the ledger's day, LedgerNow).
func ReconcileBalance(ctx context.Context, s ReconcileSource, merchantID, currency, fromDay, toDay string, now time.Time) (Reconciliation, error) {
	country := CountryOfCurrency(currency)
	if country == "" {
		return Reconciliation{}, &Error{Kind: KindInvalid, Code: CodeLedgerCurrency, Field: "currency", Value: currency,
			Message: "must be COP, PEN or USD"}
	}
	b := Balance{Country: country, Currency: currency}
	bs, err := s.Balances(ctx, merchantID)
	if err != nil {
		return Reconciliation{}, err
	}
	for _, x := range bs {
		if x.Country == country && x.Currency == currency {
			b = x
		}
	}
	entries, err := AllEntries(ctx, s, merchantID, country, currency)
	if err != nil {
		return Reconciliation{}, err
	}
	first, last := now, LedgerNow(now, entries)
	if len(entries) > 0 {
		first = entries[0].At
	}
	from, to, err := ReconcileRange(fromDay, toDay, first, last)
	if err != nil {
		return Reconciliation{}, err
	}
	var payouts []*Payout
	f := ListFilter{Country: country, Limit: 500}
	for {
		page, err := s.ListPayouts(ctx, merchantID, f)
		if err != nil {
			return Reconciliation{}, err
		}
		for _, p := range page.Items {
			if p.Currency == currency {
				payouts = append(payouts, p)
			}
		}
		if page.NextCursor == 0 {
			break
		}
		f.Cursor = page.NextCursor
	}
	return Reconcile(merchantID, b, entries, payouts, from, to, last), nil
}
