package api

import "testing"

func TestPrefersJSON(t *testing.T) {
	cases := map[string]bool{
		"":                                   false, // the default is the page (contract section 6)
		"*/*":                                false,
		"text/html":                          false,
		"application/json":                   true,
		"Application/JSON; charset=utf-8":    true,
		"application/json, */*":              true,
		"text/html, application/json":        false,
		"text/html;q=0.5, application/json":  true,
		"application/json;q=0.5, text/html":  false,
		"application/*":                      true,
		"application/json;q=0":               false,
		"text/*;q=0.9, application/json;q=1": true,
		"text/plain":                         false,
		"application/json;q=0.8, */*;q=0.9":  false, // anything (so the page) ranks above JSON
	}
	for accept, want := range cases {
		if got := prefersJSON(accept); got != want {
			t.Errorf("prefersJSON(%q) = %v, want %v", accept, got, want)
		}
	}
}
