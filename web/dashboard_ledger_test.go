package web_test

import (
	"encoding/csv"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"payouts/internal/servertest"
	"payouts/rules"
)

// The dashboard's ledger page: a balance's entries 50 a page, today's statement, and a
// reconciliation that adds up; a date that is not one is said beside its field.
func TestDashboardLedgerPage(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: e})
		m := s.NewMerchant(t, map[string]any{})
		var ids []int64
		for i := range 25 {
			ids = append(ids, m.Create(t, servertest.PerBankRequest("LEDGER-"+strconv.Itoa(i))).Payout.ID)
		}
		for _, id := range ids {
			m.WaitStatus(t, id, "PROCESSED", 10*time.Second)
		}
		c := s.Dashboard(t)
		page := func(path string) *goquery.Document {
			t.Helper()
			resp, err := c.Get(s.URL + path)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("%s: %d", path, resp.StatusCode)
			}
			doc, err := goquery.NewDocumentFromReader(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			return doc
		}
		base := "/dashboard/merchants/" + m.MerchantID + "/ledger"
		doc := page(base + "?currency=PEN&reconcile=1&lang=en")
		rows := doc.Find("table.entries tbody tr")
		if rows.Length() != 50 || strings.TrimSpace(rows.First().Find("td").Eq(1).Text()) != "funding" {
			t.Fatalf("first page: %d rows, first %q", rows.Length(), rows.First().Text())
		}
		next, ok := doc.Find(`a[rel="next"]`).Attr("href")
		if !ok {
			t.Fatal("no next page")
		}
		if rows := page(next).Find("table.entries tbody tr"); rows.Length() != 1 || !strings.Contains(rows.Text(), "debit") {
			t.Errorf("second page: %d rows: %s", rows.Length(), rows.Text())
		}
		if got := doc.Find(".statement-lines div").Length(); got != 11 {
			t.Errorf("today's statement has %d lines", got)
		}
		if !strings.Contains(doc.Find(".statement").Text(), "debit 25") {
			t.Errorf("today's statement: %s", doc.Find(".statement").Text())
		}
		if doc.Find(".reconcile .adds-up").Length() != 1 || doc.Find(".reconcile .findings").Length() != 0 {
			t.Errorf("reconciliation: %s", doc.Find(".reconcile").Text())
		}
		bad := page(base + "?currency=PEN&date=2026-13-01")
		if msg := bad.Find(".statement .field-error").Text(); !strings.Contains(msg, rules.CodeStatementDate) {
			t.Errorf("a date that is not one: %q", msg)
		}
		resp, err := c.Get(s.URL + "/dashboard/merchants/" + m.MerchantID + "/statement.csv?currency=PEN&date=" + time.Now().In(rules.StatementZone).Format(time.DateOnly))
		if err != nil {
			t.Fatal(err)
		}
		csvRows, err := csv.NewReader(resp.Body).ReadAll()
		resp.Body.Close()
		if err != nil || len(csvRows) != 2 || csvRows[1][19] != "25" {
			t.Errorf("statement CSV: %v %v", csvRows, err)
		}
	})
}
