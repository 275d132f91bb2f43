package e2e

// The faults an operator met, each end to end on the server: nothing wedges,
// nothing is silently replaced.

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"payouts/internal/server"
	"payouts/rules"
	"payouts/store/bolt"
	"payouts/store/postgres/pgtest"
)

// timedCall sends one request and reports its status, its body and how long it took; a
// request that does not answer within the client's timeout is an error.
func timedCall(client *http.Client, req *http.Request) (int, []byte, time.Duration, error) {
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, time.Since(start), err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return resp.StatusCode, raw, time.Since(start), err
}

// Clock advances and resets while payouts are created, cancelled and simulated:
// every call answers within its deadline (on 4d6e226 the first advance under create traffic
// wedged every write for good), and the server still stops within its drain timeout.
//
// Serial: it counts what three seconds of wall time get done, which the other tests running
// at once would slow (serial tests run before the parallel ones start).
func TestClockChangesUnderWriteTrafficNeverWedge(t *testing.T) {
	s := startServer(t, "")
	c := s.newMerchant(t, nil)
	const deadline = 5 * time.Second
	client := &http.Client{Timeout: deadline}
	stop := time.Now().Add(3 * time.Second)

	var (
		mu       sync.Mutex
		failures []string
		ids      []int64
		calls    atomic.Int64
		slowest  atomic.Int64
	)
	fail := func(format string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		if len(failures) < 20 {
			failures = append(failures, fmt.Sprintf(format, a...))
		}
	}
	call := func(what string, req *http.Request, ok ...int) []byte {
		code, raw, took, err := timedCall(client, req)
		calls.Add(1)
		for {
			old := slowest.Load()
			if int64(took) <= old || slowest.CompareAndSwap(old, int64(took)) {
				break
			}
		}
		if err != nil {
			fail("%s: no answer within %v: %v", what, deadline, err)
			return nil
		}
		for _, want := range ok {
			if code == want {
				return raw
			}
		}
		fail("%s: %d %s", what, code, raw)
		return nil
	}
	recent := func() (int64, bool) {
		mu.Lock()
		defer mu.Unlock()
		if len(ids) == 0 {
			return 0, false
		}
		return ids[len(ids)-1], true
	}
	var wg sync.WaitGroup
	loop := func(pause time.Duration, step func(i int)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(stop); i++ {
				step(i)
				time.Sleep(pause) // paces this kind of call in the traffic; nothing is awaited here
			}
		}()
	}
	for w := range 4 {
		loop(0, func(i int) {
			body, _ := json.Marshal(perBankRequest(fmt.Sprintf("WEDGE-%d-%d", w, i)))
			raw := call("create", c.request("POST", "payouts", body, ""), 201)
			if raw != nil {
				p := decodePayout(t, raw)
				mu.Lock()
				ids = append(ids, p.Payout.ID)
				mu.Unlock()
			}
		})
	}
	loop(20*time.Millisecond, func(int) {
		if id, ok := recent(); ok {
			call("cancel", c.request("POST", "payouts/"+strconv.FormatInt(id, 10)+"/cancel", nil, ""), 200, 409)
		}
	})
	loop(20*time.Millisecond, func(int) {
		if id, ok := recent(); ok {
			body := []byte(`{"stage":"SUCCESS"}`)
			call("simulate", c.request("POST", "payouts/"+strconv.FormatInt(id, 10)+"/simulate", body, ""), 200, 409)
		}
	})
	loop(50*time.Millisecond, func(int) {
		call("advance", s.adminRequest("POST", "/admin/v1/sandbox/clock", map[string]string{"advance": "1s"}), 200)
	})
	loop(300*time.Millisecond, func(int) {
		call("reset", s.adminRequest("DELETE", "/admin/v1/sandbox/clock", nil), 200)
	})
	wg.Wait()
	for _, f := range failures {
		t.Error(f)
	}
	if len(ids) < 20 {
		t.Errorf("only %d payouts created in 3 s", len(ids))
	}
	t.Logf("%d calls, %d payouts created, slowest call %v", calls.Load(), len(ids), time.Duration(slowest.Load()))
	stopped := time.Now()
	s.Stop(t)
	if took := time.Since(stopped); took > 20*time.Second {
		t.Errorf("the server took %v to stop", took)
	}
}

