package rules

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// readTree reads a request body into the generic tree the shape and limit checks walk:
// what encoding/json's decode into any gives with UseNumber (objects as map[string]any,
// arrays as []any, strings, json.Number, bool, nil), in about half the allocations and
// time. A body is one allocation, the text every string and number of the tree shares
// (encoding/json copies each of them, boxes each value, and grows each map as it goes).
//
// jsontext is strict where encoding/json is lenient (invalid UTF-8, a lone surrogate
// escape), so ok is false for any body it does not read whole as exactly one value:
// decode then reads it with encoding/json, whose tree and error messages are the contract.
// FuzzReadTree holds the two to the same tree wherever readTree answers.
func readTree(body []byte) (doc any, ok bool) {
	r := treeReaders.Get().(*treeReader)
	defer func() {
		if r.in.Cap() <= maxPooledTree { // a batch's item may be megabytes: not kept
			treeReaders.Put(r)
		}
	}()
	r.text = string(body)
	r.in.Reset()
	r.in.WriteString(r.text)
	// Duplicate names are allowed, and the last wins, as in encoding/json.
	r.dec.Reset(&r.in, allowDuplicateNames)
	doc, err := r.value()
	ok = err == nil && r.dec.InputOffset() == int64(len(r.text))
	r.text = ""
	if !ok {
		return nil, false
	}
	return doc, true
}

// maxPooledTree is the largest copy of a body a pooled reader keeps: a create's body is
// at most 64 KiB.
const maxPooledTree = 64 << 10

var (
	treeReaders         = sync.Pool{New: func() any { return new(treeReader) }}
	allowDuplicateNames = jsontext.AllowDuplicateNames(true)
)

// treeReader is a pooled decoder and the copy of the body it reads: the decoder parses a
// bytes.Buffer in place, so a value it returns sits in text at the same offsets.
type treeReader struct {
	dec  jsontext.Decoder
	in   bytes.Buffer
	text string
}

// value reads the next value. Its recursion is as deep as the body's nesting, which the
// decoder bounds (10,000, as encoding/json does).
func (r *treeReader) value() (any, error) {
	switch r.dec.PeekKind() {
	case '{':
		if _, err := r.dec.ReadToken(); err != nil {
			return nil, err
		}
		obj := make(map[string]any)
		for r.dec.PeekKind() != '}' {
			name, err := r.dec.ReadValue()
			if err != nil {
				return nil, err
			}
			key, err := r.str(name)
			if err != nil {
				return nil, err
			}
			v, err := r.value()
			if err != nil {
				return nil, err
			}
			obj[key] = v
		}
		_, err := r.dec.ReadToken()
		return obj, err
	case '[':
		if _, err := r.dec.ReadToken(); err != nil {
			return nil, err
		}
		arr := []any{}
		for r.dec.PeekKind() != ']' {
			v, err := r.value()
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		_, err := r.dec.ReadToken()
		return arr, err
	}
	v, err := r.dec.ReadValue()
	if err != nil {
		return nil, err
	}
	switch v.Kind() {
	case '"':
		return r.str(v)
	case '0':
		return json.Number(r.at(v)), nil
	case 't':
		return true, nil
	case 'f':
		return false, nil
	}
	return nil, nil // null
}

// at is the text of v, a value the decoder just returned, without a copy.
func (r *treeReader) at(v jsontext.Value) string {
	end := int(r.dec.InputOffset())
	return r.text[end-len(v) : end]
}

// str is the string v, quoted: the text between its quotes when it has no escape, else
// unquoted into a string of its own.
func (r *treeReader) str(v jsontext.Value) (string, error) {
	q := r.at(v)
	if strings.IndexByte(q, '\\') < 0 {
		return q[1 : len(q)-1], nil
	}
	b, err := jsontext.AppendUnquote(nil, v)
	return string(b), err
}
