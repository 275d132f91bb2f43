package rules

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ParseBatchCSV reads a batch uploaded as CSV: a header row of dotted field
// names (beneficiary.document.number), then one row per item. Each cell takes the JSON type
// the request schema gives its field (amount and document.type are numbers; a cell that is
// not one stays a string, for the rules to report); an empty cell leaves its field out. A
// name the schema does not know is kept as a string, and the rules report it as unknown.
// A row whose destination cells are all empty has no destination: it is a payout link
// (IsLinkItem), and allowedDestinations lists its kinds in one cell.
func ParseBatchCSV(r io.Reader) ([]json.RawMessage, error) {
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, &Error{Kind: KindInvalid, Code: CodeBatchCSV, Message: "the CSV is empty: a header row of dotted field names comes first"}
	}
	if err != nil {
		return nil, csvError(err)
	}
	cols := make([]csvColumn, len(header))
	seen := map[string]bool{}
	for i, h := range header {
		h = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		if h == "" || seen[h] {
			return nil, &Error{Kind: KindInvalid, Code: CodeBatchCSV, Field: fmt.Sprintf("header column %d", i+1),
				Message: fmt.Sprintf("header column %d is empty or repeats %q: each column names one field", i+1, h)}
		}
		seen[h] = true
		cols[i] = csvColumn{path: strings.Split(h, "."), typ: fieldType(h), list: h == "allowedDestinations"}
	}
	var items []json.RawMessage
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, csvError(err)
		}
		if len(items) >= MaxBatchItems {
			return nil, &Error{Kind: KindTooLarge, Code: CodeBatchTooLarge, Message: fmt.Sprintf("a batch has at most %d items", MaxBatchItems)}
		}
		obj := map[string]any{}
		for i, cell := range rec {
			if cell == "" {
				continue
			}
			var v any = cell
			if cols[i].list {
				v = csvList(cell)
			} else if cols[i].typ == tNumber || cols[i].typ == tInteger {
				if n := strings.TrimSpace(cell); isJSONNumber(n) {
					v = json.Number(n)
				}
			}
			if err := setPath(obj, cols[i].path, v); err != nil {
				return nil, &Error{Kind: KindInvalid, Code: CodeBatchCSV, Field: strings.Join(cols[i].path, "."), Message: err.Error()}
			}
		}
		b, err := json.Marshal(obj)
		if err != nil {
			return nil, err
		}
		items = append(items, b)
	}
	return items, nil
}

type csvColumn struct {
	path []string
	typ  jsonType
	list bool // a payout link's allowedDestinations: account types in one cell, "2 4" or "2;4"
}

// csvList reads a cell of account types separated by spaces, ";" or "|" into the array a
// link's body takes; a part that is not a number stays a string, for the rules to refuse.
func csvList(cell string) []any {
	parts := strings.FieldsFunc(cell, func(r rune) bool { return r == ' ' || r == ';' || r == '|' || r == ',' })
	out := make([]any, len(parts))
	for i, p := range parts {
		if isJSONNumber(p) {
			out[i] = json.Number(p)
		} else {
			out[i] = p
		}
	}
	return out
}

func csvError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &Error{Kind: KindInvalid, Code: CodeBatchCSV, Field: fmt.Sprintf("line %d", pe.Line),
			Message: fmt.Sprintf("the CSV cannot be read at line %d: %v", pe.Line, pe.Err)}
	}
	return &Error{Kind: KindInvalid, Code: CodeBatchCSV, Message: "the CSV cannot be read: " + err.Error()}
}

// fieldType is the JSON type the request schema gives a dotted field; tString when unknown.
func fieldType(dotted string) jsonType {
	shape := requestShape
	parts := strings.Split(dotted, ".")
	for i, p := range parts {
		f, ok := shape[p]
		if !ok {
			return tString
		}
		if i == len(parts)-1 {
			return f.typ
		}
		shape = f.shape
	}
	return tString
}

func isJSONNumber(s string) bool {
	if s == "" {
		return false
	}
	_, err := strconv.ParseFloat(s, 64)
	return err == nil && json.Valid([]byte(s))
}

// setPath sets obj's value at path, making the objects on the way.
func setPath(obj map[string]any, path []string, v any) error {
	for _, p := range path[:len(path)-1] {
		next, ok := obj[p]
		if !ok {
			m := map[string]any{}
			obj[p] = m
			obj = m
			continue
		}
		m, ok := next.(map[string]any)
		if !ok {
			return fmt.Errorf("%s is both a value and an object in the header", strings.Join(path, "."))
		}
		obj = m
	}
	last := path[len(path)-1]
	if _, ok := obj[last].(map[string]any); ok {
		return fmt.Errorf("%s is both a value and an object in the header", strings.Join(path, "."))
	}
	obj[last] = v
	return nil
}
