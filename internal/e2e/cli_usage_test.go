package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"payouts/internal/cli"
	"payouts/internal/server"
	"payouts/internal/servertest"
	"payouts/store/postgres"
	"payouts/store/postgres/pgtest"
)

// A command line the binary cannot run exits 2 with one short line (no
// flag list); help help, --version; -h leaves out the test and benchmark flags.
func TestCLIUsageErrorsExitTwoWithOneLine(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--no-such-flag"},
		{"serve", "--addr"},
		{"frobnicate"},
		{"merchant"},
		{"merchant", "create", "--bogus"},
		{"merchant", "keys"},
		{"backup", "stray-argument"},
		{"sign", "--secret", "s"},
		{"help", "nope"},
		{"version", "extra"},
		{"serve", "--rate-limit", "lots"},
	} {
		out, err := runCLI(t, nil, args...)
		if code := cli.ExitCode(err); code != 2 {
			t.Errorf("%v: exit code %d (%v), want 2", args, code, err)
			continue
		}
		if strings.Contains(out, "-sandbox-delay") || strings.Contains(out, "Usage") || strings.Count(err.Error(), "\n") > 0 {
			t.Errorf("%v: more than one short line:\nerr %q\nout %q", args, err, out)
		}
		if !strings.Contains(err.Error(), "payouts help") && !strings.Contains(err.Error(), "required") && !strings.Contains(err.Error(), "takes") && !strings.Contains(err.Error(), "PAYOUTS_") {
			t.Errorf("%v: %q does not say where to look", args, err)
		}
	}
	if code := cli.ExitCode(errorString("database locked")); code != 1 {
		t.Errorf("a failure that is not a usage error exits %d, want 1", code)
	}

	for _, args := range [][]string{{"help", "help"}, {"--version"}, {"-version"}, {"version"}, {"help", "merchant"}} {
		out, err := runCLI(t, nil, args...)
		if cli.ExitCode(err) != 0 || out == "" {
			t.Errorf("%v: exit %d (%v) output %q", args, cli.ExitCode(err), err, out)
		}
	}
	if out, _ := runCLI(t, nil, "--version"); !strings.HasPrefix(out, "payouts ") {
		t.Errorf("--version printed %q", out)
	}
	if out, _ := runCLI(t, nil, "help", "merchant"); !strings.Contains(out, "-new") || !strings.Contains(out, "-card-payouts") {
		t.Errorf("help merchant lacks the flags of create or keys:\n%s", out)
	}
	for _, args := range [][]string{{"-h"}, {"help", "serve"}, {"serve", "-h"}} {
		out, err := runCLI(t, nil, args...)
		if cli.ExitCode(err) != 0 {
			t.Errorf("%v: %v", args, err)
		}
		for _, hidden := range []string{"unsafe-no-fsync", "bench-seed-from"} {
			if strings.Contains(out, hidden) {
				t.Errorf("%v lists the test flag --%s", args, hidden)
			}
		}
		if !strings.Contains(out, "-sandbox-delay") {
			t.Errorf("%v does not list the ordinary flags:\n%s", args, out)
		}
	}
	// Hidden is not removed: the flag still parses.
	if cfg, err := cli.ServeConfig([]string{"--unsafe-no-fsync"}, func(string) string { return "" }); err != nil || !cfg.Storage.NoSync {
		t.Errorf("--unsafe-no-fsync: %v %+v", err, cfg.Storage.NoSync)
	}
}

type errorString string

func (e errorString) Error() string { return string(e) }

// `payouts sign` refuses a path without its leading /, --curl without --key, and takes
// its flags after the path too.
func TestCLISignRefusesWhatCannotWork(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"sign", "--secret", "s", "api/v1/1/balance"}, "must start with /"},
		{[]string{"sign", "--secret", "s", "--curl", "/api/v1/1/balance"}, "--curl needs --key"},
		{[]string{"sign", "--secret", "s", "/api/v1/1/balance", "/api/v1/1/payouts"}, "one PATH only"},
		{[]string{"sign", "/api/v1/1/balance"}, "--secret"},
		{[]string{"sign", "--secret", "s", "http://127.0.0.1:8080/api/v1/1/balance"}, "path only"},
	} {
		out, err := runCLI(t, nil, tc.args...)
		if cli.ExitCode(err) != 2 || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: exit %d, %v (want a usage error saying %q)", tc.args, cli.ExitCode(err), err, tc.want)
		}
		if strings.Contains(out, "http") {
			t.Errorf("%v printed %q", tc.args, out)
		}
	}
	out, err := runCLI(t, nil, "sign", "/api/v1/1/payouts", "--secret", "s", "--key", "pk_1", "--curl", "--body", `{"a":1}`)
	if err != nil || !strings.HasPrefix(out, "curl -sS -X POST 'http://127.0.0.1:8080/api/v1/1/payouts?timestamp=") ||
		!strings.Contains(out, "monnet-api-key: pk_1") {
		t.Errorf("flags after the path: %v\n%s", err, out)
	}
	out, err = runCLI(t, nil, "sign", "--secret", "s", "--", "/api/v1/1/balance")
	if err != nil || !strings.Contains(out, "/api/v1/1/balance?timestamp=") {
		t.Errorf("-- before the path: %v %q", err, out)
	}
}

