package rules_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"payouts/rules"
)

// A batchId is an identifier as an orderId is: no control, invisible or direction-changing
// character (1909), and white space alone is no batchId (2924).
func TestCheckBatchRequestBatchID(t *testing.T) {
	items := []json.RawMessage{json.RawMessage(`{}`)}
	for _, tc := range []struct {
		name, batchID, wantCode string
	}{
		{"a batchId", "payroll-2026-11", ""},
		{"spaces inside", "payroll de noviembre", ""},
		{"40 characters", strings.Repeat("b", 40), ""},
		{"40 characters, not bytes", strings.Repeat("ñ", 40), ""},
		{"missing", "", rules.CodeBatchBody},
		{"a single space", " ", rules.CodeBatchBody},
		{"white space alone", " \u00a0\u3000", rules.CodeBatchBody},
		{"41 characters", strings.Repeat("b", 41), rules.CodeBatchBody},
		{"a right-to-left override", "a\u202eb", rules.CodeControlCharacter},
		{"a zero-width space", "a\u200bb", rules.CodeControlCharacter},
		{"a left-to-right mark", "a\u200eb", rules.CodeControlCharacter},
		{"a byte order mark", "\ufeffab", rules.CodeControlCharacter},
		{"a soft hyphen", "a\u00adb", rules.CodeControlCharacter},
		{"a word joiner", "a\u2060b", rules.CodeControlCharacter},
		{"a tab", "a\tb", rules.CodeControlCharacter},
		{"a NUL", "a\x00b", rules.CodeControlCharacter},
		{"a C1 control", "a\u0085b", rules.CodeControlCharacter},
		{"not UTF-8", "a\xffb", rules.CodeControlCharacter},
		{"a replacement character", "a\ufffdb", rules.CodeControlCharacter},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := rules.CheckBatchRequest(rules.BatchRequest{BatchID: tc.batchID, Items: items})
			if tc.wantCode == "" {
				if err != nil {
					t.Fatalf("%q refused: %v", tc.batchID, err)
				}
				return
			}
			var e *rules.Error
			if !errors.As(err, &e) || e.Code != tc.wantCode || e.Field != "batchId" || e.Kind != rules.KindInvalid {
				t.Fatalf("%q: got %v, want %s at batchId", tc.batchID, err, tc.wantCode)
			}
		})
	}
}
