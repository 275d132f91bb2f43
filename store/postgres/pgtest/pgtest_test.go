package pgtest

import (
	"context"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

func connect(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

func exec(t *testing.T, c *pgx.Conn, sql string) {
	t.Helper()
	if _, err := c.Exec(context.Background(), sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func count(t *testing.T, c *pgx.Conn, sql string) int64 {
	t.Helper()
	var n int64
	if err := c.QueryRow(context.Background(), sql).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// exists reports whether the database of u is still on the server.
// needServer skips a test of the pool without a server, as Database skips its callers: the
// test reads the server's catalogue besides what Database hands out.
func needServer(t *testing.T) {
	t.Helper()
	if !Available() {
		t.Skip("PostgreSQL tests skipped: set " + EnvURL + " (.ci/run starts a throw-away server)")
	}
}

func exists(t *testing.T, u string) bool {
	t.Helper()
	parsed, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	c := connect(t, os.Getenv(EnvURL))
	var n int64
	if err := c.QueryRow(context.Background(), "SELECT count(*) FROM pg_database WHERE datname = $1", strings.TrimPrefix(parsed.Path, "/")).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n == 1
}

// A database a passed test filled goes to the next test empty, as a migrated one: no rows
// (goose's apart), its sequences restarted.
func TestAReusedDatabaseIsEmptyAgain(t *testing.T) {
	needServer(t)
	var first string
	t.Run("fills", func(t *testing.T) {
		first = Database(t)
		c := connect(t, first)
		exec(t, c, `INSERT INTO meta VALUES ('k', 'v')`)
		exec(t, c, `SELECT nextval('merchant_numbers'), nextval('merchant_numbers')`)
		exec(t, c, `INSERT INTO payouts (merchant_id, order_id, country, currency, amount, stage, status, created_at, doc)
			VALUES ('m', 'o', 'PER', 'PEN', 1, 's', 's', now(), '{}')`)
		c.Close(context.Background())
	})
	t.Run("finds it empty", func(t *testing.T) {
		again := Database(t)
		if again != first {
			t.Fatalf("a new database %s, not %s again", again, first)
		}
		c := connect(t, again)
		if n := count(t, c, `SELECT count(*) FROM meta`) + count(t, c, `SELECT count(*) FROM payouts`); n != 0 {
			t.Errorf("%d rows left", n)
		}
		if n := count(t, c, `SELECT nextval('merchant_numbers')`); n != 1 {
			t.Errorf("merchant_numbers goes on at %d", n)
		}
		exec(t, c, `INSERT INTO payouts (merchant_id, order_id, country, currency, amount, stage, status, created_at, doc)
			VALUES ('m', 'o', 'PER', 'PEN', 1, 's', 's', now(), '{}')`)
		if n := count(t, c, `SELECT max(id) FROM payouts`); n != 1 {
			t.Errorf("payouts numbered from %d", n)
		}
		if n := count(t, c, `SELECT count(*) FROM goose_db_version WHERE version_id > 0`); n == 0 {
			t.Error("goose's versions were emptied")
		}
		c.Close(context.Background())
	})
}

// A database whose schema a test changed is dropped, not reused.
func TestAChangedDatabaseIsDropped(t *testing.T) {
	needServer(t)
	var first string
	t.Run("changes", func(t *testing.T) {
		first = Database(t)
		c := connect(t, first)
		exec(t, c, `ALTER TABLE meta ADD COLUMN extra int`)
		c.Close(context.Background())
	})
	if exists(t, first) {
		t.Errorf("%s is still there", first)
	}
	t.Run("gets another", func(t *testing.T) {
		if again := Database(t); again == first {
			t.Errorf("%s again", again)
		}
	})
}

// An empty database has no tables, and is dropped at the end of its test.
func TestEmptyDatabase(t *testing.T) {
	needServer(t)
	var empty string
	t.Run("empty", func(t *testing.T) {
		empty = EmptyDatabase(t)
		c := connect(t, empty)
		if n := count(t, c, `SELECT count(*) FROM pg_tables WHERE schemaname = 'public'`); n != 0 {
			t.Errorf("%d tables", n)
		}
		c.Close(context.Background())
	})
	if exists(t, empty) {
		t.Errorf("%s is still there", empty)
	}
}
