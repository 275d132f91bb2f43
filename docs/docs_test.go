// Package docs_test keeps the documentation true: the README is the short front door it
// promises, the reference shows what the code holds, and every link resolves (links_test.go).
package docs_test

import (
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"payouts/rules"
)

// read returns a file of the repository, named from its root.
func read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The README is the front door: short, the two commands first, and nothing outside the
// repository.
func TestREADMEIsTheFrontDoor(t *testing.T) {
	readme := read(t, "README.md")
	if n := strings.Count(readme, "\n"); n > 250 {
		t.Errorf("the README has %d lines; at most 250 (move the rest into docs/)", n)
	}
	run := strings.Index(readme, "```sh\ngo run .\n```")
	test := strings.Index(readme, "```sh\ngo test ./...\n```")
	if run < 0 || test < 0 || run > 600 || test > 800 {
		t.Errorf("the README must open with `go run .` and `go test ./...` (at %d and %d)", run, test)
	}
	for i, line := range strings.Split(readme, "\n") {
		if strings.Contains(line, "../") {
			t.Errorf("README.md:%d refers outside the repository: %s", i+1, line)
		}
	}
	if !strings.Contains(readme, "(docs/README.md)") {
		t.Errorf("the README does not link the map of the docs, docs/README.md")
	}
}

// Every page of docs/ is on the map, docs/README.md.
func TestEveryDocIsOnTheMap(t *testing.T) {
	docsMap := read(t, "docs/README.md")
	for _, f := range markdownFiles(t) {
		if f == "README.md" || f == "docs/README.md" {
			continue
		}
		if rel := strings.TrimPrefix(f, "docs/"); !strings.Contains(docsMap, "]("+rel+")") {
			t.Errorf("docs/README.md does not link %s", rel)
		}
	}
}

// The error catalogue is rules.CatalogueTable() exactly, with no row added after it.
func TestErrorCatalogueIsTheRulesTable(t *testing.T) {
	const name = "docs/reference/errors.md"
	doc := read(t, name)
	table := rules.CatalogueTable()
	at := strings.Index(doc, table)
	if at < 0 {
		for _, line := range strings.Split(strings.TrimSpace(table), "\n") {
			if !strings.Contains(doc, line+"\n") {
				t.Errorf("%s's error catalogue lacks or differs: want row %q", name, line)
			}
		}
		t.Fatalf("%s's error catalogue is not rules.CatalogueTable() (paste it from there)", name)
	}
	if rest := doc[at+len(table):]; strings.HasPrefix(rest, "|") {
		t.Errorf("%s's error catalogue has rows that rules.Catalogue does not: %.80q", name, rest)
	}
}

// Every example request of rules/testdata/examples is named in the country rules, and the
// JSON shown after its name is the file's.
func TestEveryExampleIsShown(t *testing.T) {
	const name = "docs/reference/rules.md"
	doc := read(t, name)
	examples, err := filepath.Glob(filepath.Join("..", "rules", "testdata", "examples", "*.json"))
	if err != nil || len(examples) == 0 {
		t.Fatalf("no examples in rules/testdata/examples (%v)", err)
	}
	for _, f := range examples {
		base := path.Base(filepath.ToSlash(f))
		at := strings.Index(doc, "`"+base+"`")
		if at < 0 {
			t.Errorf("%s does not show the example %s", name, base)
			continue
		}
		_, block, ok := strings.Cut(doc[at:], "```json\n")
		block, _, ok2 := strings.Cut(block, "```")
		if !ok || !ok2 {
			t.Errorf("%s: no JSON block after %s", name, base)
			continue
		}
		var shown, file any
		if err := json.Unmarshal([]byte(block), &shown); err != nil {
			t.Errorf("%s: the JSON shown for %s: %v", name, base, err)
			continue
		}
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, &file); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if !reflect.DeepEqual(shown, file) {
			t.Errorf("%s shows %s other than the file holds; copy it from the file", name, base)
		}
	}
}
