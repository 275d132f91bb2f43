package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"payouts/internal/cli"
)

// The receiver certification through the command: `payouts certify receiver` against a
// sandbox server certifies the reference receivers of docs/examples/receivers and fails a
// receiver that accepts forgeries; `payouts certify verify` accepts its report and refuses one
// with a byte changed. The API's answers are checked against the served document as every
// answer of these tests is.

// referenceReceiver starts a reference receiver by cmd (its environment: the merchant id, the
// public key's URL, ADDR 127.0.0.1:0) and returns the URL it listens on.
func referenceReceiver(t *testing.T, s *testServer, merchantID string, cmd *exec.Cmd) string {
	t.Helper()
	cmd.Env = append(os.Environ(), "PAYOUTS_MERCHANT_ID="+merchantID,
		"PAYOUTS_PUBLIC_KEY_URL="+s.URL+"/api/v1/notifications/public-key", "ADDR=127.0.0.1:0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("the receiver's log:\n%s", logs.String())
		}
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := regexp.MustCompile(`listening on (http://\S+)`).FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
				break
			}
		}
		io.Copy(io.Discard, stdout)
	}()
	select {
	case u := <-found:
		return u
	case <-time.After(90 * time.Second):
		t.Fatalf("the receiver did not say where it listens; its log:\n%s", logs.String())
	}
	return ""
}

// certifyWithCommand runs `payouts certify receiver` and returns its output and exit status.
func certifyWithCommand(t *testing.T, s *testServer, c *merchantClient, target, out string) (string, int) {
	t.Helper()
	return runCommand(t, "certify", "receiver", "--base", s.URL, "--merchant", c.MerchantID, "--key", c.Key,
		"--secret", c.Secret, "--url", target, "--out", out, "--wait", "2m")
}

// runCommand runs a command line in process as the binary does (cli.Main, all that its main
// calls) and returns what it printed and its exit status: a command that is a client of a
// server, as certify's are, needs no process of its own.
func runCommand(t *testing.T, args ...string) (string, int) {
	t.Helper()
	out := &syncBuffer{}
	code := cli.Main(context.Background(), args, func(string) string { return "" }, out, out)
	return out.String(), code
}

func TestCertifyReceiverThroughTheCommand(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the Go reference receiver")
	}
	// The Go reference receiver, compiled from the docs (while the server starts), passes
	// every check.
	recvBin := filepath.Join(t.TempDir(), "receiver")
	build := exec.Command("go", "build", "-o", recvBin, "./docs/examples/receivers/go")
	build.Dir = repoRoot
	built := make(chan error, 1)
	var buildOut bytes.Buffer
	build.Stdout, build.Stderr = &buildOut, &buildOut
	go func() { built <- build.Run() }()
	s := startServer(t, "", "--allow-private-notification-urls")
	c := s.newMerchant(t, nil)
	if err := <-built; err != nil {
		t.Fatalf("building the Go reference receiver: %v\n%s", err, buildOut.String())
	}
	good := referenceReceiver(t, s, c.MerchantID, exec.Command(recvBin))
	dir := t.TempDir()
	said, code := certifyWithCommand(t, s, c, good+"/payouts/notifications", dir)
	t.Logf("a passing run:\n%s", said)
	if code != 0 || !strings.Contains(said, ": PASSED (") {
		t.Fatalf("the Go reference receiver: exit %d\n%s", code, said)
	}
	for _, f := range []string{"certification.json", "certification.json.sig", "certification.html", "certification.junit.xml"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s not written: %v", f, err)
		}
	}

	// verify: with the server's key, with the key from a file; refused with a byte changed.
	report := filepath.Join(dir, "certification.json")
	if said, code := runCommand(t, "certify", "verify", "--base", s.URL, report); code != 0 || !strings.Contains(said, "verified:") {
		t.Errorf("certify verify: exit %d\n%s", code, said)
	}
	keyFile := filepath.Join(t.TempDir(), "public.pem")
	os.WriteFile(keyFile, fetchPublicKey(t, s.URL), 0o644)
	if said, code := runCommand(t, "certify", "verify", "--public-key", keyFile, report); code != 0 {
		t.Errorf("certify verify --public-key: exit %d\n%s", code, said)
	}
	raw, _ := os.ReadFile(report)
	changed := bytes.Replace(raw, []byte(`"passed":true`), []byte(`"passed":trUe`), 1)
	changed = bytes.Replace(changed, []byte(`"result":"pass"`), []byte(`"result":"pasS"`), 1)
	if bytes.Equal(changed, raw) {
		t.Fatal("nothing to change in the report")
	}
	os.WriteFile(report, changed, 0o644)
	if said, code := runCommand(t, "certify", "verify", "--base", s.URL, report); code != 1 {
		t.Errorf("certify verify of a changed report: exit %d, want 1\n%s", code, said)
	}

	// A receiver that accepts anything fails the forgeries, and the command exits 1.
	lax := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) }))
	defer lax.Close()
	dir = t.TempDir()
	said, code = certifyWithCommand(t, s, c, lax.URL, dir)
	t.Logf("a failing run:\n%s", said)
	if code != 1 || !strings.Contains(said, ": FAILED (") {
		t.Fatalf("a receiver that accepts forgeries: exit %d, want 1\n%s", code, said)
	}
	var rep struct {
		Checks []struct{ Name, Result string }
	}
	raw, _ = os.ReadFile(filepath.Join(dir, "certification.json"))
	json.Unmarshal(raw, &rep)
	var failed []string
	for _, ch := range rep.Checks {
		if ch.Result == "fail" {
			failed = append(failed, ch.Name)
		}
	}
	if got := strings.Join(failed, " "); got != "forged-other-body forged-other-merchant forged-other-key missing-signature malformed-signature body-changed" {
		t.Errorf("failed checks %q, want the six forgeries", got)
	}
	if said, code := runCommand(t, "certify", "verify", "--base", s.URL, filepath.Join(dir, "certification.json")); code != 0 {
		t.Errorf("certify verify of a failed run's report: exit %d\n%s", code, said)
	}
}

