package api_test

import (
	"encoding/csv"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"payouts/internal/servertest"
	"payouts/rules"
)

// Every CSV the service writes, from the API and from the dashboard, reaches a spreadsheet
// with a maker's formula-like orderIds and a merchant's formula-like name as text: no cell
// starts with a formula character (OWASP's = + - @ tab CR, and their full-width forms),
// while the numbers the service writes (a statement's negative amounts) stay numbers.
func TestEveryCSVTheServiceWritesNeutralisesFormulas(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: e})
		c := s.NewMerchant(t, nil)
		formulas := []string{"=1+2x", "+1+2x", "-2+3x", "@SUM(1)x", `=HYPERLINK("x")x`, "＝1+2x"}
		const name = `=HYPERLINK("http://evil.example/")`
		if code := s.Admin(t, "PATCH", "/admin/v1/merchants/"+c.MerchantID, map[string]any{"name": name}, nil); code != 200 {
			t.Fatalf("rename the merchant: %d", code)
		}
		checker := s.Role(t, c, "checker")

		// A batch whose items all pass, approved and run, so that its orderIds become payouts.
		items := make([]any, len(formulas))
		for i, o := range formulas {
			items[i] = servertest.PerBankRequest(o)
		}
		type batch struct {
			ID     int64  `json:"id"`
			Status string `json:"status"`
			Counts struct{ Final int }
		}
		decode := func(raw []byte) batch {
			var b batch
			if err := json.Unmarshal(raw, &b); err != nil {
				t.Fatalf("decode batch: %v: %s", err, raw)
			}
			return b
		}
		code, _, raw := c.Do(t, "POST", "batches", map[string]any{"batchId": "=batch+1", "items": items}, "")
		if code != 201 {
			t.Fatalf("upload: %d %s", code, raw)
		}
		paid := decode(raw)
		if code, _, raw := checker.Do(t, "POST", "batches/"+itoa(paid.ID)+"/approve", nil, ""); code != 200 {
			t.Fatalf("approve: %d %s", code, raw)
		}
		servertest.Eventually(t, 30*time.Second, "the batch's payouts final", func() bool {
			_, _, raw := c.Do(t, "GET", "batches/"+itoa(paid.ID), nil, "")
			return decode(raw).Counts.Final == len(formulas)
		})
		// An INVALID batch: the same orderIds again (already used), and one refused by the rules.
		bad := append(slices.Clone(items), map[string]any{"orderId": "@bad", "country": "PER"})
		code, _, raw = c.Do(t, "POST", "batches", map[string]any{"batchId": "@invalid", "items": bad}, "")
		invalid := decode(raw)
		if code != 201 || invalid.Status != "INVALID" {
			t.Fatalf("the INVALID upload: %d %s", code, raw)
		}

		// Every CSV the API answers; the served document lists the operations that answer CSV,
		// so a new one without a row here fails the test.
		today := time.Now().In(rules.StatementZone).Format(time.DateOnly)
		csvOf := map[string][][]string{}
		api := func(operation, path string, accept bool) {
			t.Helper()
			req := c.Request("GET", path, nil, "")
			if accept {
				req.Header.Set("Accept", "text/csv")
			}
			code, hdr, raw := servertest.Send(t, c.HTTP, req)
			csvOf[operation+" "+path] = readCSV(t, operation, code, hdr, raw)
		}
		for _, b := range []int64{paid.ID, invalid.ID} {
			api("batch-result-csv", "batches/"+itoa(b)+"/result.csv", false)
			api("list-batch-items", "batches/"+itoa(b)+"/items", true)
		}
		api("get-statement", "statements/PEN/"+today, true)
		code, hdr, raw := s.RawAdmin(t, "GET", "/admin/v1/audit?format=csv", nil)
		csvOf["admin-audit-log"] = readCSV(t, "admin-audit-log", code, hdr, raw)
		served := map[string]bool{}
		for key := range csvOf {
			op, _, _ := strings.Cut(key, " ")
			served[op] = true
		}
		for _, op := range csvOperations(t, s) {
			if !served[op] {
				t.Errorf("the operation %s answers text/csv and this test does not read it", op)
			}
		}

		// Every CSV of the dashboard.
		dash := s.Dashboard(t)
		base := "/dashboard/merchants/" + c.MerchantID
		for _, path := range []string{"/dashboard/payouts.csv", "/dashboard/audit.csv",
			base + "/batches/" + itoa(paid.ID) + "/result.csv",
			base + "/batches/" + itoa(invalid.ID) + "/result.csv",
			base + "/statement.csv?currency=PEN&date=" + today} {
			req, _ := http.NewRequest("GET", s.URL+path, nil)
			code, hdr, raw := servertest.Send(t, dash, req)
			csvOf["dashboard "+path] = readCSV(t, path, code, hdr, raw)
		}

		seen := map[string]bool{}
		for where, rows := range csvOf {
			for i, row := range rows {
				for j, cell := range row {
					if r, _ := utf8.DecodeRuneInString(cell); strings.ContainsRune("=+-@\t\r＝＋－＠", r) && !plainNumber(cell) {
						t.Errorf("%s: row %d column %d is %q: a spreadsheet would run it", where, i+1, j+1, cell)
					}
					seen[cell] = true
				}
			}
		}
		// The values arrived, as text a reader recognises.
		for _, o := range formulas {
			if !seen["'"+o] {
				t.Errorf("no CSV holds the orderId %q as text %q", o, "'"+o)
			}
		}
		if !seen["'"+name] {
			t.Errorf("the payouts CSV does not hold the merchant's name as text")
		}
		// A statement's amounts stay numbers: the day paid the batch, a negative amount.
		st := csvOf["get-statement statements/PEN/"+today]
		if len(st) != 2 {
			t.Fatalf("statement CSV: %q", st)
		}
		col := slices.Index(st[0], "paid")
		if want := "-" + strconv.Itoa(100000*len(formulas)); col < 0 || st[1][col] != want {
			t.Errorf("statement paid = %q, want the number %s", st[1][col], want)
		}
	})
}

