package e2e

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestDashboardBatchesBrowser opens the batch pages in Chromium (375 and 1280 px): an INVALID
// batch's report and a key's batch approved there and followed to COMPLETED.
func TestDashboardBatchesBrowser(t *testing.T) {
	t.Parallel()
	ctx := newBrowser(t)
	s := startServer(t, "")
	m := s.newMerchant(t, nil)
	bad := strings.Replace(batchCSV("BR-", 3), "45678912", "123", 1)
	req := m.request("POST", "batches", []byte(bad), "batchId=payroll-bad")
	req.Header.Set("Content-Type", "text/csv")
	if code, raw := sendRaw(t, req); code != 201 {
		t.Fatalf("invalid upload: %d %s", code, raw)
	}
	invalid := decodeBatch(t, mustBody(t, m, "batches", "limit=1"))
	code, _, raw := m.do(t, "POST", "batches", map[string]any{"batchId": "payroll-ok", "items": batchItems("BO-", 3)}, "")
	if code != 201 {
		t.Fatalf("upload: %d %s", code, raw)
	}
	ok := decodeBatch(t, raw)

	err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(s.URL+"/dashboard"),
		chromedp.WaitVisible(chromedp.CSS("#token")), chromedp.SendKeys(chromedp.CSS("#token"), s.AdminToken),
		chromedp.Submit(chromedp.CSS("#token")), chromedp.WaitVisible(chromedp.CSS(".tiles")))
	if err != nil {
		t.Fatalf("sign in: %v", err)
	}
	base := s.URL + "/dashboard/merchants/" + m.MerchantID + "/batches"
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/"+strconv.FormatInt(invalid.ID, 10)), chromedp.WaitVisible(chromedp.CSS("#b-errors"))); err != nil {
		t.Fatalf("the invalid batch's page: %v", err)
	}
	shoot(t, ctx, "batch-invalid")
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/"+strconv.FormatInt(ok.ID, 10)), chromedp.WaitVisible(chromedp.CSS("#b-approve")),
		chromedp.Click(chromedp.CSS("#b-approve")), chromedp.WaitVisible(chromedp.CSS(".flash"))); err != nil {
		t.Fatalf("approve: %v", err)
	}
	m.waitBatch(t, ok.ID, 30*time.Second, func(b batchAnswer) bool { return b.NotifiedAt != "" })
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/"+strconv.FormatInt(ok.ID, 10)), chromedp.WaitVisible(chromedp.CSS("#b-stages"))); err != nil {
		t.Fatalf("the completed batch's page: %v", err)
	}
	shoot(t, ctx, "batch-completed")
	if err := chromedp.Do(ctx, chromedp.Navigate(base), chromedp.WaitVisible(chromedp.CSS("#batch-list"))); err != nil {
		t.Fatalf("the batches page: %v", err)
	}
	shoot(t, ctx, "batches")
}

// mustBody is a signed GET's answer, which must be 200: the first item of a listing.
func mustBody(t *testing.T, c *merchantClient, path, query string) []byte {
	t.Helper()
	code, _, raw := c.do(t, "GET", path, nil, query)
	if code != 200 {
		t.Fatalf("GET %s: %d %s", path, code, raw)
	}
	var page struct{ Items []any }
	if err := json.Unmarshal(raw, &page); err != nil || len(page.Items) == 0 {
		t.Fatalf("GET %s: %s", path, raw)
	}
	b, _ := json.Marshal(page.Items[0])
	return b
}
