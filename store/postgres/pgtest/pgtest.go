// Package pgtest gives tests a PostgreSQL database of their own, on the server that
// PAYOUTS_TEST_DATABASE_URL names (.ci/run starts one); without it the test is skipped.
//
// Creating, migrating and dropping a database costs about half a second of the server's
// time, more under load, and a test process asks for hundreds. So Database hands out
// migrated databases from a pool of its process: a test's database goes back to the pool
// when the test passed, nothing is connected to it any more and its schema is still the
// migrated one; it is emptied then (the tables that hold rows truncated, the sequences
// used restarted), so that the next test finds what a new, migrated database holds.
// Anything else (a failed test, a changed schema, a leftover connection) drops it.
//
// The pool's databases outlive their process (nothing runs reliably at its end). They are
// named after their process's token, which the process holds an advisory lock on through a
// connection it keeps open; the next test process to use the server drops those whose lock
// is free, their process gone.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"payouts/store/postgres/migrations"
)

// EnvURL names the server the PostgreSQL tests use.
const EnvURL = "PAYOUTS_TEST_DATABASE_URL"

var skipped atomic.Int64

// Available reports whether PostgreSQL tests can run.
func Available() bool { return os.Getenv(EnvURL) != "" }

// Database returns the URL of a migrated database of t's own, holding no rows, that no one
// else uses while t runs. Without PAYOUTS_TEST_DATABASE_URL, t is skipped with a message
// that says so.
func Database(t testing.TB) string {
	t.Helper()
	base := baseURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := own(ctx, base); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	db, ok := take()
	if !ok {
		var err error
		if db, err = newPooled(ctx, base); err != nil {
			t.Fatalf("pgtest: %v", err)
		}
	}
	t.Cleanup(func() { giveBack(t, base, db) })
	return withName(base, db.name)
}

// EmptyDatabase returns the URL of a new database without tables, for t alone, dropped when
// t ends: for what a store's first start or a migration into an empty database does.
func EmptyDatabase(t testing.TB) string {
	t.Helper()
	base := baseURL(t)
	name := "payouts_test_" + randomHex(6)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := adminExec(ctx, base, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() { drop(t, base, name) })
	return withName(base, name)
}

func baseURL(t testing.TB) string {
	t.Helper()
	base := os.Getenv(EnvURL)
	if base == "" {
		skipped.Add(1)
		t.Skip("PostgreSQL tests skipped: set " + EnvURL + " (.ci/run starts a throw-away server)")
	}
	if _, err := url.Parse(base); err != nil {
		t.Fatalf("%s: %v", EnvURL, err)
	}
	return base
}

func withName(base, name string) string {
	u, _ := url.Parse(base)
	u.Path = "/" + name
	return u.String()
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// pooled is a database of the pool, and its schema's fingerprint once migrated.
type pooled struct {
	name, schema string
}

// lockClass is the first key of the pool's advisory locks (the two-key form, which goose's
// one-key lock never meets), the second the hash of a process's token.
const lockClass = 0x70677462

const poolPrefix = "payouts_pool_"

var (
	// owner holds this process's token lock for as long as the process lives: kept here,
	// reachable, so that its socket is never collected and closed, which would free the
	// lock while the process's databases are still in use.
	ownerOnce sync.Once
	owner     *pgx.Conn
	ownerErr  error
	token     = randomHex(6)
	created   atomic.Int64

	mu   sync.Mutex
	free []pooled
)

// own takes this process's token lock, once, and drops the pool databases of the processes
// gone.
func own(ctx context.Context, base string) error {
	ownerOnce.Do(func() {
		c, err := pgx.Connect(ctx, base)
		if err != nil {
			ownerErr = fmt.Errorf("connect to %s: %w", EnvURL, err)
			return
		}
		if _, err := c.Exec(ctx, "SELECT pg_advisory_lock($1, hashtext($2))", lockClass, token); err != nil {
			c.Close(ctx)
			ownerErr = fmt.Errorf("lock: %w", err)
			return
		}
		owner = c
		rows, err := owner.Query(ctx, "SELECT datname FROM pg_database WHERE starts_with(datname, $1)", poolPrefix)
		if err != nil {
			ownerErr = err
			return
		}
		names, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			ownerErr = err
			return
		}
		for _, name := range names {
			tok, _, _ := strings.Cut(strings.TrimPrefix(name, poolPrefix), "_")
			if tok == token {
				continue
			}
			var gone bool
			if err := owner.QueryRow(ctx, "SELECT pg_try_advisory_lock($1, hashtext($2))", lockClass, tok).Scan(&gone); err != nil {
				ownerErr = err
				return
			}
			if !gone {
				continue // its process runs
			}
			// Another process sweeping at once may have dropped it already: IF EXISTS.
			_, err := owner.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
			owner.Exec(ctx, "SELECT pg_advisory_unlock($1, hashtext($2))", lockClass, tok)
			if err != nil {
				ownerErr = fmt.Errorf("drop the stale %s: %w", name, err)
				return
			}
		}
	})
	return ownerErr
}

func take() (pooled, bool) {
	mu.Lock()
	defer mu.Unlock()
	if len(free) == 0 {
		return pooled{}, false
	}
	db := free[len(free)-1]
	free = free[:len(free)-1]
	return db, true
}