// readCSV checks an answer is a CSV and reads it.
func readCSV(t *testing.T, what string, code int, hdr http.Header, raw []byte) [][]string {
	t.Helper()
	if code != 200 || !strings.HasPrefix(hdr.Get("Content-Type"), "text/csv") {
		t.Fatalf("%s: %d %s: %.300s", what, code, hdr.Get("Content-Type"), raw)
	}
	rows, err := csv.NewReader(strings.NewReader(string(raw))).ReadAll()
	if err != nil || len(rows) == 0 {
		t.Fatalf("%s: not a CSV: %v: %.300s", what, err, raw)
	}
	return rows
}

// plainNumber is a cell a spreadsheet reads as a number: an optional minus, digits, an
// optional fraction.
func plainNumber(s string) bool {
	whole, frac, dot := strings.Cut(strings.TrimPrefix(s, "-"), ".")
	return rules.IsDigits(whole) && (!dot || rules.IsDigits(frac))
}

// csvOperations are the operations of the served document with a text/csv answer.
func csvOperations(t *testing.T, s *servertest.Server) []string {
	t.Helper()
	req, _ := http.NewRequest("GET", s.URL+"/openapi.json", nil)
	_, _, raw := servertest.Send(t, s.HTTP, req)
	var doc struct {
		Paths map[string]map[string]struct {
			OperationID string `json:"operationId"`
			Responses   map[string]struct {
				Content map[string]any `json:"content"`
			} `json:"responses"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var ops []string
	for _, item := range doc.Paths {
		for _, op := range item {
			for _, r := range op.Responses {
				if r.Content["text/csv"] != nil && !slices.Contains(ops, op.OperationID) {
					ops = append(ops, op.OperationID)
				}
			}
		}
	}
	if len(ops) == 0 {
		t.Fatal("the served document lists no text/csv answer")
	}
	return ops
}
