package servertest

import (
	"context"
	"testing"

	"payouts/rules"
)

// CheckLedgers checks the ledger of everything a stopped server stored: every balance
// against its payouts (rules.Storage.CheckAllLedgers), and for every merchant and balance
// that its entries add up to it: the sum of their changes is its available balance and its
// balance, each entry's running figures follow the one before, and the last carries the
// balance. Every test server's end runs it, so that every test of a lifecycle also tests
// the ledger.
func CheckLedgers(t testing.TB, db rules.Storage) {
	t.Helper()
	ctx := context.Background()
	if err := db.CheckAllLedgers(ctx); err != nil {
		t.Errorf("ledger check: %v", err)
	}
	ms, err := db.Merchants(ctx)
	if err != nil {
		t.Errorf("ledger entries check: %v", err)
		return
	}
	for _, m := range ms {
		bs, err := db.Balances(ctx, m.ID)
		if err != nil {
			t.Errorf("ledger entries check: %v", err)
			return
		}
		for _, b := range bs {
			entries, err := rules.AllEntries(ctx, db, m.ID, b.Country, b.Currency)
			if err != nil {
				t.Errorf("ledger entries check: %v", err)
				return
			}
			var sa, sb int64
			prev := rules.Entry{}
			for _, e := range entries {
				da, db := e.Deltas()
				sa, sb = sa+da, sb+db
				if e.ID != prev.ID+1 || e.Type != rules.EntryOpening && (e.Available != prev.Available+da || e.Balance != prev.Balance+db) {
					t.Errorf("merchant %s %s: entry %+v does not follow %+v", m.ID, b.Currency, e, prev)
				}
				prev = e
			}
			if sa != b.Available || sb != b.Balance || prev.Available != b.Available || prev.Balance != b.Balance {
				t.Errorf("merchant %s %s: the entries add up to %d/%d and end on %d/%d; the balance is %d/%d",
					m.ID, b.Currency, sa, sb, prev.Available, prev.Balance, b.Available, b.Balance)
			}
		}
	}
}
