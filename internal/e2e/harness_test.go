package e2e

// The end-to-end harness: it runs the real server (server.Run, from the server.Config that
// `payouts serve` would make of the test's flags) on a free port with its own data
// directory, creates merchants through the admin API, and signs requests as a merchant's
// client would. Every test owns its servers and runs in parallel with the others.

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"payouts/internal/cli"
	"payouts/internal/server"
	"payouts/internal/servertest"
)

// runMain runs a command line in-process, as the binary would, with an empty environment;
// a server it starts takes the test process's notification key and cheap password hashing,
// as startServer's do (what the tests of the command line check does not depend on them).
func runMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return cli.Run(ctx, args, cli.Env{Stdout: stdout, Stderr: stderr,
		Options: server.Options{NewNotificationKey: sharedNotificationKey, PasswordHashing: servertest.PasswordHashing,
			IntegrationPasswordCost: bcrypt.MinCost}})
}

// writeKeys writes a set of the keys instances on PostgreSQL share into dir (payouts keys).
func writeKeys(dir string) error {
	return runMain(context.Background(), []string{"keys", "--out", dir}, io.Discard, io.Discard)
}

// syncBuffer is a bytes.Buffer safe for the server goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type testServer struct {
	URL        string
	Data       string
	AdminToken string
	Stdout     *syncBuffer
	Stderr     *syncBuffer
	// Metrics is the address of the metrics' own listener (--metrics-addr); "": none.
	Metrics string
	cancel  context.CancelFunc
	done    chan error
	// HTTP, when set, is the client of the admin API and of the merchants made here (an
	// HTTPS server's: its roots, its names); nil is the default client.
	HTTP *http.Client
}

// startWithin is how long a test server gets to start: generous, for a machine busy with
// the other tests running in parallel.
const startWithin = 30 * time.Second

// startServer runs the server on a free port over dir (a t.TempDir() to keep, or "" for a
// new one) and waits until it is ready. The server stops at the end of the test. args are
// `payouts serve` flags, parsed by the command's own flag parsing into the server.Config it
// starts from.
func startServer(t testing.TB, dir string, args ...string) *testServer {
	t.Helper()
	return startServerWith(t, dir, server.Options{}, args...)
}

