package api

import "testing"

func TestPrefersHTML(t *testing.T) {
	cases := map[string]bool{
		"":                         false, // the default is JSON, as the original
		"*/*":                      false,
		"application/json":         false,
		"text/html":                true,
		"Text/HTML; charset=utf-8": true,
		"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8": true,  // a browser
		"text/html, application/json":                                     false, // a tie keeps the default
		"application/json, text/html":                                     false,
		"text/html;q=0.5, application/json":                               false,
		"application/json;q=0.5, text/html":                               true,
		"text/*":                                                          true,
		"text/html;q=0":                                                   false,
		"text/*;q=0.9, application/json;q=1":                              false,
		"text/plain":                                                      false,
		"application/json;q=0.8, */*;q=0.9":                               false, // */* names nothing in particular
	}
	for accept, want := range cases {
		if got := prefersHTML(accept); got != want {
			t.Errorf("prefersHTML(%q) = %v, want %v", accept, got, want)
		}
	}
}