// Funding takes only the currencies of the country; no error shows a Go type or
// field name; a body over the limit states the limit once, the same in detail and message.
func TestFundingCurrencyGoInternalsAndBodyLimitStatedOnce(t *testing.T) {
	t.Parallel()
	s := startServer(t, "")
	c := s.newMerchant(t, nil)
	for _, pair := range [][2]string{{"COL", "PEN"}, {"PER", "COP"}, {"COL", "USD"}} {
		code, _, raw := s.rawAdmin(t, "POST", "/admin/v1/merchants/"+c.MerchantID+"/balance",
			map[string]any{"country": pair[0], "currency": pair[1], "amount": 1000})
		p := decodeProblem(t, raw)
		if code != 400 || p.Code != rules.CodeFundCurrency || len(p.Errors) != 1 || p.Errors[0].Location != "body.currency" {
			t.Errorf("funding %s in %s: %d %s, want 400 %s at body.currency", pair[0], pair[1], code, raw, rules.CodeFundCurrency)
		}
	}
	var balances []rules.Balance
	if code, _, raw := c.do(t, "GET", "balance", nil, ""); code != 200 || json.Unmarshal(raw, &balances) != nil {
		t.Fatalf("GET balance: %d %s", code, raw)
	}
	for _, b := range balances {
		if (b.Country == "COL") != (b.Currency == "COP") {
			t.Errorf("a balance of another country's currency was stored: %+v", b)
		}
	}

	goInternals := regexp.MustCompile(`Go struct|Go value|of type|int64|unmarshal|\bstruct\b|json:`)
	for _, tc := range []struct{ name, method, path, body string }{
		{"amount 1e20", "POST", "/admin/v1/merchants/" + c.MerchantID + "/balance", `{"country":"COL","currency":"COP","amount":1e20}`},
		{"amount a string", "POST", "/admin/v1/merchants/" + c.MerchantID + "/balance", `{"country":"COL","currency":"COP","amount":"10"}`},
		{"amount a fraction", "POST", "/admin/v1/merchants/" + c.MerchantID + "/balance", `{"country":"COL","currency":"COP","amount":1.5}`},
		{"settings not an object", "POST", "/admin/v1/merchants", `{"name":"x","settings":[1]}`},
	} {
		req, _ := http.NewRequest(tc.method, s.URL+tc.path, strings.NewReader(tc.body))
		req.Header.Set("Authorization", "Bearer "+s.AdminToken)
		req.Header.Set("Content-Type", "application/json")
		code, raw, _, err := timedCall(http.DefaultClient, req)
		if err != nil {
			t.Fatal(err)
		}
		if code != 400 || goInternals.Match(raw) {
			t.Errorf("%s: %d %s, want 400 without Go types or field names", tc.name, code, raw)
		}
	}

	big := bytes.Repeat([]byte("a"), 10<<20)
	for _, path := range []string{"/ms-authentication-service/authentication/api-integration/token", "/admin/v1/merchants"} {
		req, _ := http.NewRequest("POST", s.URL+path, bytes.NewReader(big))
		req.Header.Set("Authorization", "Bearer "+s.AdminToken)
		req.Header.Set("Content-Type", "application/json")
		code, raw, _, err := timedCall(http.DefaultClient, req)
		if err != nil {
			t.Fatal(err)
		}
		p := decodeProblem(t, raw)
		if code != 413 || p.Code != rules.CodeBodyTooLarge || len(p.Errors) != 1 || p.Detail != p.Errors[0].Message ||
			!strings.Contains(p.Detail, "64 KiB") || strings.Contains(string(raw), "limit=") {
			t.Errorf("POST %s with 10 MB: %d %s, want 413 stating 64 KiB once", path, code, raw)
		}
	}
}

