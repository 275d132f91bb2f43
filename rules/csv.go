package rules

import (
	"encoding/csv"
	"io"
	"strings"
	"unicode/utf8"
)

// CSV files the service writes (the batch result, the payouts, the statements, the audit
// log) are opened in spreadsheets by people other than whoever wrote their text: a maker's
// orderId such as =HYPERLINK("…") must reach the checker as text, never as a formula
// (OWASP, "CSV Injection"). Every CSV goes through CSVWriter, so every cell goes through
// CSVCell.

// formulaLeads are the characters that make a spreadsheet read a cell as a formula: the
// ASCII ones OWASP lists, and their full-width forms, which spreadsheets in East Asian
// locales read the same way.
const formulaLeads = "=+-@\t\r\n＝＋－＠"

// CSVCell is s as a CSV cell that a spreadsheet shows and never evaluates: a cell led by a
// formula character gets a leading apostrophe, which spreadsheets read as "text follows"
// and do not show. A plain decimal number (what the service writes for amounts and counts,
// a negative one among them) is left as it is: a spreadsheet reads it as a number, which
// runs nothing, and quoting it would turn a column of amounts into text that no longer sums.
func CSVCell(s string) string {
	if s == "" || isPlainNumber(s) {
		return s
	}
	r, _ := utf8.DecodeRuneInString(s)
	if strings.ContainsRune(formulaLeads, r) {
		return "'" + s
	}
	return s
}

// isPlainNumber reports whether s is an optional minus, digits, and an optional fraction.
func isPlainNumber(s string) bool {
	s = strings.TrimPrefix(s, "-")
	whole, frac, dot := strings.Cut(s, ".")
	return IsDigits(whole) && (!dot || IsDigits(frac))
}

// CSVWriter is encoding/csv's writer with every cell through CSVCell.
type CSVWriter struct {
	w   *csv.Writer
	row []string
}

// NewCSVWriter writes CSV to w.
func NewCSVWriter(w io.Writer) *CSVWriter { return &CSVWriter{w: csv.NewWriter(w)} }

// Write writes one row, each cell through CSVCell.
func (c *CSVWriter) Write(row []string) error {
	c.row = c.row[:0]
	for _, s := range row {
		c.row = append(c.row, CSVCell(s))
	}
	return c.w.Write(c.row)
}

// Flush writes what is buffered to the underlying writer.
func (c *CSVWriter) Flush() { c.w.Flush() }

// Error is the error of an earlier Write or Flush.
func (c *CSVWriter) Error() error { return c.w.Error() }
