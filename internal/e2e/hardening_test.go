package e2e

// End-to-end tests of the hardening: each limit and defence through the real server.

import (
	"bufio"
	"bytes"
	"encoding/json"
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

	"payouts/internal/server"
	"payouts/internal/servertest"
	"payouts/rules"
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

// signedStatus sends a signed GET of the balance with extra headers and says its status.
func (c *merchantClient) statusWith(t testing.TB, headers map[string]string) int {
	t.Helper()
	req := c.request("GET", "balance", nil, "")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// Failed authentications count per (client address, API key presented); a correctly
// signed request is never refused for anyone's failures; the address comes from
// X-Forwarded-For only through --trusted-proxies.
func TestAuthFailuresCountPerAddressAndKeyBehindTrustedProxies(t *testing.T) {
	t.Parallel()
	// The allowance a minute is counted on a held clock: the failures below fall in one
	// minute however slowly a busy machine sends them.
	clock := &testClock{}
	clock.Hold()
	s := startServerWith(t, "", server.Options{Now: clock.Now}, "--trusted-proxies", "127.0.0.1/32")
	a := s.newMerchant(t, nil)
	b := s.newMerchant(t, nil)
	badA := a.with(func(c *merchantClient) { c.Secret = "not the secret" })
	badB := b.with(func(c *merchantClient) { c.Secret = "not the secret" })
	fromX := map[string]string{"X-Forwarded-For": "203.0.113.7"}

	statuses := map[int]int{}
	for i := 0; i < 25; i++ {
		statuses[badA.statusWith(t, fromX)]++
	}
	if statuses[401] != 20 || statuses[429] != 5 {
		t.Errorf("25 wrong signatures answered %v, want 20 × 401 then 5 × 429", statuses)
	}
	// The same client and key, correctly signed: served.
	if code := a.statusWith(t, fromX); code != 200 {
		t.Errorf("a correctly signed request after the failures: %d, want 200", code)
	}
	// Another merchant behind the same proxy and client address: its own count.
	if code := badB.statusWith(t, fromX); code != 401 {
		t.Errorf("another API key from the same address: %d, want 401", code)
	}
	// Another client behind the proxy, same key: its own count.
	if code := badA.statusWith(t, map[string]string{"X-Forwarded-For": "203.0.113.8"}); code != 401 {
		t.Errorf("another client address (X-Forwarded-For) with the same key: %d, want 401", code)
	}
	if code := badA.statusWith(t, map[string]string{"Forwarded": `for="203.0.113.7:5000"`}); code != 429 {
		t.Errorf("the blocked client named by Forwarded: %d, want 429", code)
	}

	// A server that does not trust the peer ignores the headers: rotating them does not
	// escape the count.
	s2 := startServerWith(t, "", server.Options{Now: clock.Now}, "--trusted-proxies", "10.0.0.0/8")
	c := s2.newMerchant(t, nil)
	bad := c.with(func(c *merchantClient) { c.Secret = "not the secret" })
	last := 0
	for i := 0; i < 21; i++ {
		last = bad.statusWith(t, map[string]string{"X-Forwarded-For": "198.51.100." + strconv.Itoa(i)})
	}
	if last != 429 {
		t.Errorf("21st failure with spoofed X-Forwarded-For from an untrusted peer: %d, want 429", last)
	}
}

// Wrong admin tokens are limited like signatures (429 past 20 a minute per
// address); the right token still works; a short --admin-token is refused at start.
func TestAdminTokenFailuresLimitedAndShortTokenRefused(t *testing.T) {
	t.Parallel()
	clock := &testClock{} // held: the failures fall in one minute however slow the machine
	clock.Hold()
	s := startServerWith(t, "", server.Options{Now: clock.Now})
	statuses := map[int]int{}
	for i := 0; i < 25; i++ {
		req, _ := http.NewRequest("GET", s.URL+"/admin/v1/merchants/1", nil)
		req.Header.Set("Authorization", "Bearer wrong-token-"+strconv.Itoa(i))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		statuses[resp.StatusCode]++
		if resp.StatusCode == 429 && resp.Header.Get("Retry-After") == "" {
			t.Errorf("429 without Retry-After")
		}
	}
	if statuses[401] != 20 || statuses[429] != 5 {
		t.Errorf("25 wrong admin tokens answered %v, want 20 × 401 then 5 × 429", statuses)
	}
	if code := s.admin(t, "GET", "/admin/v1/merchants/none", nil, nil); code != 404 {
		t.Errorf("the right admin token after the failures: %d, want 404 (served)", code)
	}

	var out, errOut syncBuffer
	err := runMain(t.Context(), []string{"serve", "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--admin-token", "short-token-23-chars-xx", "--no-demo"}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "at least 24 characters") {
		t.Errorf("a 23-character admin token: %v, want refused", err)
	}
}

// rawAdmin calls the admin API and returns the status and the problem body.
func (s *testServer) adminProblem(t testing.TB, method, path string, body any) (int, problemAnswer) {
	t.Helper()
	var b []byte
	if body != nil {
		b, _ = json.Marshal(body)
	}
	req, _ := http.NewRequest(method, s.URL+path, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+s.AdminToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var p problemAnswer
	if resp.StatusCode >= 300 {
		p = decodeProblem(t, raw)
	}
	return resp.StatusCode, p
}

// Secrets may come from files, so that they stay out of /proc/*/cmdline; the keys
// the first start writes are whole, 0600, with no temporary file left.
func TestSecretsFromFilesStayOutOfTheCommandLine(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the binary")
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

// Key rotation. A new pair is issued; the old one keeps working for the grace
// period, then stops, or is revoked at once; the list shows the keys, never a secret.
func TestAPIKeyRotationWithGraceListAndRevoke(t *testing.T) {
	t.Parallel()
	clock := &testClock{}
	s := startServerWith(t, "", server.Options{Now: clock.Now})
	old := s.newMerchant(t, nil)
	keys := "/admin/v1/merchants/" + old.MerchantID + "/keys"
	type rotated struct {
		KeyID, APIKey, APISecret string
		Keys                     []struct {
			KeyID     string
			Current   bool
			ExpiresAt *string
		}
	}
	var r rotated
	if code := s.admin(t, "POST", keys, map[string]any{}, &r); code != 201 || r.APIKey == "" || r.APISecret == "" {
		t.Fatalf("rotate: %d %+v", code, r)
	}
	fresh := old.with(func(c *merchantClient) { c.Key, c.Secret = r.APIKey, r.APISecret })
	if code := old.statusWith(t, nil); code != 200 {
		t.Errorf("the old key during its grace period: %d, want 200", code)
	}
	if code := fresh.statusWith(t, nil); code != 200 {
		t.Errorf("the new key: %d, want 200", code)
	}
	// The new key with the old secret (or the reverse) is not a key pair.
	if code := old.with(func(c *merchantClient) { c.Key = r.APIKey }).statusWith(t, nil); code != 401 {
		t.Errorf("new key, old secret: %d, want 401", code)
	}
	req, _ := http.NewRequest("GET", s.URL+keys, nil)
	req.Header.Set("Authorization", "Bearer "+s.AdminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, secret := range []string{old.Key, old.Secret, r.APIKey, r.APISecret, "sealed", "Hash"} {
		if strings.Contains(string(raw), secret) {
			t.Errorf("the key list shows %q: %s", secret, raw)
		}
	}
	var list []struct {
		KeyID     string
		Current   bool
		ExpiresAt *string
	}
	json.Unmarshal(raw, &list)
	if len(list) != 2 || !list[0].Current || list[0].KeyID != r.KeyID || list[1].Current || list[1].ExpiresAt == nil {
		t.Fatalf("keys: %s; want the current one and the old one with its expiry", raw)
	}
	if exp, _ := time.Parse(time.RFC3339, *list[1].ExpiresAt); time.Until(exp) < 23*time.Hour || time.Until(exp) > 25*time.Hour {
		t.Errorf("the old key expires at %s, want in 24 h", *list[1].ExpiresAt)
	}

	if code, p := s.adminProblem(t, "DELETE", keys+"/"+r.KeyID, nil); code != 409 || p.Code != rules.CodeWrongState {
		t.Errorf("revoking the current key: %d %s, want 409 %s", code, p.Code, rules.CodeWrongState)
	}
	if code, p := s.adminProblem(t, "DELETE", keys+"/key_000000000000", nil); code != 404 || p.Code != rules.CodeAPIKeyNotFound {
		t.Errorf("revoking an unknown key: %d %s, want 404 %s", code, p.Code, rules.CodeAPIKeyNotFound)
	}
	if code, _ := s.adminProblem(t, "DELETE", keys+"/"+list[1].KeyID, nil); code != 204 {
		t.Errorf("revoking the old key: %d, want 204", code)
	}
	if code := old.statusWith(t, nil); code != 401 {
		t.Errorf("the revoked key: %d, want 401", code)
	}
	if code := fresh.statusWith(t, nil); code != 200 {
		t.Errorf("the current key after the revocation: %d, want 200", code)
	}

	// A grace of one second: the replaced key stops by itself. The clock stands still from
	// here, so that "within its grace" never depends on how fast a busy machine answers.
	clock.Hold()
	var r2 rotated
	if code := s.admin(t, "POST", keys, map[string]any{"graceSeconds": 1}, &r2); code != 201 {
		t.Fatal(code)
	}
	if code := fresh.statusWith(t, nil); code != 200 {
		t.Errorf("the replaced key within its 1 s grace: %d, want 200", code)
	}
	clock.Advance(1100 * time.Millisecond)
	if code := fresh.statusWith(t, nil); code != 401 {
		t.Errorf("the replaced key after its grace: %d, want 401", code)
	}
	// graceSeconds 0: the replaced key stops at once.
	newest := fresh.with(func(c *merchantClient) { c.Key, c.Secret = r2.APIKey, r2.APISecret })
	var r3 rotated
	if code := s.admin(t, "POST", keys, map[string]any{"graceSeconds": 0}, &r3); code != 201 {
		t.Fatal(code)
	}
	if code := newest.statusWith(t, nil); code != 401 {
		t.Errorf("the key replaced with graceSeconds 0: %d, want 401", code)
	}
	if code := newest.with(func(c *merchantClient) { c.Key, c.Secret = r3.APIKey, r3.APISecret }).statusWith(t, nil); code != 200 {
		t.Errorf("the newest key: %d, want 200", code)
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
	code, _, raw := c.do(t, "GET", "balance", nil, "")
	if code != 200 {
		t.Fatalf("GET balance: %d %s", code, raw)
	}
	var bs []struct {
		Currency  string `json:"currency"`
		Available int64  `json:"availableBalance"`
		Balance   int64  `json:"balance"`
	}
	json.Unmarshal(raw, &bs)
	for _, b := range bs {
		if b.Currency == currency {
			return b.Available, b.Balance
		}
	}
	return 0, 0
}

// The sandbox cannot mint money. REVERSED only follows PROCESSED: on a payout that
// waits for balance or for the bank it is 409 (2050) and changes nothing; on a processed
// payout it returns the money. The ledger invariant is checked after the test (harness).
func TestSimulateReversedOnlyAfterProcessedAndTheLedgerHolds(t *testing.T) {
	t.Parallel()
	// The rails take an hour: the first payout stays reserved at the bank while the test
	// looks at the balance, however slowly it gets there.
	s := startServer(t, "", "--sandbox-delay", "1h", "--sandbox-batch-delay", "1h")
	var m struct{ MerchantID, APIKey, APISecret string }
	if code := s.admin(t, "POST", "/admin/v1/merchants", map[string]any{"name": "No money", "settings": map[string]any{"pendingOnNoBalance": true}}, &m); code != 201 {
		t.Fatal(code)
	}
	c := &merchantClient{&servertest.Merchant{Base: s.URL, MerchantID: m.MerchantID, Key: m.APIKey, Secret: m.APISecret, HTTP: &http.Client{Timeout: 30 * time.Second}}}
	simulate := func(id int64, body map[string]any) (int, []byte) {
		code, _, raw := c.do(t, "POST", "payouts/"+strconv.FormatInt(id, 10)+"/simulate", body, "")
		return code, raw
	}
	reversed := map[string]any{"stage": "REJECTED", "status": "REVERSED"}

	// No balance: the payout waits as PENDING_BALANCE, and cannot be "returned".
	held := c.create(t, perBankRequest("MINT-1")).Payout.ID
	c.waitStage(t, held, "PENDING", 5*time.Second)
	if code, raw := simulate(held, reversed); code != 409 || decodeProblem(t, raw).Code != rules.CodeWrongState {
		t.Errorf("REVERSED on PENDING_BALANCE: %d %s, want 409 %s", code, raw, rules.CodeWrongState)
	}
	if a, b := c.balanceOf(t, "PEN"); a != 0 || b != 0 {
		t.Errorf("balance after the refused simulate: available %d, balance %d; want 0 and 0", a, b)
	}

	// Funded: the payout is released to the bank and stays PENDING_BANK (account …9997).
	if code := s.admin(t, "POST", "/admin/v1/merchants/"+m.MerchantID+"/balance", map[string]any{"country": "PER", "currency": "PEN", "amount": 500000}, nil); code != 200 {
		t.Fatal(code)
	}
	r := perBankRequest("MINT-2")
	r["destination"] = map[string]any{"bankAccount": map[string]any{"bankCode": "003", "accountType": 2, "accountNumber": "1231234569997"}}
	atBank := c.create(t, r).Payout.ID
	waitFor(t, "the payout at the bank", 5*time.Second, func() bool {
		code, _, raw := c.do(t, "GET", "payouts/"+strconv.FormatInt(atBank, 10), nil, "")
		return code == 200 && decodePayout(t, raw).Output.Status == "PENDING_BANK"
	})
	if code, raw := simulate(atBank, reversed); code != 409 || decodeProblem(t, raw).Code != rules.CodeWrongState {
		t.Errorf("REVERSED on PENDING_BANK: %d %s, want 409 %s", code, raw, rules.CodeWrongState)
	}
	// Both payouts (100000 each) are reserved now.
	if a, b := c.balanceOf(t, "PEN"); a != 300000 || b != 500000 {
		t.Errorf("balance with two reservations: available %d, balance %d; want 300000 and 500000", a, b)
	}
	// SUCCESS, then REVERSED: the money leaves, then comes back.
	if code, raw := simulate(atBank, map[string]any{"stage": "SUCCESS"}); code != 200 {
		t.Fatalf("SUCCESS: %d %s", code, raw)
	}
	if a, b := c.balanceOf(t, "PEN"); a != 300000 || b != 400000 {
		t.Errorf("after PROCESSED: available %d, balance %d; want 300000 and 400000", a, b)
	}
	if code, raw := simulate(atBank, reversed); code != 200 || decodePayout(t, raw).Output.Status != "REVERSED" {
		t.Errorf("REVERSED on PROCESSED: %d %s, want 200 REVERSED", code, raw)
	}
	if a, b := c.balanceOf(t, "PEN"); a != 400000 || b != 500000 {
		t.Errorf("after REVERSED: available %d, balance %d; want 400000 and 500000", a, b)
	}
	if code, _ := simulate(atBank, reversed); code != 409 {
		t.Errorf("REVERSED twice: %d, want 409", code)
	}
}

// Every answer of the API says X-Content-Type-Options: nosniff, errors included: a browser
// never takes a problem, a CSV or a document for another type than it says.
func TestAPIAnswersCarryNosniff(t *testing.T) {
	t.Parallel()
	s := startServer(t, "")
	c := s.newMerchant(t, map[string]any{})
	wrong := c.with(func(c *merchantClient) { c.Secret = "bm90IHRoZSBzZWNyZXQgb2YgdGhpcyBtZXJjaGFudCE=" })
	check := func(what string, code int, h http.Header) {
		t.Helper()
		if got := h.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s (%d): X-Content-Type-Options %q, want nosniff", what, code, got)
		}
	}
	code, h, _ := c.do(t, "POST", "payouts", perBankRequest("nosniff-1"), "")
	check("a create", code, h)
	code, h, _ = c.do(t, "POST", "payouts", map[string]any{"amount": "no"}, "")
	check("a refused body", code, h)
	code, h, _ = wrong.do(t, "GET", "balance", nil, "")
	check("a wrong signature", code, h)
	code, h, _ = s.rawAdmin(t, "GET", "/admin/v1/merchants", nil)
	check("an admin list", code, h)
	for _, tc := range []struct{ method, path string }{
		{"GET", "/no/such/endpoint"}, {"DELETE", "/healthz"}, {"GET", "/admin/v1/merchants"},
		{"GET", "/openapi.json"}, {"GET", "/healthz"},
	} {
		req, _ := http.NewRequest(tc.method, s.URL+tc.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		check(tc.method+" "+tc.path, resp.StatusCode, resp.Header)
	}
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
