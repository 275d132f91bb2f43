package rules

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// FuzzReadTree: wherever readTree reads a body, its tree is the one encoding/json's decode
// into any makes of it (with UseNumber), and encoding/json reads that body too. Where
// readTree declines, decode falls back to encoding/json, so a decline is never wrong
// (TestReadTreeTakesJSON holds it to taking what a client sends).
func FuzzReadTree(f *testing.F) {
	for _, b := range treeSeeds(f) {
		f.Add(b)
	}
	for _, s := range []string{
		"\"\xff\"", `"\ud800"`, // refused by jsontext, mended into U+FFFD by encoding/json
		`{} {}`, `{}}`, `{"a":1,}`, `[1 2]`, `01`, `1.`, `NaN`, `{"a" 1}`, `{'a':1}`, "{\"a\":1}\x00", `{} `,
		`{"a":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		want, jsonErr := decodeTree(body)
		got, ok := readTree(body)
		if !ok {
			return
		}
		if jsonErr != nil {
			t.Fatalf("readTree read %q, which encoding/json refuses: %v", body, jsonErr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\nreadTree      %#v\nencoding/json %#v", body, got, want)
		}
	})
}

// TestReadTreeTakesJSON: readTree reads every example and the other valid bodies itself,
// or the faster path would be a dead one.
func TestReadTreeTakesJSON(t *testing.T) {
	for _, b := range treeSeeds(t) {
		if _, ok := readTree(b); !ok {
			t.Errorf("readTree declined %q", b)
		}
	}
}

// treeSeeds are the examples and bodies of every kind of JSON value, all valid.
func treeSeeds(tb testing.TB) [][]byte {
	files, _ := filepath.Glob(filepath.Join("testdata", "examples", "*.json"))
	if len(files) == 0 {
		tb.Fatal("no examples")
	}
	var seeds [][]byte
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			tb.Fatal(err)
		}
		seeds = append(seeds, bytes.TrimSpace(b)) // as decode gives it
	}
	for _, s := range []string{
		`{}`, `[]`, `null`, `true`, `false`, `0`, `-1.5e+3`, `""`, `"x"`, `[1,"a",null,{"b":[]}]`,
		`{"a":1,"a":2}`, // the last wins
		`{"a\"b":"c\\d","\u00e9":"\ud83d\ude00","é":"ü"}`, // escaped names and values
		`{"":"","n":1.0,"big":123456789012345678901234567890}`,
		`{ "a" : { "b" : { "c" : [ [ ] , [ { } ] ] } } }`,
	} {
		seeds = append(seeds, []byte(s))
	}
	return seeds
}