// When the address is taken nothing is created and nothing is printed as
// shown once; the first start names the dashboard and /docs; a restart says how to get new
// credentials, and both ways it names work.
func TestStartUpTellsWhereToGoAndHowToGetCredentialsAgain(t *testing.T) {
	t.Parallel()
	boltOnly(t, "the demo merchant is seeded on the bbolt engine only")
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	dir := filepath.Join(t.TempDir(), "data")
	out, err := runCLI(t, nil, "--addr", busy.Addr().String(), "--data", dir)
	if err == nil {
		t.Fatal("the server started on a taken address")
	}
	if strings.Contains(out, "shown once") || strings.Contains(out, "apiSecret") {
		t.Errorf("printed as shown once before the listen failed:\n%s", out)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the data directory was created before the listen failed (%v)", err)
	}
	if !strings.Contains(err.Error(), "--addr") {
		t.Errorf("the error %q does not say how to pick another address", err)
	}

	first := startDemo(t, dir)
	for _, want := range []string{first.base + "/dashboard", first.base + "/docs", "payouts merchant keys --id 1 --new"} {
		if !strings.Contains(first.out.String(), want) {
			t.Errorf("the first start does not print %q:\n%s", want, first.out.String())
		}
	}
	first.stop()

	second := startDemo(t, dir)
	text := second.out.String()
	if strings.Contains(text, "apiSecret") {
		t.Errorf("a restart printed credentials:\n%s", text)
	}
	line := regexp.MustCompile(`curl -sS -X POST \S+/admin/v1/merchants/1/keys -H "Authorization: Bearer [^"]+"`).FindString(text)
	if line == "" || !strings.Contains(text, "payouts merchant keys --id 1 --new") || !strings.Contains(text, second.base+"/dashboard") {
		t.Fatalf("a restart does not say how to get new credentials:\n%s", text)
	}
	if _, err := exec.LookPath("curl"); err == nil {
		res, err := exec.Command("sh", "-c", line).CombinedOutput()
		var rotated struct{ APIKey, APISecret string }
		if err != nil || json.Unmarshal(res, &rotated) != nil || rotated.APISecret == "" {
			t.Errorf("the printed curl: %v\n%s", err, res)
		} else if code := signedGet(t, second.base, "1", rotated.APIKey, rotated.APISecret); code != 200 {
			t.Errorf("the credentials of the printed curl answer %d", code)
		}
	}
	second.stop()

	out, err = runCLI(t, nil, "merchant", "keys", "--data", dir, "--id", "1", "--new", "--grace", "0")
	var issued struct {
		APIKey, APISecret, KeyID string
		Keys                     []struct {
			KeyID   string
			Current bool
		}
	}
	if err != nil || json.Unmarshal([]byte(out), &issued) != nil || issued.APISecret == "" || len(issued.Keys) == 0 || !issued.Keys[0].Current || issued.Keys[0].KeyID != issued.KeyID {
		t.Fatalf("merchant keys --new: %v\n%s", err, out)
	}
	if out, err := runCLI(t, nil, "merchant", "keys", "--data", dir, "--id", "1"); err != nil || strings.Contains(out, issued.APISecret) || !strings.Contains(out, issued.KeyID) {
		t.Errorf("merchant keys lists %v:\n%s", err, out)
	}
	if _, err := runCLI(t, nil, "merchant", "keys", "--data", dir, "--id", "77"); err == nil || !strings.Contains(err.Error(), "no merchant") {
		t.Errorf("merchant keys of an unknown merchant: %v", err)
	}
	third := startDemo(t, dir)
	defer third.stop()
	if code := signedGet(t, third.base, "1", issued.APIKey, issued.APISecret); code != 200 {
		t.Errorf("the credentials of merchant keys --new answer %d", code)
	}
}

