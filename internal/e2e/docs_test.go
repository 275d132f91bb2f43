package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The Go client of the signing guide compiles and creates a payout against the real server.
func TestSigningGuideGoClientWorks(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the guide's client")
	}
	raw, err := os.ReadFile(repoPath("docs", "guides", "signing.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(raw), "```go\npackage main\n")
	code, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("no Go client in docs/guides/signing.md")
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n"+code), 0o600)
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module readmeclient\n\ngo 1.26\n"), 0o600)
	bin := filepath.Join(dir, "client")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("the guide's Go client does not build: %v\n%s", err, out)
	}
	s := startServer(t, "")
	c := s.newMerchant(t, nil)
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "BASE="+s.URL, "MID="+c.MerchantID, "KEY="+c.Key, "SECRET="+c.Secret)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "201 Created") {
		t.Fatalf("the guide's Go client: %v\n%s", err, out)
	}
}
