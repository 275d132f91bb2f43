package rules

import (
	"bytes"
	"sort"
	"strings"
	"unicode/utf8"
)

// MaxTextLength is the generic limit, in characters, on the beneficiary's and the
// sub-merchant's free-text fields that the specification leaves without one.
const MaxTextLength = 100

// limitedFields are the fields MaxTextLength applies to ("*" is every field of an address).
var limitedFields = []string{
	"beneficiary.name", "beneficiary.lastName", "beneficiary.customerId", "beneficiary.userName",
	"beneficiary.phoneNumber", "beneficiary.address.*", "destination.bankAccount.location.*",
	"subMerchantInfo.code", "subMerchantInfo.name", "subMerchantInfo.url",
}

func limited(path string) bool {
	for _, f := range limitedFields {
		if f == path || strings.HasSuffix(f, ".*") && strings.HasPrefix(path, f[:len(f)-1]) && !strings.Contains(path[len(f)-1:], ".") {
			return true
		}
	}
	return false
}

// limitedPath is limited for a path being built, without copying it.
func limitedPath(path []byte) bool {
	for _, f := range limitedFields {
		if f == string(path) {
			return true
		}
		if strings.HasSuffix(f, ".*") {
			pre := f[:len(f)-1]
			if len(path) >= len(pre) && string(path[:len(pre)]) == pre && bytes.IndexByte(path[len(pre):], '.') < 0 {
				return true
			}
		}
	}
	return false
}

// checkLimits adds the input limits of every string in the request: no control character
// (a NUL in an orderId, a line break in a name), no text that is not UTF-8 (the JSON decoder
// would replace it with U+FFFD, making two different raw orderIds one), and the length
// limits of limitedFields. body is the raw request; obj its decoded form.
func checkLimits(ps *problems, body []byte, obj map[string]any) {
	before := len(ps.list)
	var buf [64]byte
	walkStrings(buf[:0], obj, func(path []byte, s string) {
		if identifierFields[string(path)] {
			if r, bad := badIdentifierRune(s); bad {
				ps.add(CodeControlCharacter, string(path), identifierMessage(r), nil)
				return
			}
		}
		if r, bad := badRune(s); bad {
			if r == utf8.RuneError {
				ps.add(CodeControlCharacter, string(path), "must be valid UTF-8 text (no U+FFFD replacement character)", nil)
			} else {
				ps.addf(CodeControlCharacter, string(path), nil, "must not contain the control character U+%04X", r)
			}
			return
		}
		if limitedPath(path) && utf8.RuneCountInString(s) > MaxTextLength {
			ps.addf(CodeTooLong, string(path), s, "must be at most %d characters", MaxTextLength)
		}
	})
	if len(ps.list) == before && !utf8.Valid(body) {
		// Not in a string value (a key, say): the body as a whole.
		ps.add(CodeControlCharacter, "", "the body is not valid UTF-8", nil)
	}
}

// badRune finds a control character (C0, DEL, C1) or a replacement character in s.
func badRune(s string) (rune, bool) {
	for _, r := range s {
		if r < 0x20 || r >= 0x7f && r <= 0x9f || r == utf8.RuneError {
			return r, true
		}
	}
	return 0, false
}

// walkStrings calls fn with the path of every string value in v, in key order. The path is
// built in place in path's array, and is only good during the call: a valid request's
// strings then cost no allocation for their paths (a problem's location is a copy).
func walkStrings(path []byte, v any, fn func(path []byte, s string)) {
	switch x := v.(type) {
	case string:
		fn(path, x)
	case map[string]any:
		var buf [16]string // a request's objects have fewer fields: no allocation to sort them
		keys := buf[:0]
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := path
			if len(p) > 0 {
				p = append(p, '.')
			}
			if k == "" {
				p = append(p, `""`...) // an empty key still needs a location, as in checkObject
			} else {
				p = append(p, k...)
			}
			walkStrings(p, x[k], fn)
		}
	case []any:
		for _, e := range x {
			walkStrings(path, e, fn)
		}
	}
}
