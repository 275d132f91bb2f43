package rules

import (
	_ "embed"
	"strings"
)

// The original API's published messages, by code (testdata/published-codes.txt, copied from
// its catalogue). An error with one of these codes reads as the original's does: its
// published message first, then whatever detail this service adds.

//go:embed testdata/published-codes.txt
var publishedCodes string

var published = parsePublished(publishedCodes)

func parsePublished(text string) map[string]string {
	m := map[string]string{}
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		code, msg, ok := strings.Cut(line, "\t")
		if !ok {
			panic("rules: a published code without its message: " + line)
		}
		m[code] = msg
	}
	return m
}

// Published is the original API's published message of code, or "" when the original
// publishes no such code.
func Published(code string) string { return published[code] }

// WithPublished is the message an error of code carries: the published message, then detail.
// A detail that already begins with it, or that it already ends with, adds nothing; a
// detail that reads on from a field's name ("is required…", "must be…") follows the name
// after a space, any other after a colon.
func WithPublished(code, detail string) string {
	p := published[code]
	switch {
	case p == "" || strings.HasPrefix(detail, p):
		return detail
	case detail == "" || strings.HasSuffix(p, detail):
		return p
	case !strings.Contains(p, " ") && (strings.HasPrefix(detail, "is ") || strings.HasPrefix(detail, "must ")):
		return p + " " + detail
	}
	return p + ": " + detail
}
