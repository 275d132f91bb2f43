// Package migrations holds the PostgreSQL store's schema, as goose migrations (one SQL file
// per change, never edited once released), and applies them: the store at Open, and pgtest
// to the databases it prepares for tests (which cannot import the store: its own tests
// import pgtest).
package migrations

import (
	"context"
	"database/sql"
	"embed"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

//go:embed *.sql
var files embed.FS

// Up applies the pending migrations to db, holding goose's advisory lock so that instances
// starting at once take turns.
func Up(ctx context.Context, db *sql.DB) error {
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return err
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, files, goose.WithSessionLocker(locker))
	if err != nil {
		return err
	}
	_, err = p.Up(ctx)
	return err
}
