package e2e

// The end-to-end tests run on either engine: bbolt by default, PostgreSQL when
// PAYOUTS_TEST_ENGINE=postgres (and PAYOUTS_TEST_DATABASE_URL names a server; .ci/run runs
// the package both ways). On PostgreSQL each test server's data directory is paired with a
// database of its own and the shared keys the server then requires.

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"payouts/internal/server"
	"payouts/rules"
	"payouts/store/bolt"
	"payouts/store/postgres"
	"payouts/store/postgres/pgtest"
)

// testEngine is the engine the end-to-end tests run on.
func testEngine() string {
	if os.Getenv("PAYOUTS_TEST_ENGINE") == "postgres" {
		return "postgres"
	}
	return "bolt"
}

// onPostgresTests reports whether the end-to-end tests run on PostgreSQL.
func onPostgresTests() bool { return testEngine() == "postgres" }

// boltOnly skips a test that is about the bbolt file itself (its lock, its offline copy,
// its crash safety) when the tests run on PostgreSQL.
func boltOnly(t testing.TB, why string) {
	t.Helper()
	if onPostgresTests() {
		t.Skip("bbolt only: " + why)
	}
}

// browserOnBolt skips a browser test on the PostgreSQL pass. Its subject is what a browser
// does with the pages (their layout, scripts, frames and messages); what those pages ask of
// the server runs in process on both engines (servertest.OnEachEngine), and the engines
// themselves are held to one another by the conformance suite. Two browsers at a time, the
// browser tests were the longest chain of the PostgreSQL pass without testing its engine.
func browserOnBolt(t testing.TB) {
	t.Helper()
	if onPostgresTests() {
		t.Skip("a browser's test: the pages' requests run in process on both engines")
	}
}

// pgDir is a data directory's database, made once by the directory's first server; the
// others wait for ready.
type pgDir struct {
	ready chan struct{}
	url   string // set before ready closes; empty when making it failed
}

var (
	pgMu   sync.Mutex
	pgDirs = map[string]*pgDir{} // data directory → its database
)

// databaseFor is the database paired with a test server's data directory, created with its
// key files on the directory's first server. The lock only finds or claims the directory's
// entry: the database is made outside it, so that the servers of other tests do not wait
// for this one's.
func databaseFor(t testing.TB, dir string) string {
	t.Helper()
	pgMu.Lock()
	d, found := pgDirs[dir]
	if !found {
		d = &pgDir{ready: make(chan struct{})}
		pgDirs[dir] = d
	}
	pgMu.Unlock()
	if found {
		<-d.ready
		if d.url == "" {
			t.Fatalf("no database for %s: making it failed in the test that started its first server", dir)
		}
		return d.url
	}
	defer close(d.ready) // also when making it fails the test
	u := pgtest.Database(t)
	keys := filepath.Join(dir, "shared-keys")
	if _, err := os.Stat(keys); os.IsNotExist(err) {
		if err := writeKeys(keys); err != nil {
			t.Fatalf("keys: %v", err)
		}
	}
	d.url = u
	return u
}

// engineArgs are the flags that put a test server on the tests' engine.
func engineArgs(t testing.TB, dir string, given []string) []string {
	t.Helper()
	if !onPostgresTests() {
		return nil
	}
	keys := filepath.Join(databaseDirKeys(t, dir))
	args := []string{"--database", databaseFor(t, dir),
		"--master-key-file", filepath.Join(keys, "master.key"),
		"--notification-key-file", filepath.Join(keys, server.NotificationKeyFile)}
	if !slices.ContainsFunc(given, func(a string) bool { return strings.HasPrefix(strings.TrimLeft(a, "-"), "card-key") }) {
		args = append(args, "--card-key-file", filepath.Join(keys, server.CardKeyFile))
	}
	return args
}

func databaseDirKeys(t testing.TB, dir string) string {
	databaseFor(t, dir)
	return filepath.Join(dir, "shared-keys")
}

// openTestStore opens the store of a stopped test server.
func openTestStore(t testing.TB, dir string) (rules.Storage, error) {
	if onPostgresTests() {
		return postgres.Open(context.Background(), databaseFor(t, dir), postgres.Options{})
	}
	return bolt.Open(filepath.Join(dir, "payouts.db"), bolt.Options{NoSync: true})
}
