package main

import (
	"os"
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
	for _, c := range rules.Catalogue {
		row := "| `" + c.Code + "` | " + itoa(int64(c.Status)) + " | " + c.Meaning + " |"
		if !strings.Contains(readme, row) {
			t.Errorf("README's error catalogue lacks or differs for %s: want row %q", c.Code, row)
		}
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
