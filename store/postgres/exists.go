package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// ErrNoStore is a database that holds no store of payouts: its tables were never made.
var ErrNoStore = errors.New("the database holds no store of payouts (no tables: no server ever ran on it)")

// CheckExists reports whether the database at url holds a store, without changing it: a
// command that reads a store must neither migrate an empty database into one nor read it as
// an empty store.
func CheckExists(ctx context.Context, url string) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return fmt.Errorf("open database: %w", err)
	}
	defer conn.Close(ctx)
	var found bool
	if err := conn.QueryRow(ctx, "SELECT to_regclass('merchants') IS NOT NULL").Scan(&found); err != nil {
		return fmt.Errorf("open database: %w", err)
	}
	if !found {
		return ErrNoStore
	}
	return nil
}
