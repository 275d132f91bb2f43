package e2e

// End-to-end tests of the hardening: each limit and defence through the real server.

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// tarpit accepts connections and never answers: a merchant endpoint that hangs every
// notification until the 15 s timeout. It counts the connections open at once: a sender
// that gave up on one after its timeout and tried again holds no more workers than before,
// which a count of connections ever accepted would say it does on a machine slow enough
// to reach the timeout. Each accept asks the kernel which of the earlier connections their
// sender closed (peerClosed): a sender closes the one it gave up on before it dials the
// next, so the kernel has that end first, where a goroutine reading each connection could
// be scheduled after the accept and count one worker twice.
type tarpit struct {
	ln         net.Listener
	mu         sync.Mutex
	conns      []net.Conn // every connection accepted, closed at the end
	open, most int        // open at the last accept, and the most open at once
}

func newTarpit(t testing.TB) *tarpit {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tp := &tarpit{ln: ln}
	go func() {
		var live []net.Conn // only this goroutine's
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			live = slices.DeleteFunc(live, peerClosed)
			live = append(live, c)
			tp.mu.Lock()
			tp.conns = append(tp.conns, c)
			tp.open = len(live)
			tp.most = max(tp.most, tp.open)
			tp.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		tp.mu.Lock()
		for _, c := range tp.conns {
			c.Close()
		}
		tp.mu.Unlock()
	})
	return tp
}

// peerClosed reports whether c's sender closed it: what it sent is read and dropped without
// waiting, and the kernel then answers its end of stream (closed) or nothing yet (open).
func peerClosed(c net.Conn) bool {
	rc, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		return true
	}
	closed := false
	buf := make([]byte, 4096)
	rc.Read(func(fd uintptr) bool {
		for {
			n, _, err := syscall.Recvfrom(int(fd), buf, syscall.MSG_DONTWAIT)
			switch {
			case err == syscall.EINTR:
				continue
			case err == syscall.EAGAIN || err == syscall.EWOULDBLOCK:
				return true // open, nothing more sent
			case err != nil || n == 0:
				closed = true // its end, or a reset
				return true
			}
		}
	})
	return closed
}

// held is how many connections were open at the last accept, and the most open at once.
func (tp *tarpit) held() (now, most int) {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return tp.open, tp.most
}

// A merchant whose endpoint accepts and never answers, with 16 rejected payouts
// to notify, does not delay another merchant's notification by more than 2 s.
func TestTarpitMerchantDoesNotDelayAnotherMerchantsNotification(t *testing.T) {
	t.Parallel()
	tp := newTarpit(t)
	hook := &hookReceiver{tries: map[string]int{}, accepted: map[string][][]byte{},
		verify: func([]byte, string) error { return nil }}
	recv := httptest.NewServer(hook)
	defer recv.Close()
	s := startServer(t, "", "--allow-private-notification-urls")
	slow := s.newMerchant(t, map[string]any{"notificationUrl": "http://" + tp.ln.Addr().String() + "/hook"})
	other := s.newMerchant(t, map[string]any{"notificationUrl": recv.URL + "/hook"})

	rejected := func(order string) map[string]any {
		r := perBankRequest(order)
		r["destination"] = map[string]any{"bankAccount": map[string]any{"bankCode": "003", "accountType": 2, "accountNumber": "1231234569999"}}
		return r
	}
	var ids []int64
	for i := 0; i < 16; i++ {
		ids = append(ids, slow.create(t, rejected("TARPIT-"+strconv.Itoa(i))).Payout.ID)
	}
	for _, id := range ids {
		slow.waitStage(t, id, "REJECTED", 10*time.Second)
	}
	waitFor(t, "the tarpit holds its share of 4 workers", 5*time.Second, func() bool { now, _ := tp.held(); return now >= 4 })

	id := other.create(t, rejected("OTHER-1")).Payout.ID
	other.waitStage(t, id, "REJECTED", 10*time.Second)
	finished := time.Now()
	waitFor(t, "the other merchant's notification", 2*time.Second, func() bool {
		_, _, _, n := hook.snapshot()
		return n > 0
	})
	now, most := tp.held()
	t.Logf("other merchant notified %v after its payout finished; the tarpit holds %d connections (at most %d at once)",
		time.Since(finished).Round(time.Millisecond), now, most)
	if most > 4 {
		t.Errorf("the tarpit merchant held %d workers at once, want at most its share of 4", most)
	}
}

