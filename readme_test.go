package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"payouts/rules"
)

// The README stays true: it opens with the two commands, lists every error code of the
// catalogue with its status, and shows every example request.
func TestREADMEIsTrue(t *testing.T) {
	raw, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	run := strings.Index(readme, "```sh\ngo run .\n```")
	test := strings.Index(readme, "```sh\ngo test ./...\n```")
	if run < 0 || test < 0 || run > 600 || test > 800 {
		t.Errorf("the README must open with `go run .` and `go test ./...` (at %d and %d)", run, test)
	}
	// The error catalogue is rules.CatalogueTable() exactly, with no row added after it.
	table := rules.CatalogueTable()
	if at := strings.Index(readme, table); at < 0 {
		for _, line := range strings.Split(strings.TrimSpace(table), "\n") {
			if !strings.Contains(readme, line+"\n") {
				t.Errorf("README's error catalogue lacks or differs: want row %q", line)
			}
		}
		t.Errorf("README's error catalogue is not rules.CatalogueTable() (paste it from there)")
	} else if rest := readme[at+len(table):]; strings.HasPrefix(rest, "|") {
		t.Errorf("README's error catalogue has rows that rules.Catalogue does not: %.80q", rest)
	}
	examples, _ := filepath.Glob("rules/testdata/examples/*.json")
	for _, f := range examples {
		if !strings.Contains(readme, filepath.Base(f)) {
			t.Errorf("README does not show the example %s", f)
		}
	}
	for _, s := range []string{"CARD_SECTION", "NOTIFY_SECTION", "BENCH_SECTION"} {
		if strings.Contains(readme, s) {
			t.Errorf("README still has the placeholder %s", s)
		}
	}
}

// The README's Go client compiles and creates a payout against the real server.
func TestREADMEGoClientWorks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the README's client")
	}
	raw, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(raw), "```go\npackage main\n")
	code, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("no Go client in the README")
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n"+code), 0o600)
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module readmeclient\n\ngo 1.26\n"), 0o600)
	bin := filepath.Join(dir, "client")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("the README's Go client does not build: %v\n%s", err, out)
	}
	s := startServer(t, "")
	c := s.newMerchant(t, nil)
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "BASE="+s.URL, "MID="+c.MerchantID, "KEY="+c.Key, "SECRET="+c.Secret)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "201 Created") {
		t.Fatalf("the README's Go client: %v\n%s", err, out)
	}
}