// TestCertificationAPI: the signed calls' answers, each checked against the served document.
func TestCertificationAPI(t *testing.T) {
	t.Parallel()
	s := startServer(t, "", "--allow-private-notification-urls")
	c := s.newMerchant(t, nil)
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer ok.Close()

	code, _, raw := c.do(t, "POST", "certifications/receiver", map[string]string{"url": "ftp://example.com/x"}, "")
	if code != 400 || !strings.Contains(string(raw), `"2940"`) {
		t.Errorf("a URL that is not http(s): %d %s", code, raw)
	}
	code, _, raw = c.do(t, "POST", "certifications/receiver", map[string]string{}, "")
	if code != 400 || !strings.Contains(string(raw), "body.url") {
		t.Errorf("no URL and no notificationUrl: %d %s", code, raw)
	}
	code, _, raw = c.do(t, "GET", "certifications/receiver/cr_000000000000", nil, "")
	if code != 404 || !strings.Contains(string(raw), `"2999"`) {
		t.Errorf("an unknown run: %d %s", code, raw)
	}

	code, _, raw = c.do(t, "POST", "certifications/receiver", map[string]string{"url": ok.URL + "/hook?token=secret"}, "")
	var run struct {
		RunID, State, URL string
		Report            *struct{ Passed bool }
	}
	if json.Unmarshal(raw, &run); code != 202 || run.State != "running" || strings.Contains(run.URL, "secret") {
		t.Fatalf("start: %d %s", code, raw)
	}
	waitFor(t, "the run done", 60*time.Second, func() bool {
		code, _, raw = c.do(t, "GET", "certifications/receiver/"+run.RunID, nil, "")
		json.Unmarshal(raw, &run)
		return code == 200 && run.State == "done"
	})
	if run.Report == nil || run.Report.Passed {
		t.Errorf("a receiver answering 200 to everything passed: %s", raw)
	}
	other := s.newMerchant(t, nil)
	if code, _, _ := other.do(t, "GET", "certifications/receiver/"+run.RunID, nil, ""); code != 404 {
		t.Errorf("another merchant read the run: %d", code)
	}

	off := startServer(t, "", "--sandbox=false", "--allow-private-notification-urls")
	oc := off.newMerchant(t, nil)
	if code, _, raw := oc.do(t, "POST", "certifications/receiver", map[string]string{"url": ok.URL}, ""); code != 403 {
		t.Errorf("with --sandbox=false: %d %s", code, raw)
	}
}