// A short --admin-token is refused at start (the limit on wrong tokens is tested in
// process, api's TestAdminTokenFailuresLimited).
func TestShortAdminTokenRefusedAtStart(t *testing.T) {
	t.Parallel()
	var out, errOut syncBuffer
	err := runMain(t.Context(), []string{"serve", "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--admin-token", "short-token-23-chars-xx", "--no-demo"}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "at least 24 characters") {
		t.Errorf("a 23-character admin token: %v, want refused", err)
	}
}

// Secrets may come from files, so that they stay out of /proc/*/cmdline; the keys
// the first start writes are whole, 0600, with no temporary file left.
func TestSecretsFromFilesStayOutOfTheCommandLine(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the binary")
	}
	bin, err := payoutsBinary()
	if err != nil {
		t.Fatal(err)
	}
	dir, secrets := t.TempDir(), t.TempDir()
	token := "file-admin-token-" + strings.Repeat("a", 20)
	cardKey := strings.Repeat("ab", 32)
	smtpURL := "smtp://mailer:pa55w0rd-in-a-file@" + freeAddr(t)
	write := func(name, v string) string {
		p := filepath.Join(secrets, name)
		if err := os.WriteFile(p, []byte(v+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--data", dir, "--no-demo", "--log-format", "json",
		"--admin-token-file", write("admin-token", token), "--card-key-file", write("card-key", cardKey),
		"--smtp-url-file", write("smtp-url", smtpURL))
	var stderr syncBuffer
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }()
	base := ""
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if m := listenLine.FindStringSubmatch(sc.Text()); m != nil {
			base = m[1]
			break
		}
	}
	if base == "" {
		t.Fatalf("the binary did not start: %s", stderr.String())
	}
	go io.Copy(io.Discard, stdout)
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", cmd.Process.Pid))
	if err != nil {
		t.Skip("no /proc here:", err)
	}
	for _, secret := range []string{token, cardKey, "pa55w0rd"} {
		if bytes.Contains(cmdline, []byte(secret)) {
			t.Errorf("/proc/<pid>/cmdline shows a secret: %q", cmdline)
		}
		if strings.Contains(stderr.String(), secret) {
			t.Errorf("the log shows a secret")
		}
	}
	s := &testServer{URL: base, AdminToken: token}
	if code := s.admin(t, "POST", "/admin/v1/merchants", map[string]any{"name": "From files"}, nil); code != 201 {
		t.Errorf("the admin token from the file: %d, want 201", code)
	}
	if !strings.Contains(stderr.String(), "mail goes out over SMTP") {
		t.Errorf("the SMTP URL from the file is not used:\n%s", stderr.String())
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("a temporary file is left in the data directory: %s", e.Name())
		}
		if st, _ := os.Stat(filepath.Join(dir, e.Name())); !e.IsDir() && st.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s is readable by others: %v", e.Name(), st.Mode().Perm())
		}
	}
	for _, f := range []string{"master.key", "notification-key.pem"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "card.key")); err == nil {
		t.Errorf("card.key written although the card key came from a file")
	}

	// Both the flag and its file: refused.
	err = runMain(t.Context(), []string{"serve", "--data", t.TempDir(), "--admin-token", token, "--admin-token-file", filepath.Join(secrets, "admin-token")}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "both set") {
		t.Errorf("--admin-token with --admin-token-file: %v, want refused", err)
	}
}

// /metrics on the main listener needs the admin token; --metrics-addr serves it on
// a listener of its own without one, and that listener serves nothing else.
func TestMetricsNeedTheAdminTokenOrTheirOwnListener(t *testing.T) {
	t.Parallel()
	s := startServer(t, "", "--metrics-addr", "127.0.0.1:0")
	resp, err := http.Get(s.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("/metrics on the main listener without the token: %d, want 401", resp.StatusCode)
	}
	if resp, err := s.getMetrics(); err != nil || resp.StatusCode != 200 {
		t.Errorf("/metrics with the admin token: %v %v, want 200", resp, err)
	} else {
		resp.Body.Close()
	}
	if s.Metrics == "" {
		t.Fatal("the server reported no metrics listener")
	}
	metricsURL := "http://" + s.Metrics + "/metrics"
	if !strings.Contains(s.Stdout.String(), "metrics served on "+metricsURL) {
		t.Errorf("the operator is not told where the metrics are served:\n%s", s.Stdout.String())
	}
	resp, err = http.Get(metricsURL)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(raw), "payouts_outbox_depth") {
		t.Errorf("/metrics on its own listener: %d, want 200 with the metrics", resp.StatusCode)
	}
	if !onPostgresTests() {
		size := func() float64 { // the file grows only in a commit: one of the two sizes is the scrape's
			fi, err := os.Stat(filepath.Join(s.Data, "payouts.db"))
			if err != nil {
				t.Fatal(err)
			}
			return float64(fi.Size())
		}
		before := size()
		got := s.mustMetric(t, "payouts_db_file_bytes")
		if after := size(); got != before && got != after {
			t.Errorf("payouts_db_file_bytes %v, the database file has %v bytes", got, after)
		}
		if got, file := s.mustMetric(t, "payouts_db_free_bytes"), size(); got < 0 || got >= file {
			t.Errorf("payouts_db_free_bytes %v of a %v-byte file", got, file)
		}
	}
	for _, path := range []string{"/admin/v1/backup", "/healthz", "/api/v1/notifications/public-key"} {
		resp, err := http.Get("http://" + s.Metrics + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 404 {
			t.Errorf("%s on the metrics listener: %d, want 404", path, resp.StatusCode)
		}
	}
}

