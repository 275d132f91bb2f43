package docs_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// citation is a section of a document a merchant or an operator does not have.
var citation = regexp.MustCompile(`(?i)\bspec [0-9]|contract section|wire doc`)

// No text the service sends or shows cites a document its reader does not have: no string
// in the code of the packages that answer requests, render pages or write mail and
// notifications, and no line of these docs. (Comments are for the code's readers; the rule
// tables' row names in tests may still name where a rule comes from.)
func TestNoMessageCitesADocument(t *testing.T) {
	var found []string
	for _, dir := range []string{"rules", "api", "web", "templates", "internal/server", "internal/cli", "store"} {
		err := filepath.WalkDir(filepath.Join("..", dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					s, err := strconv.Unquote(lit.Value)
					if err == nil && (citation.MatchString(s) || strings.Contains(strings.ToLower(s), "specification")) {
						found = append(found, p+": "+s)
					}
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range markdownFiles(t) {
		for i, line := range strings.Split(read(t, name), "\n") {
			if citation.MatchString(line) {
				found = append(found, name+":"+strconv.Itoa(i+1)+": "+line)
			}
		}
	}
	for _, f := range found {
		t.Errorf("cites a document its reader does not have: %.200s", f)
	}
	if _, err := os.Stat(filepath.Join("..", "rules", "codes.go")); err != nil {
		t.Fatalf("the walk read nothing: %v", err)
	}
}
