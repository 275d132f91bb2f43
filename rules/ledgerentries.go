package rules

import (
	"context"
	"fmt"
	"time"
)

// EntryType is what one ledger entry did to a balance.
type EntryType string

// The movements the code makes on a balance: Fund (funding, withdrawal), the lifecycle's
// reserve (reservation) and finish (debit on PROCESSED, release on any other end, reversal
// on REVERSED), and the opening entry of a balance kept before entries existed.
const (
	EntryOpening     EntryType = "opening"     // balance and available as found on upgrade
	EntryFunding     EntryType = "funding"     // + balance, + available
	EntryWithdrawal  EntryType = "withdrawal"  // − balance, − available
	EntryReservation EntryType = "reservation" // − available: the payout's amount held
	EntryRelease     EntryType = "release"     // + available: a payout ended without paying
	EntryDebit       EntryType = "debit"       // − balance: a payout PROCESSED (already held)
	EntryReversal    EntryType = "reversal"    // + balance, + available: the bank returned it
)

// EntryTypes lists the types in the order statements show them.
var EntryTypes = []EntryType{EntryOpening, EntryFunding, EntryWithdrawal, EntryReservation, EntryRelease, EntryDebit, EntryReversal}

// Entry is one append-only movement of a balance, written in the transaction that changed
// the balance. ID numbers the balance's entries from 1 without gaps; Available and Balance
// are the balance's figures after it; Amount is signed, in minor units, and moves the
// figures its type moves (Deltas).
type Entry struct {
	ID        int64     `json:"id"`
	At        time.Time `json:"at"`
	Type      EntryType `json:"type"`
	Amount    int64     `json:"amount"`
	Available int64     `json:"available"`
	Balance   int64     `json:"balance"`
	PayoutID  int64     `json:"payoutId,omitempty"`
	OrderID   string    `json:"orderId,omitempty"`
	BatchID   string    `json:"batchId,omitempty"`
}

// Deltas is what the entry adds to available and to balance. An opening entry starts a
// balance's entries: its amount is the balance, and it brings the available found with it.
func (e Entry) Deltas() (available, balance int64) {
	switch e.Type {
	case EntryReservation, EntryRelease:
		return e.Amount, 0
	case EntryDebit:
		return 0, e.Amount
	case EntryOpening:
		return e.Available, e.Amount
	}
	return e.Amount, e.Amount
}

// FundingEntry is the entry of a funding (negative: a withdrawal) at the service's clock.
func FundingEntry(amount int64, at time.Time) Entry {
	if amount < 0 {
		return Entry{At: at.UTC(), Type: EntryWithdrawal, Amount: amount}
	}
	return Entry{At: at.UTC(), Type: EntryFunding, Amount: amount}
}

// BalanceMoves are the entries of what one lifecycle step did to its payout's balance,
// before → after (reserve and finish in lifecycle.go): available alone down is a
// reservation, up a release (a payout ended without paying); balance alone down is a debit
// (PROCESSED: the amount was held already); both up by the same amount is a reversal, both
// down a reservation and a debit in one step (Settle of a payout that held nothing). They
// are taken from the balance, not from the payout's status, so that they always add up to
// the change; they are stamped with the payout's last transition, the service's clock when
// the step ran.
func BalanceMoves(before, after Balance, p *Payout) []Entry {
	da, db := after.Available-before.Available, after.Balance-before.Balance
	if da == 0 && db == 0 {
		return nil
	}
	at := p.CreatedAt
	if n := len(p.History); n > 0 {
		at = p.History[n-1].At
	}
	entry := func(t EntryType, amount int64) Entry {
		return Entry{At: at.UTC(), Type: t, Amount: amount, PayoutID: p.ID, OrderID: p.OrderID}
	}
	if da == db && db > 0 {
		return []Entry{entry(EntryReversal, db)}
	}
	var out []Entry
	switch {
	case da < 0:
		out = append(out, entry(EntryReservation, da))
	case da > 0:
		out = append(out, entry(EntryRelease, da))
	}
	if db != 0 {
		out = append(out, entry(EntryDebit, db))
	}
	return out
}