// Identifiers refuse Unicode format characters and controls (1909 at the field).
func TestIdentifiersRefuseInvisibleAndDirectionCharacters(t *testing.T) {
	t.Parallel()
	s := startServer(t, "")
	c := s.newMerchant(t, nil)
	for _, r := range []string{"\u202e", "\u200b", "\ufeff", "\u2066"} {
		order := "INV" + r + "1"
		code, _, raw := c.do(t, "POST", "payouts", perBankRequest(order), "")
		p := decodeProblem(t, raw)
		if code != 400 || p.Code != rules.CodeControlCharacter || len(p.Errors) != 1 || p.Errors[0].Location != "body.orderId" {
			t.Errorf("orderId with %U: %d %s, want 400 %s at body.orderId", []rune(r)[0], code, raw, rules.CodeControlCharacter)
		}
		if code, _, raw := c.do(t, "GET", "payouts", nil, "orderId="+url.QueryEscape(order)); code != 200 || !strings.Contains(string(raw), `"items":[]`) {
			t.Errorf("orderId with %U was stored: %s", []rune(r)[0], raw)
		}
		code, _, raw = s.rawAdmin(t, "POST", "/admin/v1/merchants", map[string]any{"name": "Inv", "merchantId": "m" + r + "1"})
		p = decodeProblem(t, raw)
		if code != 400 || p.Code != rules.CodeControlCharacter || len(p.Errors) != 1 || p.Errors[0].Location != "body.merchantId" {
			t.Errorf("merchantId with %U: %d %s, want 400 %s at body.merchantId", []rune(r)[0], code, raw, rules.CodeControlCharacter)
		}
	}
	for field, value := range map[string]string{"accountSuffix": "12\x00", "bankCode": "00\u200b2"} {
		code, _, raw := s.rawAdmin(t, "PUT", "/admin/v1/merchants/"+c.MerchantID+"/sandbox/rules",
			map[string]any{"rules": []any{map[string]any{"match": map[string]any{field: value}, "outcome": map[string]any{"stage": "SUCCESS"}}}})
		p := decodeProblem(t, raw)
		found := false
		for _, e := range p.Errors {
			found = found || e.Code == rules.CodeControlCharacter && strings.HasSuffix(e.Location, "rules[0].match."+field)
		}
		if code != 400 || !found {
			t.Errorf("a scripted rule's %s %q: %d %s, want 400 with %s at rules[0].match.%s", field, value, code, raw, rules.CodeControlCharacter, field)
		}
	}
	// A name is text, not an identifier: a joiner in it stays allowed.
	ok := perBankRequest("INV-OK")
	ok["beneficiary"].(map[string]any)["name"] = "Ana\u200dMaría"
	c.create(t, ok)
}

