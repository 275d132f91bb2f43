package rules_test

import (
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"

	"payouts/rules"
)

// readPublished reads the original API's published codes and messages
// (testdata/published-codes.txt, copied from its catalogue).
func readPublished(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile("testdata/published-codes.txt")
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		code, msg, ok := strings.Cut(line, "\t")
		if !ok || len(code) != 4 || msg == "" {
			t.Fatalf("published-codes.txt: %q is not a code, a tab and a message", line)
		}
		if _, dup := m[code]; dup {
			t.Fatalf("published-codes.txt: code %s twice", code)
		}
		m[code] = msg
	}
	if len(m) < 150 {
		t.Fatalf("published-codes.txt holds %d codes; the catalogue publishes more", len(m))
	}
	return m
}

// citation is what a merchant cannot follow: a section of a document it does not have.
var citation = regexp.MustCompile(`(?i)\bspec [0-9]|specification|contract section|wire doc`)

// Every code of the catalogue that the original publishes is marked original and its
// meaning begins with the published message; no code is marked original that it does not
// publish.
func TestCatalogueMeaningsBeginWithThePublishedMessage(t *testing.T) {
	pub := readPublished(t)
	answered := 0
	for _, c := range rules.Catalogue {
		p, ok := pub[c.Code]
		if ok != c.Original {
			t.Errorf("code %s: marked original %v, published %v", c.Code, c.Original, ok)
		}
		if !ok {
			continue
		}
		answered++
		if !strings.HasPrefix(c.Meaning, p) {
			t.Errorf("code %s: meaning %q does not begin with the published %q", c.Code, c.Meaning, p)
		}
		if got := rules.Published(c.Code); got != p {
			t.Errorf("rules.Published(%s) = %q, want %q", c.Code, got, p)
		}
	}
	t.Logf("%d of the %d published codes are answered", answered, len(pub))
}

// Every error the request checks raise, over every row of the rule tables, begins with its
// code's published message when the original publishes the code, and cites no document.
func TestEveryErrorBeginsWithThePublishedMessage(t *testing.T) {
	pub := readPublished(t)
	var errs []*rules.Error
	collect := func(err error) {
		var p *rules.Problem
		if errors.As(err, &p) {
			errs = append(errs, p.Errors...)
		}
	}
	for _, tc := range append(countryRows(), publishedRows()...) {
		req, err := rules.DecodePayoutRequest(rowBody(t, tc))
		if err != nil {
			collect(err)
			continue
		}
		at := tc.now
		if at.IsZero() {
			at = checkNow
		}
		_, err = rules.Check(req, &rules.Merchant{ID: "1", Name: "Tienda", Settings: tc.set}, at, tc.ep)
		collect(err)
	}
	for _, tc := range decodeCases() {
		_, err := rules.DecodePayoutRequest(tc.body)
		collect(err)
	}
	// The outcomes a payout can end with carry their code's message too.
	for _, code := range []string{rules.CodeDenied, rules.CodeBankRejected, rules.CodeAccountNotFound, rules.CodeCardDeclined} {
		p := &rules.Payout{Status: rules.StatusCreated}
		p.Move(rules.StatusRejectedBank, checkNow, code, "a note of the rail")
		errs = append(errs, p.Errors...)
	}
	checked := map[string]bool{}
	for _, e := range errs {
		if citation.MatchString(e.Message) {
			t.Errorf("code %s at %s cites a document: %q", e.Code, e.Field, e.Message)
		}
		p, ok := pub[e.Code]
		if !ok {
			continue
		}
		checked[e.Code] = true
		if !strings.HasPrefix(e.Message, p) {
			t.Errorf("code %s at %s: %q does not begin with the published %q", e.Code, e.Field, e.Message, p)
		}
	}
	if len(checked) < 80 {
		t.Errorf("only %d published codes were raised by the tables; the check reads too little", len(checked))
	}
	t.Logf("%d errors checked, %d published codes among them", len(errs), len(checked))
}

// No message of the catalogue, in English or Spanish, cites a document a merchant does not
// have.
func TestNoCatalogueMessageCitesADocument(t *testing.T) {
	for _, c := range rules.Catalogue {
		if citation.MatchString(c.Meaning) {
			t.Errorf("code %s: %q cites a document", c.Code, c.Meaning)
		}
		if es := rules.MessageIn("es", c.Code, ""); citation.MatchString(es) || strings.Contains(es, "especificación") {
			t.Errorf("code %s: the Spanish %q cites a document", c.Code, es)
		}
	}
}
