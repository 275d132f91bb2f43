package rules_test

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"payouts/rules"
)

// A cell a spreadsheet would read as a formula comes out as text (OWASP, "CSV Injection");
// the numbers the service writes stay numbers.
func TestCSVCellNeutralisesFormulasAndKeepsNumbers(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"equals", "=1+2x", "'=1+2x"},
		{"plus", "+1+2x", "'+1+2x"},
		{"minus with a formula", "-2+3x", "'-2+3x"},
		{"at", "@SUM(1)x", "'@SUM(1)x"},
		{"a function", `=HYPERLINK("x")x`, `'=HYPERLINK("x")x`},
		{"a DDE payload", "=cmd|' /C calc'!A0", "'=cmd|' /C calc'!A0"},
		{"tab", "\t=1+2", "'\t=1+2"},
		{"carriage return", "\r=1+2", "'\r=1+2"},
		{"line feed", "\n=1+2", "'\n=1+2"},
		{"full-width equals", "＝1+2", "'＝1+2"},
		{"full-width plus", "＋1+2", "'＋1+2"},
		{"full-width minus", "－1+2", "'－1+2"},
		{"full-width at", "＠SUM(1)", "'＠SUM(1)"},
		{"a UTC offset is not a number", "-05:00", "'-05:00"},
		{"an exponent is not a plain number", "-1e5", "'-1e5"},
		{"minus alone", "-", "'-"},
		{"a negative amount stays a number", "-250000", "-250000"},
		{"a negative decimal stays a number", "-2500.50", "-2500.50"},
		{"a positive amount", "100000", "100000"},
		{"a decimal", "1000.00", "1000.00"},
		{"text", "ORD-1", "ORD-1"},
		{"a formula character later on", "a=1+2", "a=1+2"},
		{"a leading space", " =1+2", " =1+2"},
		{"empty", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := rules.CSVCell(tc.in); got != tc.want {
				t.Errorf("CSVCell(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// The writer puts every cell through CSVCell and leaves the caller's row as it was.
func TestCSVWriterNeutralisesEveryCell(t *testing.T) {
	var buf bytes.Buffer
	w := rules.NewCSVWriter(&buf)
	row := []string{"=1+2", "-5", "@x", "ok"}
	if err := w.Write(row); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		t.Fatal(err)
	}
	got, err := csv.NewReader(&buf).ReadAll()
	if err != nil || len(got) != 1 {
		t.Fatalf("read back: %v %v", got, err)
	}
	if want := []string{"'=1+2", "-5", "'@x", "ok"}; !slices.Equal(got[0], want) {
		t.Errorf("row %q, want %q", got[0], want)
	}
	if row[0] != "=1+2" {
		t.Errorf("the caller's row changed: %q", row)
	}
}

// Every CSV writer of the service goes through rules.CSVWriter: encoding/csv's own writer
// is used in one place only, so a new export cannot skip the neutralising by accident.
func TestEveryCSVWriterIsTheNeutralisingOne(t *testing.T) {
	t.Parallel()
	root := ".."
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules" || d.Name() == ".ci") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if strings.Contains(string(raw), "csv.NewWriter(") && rel != filepath.Join("rules", "csv.go") {
			t.Errorf("%s writes CSV with encoding/csv's writer: use rules.NewCSVWriter", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
