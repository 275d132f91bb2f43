package rules

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// Identifiers (an orderId, a merchant id, a scripted rule's fields) are compared byte for
// byte but read by people, in the dashboard and in CSV files: one holding an invisible or
// direction-changing character (U+200B, U+202E, U+FEFF: Unicode's format characters,
// category Cf) looks like another that it is not. They refuse those as they refuse control
// characters, with CodeControlCharacter at the field that holds one.

// identifierFields are the request's fields that identify rather than describe.
var identifierFields = map[string]bool{
	"orderId": true, "beneficiary.customerId": true, "beneficiary.document.number": true, "subMerchantInfo.code": true,
}

// badIdentifierRune finds a control character (C0, DEL, C1), a format character (Cf) or a
// replacement character in s.
func badIdentifierRune(s string) (rune, bool) {
	for _, r := range s {
		if r < 0x20 || r >= 0x7f && r <= 0x9f || r == utf8.RuneError || unicode.Is(unicode.Cf, r) {
			return r, true
		}
	}
	return 0, false
}

// identifierMessage says what is wrong with r in an identifier.
func identifierMessage(r rune) string {
	switch {
	case r == utf8.RuneError:
		return "must be valid UTF-8 text (no U+FFFD replacement character)"
	case unicode.Is(unicode.Cf, r):
		return fmt.Sprintf("must not contain the invisible or direction-changing character U+%04X", r)
	}
	return fmt.Sprintf("must not contain the control character U+%04X", r)
}

// CheckIdentifier refuses an identifier holding a control, format or replacement character:
// CodeControlCharacter at field. nil when s is fine.
func CheckIdentifier(field, s string) error {
	if r, bad := badIdentifierRune(s); bad {
		return &Error{Kind: KindInvalid, Code: CodeControlCharacter, Field: field, Value: s, Message: identifierMessage(r)}
	}
	return nil
}