// balanceOf reads one of the merchant's balances through the API.
func (c *merchantClient) balanceOf(t testing.TB, currency string) (available, balance int64) {
	t.Helper()
	return c.Balance(t, currency)
}

// No secret of a path reaches the access log or a span: a dashboard set-up link carries its
// token in the query (as the card form its session), so that whoever reads the logs cannot
// finish an unused link first; a link of the old form (the token in the path) still opens,
// redirected, and is logged as its route; a Bre-B key (a beneficiary's phone, email or
// document) is logged as its route too.
func TestSetupTokensAndBreBKeysStayOutOfTheAccessLogAndSpans(t *testing.T) {
	t.Parallel()
	otlp := newOTLPReceiver(t)
	s := startServer(t, "", "--otlp-endpoint", otlp.URL)
	var created struct{ SetupLink string }
	if code := s.admin(t, "POST", "/admin/v1/users", map[string]any{"name": "Olga", "email": "olga@example.com", "role": "operator"}, &created); code != 201 {
		t.Fatalf("create the user: %d", code)
	}
	link, err := url.Parse(created.SetupLink)
	if err != nil || link.Path != "/dashboard/setup" {
		t.Fatalf("the set-up link %q: want its token in the query, never in the path", created.SetupLink)
	}
	token := link.Query().Get("t")
	if len(token) < 32 {
		t.Fatalf("the set-up link %q has no token", created.SetupLink)
	}
	c := dashClient(nil)
	if code, body, _ := page(t, c, s.URL+link.RequestURI()); code != 200 || !secretOnPage.MatchString(body) {
		t.Fatalf("the set-up page: %d", code)
	}
	if code, _, _ := postForm(t, c, s.URL+link.RequestURI(), url.Values{"password": {"short"}, "password2": {"short"}, "code": {"000000"}}); code != http.StatusUnprocessableEntity {
		t.Errorf("a short password: %d, want 422", code)
	}
	if code, _, loc := page(t, c, s.URL+"/dashboard/setup/"+token); code != http.StatusSeeOther || loc != link.RequestURI() {
		t.Errorf("a link of the old form: %d to %q, want 303 to %q", code, loc, link.RequestURI())
	}
	m := s.newMerchant(t, map[string]any{})
	const bre = "@anamaria"
	if code, _, raw := m.do(t, "GET", "breb/keys/"+bre, nil, ""); code != 200 {
		t.Fatalf("a Bre-B lookup: %d %s", code, raw)
	}
	s.Stop(t)

	log := s.Stderr.String()
	for what, secret := range map[string]string{"set-up token": token, "Bre-B key": bre, "escaped Bre-B key": url.PathEscape(bre)} {
		if strings.Contains(log, secret) {
			t.Errorf("the log holds the %s %q", what, secret)
		}
	}
	paths := map[string]int{}
	for _, l := range accessLines(t, log, "") {
		paths[l.Method+" "+l.Path]++
	}
	for _, want := range []string{"GET /dashboard/setup", "POST /dashboard/setup", "GET /dashboard/setup/{token}",
		"GET /api/v1/{merchantId}/breb/keys/{key}"} {
		if paths[want] != 1 {
			t.Errorf("%d access log lines of %s, want 1 (all: %v)", paths[want], want, paths)
		}
	}
	spans, _, bodies, _ := otlp.received()
	for _, b := range bodies {
		if bytes.Contains(b, []byte(token)) || bytes.Contains(b, []byte(bre)) {
			t.Errorf("an export carries the set-up token or the Bre-B key")
			break
		}
	}
	var setupSpans int
	for _, sp := range spans {
		if strings.HasPrefix(attr(sp, "http.route"), "/dashboard/setup") {
			setupSpans++
		}
	}
	if setupSpans != 3 {
		t.Errorf("%d spans of the set-up routes, want 3", setupSpans)
	}
}
