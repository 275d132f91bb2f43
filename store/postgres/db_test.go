package postgres

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"payouts/rules"
	"payouts/store/postgres/pgtest"
)

// What this engine implements so far; the whole of rules.Storage with outbox.go, cards.go,
// sessions.go, sandbox.go and dump.go.
var (
	_ rules.Store          = (*DB)(nil)
	_ rules.LifecycleStore = (*DB)(nil)
	_ rules.MerchantStore  = (*DB)(nil)
)

// openDB opens a handle (an instance) on the database at url, closed when t ends.
func openDB(t testing.TB, url string, opt Options) *DB {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db, err := Open(ctx, url, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close(ctx) })
	return db
}

// newDB is one instance on a fresh database.
func newDB(t testing.TB) *DB {
	t.Helper()
	return openDB(t, pgtest.Database(t), Options{})
}

// count runs a query that counts.
func count(t testing.TB, db *DB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := db.pool.QueryRow(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// sameJSON fails t when got and want differ as JSON.
func sameJSON(t testing.TB, got, want any) {
	t.Helper()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		t.Errorf("got  %s\nwant %s", g, w)
	}
}
