package templates_test

import (
	"bytes"
	"go/format"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/a-h/templ"
	"github.com/a-h/templ/generator"
	"github.com/a-h/templ/parser/v2"
)

// TestGeneratedCodeIsFresh fails when a .templ file and its committed _templ.go disagree:
// run `go tool templ generate` and commit the result. It generates each file as that
// command does (parse, generate with the version and the file's name relative to the
// module root, gofmt), with the generator of the templ module go.mod pins, in this process:
// a `go tool templ` process per file spent its time starting the go command.
func TestGeneratedCodeIsFresh(t *testing.T) {
	sources, _ := filepath.Glob("*.templ")
	if len(sources) == 0 {
		t.Fatal("no .templ files found")
	}
	for _, src := range sources {
		t.Run(src, func(t *testing.T) {
			tf, err := parser.Parse(src)
			if err != nil {
				t.Fatalf("parse %s: %v", src, err)
			}
			var b bytes.Buffer
			if _, err := generator.Generate(tf, &b, generator.WithVersion(templ.Version()), generator.WithFileName("templates/"+src)); err != nil {
				t.Fatalf("generate %s: %v", src, err)
			}
			fresh, err := format.Source(b.Bytes())
			if err != nil {
				t.Fatalf("format the code generated from %s: %v", src, err)
			}
			committed, err := os.ReadFile(strings.TrimSuffix(src, ".templ") + "_templ.go")
			if err != nil {
				t.Fatalf("no generated file for %s: %v", src, err)
			}
			if !bytes.Equal(fresh, committed) {
				t.Fatalf("%s is stale: run `go tool templ generate` and commit the result", strings.TrimSuffix(src, ".templ")+"_templ.go")
			}
		})
	}
}
