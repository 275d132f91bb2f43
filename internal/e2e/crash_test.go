package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"payouts/rules"
	"payouts/store/bolt"
)

// listenLine is the start-up line with a server's base URL: http://127.0.0.1:port, or with
// HTTPS https://name:port. A binary run as its own process says where it listens only
// there; an in-process server tells server.Options.Ready.
var listenLine = regexp.MustCompile(`listening on (https?://[A-Za-z0-9.:\[\]-]+)`)

// processStderr keeps what each binary that startProcess ran wrote to its standard error
// (passed on to the test's as well), for a test that waits for a line of its log.
var processStderr sync.Map // *exec.Cmd → *syncBuffer

// stderrOf is what the binary cmd has written to its standard error so far.
func stderrOf(cmd *exec.Cmd) string {
	b, _ := processStderr.Load(cmd)
	return b.(*syncBuffer).String()
}

// startProcess runs the binary (payoutsBinary) as its own process and returns it with its base URL.
func startProcess(t *testing.T, dir string, args ...string) (*exec.Cmd, string) {
	t.Helper()
	bin, err := payoutsBinary()
	if err != nil {
		t.Fatal(err)
	}
	// The sandbox's timings of startServer's servers (args may give others): with the
	// defaults' 30 s, a non-real-time payout sent to the bank by a binary a test then kills
	// kept the server restarted after it waiting 30 s for the answer.
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0", "--data", dir, "--admin-token", "test-admin-token-0123456789",
		"--no-demo", "--log-format", "json", "--log-level", "warn", "--sandbox-delay", "200ms", "--sandbox-batch-delay", "500ms"}, args...)...)
	stdout, _ := cmd.StdoutPipe()
	logs := &syncBuffer{}
	cmd.Stderr = io.MultiWriter(os.Stderr, logs)
	processStderr.Store(cmd, logs)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	found := make(chan string, 1)
	ended := make(chan struct{}) // its standard output closed: the process is gone
	go func() {
		defer close(ended)
		for lines.Scan() {
			if m := listenLine.FindStringSubmatch(lines.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	// The bound is for a binary that hangs: on a machine running the other tests at once
	// (a new PostgreSQL database migrated among them) a start may take many seconds.
	select {
	case u := <-found:
		return cmd, u
	case <-ended:
		select {
		case u := <-found:
			return cmd, u
		default:
		}
		t.Fatalf("the binary exited before it listened:\n%s", logs.String())
	case <-time.After(90 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("the binary did not start within 90 s:\n%s", logs.String())
	}
	return nil, ""
}

// TestCrashLosesNoAcknowledgedPayout kills the server with SIGKILL while 8 clients create
// payouts (and their outcome emails go into the sandbox mailbox); after a restart every
// payout that was answered 201 is there, no orderId has two payouts, and every payout has
// exactly one outcome email: none lost, none twice.
func TestCrashLosesNoAcknowledgedPayout(t *testing.T) {
	t.Parallel()
	boltOnly(t, "the bbolt file's crash safety; TestTwoInstancesOnOnePostgreSQL kills an instance on PostgreSQL")
	if testing.Short() {
		t.Skip("kills the binary")
	}
	dir := t.TempDir()
	// Peru's bank payouts go by the batch channel: the restarted server asks the rail about
	// them when the killed one queued that, after the batch delay it had (the flag's
	// default, 30 s, kept the test waiting that long after the restart).
	cmd, base := startProcess(t, dir, "--sandbox-delay", "100ms")
	s := &testServer{URL: base, AdminToken: "test-admin-token-0123456789"}
	c := s.newMerchant(t, map[string]any{"emailNotifications": true})

	var mu sync.Mutex
	acked := map[string]int64{} // orderId → Id answered 201
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				order := fmt.Sprintf("K%d-%d", w, i)
				body, _ := json.Marshal(perBankRequest(order))
				resp, err := c.HTTP.Do(c.request("POST", "payouts", body, ""))
				if err != nil {
					return // the server died under us: this one was not acknowledged
				}
				var p payoutAnswer
				json.NewDecoder(resp.Body).Decode(&p)
				resp.Body.Close()
				if resp.StatusCode == 201 {
					mu.Lock()
					acked[order] = p.Payout.ID
					mu.Unlock()
				}
			}
		}()
	}
	// The kill comes once a hundred payouts are acknowledged, with the clients still sending.
	poll(30*time.Second, func() bool { mu.Lock(); defer mu.Unlock(); return len(acked) >= 100 })
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	close(stop)
	wg.Wait()
	if len(acked) < 50 {
		t.Fatalf("only %d payouts acknowledged before the kill; the test needs more", len(acked))
	}

	s2 := startServer(t, dir)
	c = c.with(func(c *merchantClient) { c.Base = s2.URL })
	seen := map[string]int{}
	cursor := ""
	for {
		q := "limit=200"
		if cursor != "" {
			q += "&cursor=" + cursor
		}
		code, _, raw := c.do(t, "GET", "payouts", nil, q)
		if code != 200 {
			t.Fatalf("list: %d %s", code, raw)
		}
		var page struct {
			Items      []payoutAnswer
			NextCursor *string
		}
		json.Unmarshal(raw, &page)
		for _, p := range page.Items {
			seen[p.Payout.OrderID]++
			if id, ok := acked[p.Payout.OrderID]; ok && id != p.Payout.ID {
				t.Errorf("orderId %s: acknowledged as %d, stored as %d", p.Payout.OrderID, id, p.Payout.ID)
			}
		}
		if page.NextCursor == nil {
			break
		}
		cursor = *page.NextCursor
	}
	for order := range acked {
		if seen[order] != 1 {
			t.Errorf("acknowledged orderId %s is stored %d times", order, seen[order])
		}
	}
	for order, n := range seen {
		if n > 1 {
			t.Errorf("orderId %s stored %d times", order, n)
		}
	}
	t.Logf("%d payouts acknowledged before SIGKILL, %d stored after restart", len(acked), len(seen))

	// Every payout finishes and its outcome email leaves the outbox; then the mailbox is
	// counted in the database itself (the mailbox pages show at most 1,000).
	waitFor(t, "every payout finished and the outbox empty", 60*time.Second, func() bool {
		for _, stage := range []string{"IN_PROGRESS", "PENDING"} {
			code, _, raw := c.do(t, "GET", "payouts", nil, "limit=1&stage="+stage)
			if code != 200 || !strings.Contains(string(raw), `"items":[]`) {
				return false
			}
		}
		return s2.metric(t, "payouts_outbox_depth") == 0
	})
	s2.Stop(t)
	db, err := bolt.Open(filepath.Join(dir, "payouts.db"), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	raws, err := db.SandboxMails(context.Background(), bolt.KeepSandboxMails)
	if err != nil {
		t.Fatal(err)
	}
	byEvent, byPayout := map[string]int{}, map[int64]int{}
	for _, raw := range raws {
		var m struct {
			EventID  string `json:"eventId"`
			Kind     string `json:"kind"`
			PayoutID int64  `json:"payoutId"`
		}
		json.Unmarshal(raw, &m)
		byEvent[m.EventID]++
		if m.Kind == rules.EventBeneficiaryMail {
			byPayout[m.PayoutID]++
		}
	}
	for id, n := range byEvent {
		if n != 1 {
			t.Errorf("sandbox mail of event %s kept %d times, want once", id, n)
		}
	}
	if len(byPayout) != len(seen) {
		t.Errorf("%d payouts have an outcome email, want all %d", len(byPayout), len(seen))
	}
	for id, n := range byPayout {
		if n != 1 {
			t.Errorf("payout %d has %d outcome emails, want 1", id, n)
		}
	}
	t.Logf("%d sandbox mails, one per payout", len(raws))
}