// newPooled creates and migrates a database for the pool.
func newPooled(ctx context.Context, base string) (pooled, error) {
	db := pooled{name: fmt.Sprintf("%s%s_%d", poolPrefix, token, created.Add(1))}
	if err := adminExec(ctx, base, "CREATE DATABASE "+db.name); err != nil {
		return db, fmt.Errorf("create database: %w", err)
	}
	err := func() error {
		cfg, err := pgx.ParseConfig(withName(base, db.name))
		if err != nil {
			return err
		}
		sqlDB := stdlib.OpenDB(*cfg)
		defer sqlDB.Close()
		if err := migrations.Up(ctx, sqlDB); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		return sqlDB.QueryRowContext(ctx, schemaSQL).Scan(&db.schema)
	}()
	if err != nil {
		adminExec(ctx, base, "DROP DATABASE IF EXISTS "+db.name+" WITH (FORCE)")
		return db, err
	}
	return db, nil
}

// giveBack returns db to the pool, emptied, when t passed, nothing is connected to it and
// its schema is still the migrated one; otherwise it drops it.
func giveBack(t testing.TB, base string, db pooled) {
	if t.Failed() {
		drop(t, base, db.name)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := empty(ctx, base, db); err != nil {
		t.Logf("pgtest: %s not reused: %v", db.name, err)
		drop(t, base, db.name)
		return
	}
	mu.Lock()
	free = append(free, db)
	mu.Unlock()
}

func empty(ctx context.Context, base string, db pooled) error {
	c, err := pgx.Connect(ctx, withName(base, db.name))
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	// A closed pool's server processes end soon after, not at once: poll for them a
	// little. One still there after is the test's leftover.
	for wait := time.Millisecond; ; wait *= 2 {
		var others int
		if err := c.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()").Scan(&others); err != nil {
			return err
		}
		if others == 0 {
			break
		}
		if wait > time.Second {
			return fmt.Errorf("%d connections left open", others)
		}
		time.Sleep(wait)
	}
	var schema string
	if err := c.QueryRow(ctx, schemaSQL).Scan(&schema); err != nil {
		return err
	}
	if schema != db.schema {
		return fmt.Errorf("its schema changed")
	}
	_, err = c.Exec(ctx, emptySQL)
	return err
}

// schemaSQL fingerprints a database's schema: what a test may have changed of the
// migrated one (tables, columns and their order, constraints, indexes, sequences, views,
// functions, triggers, the migrations applied).
const schemaSQL = `SELECT md5(concat_ws('|',
	(SELECT string_agg(format('%s.%s %s %s %s', a.attrelid::regclass, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull, pg_get_expr(d.adbin, d.adrelid)), ',' ORDER BY a.attrelid::regclass::text, a.attnum)
		FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
		LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
		WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast') AND a.attnum > 0 AND NOT a.attisdropped),
	(SELECT string_agg(format('%s %s %s', c.relname, c.relkind, c.relpersistence), ',' ORDER BY c.relname)
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')),
	(SELECT string_agg(format('%s %s', conrelid::regclass, pg_get_constraintdef(oid)), ',' ORDER BY conrelid::regclass::text, conname)
		FROM pg_constraint WHERE connamespace NOT IN ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)),
	(SELECT string_agg(indexdef, ',' ORDER BY indexdef) FROM pg_indexes WHERE schemaname NOT IN ('pg_catalog', 'information_schema')),
	(SELECT string_agg(format('%s %s %s %s', sequencename, start_value, increment_by, data_type), ',' ORDER BY sequencename)
		FROM pg_sequences),
	(SELECT string_agg(definition, ',' ORDER BY viewname) FROM pg_views WHERE schemaname NOT IN ('pg_catalog', 'information_schema')),
	(SELECT string_agg(pg_get_functiondef(p.oid), ',' ORDER BY p.oid::regprocedure::text)
		FROM pg_proc p WHERE p.pronamespace NOT IN ('pg_catalog'::regnamespace, 'information_schema'::regnamespace) AND p.prokind IN ('f', 'p')),
	(SELECT string_agg(pg_get_triggerdef(oid), ',' ORDER BY tgname) FROM pg_trigger WHERE NOT tgisinternal),
	(SELECT string_agg(extname, ',' ORDER BY extname) FROM pg_extension),
	(SELECT string_agg(format('%s %s', version_id, is_applied), ',' ORDER BY id) FROM goose_db_version)))`

// emptySQL empties a database as a migrated one is: it truncates the tables that hold
// rows (truncating them all costs ten times as much) and restarts the sequences used.
// goose's table keeps its rows.
const emptySQL = `DO $$
DECLARE
	r record;
	n bigint;
	used text[] := '{}';
BEGIN
	FOR r IN SELECT c.oid::regclass AS t FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace
		WHERE s.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast') AND c.relkind IN ('r', 'p')
			AND c.relname <> 'goose_db_version' LOOP
		EXECUTE format('SELECT 1 FROM %s LIMIT 1', r.t);
		GET DIAGNOSTICS n = ROW_COUNT;
		IF n > 0 THEN
			used := used || r.t::text;
		END IF;
	END LOOP;
	IF cardinality(used) > 0 THEN
		EXECUTE 'TRUNCATE ' || array_to_string(used, ', ') || ' CASCADE';
	END IF;
	FOR r IN SELECT format('%I.%I', schemaname, sequencename) AS s FROM pg_sequences
		WHERE last_value IS NOT NULL AND sequencename <> 'goose_db_version_id_seq' LOOP
		EXECUTE 'ALTER SEQUENCE ' || r.s || ' RESTART';
	END LOOP;
END $$`

func drop(t testing.TB, base, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := adminExec(ctx, base, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
		t.Logf("drop database %s: %v", name, err)
	}
}

func adminExec(ctx context.Context, base, sql string) error {
	c, err := pgx.Connect(ctx, base)
	if err != nil {
		return fmt.Errorf("connect to %s: %w", EnvURL, err)
	}
	defer c.Close(context.Background())
	_, err = c.Exec(ctx, sql)
	return err
}
