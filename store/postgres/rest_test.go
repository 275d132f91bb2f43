package postgres

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"payouts/rules"
	"payouts/store/postgres/pgtest"
)

// What *DB offers besides the payouts and merchants, checked at compile time.
var (
	_ rules.OutboxStore      = (*DB)(nil)
	_ rules.OutboxSkipper    = (*DB)(nil)
	_ rules.OutboxAdmin      = (*DB)(nil)
	_ rules.CardStore        = (*DB)(nil)
	_ rules.ClockStore       = (*DB)(nil)
	_ rules.ScriptStore      = (*DB)(nil)
	_ rules.DirectoryStore   = (*DB)(nil)
	_ rules.IntegrationUsers = (*DB)(nil)
	_ rules.LookupRequests   = (*DB)(nil)
)

var restT0 = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

// openRest opens a fresh database for t, closed when t ends.
func openRest(t *testing.T) *DB {
	t.Helper()
	return openRestURL(t, pgtest.Database(t), Options{})
}

// openRestURL opens the database at url as one more instance.
func openRestURL(t *testing.T, url string, opt Options) *DB {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db, err := Open(ctx, url, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close(ctx) })
	return db
}

// restEnqueue writes events into the outbox as the writes that cause them do.
func restEnqueue(t *testing.T, db *DB, evs ...rules.Event) {
	t.Helper()
	ctx := context.Background()
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		for _, ev := range evs {
			if err := enqueue(ctx, tx, ev); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// restEvent is a merchant notification of merchant m1 due at next.
func restEvent(id string, next time.Time) rules.Event {
	return rules.Event{ID: id, Kind: rules.EventMerchantNotification, MerchantID: "m1", CreatedAt: restT0, NextAt: next}
}

// restInsertPayout writes a payout with plain SQL (the payouts' own methods are another
// file's) and returns its id; due is when its next step is due (zero: not queued).
func restInsertPayout(t *testing.T, db *DB, p *rules.Payout, due time.Time) int64 {
	t.Helper()
	ctx := context.Background()
	var dueAt *time.Time
	var dueStatus *string
	if !due.IsZero() {
		st := string(p.Status)
		dueAt, dueStatus = &due, &st
	}
	err := db.pool.QueryRow(ctx, `INSERT INTO payouts (merchant_id, order_id, country, currency, amount, stage,
		status, created_at, due_at, due_status, doc) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, '{}')
		RETURNING id`, p.MerchantID, p.OrderID, p.Country, p.Currency, p.Amount, string(p.Stage), string(p.Status),
		p.CreatedAt, dueAt, dueStatus).Scan(&p.ID)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.pool.Exec(ctx, `UPDATE payouts SET doc = $2 WHERE id = $1`, p.ID, doc); err != nil {
		t.Fatal(err)
	}
	return p.ID
}

// restSQL runs a statement of a test's setup.
func restSQL(t *testing.T, db *DB, sql string, args ...any) {
	t.Helper()
	if _, err := db.pool.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}
