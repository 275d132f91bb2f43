package main

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestFindRoot(t *testing.T) {
	root := t.TempDir()
	write := func(p, s string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(root, "go.mod"), "module payouts\n\ngo 1.26\n")
	// another module inside the repository (a tool's own) is walked past
	write(filepath.Join(root, "tools", "x", "go.mod"), "module example.com/x\n")
	deep := filepath.Join(root, "bench", "internal", "sign")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{root, deep, filepath.Join(root, "tools", "x")} {
		if got, err := findRoot(dir); err != nil || got != root {
			t.Errorf("findRoot(%s) = %s, %v; want %s", dir, got, err, root)
		}
	}
	if got, err := findRoot(t.TempDir()); err == nil {
		t.Errorf("found a root outside the repository: %s", got)
	}
}

func TestChildEnvDropsPayoutsVariables(t *testing.T) {
	got := childEnv([]string{"HOME=/root", "PAYOUTS_DATABASE=postgres://x", "PAYOUTS_BENCH_DATABASE_URL=postgres://y", "GOFLAGS=-mod=mod", "XPAYOUTS_A=1"})
	want := []string{"HOME=/root", "GOFLAGS=-mod=mod", "XPAYOUTS_A=1"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
