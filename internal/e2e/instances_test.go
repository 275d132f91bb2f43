package e2e

// Two binaries on one PostgreSQL: idempotent creates across instances, every
// payout settled and notified once, and an instance killed with SIGKILL mid-run whose
// claims the other takes over.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"payouts/internal/server"
	"payouts/store/postgres"
	"payouts/store/postgres/pgtest"
)

// receiver is a merchant's notification endpoint: it records every delivery's event id
// (Idempotency-Key) by payout.
type receiver struct {
	delay    atomic.Int64 // nanoseconds each answer waits: deliveries in flight at a kill
	mu       sync.Mutex
	byEvent  map[string]int
	byPayout map[int64]map[string]bool
}

func newReceiver() *receiver {
	return &receiver{byEvent: map[string]int{}, byPayout: map[int64]map[string]bool{}}
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	var body struct {
		Payout struct {
			ID string `json:"id"`
		} `json:"payout"`
	}
	raw, _ := io.ReadAll(req.Body)
	if err := json.Unmarshal(raw, &body); err != nil {
		http.Error(w, "bad body", 400)
		return
	}
	id, _ := strconv.ParseInt(body.Payout.ID, 10, 64)
	ev := req.Header.Get("Idempotency-Key")
	time.Sleep(time.Duration(r.delay.Load())) // on purpose: a slow answer holds the delivery in flight
	r.mu.Lock()
	r.byEvent[ev]++
	if r.byPayout[id] == nil {
		r.byPayout[id] = map[string]bool{}
	}
	r.byPayout[id][ev] = true
	r.mu.Unlock()
	w.WriteHeader(200)
}

// notified says how many payouts had a notification, and the most copies of one event.
func (r *receiver) notified() (payouts, maxCopies int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range r.byEvent {
		maxCopies = max(maxCopies, n)
	}
	return len(r.byPayout), maxCopies
}

// instance is one binary of the test.
type instance struct {
	cmd *exec.Cmd
	url string
}

func startInstances(t *testing.T, dbURL, keys string, n int, extra ...string) []*instance {
	t.Helper()
	var out []*instance
	for i := range n {
		args := append([]string{"--database", dbURL, "--instance", fmt.Sprintf("test-%d", i),
			"--master-key-file", filepath.Join(keys, "master.key"), "--card-key-file", filepath.Join(keys, server.CardKeyFile),
			"--notification-key-file", filepath.Join(keys, server.NotificationKeyFile),
			"--allow-private-notification-urls", "--sandbox-delay", "100ms", "--sandbox-batch-delay", "300ms"}, extra...)
		cmd, u := startProcess(t, t.TempDir(), args...)
		inst := &instance{cmd: cmd, url: u}
		t.Cleanup(func() {
			if inst.cmd.ProcessState == nil {
				inst.cmd.Process.Signal(syscall.SIGTERM)
				inst.cmd.Wait()
			}
		})
		out = append(out, inst)
	}
	return out
}

