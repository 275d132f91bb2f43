package api

import (
	"net/url"
	"strings"
	"testing"
)

// FuzzQueryGet: queryGet reads a parameter as url.ParseQuery's Get does, whatever the query.
func FuzzQueryGet(f *testing.F) {
	for _, q := range []string{
		"", "timestamp=1687543425203&signature=ab12", "signature=x&timestamp=1&timestamp=2",
		"timestamp", "timestamp=", "=1&timestamp=2", "time%73tamp=3", "timestamp=%zz&timestamp=4",
		"timestamp=a+b%20c", "timestamp=1;signature=2&signature=3", "&&timestamp=5&",
		"t%zz=1&timestamp=6", strings.Repeat("a=1&", 70) + "timestamp=7",
	} {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, _ := url.ParseQuery(raw)
		for _, name := range []string{"timestamp", "signature"} {
			if got, want := queryGet(raw, name), q.Get(name); got != want {
				t.Fatalf("%q: queryGet(%s) = %q, ParseQuery's Get %q", raw, name, got, want)
			}
		}
	})
}