// TestCertifyReferenceReceivers certifies the Python, Node and PHP reference receivers through
// the command. Each is skipped when its interpreter is missing, and fails instead with
// PAYOUTS_REQUIRE_RECEIVERS=1 (as CI runs it). The three run side by side, each certified
// for a merchant of its own (a merchant runs one certification at a time): each is mostly
// its interpreter starting and the run's round trips.
func TestCertifyReferenceReceivers(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts the reference receivers in three interpreters")
	}
	s := startServer(t, "", "--allow-private-notification-urls")
	for _, r := range []struct{ name, interpreter, file string }{
		{"python", "python3", "docs/examples/receivers/python/receiver.py"},
		{"node", "node", "docs/examples/receivers/node/receiver.mjs"},
		{"php", "php", "docs/examples/receivers/php/receiver.php"},
	} {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			path, err := exec.LookPath(r.interpreter)
			if err != nil {
				if os.Getenv("PAYOUTS_REQUIRE_RECEIVERS") != "" {
					t.Fatalf("%s is not installed, and PAYOUTS_REQUIRE_RECEIVERS is set", r.interpreter)
				}
				t.Skipf("%s is not installed (PAYOUTS_REQUIRE_RECEIVERS=1 makes this a failure)", r.interpreter)
			}
			c := s.newMerchant(t, nil)
			var url string
			if r.name == "php" {
				url = phpReceiver(t, s, c.MerchantID, path, repoPath(r.file))
			} else {
				url = referenceReceiver(t, s, c.MerchantID, exec.Command(path, repoPath(r.file)))
			}
			said, code := certifyWithCommand(t, s, c, url+"/payouts/notifications", t.TempDir())
			if code != 0 || !strings.Contains(said, ": PASSED (") {
				t.Fatalf("the %s reference receiver: exit %d\n%s", r.name, code, said)
			}
		})
	}
}

// phpReceiver serves the PHP reference receiver with PHP's built-in server on a free port and
// returns its URL once it accepts connections.
func phpReceiver(t *testing.T, s *testServer, merchantID, php, file string) string {
	t.Helper()
	addr := freeAddr(t)
	cmd := exec.Command(php, "-S", addr, file)
	cmd.Env = append(os.Environ(), "PAYOUTS_MERCHANT_ID="+merchantID, "PAYOUTS_RECEIVER_DIR="+t.TempDir(),
		"PAYOUTS_PUBLIC_KEY_URL="+s.URL+"/api/v1/notifications/public-key")
	logs := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("the PHP receiver's log:\n%s", logs.String())
		}
	})
	waitFor(t, "the PHP receiver listening", 20*time.Second, func() bool {
		conn, err := net.Dial("tcp", addr)
		if err == nil {
			conn.Close()
		}
		return err == nil
	})
	return "http://" + addr
}

// TestCertifyCommandLines: what cannot run is a usage error (exit 2, one line); a report
// without its signature file, or not a report, is refused (exit 1).
func TestCertifyCommandLines(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"certify"},
		{"certify", "receiver"},
		{"certify", "receiver", "--merchant", "1", "--key", "k"},
		{"certify", "verify"},
		{"certify", "verify", "a.json", "b.json"},
	} {
		_, err := runCLI(t, nil, args...)
		if code := cli.ExitCode(err); code != 2 || strings.Count(err.Error(), "\n") > 0 {
			t.Errorf("%v: exit %d (%v), want 2 and one line", args, code, err)
		}
	}
	dir := t.TempDir()
	report := filepath.Join(dir, "certification.json")
	os.WriteFile(report, []byte(`{"kind":"receiver","runId":"cr_1","merchantId":"1"}`), 0o644)
	if _, err := runCLI(t, nil, "certify", "verify", "--public-key", report, report); cli.ExitCode(err) != 1 || !strings.Contains(err.Error(), "signature") {
		t.Errorf("no signature file: %v", err)
	}
	os.WriteFile(report+".sig", []byte("AAAA\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "key.pem"), []byte("not a key"), 0o644)
	if _, err := runCLI(t, nil, "certify", "verify", "--public-key", filepath.Join(dir, "key.pem"), report); cli.ExitCode(err) != 1 || !strings.Contains(err.Error(), "--public-key") {
		t.Errorf("a public key file that is not one: %v", err)
	}
}