func TestTwoInstancesOnOnePostgreSQL(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs two binaries")
	}
	dbURL := pgtest.Database(t)
	keys := t.TempDir()
	if err := writeKeys(keys); err != nil {
		t.Fatal(err)
	}
	rcv := newReceiver()
	hook := httptest.NewServer(rcv)
	defer hook.Close()

	// A claim lease of 3 s: the killed instance's claims are taken over within the test.
	inst := startInstances(t, dbURL, keys, 2, "--claim-lease", "3s")
	a := &testServer{URL: inst[0].url, AdminToken: "test-admin-token-0123456789"}
	b := &testServer{URL: inst[1].url, AdminToken: "test-admin-token-0123456789"}
	m := a.newMerchant(t, map[string]any{"notificationUrl": hook.URL + "/hook"})
	onA, onB := m, m.with(func(c *merchantClient) { c.Base = b.URL })
	clients := []*merchantClient{onA, onB}

	t.Run("the same orderId sent to both instances at once is created once", func(t *testing.T) {
		const n = 20
		codes, ids := make([]int, n), make([]int64, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				code, _, raw := clients[i%2].do(t, "POST", "payouts", perBankRequest("SAME-ORDER"), "")
				codes[i] = code
				if code < 300 {
					ids[i] = decodePayout(t, raw).Payout.ID
				}
			}()
		}
		wg.Wait()
		created := 0
		for i := range n {
			if codes[i] == 201 {
				created++
			} else if codes[i] != 200 {
				t.Fatalf("answer %d: %d", i, codes[i])
			}
			if ids[i] != ids[0] {
				t.Fatalf("answer %d: payout %d, answer 0: %d", i, ids[i], ids[0])
			}
		}
		if created != 1 {
			t.Fatalf("%d answers were 201, want exactly 1", created)
		}
	})

	t.Run("200 payouts across both all succeed, each notified exactly once", func(t *testing.T) {
		ids := createAcross(t, clients, "ACROSS", 200)
		for i, id := range ids {
			clients[i%2].waitStage(t, id, "SUCCESS", 60*time.Second)
		}
		waitNotified(t, rcv, 201, 30*time.Second) // and the first subtest's payout
		a.waitOutboxEmpty(t, 30*time.Second)      // both instances' deliveries made: no duplicate can come
		if n, most := rcv.notified(); n != 201 || most != 1 {
			t.Fatalf("%d payouts notified (want 201), an event delivered up to %d times (want 1)", n, most)
		}
	})

	t.Run("an instance killed mid-run: the other finishes every payout", func(t *testing.T) {
		// Slow answers keep deliveries in flight, so that the killed instance dies holding
		// claims that the survivor must take over once their lease ends.
		rcv.delay.Store(int64(300 * time.Millisecond))
		defer rcv.delay.Store(0)
		const n = 200
		ids := make([]int64, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				order := fmt.Sprintf("KILL-%03d", i)
				req := clients[i%2].request("POST", "payouts", mustJSON(perBankRequest(order)), "")
				resp, err := clients[i%2].HTTP.Do(req)
				if err == nil && resp.StatusCode < 300 {
					raw, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					ids[i] = decodePayout(t, raw).Payout.ID
					return
				}
				if resp != nil {
					resp.Body.Close()
				}
				// The instance died under this request: resend it to the survivor; the
				// orderId makes the resend safe whether or not the first one was stored.
				code, _, raw := onB.do(t, "POST", "payouts", perBankRequest(order), "")
				if code != 201 && code != 200 {
					t.Errorf("resend of %s: %d %s", order, code, raw)
					return
				}
				ids[i] = decodePayout(t, raw).Payout.ID
			}()
		}
		killed := make(chan struct{})
		go func() {
			// Once the instance is delivering (slowly), SIGKILL it: no drain, its claims
			// on the events in flight left behind for the survivor.
			defer close(killed)
			waitClaims(t, dbURL, "test-0", 20*time.Second)
			inst[0].cmd.Process.Kill()
		}()
		wg.Wait()
		<-killed
		inst[0].cmd.Wait()
		for _, id := range ids {
			if id == 0 {
				t.Fatal("a payout has no id")
			}
			onB.waitStage(t, id, "SUCCESS", 90*time.Second)
		}
		waitNotified(t, rcv, 401, 90*time.Second)
		rcv.mu.Lock()
		for id, evs := range rcv.byPayout {
			if len(evs) != 1 {
				t.Errorf("payout %d was notified under %d event ids, want 1", id, len(evs))
			}
		}
		rcv.mu.Unlock()
		if n := takenOver(t, b); n == 0 {
			t.Error("the survivor took over no claim: the instance was not killed mid-run")
		} else {
			t.Logf("the survivor took over %d claims of the killed instance", n)
		}
	})

	t.Run("balances add up", func(t *testing.T) {
		var bal []struct {
			Country, Currency         string
			AvailableBalance, Balance int64
		}
		code, _, raw := onB.do(t, "GET", "balance", nil, "")
		if code != 200 {
			t.Fatalf("balance: %d %s", code, raw)
		}
		if err := json.Unmarshal(raw, &bal); err != nil {
			t.Fatalf("%v: %s", err, raw)
		}
		for _, x := range bal {
			if x.Country == "PER" && x.Currency == "PEN" {
				want := int64(1_000_000_000 - 401*100000)
				if x.Balance != want || x.AvailableBalance != want {
					t.Fatalf("PEN balance %d, available %d; want both %d (funded − 401 payouts)", x.Balance, x.AvailableBalance, want)
				}
				db, err := postgres.Open(context.Background(), dbURL, postgres.Options{})
				if err != nil {
					t.Fatal(err)
				}
				defer db.Close(context.Background())
				if err := db.CheckAllLedgers(context.Background()); err != nil {
					t.Fatal(err)
				}
				return
			}
		}
		t.Fatalf("no PEN balance in %s", raw)
	})
}

