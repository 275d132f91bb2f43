package e2e

import (
	"context"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The first start seeds the demo merchant and prints a request that works when pasted
// into a POSIX shell with openssl and curl (no GNU-only date or sha256sum, so macOS works too).
func TestDemoSnippetWorksWhenPasted(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"sh", "openssl", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s on this machine", tool)
		}
	}
	dir := t.TempDir()
	out := &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- runMain(ctx, []string{"--addr", "127.0.0.1:0", "--data", dir, "--log-level", "warn"}, out, &syncBuffer{})
	}()
	defer func() { cancel(); <-done }()
	poll(10*time.Second, func() bool { return strings.Contains(out.String(), "listening on") })
	snippet := regexp.MustCompile(`(?s)\nMID=.*?\ncurl [^\n]*\n`).FindString(out.String())
	if snippet == "" {
		t.Fatalf("no snippet in:\n%s", out.String())
	}
	res, err := exec.Command("sh", "-c", snippet).CombinedOutput()
	if err != nil || !strings.Contains(string(res), `"status":"CREATED"`) {
		t.Fatalf("the pasted snippet: %v\n%s", err, res)
	}
	if !strings.Contains(out.String(), "admin token") {
		t.Error("the first start did not print the admin token")
	}
}
