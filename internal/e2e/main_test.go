// Package e2e tests the whole service from outside: servers started on a free port with a
// data directory of their own (in-process, by server.Run from the Config the serve command
// parses, or as the real binary where a test kills or inspects the process), signed
// requests as a merchant's client sends them, and every answer checked against the served
// OpenAPI document (contract_test.go). The tests run in parallel (parallelTests).
package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"

	"payouts/internal/apicontract"
	"payouts/internal/cli"
	"payouts/internal/servertest"
)

// parallelTests is how many tests run at once when -parallel is not given. The tests
// mostly wait (for the sandbox's rails, a poll, a server to stop), so many more than the
// 2 cores that go test's default of GOMAXPROCS allows keep the machine busy. Not more than
// 12: with 24 under the race detector the machine stood at a load of 15 and more, and the
// tests that bound what they await by the wall clock (a key's grace, a batch's settling)
// failed for that alone.
const parallelTests = 12

func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == binaryName {
		runAsBinary()
	}
	servertest.Parallel(parallelTests)
	inner := http.DefaultTransport
	contract.inner = inner
	http.DefaultTransport = &apicontract.Transport{Inner: inner, Check: contract.check}
	code := m.Run()
	stopBrowser()
	removeBinary()
	fmt.Printf("contract: %d answers and %d accepted requests checked against the served OpenAPI document, over %d operations and %d of their statuses (%d answers outside it: pages, health checks, static files), and %d notifications against its webhook\n",
		contract.answers.Load(), contract.requests.Load(), contract.operationsSeen(), contract.statusesSeen(), contract.outside.Load(), contract.notifications.Load())
	if os.Getenv("PAYOUTS_CONTRACT_SEEN") != "" {
		fmt.Println("contract: statuses seen per operation:\n  " + strings.Join(contract.seenStatuses(), "\n  "))
	}
	if msgs := contract.orphanFailures(); len(msgs) > 0 {
		fmt.Printf("contract: %d answers of servers no test owned, or notifications, do not match the document:\n%s\n", len(msgs), strings.Join(msgs, "\n"))
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

// repoRoot is the repository's root directory: the tests read its docs, examples and static files.
var repoRoot = func() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}()

// repoPath is a path of the repository, from its root.
func repoPath(elem ...string) string { return filepath.Join(append([]string{repoRoot}, elem...)...) }

// binaryName is the name under which the test binary, run again as a process of a test,
// is the payouts binary (payoutsBinary) instead of the tests.
const binaryName = "payouts"

// runAsBinary is main.go's main, for the test binary run again as payouts: the same
// commands, signals and exit codes. It does not return.
func runAsBinary() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

var (
	binaryDir  string
	binaryOnce = sync.OnceValues(func() (string, error) {
		dir, err := os.MkdirTemp("", "payouts-e2e-bin-")
		if err != nil {
			return "", err
		}
		binaryDir = dir
		bin := filepath.Join(dir, binaryName)
		if raceDetector {
			build := exec.Command("go", "build", "-o", bin, ".")
			build.Dir = repoRoot
			if out, err := build.CombinedOutput(); err != nil {
				return "", fmt.Errorf("go build: %v\n%s", err, out)
			}
			return bin, nil
		}
		exe, err := os.Executable()
		if err != nil {
			return "", err
		}
		return bin, os.Symlink(exe, bin)
	})
)

// payoutsBinary is the payouts binary a test runs as its own process, made once for the
// whole run (by the first test that needs it) and removed by TestMain when the run ends:
// this test binary under the name payouts, whose TestMain then runs main.go's main
// (runAsBinary) instead of the tests. Building the binary took that first test 15 to 30 s
// of linking on a busy machine, and a test run alone paid it every time. With the race
// detector the binary is built as before, without it: an instrumented process spends 1.7 s
// of CPU starting (its runtime and every package's initialisation), which each of the
// dozens of processes of a run would pay, against one link.
func payoutsBinary() (string, error) { return binaryOnce() }

func removeBinary() {
	if binaryDir != "" {
		os.RemoveAll(binaryDir)
	}
}