// createAcross creates n payouts, alternating between the clients, concurrently.
func createAcross(t *testing.T, clients []*merchantClient, prefix string, n int) []int64 {
	t.Helper()
	ids := make([]int64, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			code, _, raw := clients[i%2].do(t, "POST", "payouts", perBankRequest(fmt.Sprintf("%s-%03d", prefix, i)), "")
			if code != 201 {
				t.Errorf("create %d: %d %s", i, code, raw)
				return
			}
			ids[i] = decodePayout(t, raw).Payout.ID
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return ids
}

func waitNotified(t *testing.T, r *receiver, want int, within time.Duration) {
	t.Helper()
	if poll(within, func() bool { n, _ := r.notified(); return n >= want }) {
		return
	}
	n, _ := r.notified()
	t.Fatalf("%d payouts notified within %v, want %d", n, within, want)
}

// takenOver reads payouts_claims_taken_over_total of an instance's /metrics.
func takenOver(t *testing.T, s *testServer) int {
	t.Helper()
	return int(s.mustMetric(t, "payouts_claims_taken_over_total"))
}

// waitClaims waits until the instance holds a claim on an outbox event.
func waitClaims(t *testing.T, url, instance string, within time.Duration) {
	c, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Error(err)
		return
	}
	defer c.Close(context.Background())
	if poll(within, func() bool {
		var n int
		err = c.QueryRow(context.Background(), `SELECT count(*) FROM outbox WHERE lease_owner = $1`, instance).Scan(&n)
		return err != nil || n > 0
	}) {
		if err != nil {
			t.Error(err)
		}
		return
	}
	t.Errorf("instance %s claimed no event within %v", instance, within)
}

// On PostgreSQL an instance refuses to start without the secrets every instance shares,
// and names what is missing (before it touches the database).
func TestPostgreSQLRefusesToStartWithoutSharedKeys(t *testing.T) {
	t.Parallel()
	keys := t.TempDir()
	if err := writeKeys(keys); err != nil {
		t.Fatal(err)
	}
	all := []string{"--master-key-file", filepath.Join(keys, "master.key"), "--card-key-file", filepath.Join(keys, server.CardKeyFile),
		"--notification-key-file", filepath.Join(keys, server.NotificationKeyFile), "--admin-token-file", filepath.Join(keys, "admin-token")}
	for i, flag := range []string{"--master-key", "--card-key", "--notification-key-file", "--admin-token"} {
		args := append([]string{"serve", "--database", "postgres://nobody@127.0.0.1:1/none", "--data", t.TempDir()}, all[:2*i]...)
		args = append(args, all[2*i+2:]...)
		_, err := runCLI(t, nil, args...)
		if err == nil || !strings.Contains(err.Error(), "must share its keys") || !strings.Contains(err.Error(), flag) {
			t.Errorf("without %s: %v, want a refusal naming it", flag, err)
		}
	}
	if _, err := runCLI(t, nil, "keys", "--out", keys); err == nil || !strings.Contains(err.Error(), "never overwritten") {
		t.Errorf("keys over existing keys: %v, want a refusal", err)
	}
}
