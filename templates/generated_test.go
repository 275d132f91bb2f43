package templates_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGeneratedCodeIsFresh fails when a .templ file and its committed _templ.go disagree:
// run `go tool templ generate` and commit the result (STYLE 7).
func TestGeneratedCodeIsFresh(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	sources, _ := filepath.Glob("*.templ")
	if len(sources) == 0 {
		t.Fatal("no .templ files found")
	}
	for _, src := range sources {
		t.Run(src, func(t *testing.T) {
			t.Parallel() // each is a process of its own, mostly waiting for the go command
			// From the module root, as `go tool templ generate` is run there: the file
			// names in the generated code are relative to it.
			cmd := exec.Command("go", "tool", "templ", "generate", "-f", filepath.Join("templates", src), "-stdout")
			cmd.Dir = ".."
			var out, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("templ generate %s: %v\n%s", src, err, stderr.String())
			}
			committed, err := os.ReadFile(strings.TrimSuffix(src, ".templ") + "_templ.go")
			if err != nil {
				t.Fatalf("no generated file for %s: %v", src, err)
			}
			if !bytes.Equal(out.Bytes(), committed) {
				t.Fatalf("%s is stale: run `go tool templ generate` and commit the result", strings.TrimSuffix(src, ".templ")+"_templ.go")
			}
		})
	}
}
