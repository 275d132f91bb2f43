package rules

import (
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

// checkLimits adds the input limits of every string in the request: no control character
// (a NUL in an orderId, a line break in a name), no text that is not UTF-8 (the JSON decoder
// would replace it with U+FFFD, making two different raw orderIds one), and the length
// limits of limitedFields. body is the raw request; obj its decoded form.
func checkLimits(ps *problems, body []byte, obj map[string]any) {
	before := len(ps.list)
	walkStrings("", obj, func(path, s string) {
		if identifierFields[path] {
			if r, bad := badIdentifierRune(s); bad {
				ps.add(CodeControlCharacter, path, identifierMessage(r), nil)
				return
			}
		}
		if r, bad := badRune(s); bad {
			if r == utf8.RuneError {
				ps.add(CodeControlCharacter, path, "must be valid UTF-8 text (no U+FFFD replacement character)", nil)
			} else {
				ps.addf(CodeControlCharacter, path, nil, "must not contain the control character U+%04X", r)
			}
			return
		}
		if limited(path) && utf8.RuneCountInString(s) > MaxTextLength {
			ps.addf(CodeTooLong, path, s, "must be at most %d characters", MaxTextLength)
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

// walkStrings calls fn with the path of every string value in v, in key order.
func walkStrings(path string, v any, fn func(path, s string)) {
	switch x := v.(type) {
	case string:
		fn(path, x)
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := k
			if p == "" {
				p = `""` // an empty key still needs a location, as in checkObject
			}
			if path != "" {
				p = path + "." + p
			}
			walkStrings(p, x[k], fn)
		}
	case []any:
		for _, e := range x {
			walkStrings(path, e, fn)
		}
	}
}
