package postgres

import (
	"context"
	"testing"
	"time"

	"payouts/rules"
	"payouts/store/postgres/pgtest"
)

// A database from before ledger entries (the schema before 00006, balances written) gets,
// from migration 00006, one opening entry per balance that holds money, so that the entries
// add up to it; the next funding follows it.
func TestMigrationOpensTheBalancesOfAnOlderDatabase(t *testing.T) {
	url := pgtest.Database(t)
	db := openDB(t, url, Options{})
	ctx := context.Background()
	for _, sql := range []string{
		// back to the schema before 00006, with its version and the later ones forgotten
		// (00007 and 00008 run again on what they left: the same)
		`DROP TABLE ledger_entries`,
		`ALTER TABLE balances DROP COLUMN entries`,
		`DELETE FROM goose_db_version WHERE version_id >= 6`,
		`INSERT INTO balances VALUES ('m1', 'PER', 'PEN', 1000, 1000, 1000, 0, 0), ('m1', 'PER', 'USD', 0, 0, 0, 0, 0)`,
	} {
		if _, err := db.pool.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	db.Close(ctx)
	db = openDB(t, url, Options{}) // migrates
	entries, err := rules.AllEntries(ctx, db, "m1", "PER", "PEN")
	if err != nil || len(entries) != 1 {
		t.Fatalf("entries after the migration: %+v, %v", entries, err)
	}
	if e := entries[0]; e.ID != 1 || e.Type != rules.EntryOpening || e.Amount != 1000 || e.Available != 1000 || e.Balance != 1000 {
		t.Errorf("opening entry %+v", e)
	}
	if page, _ := db.Entries(ctx, "m1", "PER", "USD", 0, 10); len(page.Items) != 0 {
		t.Errorf("an empty balance opened: %+v", page.Items)
	}
	if err := db.CheckAllLedgers(ctx); err != nil {
		t.Error(err)
	}
	if _, err := db.Fund(ctx, "m1", "PER", "PEN", 5, time.Now()); err != nil {
		t.Fatal(err)
	}
	if entries, _ = rules.AllEntries(ctx, db, "m1", "PER", "PEN"); len(entries) != 2 || entries[1].ID != 2 || entries[1].Balance != 1005 || entries[1].Available != 1005 {
		t.Errorf("after a funding: %+v", entries)
	}
	if err := db.CheckAllLedgers(ctx); err != nil {
		t.Error(err)
	}
}
