package web_test

import (
	"encoding/csv"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"payouts/internal/servertest"
)

// The payouts' CSV holds what the API created, newest first, filtered; the list filters by
// merchant.
func TestDashboardPayoutsCSV(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: e})
		m := s.NewMerchant(t, map[string]any{})
		other := s.NewMerchant(t, map[string]any{})
		ids := map[string]int64{}
		for _, o := range []string{"CSV-1", "CSV-2", "CSV-3"} {
			ids[o] = m.Create(t, servertest.PerBankRequest(o)).Payout.ID
		}
		other.Create(t, servertest.ColBankRequest("CSV-OTHER"))
		c := s.Dashboard(t)
		get := func(q string) [][]string {
			t.Helper()
			resp, err := c.Get(s.URL + "/dashboard/payouts.csv?" + q)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/csv") {
				t.Fatalf("CSV %s: %d %s", q, resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			rows, err := csv.NewReader(resp.Body).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			return rows
		}
		rows := get("")
		if len(rows) != 5 || rows[0][0] != "payoutId" || rows[0][6] != "amount" || rows[0][7] != "amountMinor" {
			t.Fatalf("all payouts: %d rows, header %v", len(rows), rows[0])
		}
		// Newest first, across merchants.
		if rows[1][1] != "CSV-OTHER" || rows[2][1] != "CSV-3" || rows[4][1] != "CSV-1" {
			t.Errorf("order: %v", [][]string{rows[1], rows[2], rows[3], rows[4]})
		}
		if rows[2][6] != "1000.00" || rows[2][7] != "100000" || rows[2][4] != "PER" || rows[2][5] != "PEN" || rows[2][2] != m.MerchantID {
			t.Errorf("CSV-3 row: %v", rows[2])
		}
		if rows[1][6] != "50000.00" || rows[1][7] != "5000000" {
			t.Errorf("COL row amounts: %v", rows[1])
		}
		rows = get("merchant=" + m.MerchantID + "&orderId=CSV-2")
		if len(rows) != 2 || rows[1][0] != strconv.FormatInt(ids["CSV-2"], 10) {
			t.Errorf("by orderId: %v", rows)
		}
		rows = get("country=COL")
		if len(rows) != 2 || rows[1][1] != "CSV-OTHER" {
			t.Errorf("by country: %v", rows)
		}
		resp, err := c.Get(s.URL + "/dashboard/payouts.csv?stage=NOPE")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("a bad stage: %d, want 400", resp.StatusCode)
		}

		// The list pages with a cursor: one page of two, then the rest.
		resp, err = c.Get(s.URL + "/dashboard/payouts?merchant=" + m.MerchantID)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, o := range []string{"CSV-1", "CSV-2", "CSV-3"} {
			if !strings.Contains(string(body), ">"+o+"<") {
				t.Errorf("the list lacks %s", o)
			}
		}
		if strings.Contains(string(body), ">CSV-OTHER<") {
			t.Error("the merchant filter let another merchant's payout through")
		}
	})
}