// ChainEntries gives entries their ids and running figures, following a balance whose last
// entry is last and whose figures were available and balance before them.
func ChainEntries(entries []Entry, last, available, balance int64) {
	for i := range entries {
		last++
		da, db := entries[i].Deltas()
		if entries[i].Type == EntryOpening {
			available, balance = 0, 0
		}
		available, balance = available+da, balance+db
		entries[i].ID, entries[i].Available, entries[i].Balance = last, available, balance
	}
}

// OrderEntryTimes keeps a balance's entries in time order as they are numbered: an entry
// is stamped no earlier than the one before it (after, the previous entry's time). A step
// decides at the service's time and commits a little later, so two writes on one balance
// can commit in the other order of their times by the milliseconds between; a day's
// statement takes the entries of the day by time and its opening from the running figures
// of the last entry before it, which holds only if times follow ids.
func OrderEntryTimes(entries []Entry, after time.Time) {
	for i := range entries {
		if entries[i].At.Before(after) {
			entries[i].At = after
		}
		after = entries[i].At
	}
}

// CheckEntryChain checks entries that follow an entry (prev; zero for the first) of one
// balance: ids one after another, each entry's running figures its predecessor's plus its
// movement, an opening entry only first. It returns the last entry's figures.
func CheckEntryChain(prev Entry, entries []Entry) (Entry, error) {
	for _, e := range entries {
		if e.ID != prev.ID+1 {
			return prev, fmt.Errorf("%w: entry %d follows entry %d", ErrLedger, e.ID, prev.ID)
		}
		if e.Type == EntryOpening {
			if e.ID != 1 || e.Balance != e.Amount {
				return prev, fmt.Errorf("%w: entry %d: an opening entry is the first, and its amount is its balance", ErrLedger, e.ID)
			}
			prev = e
			continue
		}
		da, db := e.Deltas()
		if prev.Available+da != e.Available || prev.Balance+db != e.Balance {
			return prev, fmt.Errorf("%w: entry %d (%s %d): available %d and balance %d after it, but %d + %d and %d + %d before",
				ErrLedger, e.ID, e.Type, e.Amount, e.Available, e.Balance, prev.Available, da, prev.Balance, db)
		}
		prev = e
	}
	return prev, nil
}

// CheckEntriesEnd checks that the last entry of a balance (zero when it has none) carries
// its figures: the sum of the entries is the balance.
func CheckEntriesEnd(merchantID string, b Balance, last Entry) error {
	if last.ID != b.Entries || last.Available != b.Available || last.Balance != b.Balance {
		return fmt.Errorf("%w: merchant %s %s/%s: available %d, balance %d after %d entries; the last entry (%d) says %d and %d",
			ErrLedger, merchantID, b.Country, b.Currency, b.Available, b.Balance, b.Entries, last.ID, last.Available, last.Balance)
	}
	return nil
}

// EntryPage is one page of a balance's entries, oldest first; Next is the id to pass as
// after for the next page, 0 when there is none.
type EntryPage struct {
	Items []Entry
	Next  int64
}

// LedgerEntries reads the entries of the balances, a page at a time.
type LedgerEntries interface {
	// Entries lists a balance's entries with an id above after, oldest first, up to limit.
	Entries(ctx context.Context, merchantID, country, currency string, after int64, limit int) (EntryPage, error)
}

// AllEntries reads every entry of a balance, page by page.
func AllEntries(ctx context.Context, s LedgerEntries, merchantID, country, currency string) ([]Entry, error) {
	var out []Entry
	after := int64(0)
	for {
		page, err := s.Entries(ctx, merchantID, country, currency, after, 1000)
		if err != nil {
			return nil, err
		}
		out = append(out, page.Items...)
		if page.Next == 0 {
			return out, nil
		}
		after = page.Next
	}
}

// CountryOfCurrency is the country whose balance a currency is (FundingCurrencies), "" for
// none.
func CountryOfCurrency(currency string) string {
	for country, cs := range FundingCurrencies {
		for _, c := range cs {
			if c == currency {
				return country
			}
		}
	}
	return ""
}

// DumpedLedgerEntry is one entry of one balance.
type DumpedLedgerEntry struct {
	MerchantID string `json:"merchantId"`
	Country    string `json:"country"`
	Currency   string `json:"currency"`
	Entry      Entry  `json:"entry"`
}
