package api_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"payouts/internal/servertest"
	"payouts/rules"
)

func TestBatchInvalidReportsEveryErrorOfEveryItemAndCreatesNothing(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: e})
		c := s.NewMerchant(t, nil)
		if code, _, raw := c.Do(t, "POST", "payouts", servertest.PerBankRequest("USED-1"), ""); code != 201 {
			t.Fatalf("payout: %d %s", code, raw)
		}
		bad := servertest.PerBankRequest("BAD-1")
		bad["amount"] = "ten"                                                                        // 400 layer: a number required
		bad["beneficiary"].(map[string]any)["document"] = map[string]any{"type": 1, "number": "123"} // a DNI of 8 digits
		items := []any{bad, servertest.PerBankRequest("OK-2"), servertest.PerBankRequest("OK-2"), servertest.PerBankRequest("USED-1"), servertest.PerBankRequest("OK-5")}
		code, _, raw := c.Do(t, "POST", "batches", map[string]any{"batchId": "bad", "items": items}, "")
		if code != 201 {
			t.Fatalf("upload: %d %s", code, raw)
		}
		b := servertest.DecodeBatch(t, raw)
		at := map[int][]string{}
		for _, e := range b.Errors {
			at[e.Item] = append(at[e.Item], e.Code+"@"+e.Location)
			if e.Message == "" {
				t.Errorf("error without a message: %+v", e)
			}
		}
		if b.Status != "INVALID" || b.Counts.Invalid != 3 || b.Counts.Valid != 2 || len(at[1]) < 2 || len(at[2]) != 0 ||
			strings.Join(at[3], ",") != "2918@orderId" || strings.Join(at[4], ",") != "2919@orderId" || len(at[5]) != 0 {
			t.Fatalf("the report: %+v (by item %v)", b, at)
		}
		for _, o := range []string{"OK-2", "OK-5", "BAD-1"} {
			code, _, raw := c.Do(t, "GET", "payouts", nil, "orderId="+o)
			var page struct{ Items []any }
			if json.Unmarshal(raw, &page); code != 200 || len(page.Items) != 0 {
				t.Fatalf("orderId %s of an INVALID batch became a payout: %s", o, raw)
			}
		}
		checker := s.Role(t, c, "checker")
		if code, _, raw := checker.Do(t, "POST", "batches/"+strconv.FormatInt(b.ID, 10)+"/approve", nil, ""); code != 409 || servertest.DecodeProblem(t, raw).Code != "2922" {
			t.Fatalf("approve an INVALID batch: %d %s, want 409 2922", code, raw)
		}
		if code, _, raw := c.Do(t, "POST", "batches", map[string]any{"batchId": "none", "items": []any{}}, ""); code != 400 || servertest.DecodeProblem(t, raw).Code != "2924" {
			t.Fatalf("no items: %d %s, want 400 2924", code, raw)
		}
		many := make([]any, 10_001)
		for i := range many {
			many[i] = map[string]any{}
		}
		if code, _, raw := c.Do(t, "POST", "batches", map[string]any{"batchId": "many", "items": many}, ""); code != 413 || servertest.DecodeProblem(t, raw).Code != "2917" {
			t.Fatalf("10,001 items: %d %s, want 413 2917", code, raw)
		}
	})
}

func TestBatchCSVUpload(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: e})
		c := s.NewMerchant(t, nil)
		req := c.Request("POST", "batches", []byte(servertest.BatchCSV("CSV-", 3)), "batchId=csv-1")
		req.Header.Set("Content-Type", "text/csv")
		code, raw := sendRaw(t, c, req)
		b := servertest.DecodeBatch(t, raw)
		if code != 201 || b.Status != "DRAFT" || b.Counts.Items != 3 || b.BatchID != "csv-1" || b.Totals[0].Amount != 300000 {
			t.Fatalf("CSV upload: %d %s", code, raw)
		}
		// A cell of the wrong type is the rules' error, at its item and field.
		body := strings.Replace(servertest.BatchCSV("CSV-", 2), "100000,CSV-2", "lots,CSV-2", 1)
		req = c.Request("POST", "batches", []byte(body), "batchId=csv-2")
		req.Header.Set("Content-Type", "text/csv")
		code, raw = sendRaw(t, c, req)
		if b := servertest.DecodeBatch(t, raw); code != 201 || b.Status != "INVALID" || len(b.Errors) != 1 || b.Errors[0].Item != 2 || b.Errors[0].Location != "amount" {
			t.Fatalf("CSV with a bad amount: %d %s", code, raw)
		}
		req = c.Request("POST", "batches", []byte("country,amount\nPER\n"), "batchId=csv-3")
		req.Header.Set("Content-Type", "text/csv")
		if code, raw := sendRaw(t, c, req); code != 400 || servertest.DecodeProblem(t, raw).Code != "2923" {
			t.Fatalf("a ragged CSV: %d %s, want 400 2923", code, raw)
		}
	})
}

// A batchId is an identifier as an orderId is: white space alone is no batchId (2924), and

// an invisible or direction-changing character is refused at batchId (1909), in a JSON body

// and in the query of a CSV upload; nothing is stored.

func TestBatchIDRefusesBlankAndInvisibleCharacters(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: e})
		c := s.NewMerchant(t, nil)
		for _, tc := range []struct{ name, batchID, code string }{
			{"a single space", " ", rules.CodeBatchBody},
			{"a right-to-left override", "a\u202eb", rules.CodeControlCharacter},
			{"a zero-width space", "payroll\u200b", rules.CodeControlCharacter},
			{"a soft hyphen", "pay\u00adroll", rules.CodeControlCharacter},
		} {
			t.Run(tc.name, func(t *testing.T) {
				code, _, raw := c.Do(t, "POST", "batches", map[string]any{"batchId": tc.batchID, "items": servertest.BatchItems("BID-", 1)}, "")
				checkBatchIDProblem(t, "JSON", code, raw, tc.code)
				req := c.Request("POST", "batches", []byte(servertest.BatchCSV("BIDCSV-", 1)), "batchId="+url.QueryEscape(tc.batchID))
				req.Header.Set("Content-Type", "text/csv")
				code, raw = sendRaw(t, c, req)
				checkBatchIDProblem(t, "CSV", code, raw, tc.code)
			})
		}
		code, _, raw := c.Do(t, "GET", "batches", nil, "")
		var list struct{ Items []json.RawMessage }
		if err := json.Unmarshal(raw, &list); code != 200 || err != nil || len(list.Items) != 0 {
			t.Errorf("refused uploads left batches: %d %s", code, raw)
		}
	})
}

func checkBatchIDProblem(t *testing.T, what string, code int, raw []byte, want string) {
	t.Helper()
	p := servertest.DecodeProblem(t, raw)
	if code != 400 || p.Code != want || len(p.Errors) != 1 || p.Errors[0].Location != "body.batchId" {
		t.Errorf("%s: %d %s, want 400 %s at body.batchId", what, code, raw, want)
	}
}

// sendRaw sends req with c's client and returns the status and the body.
func sendRaw(t *testing.T, c *servertest.Merchant, req *http.Request) (int, []byte) {
	t.Helper()
	code, _, raw := servertest.Send(t, c.HTTP, req)
	return code, raw
}
