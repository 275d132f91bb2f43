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
	_ "embed"
	"encoding/hex"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alexedwards/argon2id"
	"golang.org/x/crypto/bcrypt"

	"payouts/internal/apicontract"
	"payouts/internal/cli"
	"payouts/internal/server"
	"payouts/rules"
	"payouts/store"
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
	// Before is given the new store, with its sealer, before the server first opens it:
	// what an earlier version or an import left there.
	Before func(db rules.Storage, sealer *store.Sealer)
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

	cfg       server.Config
	flags     []string // the harness's own flags, before a test's
	opts      server.Options
	transport *http.Transport
	contract  *apicontract.Served
	running   func() // stops what serves now; nil: stopped
	logs      syncBuffer
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
	s.flags = flags
	s.configure(t, setup.Args)
	s.opts = setup.Options
	if s.opts.NewNotificationKey == nil {
		s.opts.NewNotificationKey = SharedNotificationKey
	}
	if s.opts.PasswordHashing == nil {
		s.opts.PasswordHashing = PasswordHashing
	}
	if s.opts.IntegrationPasswordCost == 0 {
		s.opts.IntegrationPasswordCost = bcrypt.MinCost
	}
	if setup.Before != nil {
		s.offline(t, setup.Before)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.URL = "http://" + ln.Addr().String()
	s.transport = &http.Transport{MaxIdleConnsPerHost: 64}
	s.contract = apicontract.NewServed(s.URL, s.transport, t)
	s.HTTP = &http.Client{Transport: s.contract.Transport(), Timeout: 30 * time.Second}
	s.serve(t, ln)
	t.Cleanup(func() {
		s.stop()
		if t.Failed() {
			t.Logf("the server's log:\n%s", s.logs.tail(64<<10))
		}
		s.checkLedgers(t)
	})
	return s
}

// serve starts the application on ln.
func (s *Server) serve(t testing.TB, ln net.Listener) {
	t.Helper()
	srv, stop, err := server.NewServer(context.Background(), s.cfg, s.opts, s.URL, &s.logs)
	if err != nil {
		ln.Close()
		t.Fatalf("server: %v", err)
	}
	ts := &httptest.Server{Listener: ln, Config: srv}
	ts.Start()
	s.running = func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		// The client's idle connections first: among them may be some it dialed for a
		// request that another connection served, never used, which Shutdown counts as
		// active for their first 5 s.
		s.transport.CloseIdleConnections()
		srv.Shutdown(ctx) // the event streams end here (its shutdown hooks), so that httptest's Close waits for none
		ts.Close()
		stop()
		s.transport.CloseIdleConnections()
	}
}

// stop stops the application, once.
func (s *Server) stop() {
	if s.running != nil {
		s.running()
		s.running = nil
	}
}

// Restart stops the application, gives its store to between (nil: nothing) while it is
// stopped, and starts it again over the same store at the same address: what a restart of
// the process keeps, and a test's clients, still hold.
func (s *Server) Restart(t testing.TB, between func(db rules.Storage, sealer *store.Sealer)) {
	t.Helper()
	s.stop()
	if between != nil {
		s.offline(t, between)
	}
	ln, err := net.Listen("tcp", strings.TrimPrefix(s.URL, "http://"))
	if err != nil {
		t.Fatalf("restart: listening again at %s: %v", s.URL, err)
	}
	s.serve(t, ln)
}

// RestartWith is Restart with the server started again from other `payouts serve` flags
// (after the harness's own, as Setup.Args are): a restart with a setting changed.
func (s *Server) RestartWith(t testing.TB, args []string, between func(db rules.Storage, sealer *store.Sealer)) {
	t.Helper()
	s.stop()
	s.configure(t, args)
	s.Restart(t, between)
}

// configure makes the server's configuration of the harness's flags and args.
func (s *Server) configure(t testing.TB, args []string) {
	t.Helper()
	var err error
	if s.cfg, err = cli.ServeConfig(append(slices.Clone(s.flags), args...), func(string) string { return "" }); err != nil {
		t.Fatalf("serve %v: %v", args, err)
	}
}

// offline opens the store, with its sealer, while no server has it open, and gives it to f.
func (s *Server) offline(t testing.TB, f func(db rules.Storage, sealer *store.Sealer)) {
	t.Helper()
	db, sealer, err := server.Open(context.Background(), s.cfg)
	if err != nil {
		t.Fatalf("opening the store: %v", err)
	}
	defer db.Close(context.Background())
	f(db, sealer)
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

// testNotificationKey is a notification key made once by server.NewNotificationKeyPEM and
// kept for the tests alone: no server outside them has it.
//
//go:embed testdata/notification-key.pem
var testNotificationKey []byte

// SharedNotificationKey is the notification key every test server writes: one RSA key, as
// finding a key's primes for each of a hundred servers costs more than everything else they
// do, and kept in testdata, as finding them once per test process still cost each package's
// run a second or two of CPU (several under the race detector) before its first server
// answered. A test of keys that differ makes its own.
func SharedNotificationKey() ([]byte, error) { return bytes.Clone(testNotificationKey), nil }

// PasswordHashing is the test servers' argon2id: 64 KiB instead of production's 46 MiB a
// hash, which was a fifth of the end-to-end package's CPU. What the tests check of
// passwords (set, compared, refused, the unknown email compared all the same) does not
// depend on the cost; web/dashboard's tests hold a server without the option to the
// production parameters.
var PasswordHashing = &argon2id.Params{Memory: 64, Iterations: 1, Parallelism: 1, SaltLength: 16, KeyLength: 32}

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

// Stored is everything the server stored so far, as bytes to search for what must not be
// there (a secret in plain text): the bbolt file, or every record of the PostgreSQL
// database.
func (s *Server) Stored(t testing.TB) []byte {
	t.Helper()
	if s.Database == "" {
		raw, err := os.ReadFile(filepath.Join(s.Data, server.DatabaseFile))
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	db, err := postgres.Open(context.Background(), s.Database, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	var out []byte
	if err := db.Dump(context.Background(), func(r rules.DumpRecord) error { out = append(append(out, r.Value...), '\n'); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// Log is what the server logged so far (JSON lines).
func (s *Server) Log() string { return s.logs.tail(1 << 62) }

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