// startServerWith is startServer with what a test injects: a clock, write faults, a card
// session's length.
func startServerWith(t testing.TB, dir string, opts server.Options, args ...string) *testServer {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	s := &testServer{Data: dir, AdminToken: "test-admin-token-0123456789", Stdout: &syncBuffer{}, Stderr: &syncBuffer{}, done: make(chan error, 1)}
	flags := append([]string{"--addr", "127.0.0.1:0", "--data", dir, "--admin-token", s.AdminToken,
		"--no-demo", "--log-format", "json", "--sandbox-delay", "200ms", "--sandbox-batch-delay", "500ms"}, args...)
	flags = append(flags, engineArgs(t, dir, args)...)
	noEnv := func(string) string { return "" }
	cfg, err := cli.ServeConfig(flags, noEnv)
	if err != nil {
		t.Fatalf("serve %v: %v", args, err)
	}
	if opts.NewNotificationKey == nil {
		opts.NewNotificationKey = sharedNotificationKey
	}
	if opts.PasswordHashing == nil {
		opts.PasswordHashing = servertest.PasswordHashing
	}
	if opts.IntegrationPasswordCost == 0 {
		opts.IntegrationPasswordCost = bcrypt.MinCost
	}
	// The server says where it listens once it answers (its stdout keeps the line for people).
	ready := make(chan server.Listening, 1)
	given := opts.Ready
	opts.Ready = func(l server.Listening) {
		if given != nil {
			given(l)
		}
		ready <- l
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	go func() { s.done <- server.Run(ctx, cfg, opts, noEnv, s.Stdout, s.Stderr) }()
	started := time.Now()
	select {
	case l := <-ready:
		s.URL, s.Metrics = l.URL, l.Metrics
	case err := <-s.done:
		cancel()
		t.Fatalf("server exited: %v\n%s", err, s.Stderr.String())
	case <-time.After(startWithin):
		cancel()
		<-s.done
		t.Fatalf("server did not start within %v:\n%s\n%s", startWithin, s.Stdout.String(), s.Stderr.String())
	}
	contract.own(s.URL, t) // every answer is checked against the served document (contract_test.go)
	poll(startWithin-time.Since(started), func() bool {
		resp, err := http.Get(s.URL + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
	// After the test: stop the server and check the ledger invariant of everything it
	// stored (rules.Storage.CheckAllLedgers), so that every lifecycle test also tests the ledger.
	t.Cleanup(func() {
		s.Stop(t)
		checkLedgers(t, dir)
	})
	return s
}

// sharedNotificationKey is the notification key every test server's first start writes
// (servertest's: one RSA key for the test process). A test of keys that differ makes its
// own (`payouts keys`, otherNotificationKey).
var sharedNotificationKey = servertest.SharedNotificationKey

// checkLedgers opens a stopped server's database and checks its ledger
// (servertest.CheckLedgers).
func checkLedgers(t testing.TB, dir string) {
	t.Helper()
	db, err := openTestStore(t, dir)
	if err != nil {
		t.Errorf("ledger check: %v", err)
		return
	}
	defer db.Close(context.Background())
	servertest.CheckLedgers(t, db)
}

// Stop shuts the server down gracefully and reports its error.
func (s *testServer) Stop(t testing.TB) {
	if s.cancel == nil {
		return
	}
	// The idle connections of the tests' clients first: among them may be some dialed for
	// a request another connection served, never used, which the server's shutdown counts
	// as active for their first 5 s.
	if idle, ok := contract.inner.(interface{ CloseIdleConnections() }); ok {
		idle.CloseIdleConnections()
	}
	s.cancel()
	s.cancel = nil
	select {
	case err := <-s.done:
		if err != nil {
			t.Errorf("server stopped with error: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Errorf("server did not stop within 30s")
	}
}

// admin calls the admin API and decodes the JSON answer into out (may be nil)
// (servertest.AdminJSON).
func (s *testServer) admin(t testing.TB, method, path string, body any, out any) int {
	t.Helper()
	return servertest.AdminJSON(t, s.client(), s.URL, s.AdminToken, method, path, body, out)
}

// adminRequest builds an admin API request with the server's token.
func (s *testServer) adminRequest(method, path string, body any) *http.Request {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, s.URL+path, rd)
	req.Header.Set("Authorization", "Bearer "+s.AdminToken)
	req.Header.Set("Content-Type", "application/json")
	return req
}

// rawAdmin calls the admin API and returns the answer as it is (servertest.AdminRequest).
func (s *testServer) rawAdmin(t testing.TB, method, path string, body any) (int, http.Header, []byte) {
	t.Helper()
	return servertest.AdminRequest(t, s.client(), s.URL, s.AdminToken, method, path, body)
}

// getMetrics reads /metrics on the main listener, which needs the admin token.
func (s *testServer) getMetrics() (*http.Response, error) {
	req, err := http.NewRequest("GET", s.URL+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+s.AdminToken)
	return http.DefaultClient.Do(req)
}

// merchantClient signs requests for one merchant (servertest.Merchant, whose Do, Request,
// SignedAt and WaitStage it has); the end-to-end tests' own requests of a merchant are
// its methods.
type merchantClient struct{ *servertest.Merchant }

// newMerchant creates a merchant with the given settings (JSON names) and funds it.
func (s *testServer) newMerchant(t testing.TB, settings map[string]any) *merchantClient {
	t.Helper()
	return &merchantClient{servertest.NewMerchant(t, s.URL, s.AdminToken, s.client(), settings)}
}

// client is the server's HTTP client: its own, else a new one over the default transport.
func (s *testServer) client() *http.Client {
	if s.HTTP != nil {
		return s.HTTP
	}
	return &http.Client{Timeout: 30 * time.Second}
}

// do sends a signed request (servertest.Merchant.Do).
func (c *merchantClient) do(t testing.TB, method, path string, body any, query string) (int, http.Header, []byte) {
	t.Helper()
	return c.Do(t, method, path, body, query)
}

// request builds a signed request (servertest.Merchant.Request).
func (c *merchantClient) request(method, path string, body []byte, query string) *http.Request {
	return c.Request(method, path, body, query)
}

// waitStage polls the payout until it reaches stage (servertest.Merchant.WaitStage).
func (c *merchantClient) waitStage(t testing.TB, id int64, stage string, within time.Duration) payoutAnswer {
	t.Helper()
	return c.WaitStage(t, id, stage, within)
}

// with is a copy of the client changed by edit (for signing with a wrong key, clock, id).
func (c *merchantClient) with(edit func(*merchantClient)) *merchantClient {
	n := &merchantClient{c.With(func(*servertest.Merchant) {})}
	edit(n)
	return n
}

// The answers the tests read, and the sample requests, are servertest's.
type payoutAnswer = servertest.Payout

var (
	decodePayout   = servertest.DecodePayout
	decodeProblem  = servertest.DecodeProblem
	perBankRequest = servertest.PerBankRequest
	colBankRequest = servertest.ColBankRequest
)

// poll calls cond until it holds (true) or within has passed (false). Every wait of these
// tests for the service polls what it awaits through here, or moves the sandbox clock:
// a fixed sleep is either too short on a loaded machine or too long on a quiet one.
var poll = servertest.Poll

// eventually polls cond until it holds, or fails the test after within saying what did
// not happen.
var eventually = servertest.Eventually

// testClock is real time that a test moves forward (servertest.Clock).
type testClock = servertest.Clock

// stepStartClock is a testClock at the start of the next step of the sign-in codes
// (servertest.StepStartClock).
var stepStartClock = servertest.StepStartClock

// mustMetric is a sample of /metrics that the server must have.
func (s *testServer) mustMetric(t *testing.T, series string) float64 {
	t.Helper()
	v, ok := s.metricValue(t, series)
	if !ok {
		t.Fatalf("no %s in /metrics", series)
	}
	return v
}

// metricValue is a sample of /metrics, e.g. `payouts_backup_failures_total{target="dir"}`;
// ok is false when the server has no such series.
func (s *testServer) metricValue(t *testing.T, series string) (v float64, ok bool) {
	t.Helper()
	resp, err := s.getMetrics()
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindSubmatch(raw)
	if m == nil {
		return 0, false
	}
	v, err = strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		t.Fatal(err)
	}
	return v, true
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
