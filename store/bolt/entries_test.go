package bolt

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"payouts/rules"
)

// A balance kept before ledger entries existed (a record without its last entry's id) gets
// one opening entry when the store is opened, so that its entries add up to it from then
// on; a later funding follows it.
func TestOpenGivesAnUpgradedBalanceItsOpeningEntry(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.db")
	db, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	old := balanceRecord{Country: "PER", Currency: "PEN", Available: 700, Balance: 1000, Funded: 1000, Tracked: true}
	err = db.bdb.Update(func(tx *bbolt.Tx) error {
		raw, err := marshal(old)
		if err != nil {
			return err
		}
		return tx.Bucket(bBalances).Put(key("m1", "PER", "PEN"), raw)
	})
	if err != nil {
		t.Fatal(err)
	}
	db.Close(context.Background())
	if db, err = Open(path, Options{NoSync: true}); err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	page, err := db.Entries(context.Background(), "m1", "PER", "PEN", 0, 10)
	if err != nil || len(page.Items) != 1 {
		t.Fatalf("entries after the upgrade: %+v, %v", page, err)
	}
	if e := page.Items[0]; e.ID != 1 || e.Type != rules.EntryOpening || e.Amount != 1000 || e.Available != 700 || e.Balance != 1000 {
		t.Errorf("opening entry %+v", e)
	}
	if _, err := db.Fund(context.Background(), "m1", "PER", "PEN", 5, time.Now()); err != nil {
		t.Fatal(err)
	}
	page, _ = db.Entries(context.Background(), "m1", "PER", "PEN", 0, 10)
	if len(page.Items) != 2 || page.Items[1].ID != 2 || page.Items[1].Available != 705 || page.Items[1].Balance != 1005 {
		t.Errorf("entries after a funding: %+v", page.Items)
	}
	if err := db.bdb.View(checkEntries); err != nil {
		t.Error(err)
	}
}

// An entry is about 40 bytes, and reads back as it was written.
func TestEntryCodec(t *testing.T) {
	e := rules.Entry{ID: 7, At: time.Date(2026, 3, 4, 5, 6, 7, 8, time.UTC), Type: rules.EntryDebit, Amount: -150_000,
		Available: 1_000_000, Balance: 2_000_000, PayoutID: 123456, OrderID: "ORD-2026-000123", BatchID: "PAYROLL-03"}
	raw := encodeEntry(e)
	if len(raw) > 64 {
		t.Errorf("an entry takes %d bytes", len(raw))
	}
	got, err := decodeEntry(7, raw)
	if err != nil || got != e {
		t.Errorf("decoded %+v, %v; want %+v", got, err, e)
	}
	if _, err := decodeEntry(7, raw[:len(raw)-3]); err == nil {
		t.Error("a cut record decoded")
	}
}