type demoRun struct {
	base string
	out  *syncBuffer
	stop func()
}

func startDemo(t *testing.T, dir string) demoRun {
	t.Helper()
	out := &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	// The bare command line, as a newcomer types it: cli.Run with no command, the server's
	// Ready hook, which says where it listens, and what every test server takes (the shared
	// notification key, cheap password hashing), which nothing here reads: under the race
	// detector a new RSA key and the production hashes took each start seconds of CPU.
	ready := make(chan server.Listening, 1)
	env := cli.Env{Stdout: out, Stderr: &syncBuffer{}, Options: server.Options{Ready: func(l server.Listening) { ready <- l },
		NewNotificationKey: sharedNotificationKey, PasswordHashing: servertest.PasswordHashing, IntegrationPasswordCost: bcrypt.MinCost}}
	go func() {
		done <- cli.Run(ctx, []string{"--addr", "127.0.0.1:0", "--data", dir, "--log-level", "warn", "--unsafe-no-fsync"}, env)
	}()
	var base string
	select {
	case l := <-ready:
		base = l.URL
	case err := <-done:
		cancel()
		t.Fatalf("the server exited: %v\n%s", err, out.String())
	case <-time.After(startWithin):
		cancel()
		<-done
		t.Fatalf("the server did not start:\n%s", out.String())
	}
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			<-done
		}
	}
	t.Cleanup(stop)
	return demoRun{base: base, out: out, stop: stop}
}

// signedGet signs GET /api/v1/{mid}/balance with the pair and answers its status.
func signedGet(t *testing.T, base, mid, key, secret string) int {
	t.Helper()
	c := &merchantClient{&servertest.Merchant{Base: base, MerchantID: mid, Key: key, Secret: secret, HTTP: &http.Client{Timeout: 10 * time.Second}}}
	code, _, _ := c.do(t, "GET", "balance", nil, "")
	return code
}

// A usage error touches nothing: every command of the table run without a flag it requires,
// and serve with flags that cannot work together, exit 2 before anything is opened, in a
// directory where the default --data (./data) would be created.
//
// Serial: it changes the process's working directory (serial tests run before the parallel
// ones start).
func TestCLIUsageErrorsTouchNothing(t *testing.T) {
	cwd := t.TempDir()
	t.Chdir(cwd)
	var lines [][]string
	for _, c := range cli.Commands() {
		if len(c.Required) > 0 {
			lines = append(lines, strings.Fields(c.Name))
		}
	}
	if len(lines) < 5 {
		t.Fatalf("only %v declare required flags", lines)
	}
	lines = append(lines,
		[]string{"merchant", "create", "--card-payouts"},
		[]string{"merchant", "create", "--name", "Shop", "--id", "has space"},
		[]string{"merchant", "create", "--name", "Shop", "--id", "notifications"},
		[]string{"user", "add", "--email", "ana@example.com", "--role", "owner"},
		[]string{"user", "add", "--email", "not-an-email", "--role", "operator"},
		[]string{"serve", "--backup-every", "5s", "--backup-dir", "backups"},
		[]string{"serve", "--backup-dir", "backups"},
		[]string{"serve", "--log-format", "xml"},
		[]string{"serve", "--trusted-proxies", "not-a-cidr"},
	)
	for _, args := range lines {
		// Bounded: a command that went on without its flags (listen) would wait for a server.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		var stdout, stderr bytes.Buffer
		err := cli.Run(ctx, args, cli.Env{Getenv: func(string) string { return "" }, Stdout: &stdout, Stderr: &stderr})
		cancel()
		out := stdout.String() + stderr.String()
		if code := cli.ExitCode(err); code != 2 {
			t.Errorf("%v: exit %d (%v), want 2\n%s", args, code, err, out)
		}
		if entries, _ := os.ReadDir(cwd); len(entries) > 0 {
			t.Errorf("%v created %v", args, entries)
			for _, e := range entries {
				os.RemoveAll(filepath.Join(cwd, e.Name()))
			}
		}
	}
	if _, err := runCLI(t, nil, "merchant", "create"); err == nil || !strings.Contains(err.Error(), "--name") {
		t.Errorf("merchant create without --name: %v", err)
	}
	if _, err := runCLI(t, nil, "serve", "--backup-every", "5s", "--backup-dir", "backups"); err == nil || !strings.Contains(err.Error(), "at least 1m") {
		t.Errorf("--backup-every 5s: %v", err)
	}
	// A required flag may come from its variable.
	env := func(k string) string { return map[string]string{"PAYOUTS_SECRET": "s"}[k] }
	if out, err := runCLI(t, env, "sign", "/api/v1/1/balance"); err != nil || !strings.Contains(out, "timestamp=") {
		t.Errorf("sign with PAYOUTS_SECRET: %v %s", err, out)
	}
}

