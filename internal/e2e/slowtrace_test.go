package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSlowRequestTraced: with --slow-trace, a request slower than --slow-trace-over leaves the
// execution trace of the moments before it in the directory, the request a task in it with
// its route, so that `go tool trace` finds it by its duration.
func TestSlowRequestTraced(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "slow")
	s := startServer(t, "", "--slow-trace", dir, "--slow-trace-over", "1ns")
	c := s.newMerchant(t, nil)
	// Every request is slow at 1ns, but a file is written at most once a window: the
	// merchant's creation may have taken it. Creates go on until one is traced.
	var trace []byte
	n := 0
	eventually(t, 30*time.Second, "a trace of a payout's create in "+dir, func() bool {
		n++
		if code, _, raw := c.do(t, "POST", "payouts", perBankRequest(fmt.Sprintf("slow-%d", n)), ""); code != 201 {
			t.Fatalf("create: %d %s", code, raw)
		}
		es, _ := os.ReadDir(dir)
		for _, e := range es {
			if !strings.Contains(e.Name(), "-POST-api-v1-merchantId-payouts-") {
				continue
			}
			raw, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err == nil && strings.Contains(string(raw), "POST /api/v1/{merchantId}/payouts") {
				trace = raw
				return true
			}
		}
		return false
	})
	if !strings.HasPrefix(string(trace), "go 1.") {
		t.Fatalf("not an execution trace: %q", trace[:16])
	}
	if strings.Contains(string(trace), c.Secret) {
		t.Fatal("the trace holds the merchant's secret")
	}
}
