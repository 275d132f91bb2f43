package cli_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"payouts/internal/cli"
)

var update = flag.Bool("update", false, "rewrite docs/reference/cli.md from the command table")

// The CLI reference in the docs is the command table's, exactly.
func TestReferenceIsTheCommandTable(t *testing.T) {
	var b bytes.Buffer
	cli.Reference(&b)
	path := filepath.Join("..", "..", "docs", "reference", "cli.md")
	if *update {
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, b.Bytes()) {
		t.Errorf("%s is not the command table's reference: run go test ./internal/cli -update", path)
	}
}
