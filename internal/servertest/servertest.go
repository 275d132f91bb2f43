// Package servertest serves the real application in process, over a temporary store, for
// tests of requests and answers: every answer is checked against the served OpenAPI
// document, and the ledger of everything stored is checked when the test ends.
//
// A test starts a Server (the handler server.Run serves, on an httptest listener), makes a
// funded merchant, and sends signed requests as its client would, one by one or as a table
// of Scenarios. What needs a process of its own (a crash, an outage, HTTPS, two instances, a
// browser) stays in internal/e2e, which shares the merchant's client and the checks.
package servertest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"payouts/internal/cli"
	"payouts/internal/server"
	"payouts/rules"
	"payouts/store/bolt"
	"payouts/store/postgres"
	"payouts/store/postgres/pgtest"
)

// Engine is the store a Server runs on.
type Engine string

const (
	Bolt     Engine = "bolt"
	Postgres Engine = "postgres"
)

// Engines are the engines a behaviour that goes through the store is tested on: bbolt
// always, PostgreSQL when PAYOUTS_TEST_DATABASE_URL names a server.
func Engines() []Engine {
	if pgtest.Available() {
		return []Engine{Bolt, Postgres}
	}
	return []Engine{Bolt}
}

// OnEachEngine runs f as a parallel subtest per engine of Engines, named after it.
func OnEachEngine(t *testing.T, f func(t *testing.T, e Engine)) {
	t.Helper()
	for _, e := range Engines() {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			f(t, e)
		})
	}
}

// Setup is what a test chooses of its Server.
type Setup struct {
	Engine Engine // Bolt when empty
	// Args are `payouts serve` flags, parsed by the command's own flag parsing, after the
	// harness's own (which they may override).
	Args []string
	// Options are what a test injects: a clock, write faults.
	Options server.Options
}

// AdminToken is every test server's admin token.
const AdminToken = "test-admin-token-0123456789"

// Server is the application served in process for one test.
type Server struct {
	// URL is where it answers, http://127.0.0.1:port.
	URL        string
	AdminToken string
	// Data is its data directory; Database its PostgreSQL database ("": the bbolt file in Data).
	Data, Database string
	// HTTP is a client whose every exchange with the server is checked against the
	// OpenAPI document the server serves (Contract).
	HTTP *http.Client

	logs syncBuffer
}

// Start serves the application for t over a new store, until t ends; then it checks the
// ledger of everything stored (CheckLedgers).
func Start(t testing.TB, setup Setup) *Server {
	t.Helper()
	dir := t.TempDir()
	s := &Server{Data: dir, AdminToken: AdminToken}
	flags := []string{"--data", dir, "--admin-token", s.AdminToken, "--no-demo", "--log-format", "json",
		"--sandbox-delay", "200ms", "--sandbox-batch-delay", "500ms", "--unsafe-no-fsync"}
	if setup.Engine == Postgres {
		s.Database = pgtest.Database(t)
		flags = append(flags, postgresFlags(t, dir, s.Database)...)
	}
	cfg, err := cli.ServeConfig(append(flags, setup.Args...), func(string) string { return "" })
	if err != nil {
		t.Fatalf("serve %v: %v", setup.Args, err)
	}
	opts := setup.Options
	if opts.NewNotificationKey == nil {
		opts.NewNotificationKey = SharedNotificationKey
	}
	ts := httptest.NewUnstartedServer(nil)
	s.URL = "http://" + ts.Listener.Addr().String()
	srv, stop, err := server.NewServer(context.Background(), cfg, opts, s.URL, &s.logs)
	if err != nil {
		ts.Listener.Close()
		t.Fatalf("server: %v", err)
	}
	ts.Config = srv
	ts.Start()
	s.HTTP = &http.Client{Transport: &contractTransport{base: s.URL, inner: ts.Client().Transport, owner: t}, Timeout: 30 * time.Second}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Shutdown(ctx) // the event streams end here (its shutdown hooks), then httptest's Close waits for none
		ts.Close()
		stop()
		if t.Failed() {
			t.Logf("the server's log:\n%s", s.logs.tail(64<<10))
		}
		s.checkLedgers(t)
	})
	return s
}

// postgresFlags put a server on the PostgreSQL database url, with the keys every instance
// on PostgreSQL must be given, written under dir.
func postgresFlags(t testing.TB, dir, url string) []string {
	t.Helper()
	keys := filepath.Join(dir, "shared-keys")
	pem, err := SharedNotificationKey()
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{server.MasterKeyFile: randomHexKey(), server.CardKeyFile: randomHexKey(), server.NotificationKeyFile: pem}
	if err := os.MkdirAll(keys, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(keys, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return []string{"--database", url,
		"--master-key-file", filepath.Join(keys, server.MasterKeyFile),
		"--card-key-file", filepath.Join(keys, server.CardKeyFile),
		"--notification-key-file", filepath.Join(keys, server.NotificationKeyFile)}
}

func randomHexKey() []byte {
	var b [32]byte
	rand.Read(b[:])
	return []byte(hex.EncodeToString(b[:]) + "\n")
}

// SharedNotificationKey is the notification key every test server of the process writes:
// one RSA key, as finding a key's primes for each of a hundred servers costs more than
// everything else they do. A test of keys that differ makes its own.
var SharedNotificationKey = sync.OnceValues(server.NewNotificationKeyPEM)

// checkLedgers opens the stopped server's store and checks its ledger.
func (s *Server) checkLedgers(t testing.TB) {
	t.Helper()
	var db rules.Storage
	var err error
	if s.Database != "" {
		db, err = postgres.Open(context.Background(), s.Database, postgres.Options{})
	} else {
		db, err = bolt.Open(filepath.Join(s.Data, server.DatabaseFile), bolt.Options{NoSync: true})
	}
	if err != nil {
		t.Errorf("ledger check: %v", err)
		return
	}
	defer db.Close(context.Background())
	CheckLedgers(t, db)
}

// syncBuffer is a bytes.Buffer safe for the server's goroutines and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// tail is the last n bytes written.
func (s *syncBuffer) tail(n int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.b.Bytes()
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