// `payouts help merchant create`, and every command of two words, answers as -h does.
func TestCLIHelpOfATwoWordCommandIsItsDashH(t *testing.T) {
	t.Parallel()
	n := 0
	for _, c := range cli.Commands() {
		words := strings.Fields(c.Name)
		if len(words) != 2 {
			continue
		}
		n++
		help, err := runCLI(t, nil, append([]string{"help"}, words...)...)
		if err != nil {
			t.Errorf("help %s: %v", c.Name, err)
			continue
		}
		dashH, err := runCLI(t, nil, append(words, "-h")...)
		if err != nil || help != dashH || !strings.Contains(help, "usage: payouts "+c.Name) {
			t.Errorf("help %s printed\n%s\n%s -h (%v) printed\n%s", c.Name, help, c.Name, err, dashH)
		}
	}
	if n < 3 {
		t.Errorf("%d commands of two words", n)
	}
	if _, err := runCLI(t, nil, "help", "merchant", "nope"); cli.ExitCode(err) != 2 {
		t.Errorf("help merchant nope: %v, want a usage error", err)
	}
}

// Every command that works on an existing store refuses a --data without a database (a
// mistyped one) and creates nothing there, nor the file it was to write; as `payouts check`.
func TestCLICommandsThatReadAStoreRefuseAMissingOne(t *testing.T) {
	t.Parallel()
	n := 0
	for _, c := range cli.Commands() {
		if !c.ReadsStore {
			continue
		}
		n++
		t.Run(c.Name, func(t *testing.T) {
			tmp := t.TempDir()
			for _, data := range []string{filepath.Join(tmp, "payuots"), tmp} {
				args := append(strings.Fields(c.Name), "--data", data)
				for _, f := range c.Required {
					args = append(args, "--"+f, filepath.Join(tmp, "given-"+f))
				}
				out, err := runCLI(t, nil, args...)
				if cli.ExitCode(err) != 1 || !strings.Contains(err.Error(), "no database at "+filepath.Join(data, "payouts.db")) {
					t.Errorf("%v: exit %d, %v\n%s", args, cli.ExitCode(err), err, out)
				}
				if strings.Contains(out, "bytes written") {
					t.Errorf("%v says it wrote:\n%s", args, out)
				}
				if entries, _ := os.ReadDir(tmp); len(entries) > 0 {
					t.Errorf("%v created %v", args, entries)
				}
			}
		})
	}
	if n < 4 {
		t.Errorf("only %d commands read a store", n)
	}
}

// On PostgreSQL the same: a database without the store's tables (a mistyped name that
// exists, or a new one) is refused by every command that reads a store, and stays empty:
// it is not migrated into a store to be read as an empty one.
func TestCLICommandsThatReadAStoreRefuseAnEmptyDatabase(t *testing.T) {
	t.Parallel()
	database := pgtest.EmptyDatabase(t)
	n := 0
	for _, c := range cli.Commands() {
		fs := flag.NewFlagSet(c.Name, flag.ContinueOnError)
		c.Flags(fs)
		if !c.ReadsStore || fs.Lookup("database") == nil {
			continue
		}
		n++
		args := append(strings.Fields(c.Name), "--database", database, "--data", filepath.Join(t.TempDir(), "none"))
		for _, f := range c.Required {
			args = append(args, "--"+f, "given")
		}
		out, err := runCLI(t, nil, args...)
		if cli.ExitCode(err) != 1 || !strings.Contains(err.Error(), "holds no store") {
			t.Errorf("%v: exit %d, %v\n%s", args, cli.ExitCode(err), err, out)
		}
		if err := postgres.CheckExists(context.Background(), database); err == nil {
			t.Fatalf("%v made the store's tables in the empty database", args)
		}
	}
	if n < 4 {
		t.Errorf("only %d commands read a store on PostgreSQL", n)
	}
}