// A dashboard session ends when the server restarts with another admin token: the
// old cookie neither reads nor funds.
func TestDashboardSessionEndsWithItsAdminToken(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startServer(t, dir)
	c := s.newMerchant(t, nil)
	client := dashboardSignIn(t, s)
	if resp, err := client.Get(s.URL + "/dashboard/merchants"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("signed in: %v %v", resp, err)
	}
	s.Stop(t)

	newToken := "another-admin-token-9876543210"
	s2 := startServer(t, dir, "--admin-token", newToken)
	s2.AdminToken = newToken
	old := func(u string) string { return strings.Replace(u, s.URL, s2.URL, 1) }
	// The cookie jar keys cookies by host: carry the old session to the new port.
	u1, _ := url.Parse(s.URL)
	u2, _ := url.Parse(s2.URL)
	client.Jar.SetCookies(u2, client.Jar.Cookies(u1))
	resp, err := client.Get(old(s.URL + "/dashboard/merchants"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/dashboard/login" {
		t.Errorf("the old token's session after a new --admin-token: %d to %q, want 303 to the sign-in", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, err = client.PostForm(s2.URL+"/dashboard/merchants/"+c.MerchantID+"/fund", url.Values{"pair": {"COL COP"}, "amount": {"1"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	c2 := c.with(func(m *merchantClient) { m.Base = s2.URL })
	var balances []rules.Balance
	if code, _, raw := c2.do(t, "GET", "balance", nil, ""); code != 200 || json.Unmarshal(raw, &balances) != nil {
		t.Fatalf("GET balance: %d %s", code, raw)
	}
	for _, b := range balances {
		if b.Currency == "COP" && b.Available != 100_000_000_000 {
			t.Errorf("the old session funded the balance: %+v", b)
		}
	}
	// Ended, not just refused: signing in with the new token works, and the old cookie is gone.
	dashboardSignIn(t, s2)
}

// One failure counter for the dashboard's sign-in and the admin API; past it wrong
// tokens are refused on both, and the right token is never.
func TestSignInFailuresSharedWithTheAdminAPIAndNeverTheRightToken(t *testing.T) {
	t.Parallel()
	clock := &testClock{} // held: the allowances a minute count in one minute however slow the machine
	clock.Hold()
	s := startServerWith(t, "", server.Options{Now: clock.Now})
	client := dashClient(nil)
	// 15 wrong admin tokens on the API, then 10 on the dashboard: together over the 20 a
	// minute of either alone.
	for i := range 15 {
		req := s.adminRequest("GET", "/admin/v1/merchants", nil)
		req.Header.Set("Authorization", "Bearer wrong-"+strconv.Itoa(i))
		if code, _, _, err := timedCall(http.DefaultClient, req); err != nil || code != 401 {
			t.Fatalf("wrong admin token %d: %d %v, want 401", i, code, err)
		}
	}
	last := 0
	for i := range 10 {
		resp, err := client.PostForm(s.URL+"/dashboard/login", url.Values{"token": {"wrong-dash-" + strconv.Itoa(i)}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		last = resp.StatusCode
	}
	if last != http.StatusTooManyRequests {
		t.Errorf("the 25th wrong token across the API and the dashboard: %d, want 429", last)
	}
	req := s.adminRequest("GET", "/admin/v1/merchants", nil)
	req.Header.Set("Authorization", "Bearer wrong-again")
	if code, _, _, _ := timedCall(http.DefaultClient, req); code != http.StatusTooManyRequests {
		t.Errorf("a wrong admin token after the dashboard's failures: %d, want 429", code)
	}
	// The right token, on either door, while the address is limited.
	dashboardSignIn(t, s)
	if code, _, _, _ := timedCall(http.DefaultClient, s.adminRequest("GET", "/admin/v1/sandbox/clock", nil)); code != 200 {
		t.Errorf("the right admin token while limited: %d, want 200", code)
	}
}

// refusedStart runs the server with args, which must refuse to start: it returns the error.
func refusedStart(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var stdout, stderr syncBuffer
	all := append([]string{"serve", "--addr", "127.0.0.1:0", "--admin-token", "test-admin-token-0123456789", "--no-demo",
		"--log-format", "json"}, args...)
	err := runMain(ctx, all, &stdout, &stderr)
	if err == nil || strings.Contains(stdout.String(), "listening on") {
		t.Fatalf("serve %v started (%v):\n%s", args, err, stdout.String())
	}
	return err.Error()
}

// serverWithMerchant starts a server on dir with one merchant and stops it.
func serverWithMerchant(t *testing.T, dir string) *merchantClient {
	t.Helper()
	s := startServer(t, dir)
	c := s.newMerchant(t, nil)
	c.create(t, perBankRequest("KEPT-1"))
	s.Stop(t)
	return c
}

// A data directory that was initialised refuses to start when its database is
// empty or missing, naming the file and what to do; nothing new is written in its place.
func TestLostDatabaseIsRefusedNotReplaced(t *testing.T) {
	t.Parallel()
	boltOnly(t, "the data directory's file")
	dir := t.TempDir()
	serverWithMerchant(t, dir)
	dbPath := filepath.Join(dir, "payouts.db")
	saved, err := os.ReadFile(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		break_ func()
		says   string
	}{
		{"empty", func() { os.WriteFile(dbPath, nil, 0o600) }, "is empty"},
		{"missing", func() { os.Remove(dbPath) }, "is missing"},
	} {
		tc.break_()
		msg := refusedStart(t, "--data", dir)
		for _, want := range []string{dbPath, tc.says, "initialised", "payouts backup"} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s database: %q does not say %q", tc.name, msg, want)
			}
		}
		if st, err := os.Stat(dbPath); err == nil && st.Size() > 0 {
			t.Errorf("%s database: a new one was written (%d bytes)", tc.name, st.Size())
		}
	}
	// A zero-length file next to the keys of a directory from before the marker: refused too.
	os.Remove(filepath.Join(dir, server.InitialisedMarker))
	os.WriteFile(dbPath, nil, 0o600)
	if msg := refusedStart(t, "--data", dir); !strings.Contains(msg, "it holds master.key") {
		t.Errorf("empty database next to master.key: %q", msg)
	}
	// Restored, it starts with its merchant.
	os.WriteFile(dbPath, saved, 0o600)
	s := startServer(t, dir)
	if ms, err := (&http.Client{}).Do(s.adminRequest("GET", "/admin/v1/merchants/1", nil)); err != nil || ms.StatusCode != 200 {
		t.Errorf("restored database: merchant 1: %v %v", ms, err)
	}
}

// A missing or different master (or card) key is refused, not generated anew: after
// `payouts migrate --to DIR` too, until the keys are copied.
func TestMissingOrForeignKeyIsRefused(t *testing.T) {
	t.Parallel()
	boltOnly(t, "the data directory's key files")
	dir := t.TempDir()
	c := serverWithMerchant(t, dir)
	master := filepath.Join(dir, "master.key")
	saved, _ := os.ReadFile(master)

	os.Remove(master)
	msg := refusedStart(t, "--data", dir)
	for _, want := range []string{master, "is missing", "fingerprint", "--master-key-file"} {
		if !strings.Contains(msg, want) {
			t.Errorf("missing master.key: %q does not say %q", msg, want)
		}
	}
	if _, err := os.Stat(master); err == nil {
		t.Errorf("a new master.key was generated")
	}
	os.WriteFile(master, []byte(strings.Repeat("ab", 32)+"\n"), 0o600)
	if msg := refusedStart(t, "--data", dir); !strings.Contains(msg, "is not the one that sealed") || !strings.Contains(msg, master) {
		t.Errorf("another master.key: %q", msg)
	}
	os.WriteFile(master, saved, 0o600)

	card := filepath.Join(dir, server.CardKeyFile)
	savedCard, _ := os.ReadFile(card)
	os.Remove(card)
	if msg := refusedStart(t, "--data", dir); !strings.Contains(msg, card) || !strings.Contains(msg, "is missing") {
		t.Errorf("missing card.key: %q", msg)
	}
	os.WriteFile(card, savedCard, 0o600)

	// migrate --to a new directory, started before the keys are copied: refused.
	moved := t.TempDir()
	var out bytes.Buffer
	if err := runMain(context.Background(), []string{"migrate", "--from", dir, "--to", moved}, &out, &out); err != nil {
		t.Fatalf("migrate: %v\n%s", err, out.String())
	}
	if msg := refusedStart(t, "--data", moved); !strings.Contains(msg, filepath.Join(moved, "master.key")) || !strings.Contains(msg, "is missing") {
		t.Errorf("migrated directory without its keys: %q", msg)
	}
	for _, f := range []string{"master.key", server.CardKeyFile, server.NotificationKeyFile} {
		b, _ := os.ReadFile(filepath.Join(dir, f))
		os.WriteFile(filepath.Join(moved, f), b, 0o600)
	}
	s := startServer(t, moved)
	c2 := c.with(func(m *merchantClient) { m.Base = s.URL })
	if code, _, raw := c2.do(t, "GET", "payouts", nil, "orderId=KEPT-1"); code != 200 || !strings.Contains(string(raw), "KEPT-1") {
		t.Errorf("the merchant on the migrated directory with its keys: %d %s", code, raw)
	}
}

// On PostgreSQL, an instance whose shared master or card key is not the one that
// sealed the database's secrets refuses to start.
func TestForeignSharedKeyIsRefusedOnPostgres(t *testing.T) {
	t.Parallel()
	db := pgtest.Database(t)
	keys1, keys2 := t.TempDir(), t.TempDir()
	for _, k := range []string{keys1, keys2} {
		if err := writeKeys(k + "/k"); err != nil {
			t.Fatal(err)
		}
	}
	args := func(master, card string) []string {
		return []string{"--database", db, "--data", t.TempDir(), "--master-key-file", master + "/k/master.key",
			"--card-key-file", card + "/k/" + server.CardKeyFile, "--notification-key-file", keys1 + "/k/" + server.NotificationKeyFile}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- runMain(ctx, append([]string{"serve", "--addr", "127.0.0.1:0", "--admin-token", "test-admin-token-0123456789",
			"--no-demo", "--log-format", "json"}, args(keys1, keys1)...), &stdout, &stderr)
	}()
	// Stopped only once it listens: stopped while it migrates, it fails for that alone.
	if !poll(startWithin, func() bool { return strings.Contains(stdout.String(), "listening on") }) {
		cancel()
		<-done
		t.Fatalf("the first instance did not listen within %v:\n%s", startWithin, stderr.String())
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("first instance: %v\n%s", err, stderr.String())
	}
	if msg := refusedStart(t, args(keys2, keys1)...); !strings.Contains(msg, "master key") || !strings.Contains(msg, "is not the one that sealed") {
		t.Errorf("another master key: %q", msg)
	}
	if msg := refusedStart(t, args(keys1, keys2)...); !strings.Contains(msg, "card key") || !strings.Contains(msg, "is not the one that sealed") {
		t.Errorf("another card key: %q", msg)
	}
}

// boltPages reads the page size (meta page 0) and each page's header of a bbolt file.
func boltPages(t *testing.T, raw []byte) (pageSize int, branches []int) {
	t.Helper()
	pageSize = int(binary.NativeEndian.Uint32(raw[16+8:]))
	for id := 2; (id+1)*pageSize <= len(raw); id++ {
		p := raw[id*pageSize:]
		if binary.NativeEndian.Uint64(p) == uint64(id) && binary.NativeEndian.Uint16(p[8:]) == 0x01 {
			branches = append(branches, id)
		}
	}
	return pageSize, branches
}

// A damaged file is a clear error naming it at start, never a panic; `payouts check`
// runs bbolt's full check and the ledger check, and fails on any finding.
func TestDamagedDatabaseIsAClearErrorAndCheckFindsIt(t *testing.T) {
	t.Parallel()
	boltOnly(t, "the bbolt file's pages")
	dir := t.TempDir()
	var out syncBuffer
	if err := runMain(context.Background(), []string{"seed", "--data", dir, "--payouts", "3000"}, &out, &out); err != nil {
		t.Fatalf("seed: %v\n%s", err, out.String())
	}
	dbPath := filepath.Join(dir, "payouts.db")
	good, err := os.ReadFile(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	check := func() (string, error) {
		var out syncBuffer
		err := runMain(context.Background(), []string{"check", "--data", dir}, &out, &out)
		return out.String(), err
	}
	pageSize, branches := boltPages(t, good)
	if len(branches) == 0 {
		t.Fatal("the seeded file has no branch page to damage")
	}
	for _, tc := range []struct {
		name   string
		damage func([]byte) []byte
	}{
		{"truncated", func(b []byte) []byte { return b[:len(b)/2] }},
		{"zeroed pages", func(b []byte) []byte {
			clear(b[2*pageSize : len(b)-pageSize])
			return b
		}},
		{"a damaged branch page", func(b []byte) []byte {
			p := b[branches[len(branches)/2]*pageSize:]
			for i := range int(binary.NativeEndian.Uint16(p[10:])) {
				binary.NativeEndian.PutUint64(p[16+i*16+8:], 0x7fff_ffff_ffff)
			}
			return b
		}},
	} {
		os.WriteFile(dbPath, tc.damage(bytes.Clone(good)), 0o600)
		msg := refusedStart(t, "--data", dir)
		if !strings.Contains(msg, dbPath) || !strings.Contains(msg, "damaged") || !strings.Contains(msg, "payouts check") {
			t.Errorf("%s: start said %q, want the file named as damaged", tc.name, msg)
		}
		text, err := check()
		if err == nil || !strings.Contains(text, "structure:") {
			t.Errorf("%s: check: %v\n%s, want a finding and an error", tc.name, err, text)
		}
	}
	os.WriteFile(dbPath, good, 0o600)
	if text, err := check(); err != nil || !strings.Contains(text, "structure sound") || !strings.Contains(text, "ledger sound") {
		t.Fatalf("check of a sound database: %v\n%s", err, text)
	}
	// A sound file whose ledger is wrong (a balance changed behind the ledger's back):
	// check finds it.
	os.WriteFile(dbPath, good, 0o600)
	st, err := bolt.Open(dbPath, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.Fund(context.Background(), "1", "PER", "PEN", 1000, time.Now())
	st.Close(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	raw, err := bbolt.Open(dbPath, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = raw.Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket([]byte("balances"))
		k, v := b.Cursor().First()
		var bal map[string]any
		if err := json.Unmarshal(v, &bal); err != nil {
			return err
		}
		bal["availableBalance"] = bal["availableBalance"].(float64) + 1
		bal["balance"] = bal["balance"].(float64) + 1
		v, _ = json.Marshal(bal)
		return b.Put(bytes.Clone(k), v)
	})
	raw.Close()
	if err != nil {
		t.Fatal(err)
	}
	if text, err := check(); err == nil || !strings.Contains(text, "ledger:") {
		t.Errorf("check of a wrong ledger: %v\n%s, want a ledger finding", err, text)
	}
}

// readyz reads /readyz.
func readyz(t *testing.T, s *testServer) (int, string) {
	t.Helper()
	resp, err := http.Get(s.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

// stalledGauge reads payouts_writer_stalled from /metrics.
func stalledGauge(t *testing.T, s *testServer) float64 {
	t.Helper()
	return s.mustMetric(t, "payouts_writer_stalled")
}

// A writer whose commits fail for lack of space, or that has not committed for 5 s
// with writes waiting, makes /readyz answer 503 with the reason and payouts_writer_stalled 1;
// a SIGTERM then exits within its drain timeout, logging what it abandoned. The 5 s pass on
// the server's clock, which the test moves once the write stalls.
func TestWriterWatchdogAndBoundedDrain(t *testing.T) {
	t.Parallel()
	boltOnly(t, "the bbolt group writer")
	dir := t.TempDir()
	var fault atomic.Pointer[func() error]
	clock := &testClock{}
	s := startServerWith(t, dir, server.Options{Now: clock.Now, WriteFault: func() error {
		if f := fault.Load(); f != nil {
			return (*f)()
		}
		return nil
	}}, "--drain-timeout", "1s")
	c := s.newMerchant(t, nil)
	c.create(t, perBankRequest("WD-1"))
	if code, body := readyz(t, s); code != 200 || stalledGauge(t, s) != 0 {
		t.Fatalf("healthy: /readyz %d %q", code, body)
	}

	full := func() error { return fmt.Errorf("write %s: %w", filepath.Join(dir, "payouts.db"), syscall.ENOSPC) }
	fault.Store(&full)
	if code, _, raw := c.do(t, "POST", "payouts", perBankRequest("WD-2"), ""); code != 500 {
		t.Errorf("a create on a full disk: %d %s, want 500", code, raw)
	}
	if code, body := readyz(t, s); code != 503 || !strings.Contains(body, "lack of space") {
		t.Errorf("after a commit failed for lack of space: /readyz %d %q, want 503 saying so", code, body)
	}
	if g := stalledGauge(t, s); g != 1 {
		t.Errorf("payouts_writer_stalled %v on a full disk, want 1", g)
	}
	fault.Store(nil)
	c.create(t, perBankRequest("WD-3"))
	if code, body := readyz(t, s); code != 200 || stalledGauge(t, s) != 0 {
		t.Errorf("after space came back and a commit passed: /readyz %d %q", code, body)
	}

	// A disk that stops answering: the writer waits inside its commit. The server's clock
	// stands still meanwhile: only the test's Advance makes the commit late.
	clock.Hold()
	release, stalled := make(chan struct{}), make(chan struct{}, 1)
	stall := func() error {
		select {
		case stalled <- struct{}{}:
		default:
		}
		<-release
		return nil
	}
	fault.Store(&stall)
	t.Cleanup(func() {
		fault.Store(nil)
		close(release)
		// The abandoned writer commits and the file closes: then the ledger check can open it.
		eventually(t, 10*time.Second, "the abandoned writer lets the database file go", func() bool {
			db, err := openTestStore(t, dir)
			if err == nil {
				db.Close(context.Background())
			}
			return err == nil
		})
	})
	go func() {
		req := c.request("POST", "payouts", mustJSON(perBankRequest("WD-4")), "")
		timedCall(&http.Client{Timeout: 30 * time.Second}, req)
	}()
	select {
	case <-stalled:
	case <-time.After(10 * time.Second):
		t.Fatal("no write reached the writer within 10 s")
	}
	clock.Advance(bolt.StallAfter - time.Second)
	if code, body := readyz(t, s); code != 200 {
		t.Errorf("a commit under way for %v: /readyz %d %q, want 200 until %v", bolt.StallAfter-time.Second, code, body, bolt.StallAfter)
	}
	clock.Advance(2 * time.Second)
	code, body := readyz(t, s)
	if code != 503 || !strings.Contains(body, "has not committed for") {
		t.Errorf("a stalled writer: /readyz %d %q, want 503 saying so", code, body)
	}
	if g := stalledGauge(t, s); g != 1 {
		t.Errorf("payouts_writer_stalled %v with a stalled writer, want 1", g)
	}

	stopped := time.Now()
	s.cancel()
	s.cancel = nil
	select {
	case err := <-s.done:
		if err == nil || !strings.Contains(err.Error(), "abandoned") {
			t.Errorf("the drain ended with %v, want an error saying what it abandoned", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("SIGTERM with a stalled writer: the server had not exited after 10 s (drain timeout 1 s)")
	}
	if took := time.Since(stopped); took > 3*time.Second {
		t.Errorf("the server took %v to exit with a drain timeout of 1 s", took)
	}
	if !strings.Contains(s.Stderr.String(), "abandoned") || !strings.Contains(s.Stderr.String(), "has not committed") {
		t.Errorf("the log does not say what was abandoned:\n%s", s.Stderr.String())
	}
}
