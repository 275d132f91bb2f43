package e2e

import (
	"encoding/json"
	"net/url"
	"testing"

	"payouts/rules"
)

// A batchId is an identifier as an orderId is: white space alone is no batchId (2924), and
// an invisible or direction-changing character is refused at batchId (1909), in a JSON body
// and in the query of a CSV upload; nothing is stored.
func TestBatchIDRefusesBlankAndInvisibleCharacters(t *testing.T) {
	t.Parallel()
	s := startServer(t, "")
	c := s.newMerchant(t, nil)
	for _, tc := range []struct{ name, batchID, code string }{
		{"a single space", " ", rules.CodeBatchBody},
		{"a right-to-left override", "a\u202eb", rules.CodeControlCharacter},
		{"a zero-width space", "payroll\u200b", rules.CodeControlCharacter},
		{"a soft hyphen", "pay\u00adroll", rules.CodeControlCharacter},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, raw := c.do(t, "POST", "batches", map[string]any{"batchId": tc.batchID, "items": batchItems("BID-", 1)}, "")
			checkBatchIDProblem(t, "JSON", code, raw, tc.code)
			req := c.request("POST", "batches", []byte(batchCSV("BIDCSV-", 1)), "batchId="+url.QueryEscape(tc.batchID))
			req.Header.Set("Content-Type", "text/csv")
			code, raw = sendRaw(t, req)
			checkBatchIDProblem(t, "CSV", code, raw, tc.code)
		})
	}
	code, _, raw := c.do(t, "GET", "batches", nil, "")
	var list struct{ Items []json.RawMessage }
	if err := json.Unmarshal(raw, &list); code != 200 || err != nil || len(list.Items) != 0 {
		t.Errorf("refused uploads left batches: %d %s", code, raw)
	}
}

func checkBatchIDProblem(t *testing.T, what string, code int, raw []byte, want string) {
	t.Helper()
	p := decodeProblem(t, raw)
	if code != 400 || p.Code != want || len(p.Errors) != 1 || p.Errors[0].Location != "body.batchId" {
		t.Errorf("%s: %d %s, want 400 %s at body.batchId", what, code, raw, want)
	}
}
