package postgres

import (
	"context"
	"testing"
	"time"

	"payouts/store/postgres/pgtest"
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
	t.Cleanup(func() { db.Close() })
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
