package web_test

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"payouts/internal/servertest"
)

// TestDashboardBatches: upload a CSV, read its report, approve a key's batch as the signed-in
// principal (and not one's own), follow it, download the result; a key with a role from the
// merchant's page.
func TestDashboardBatches(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: e})
		m := s.NewMerchant(t, nil)
		c := s.Dashboard(t)
		get := func(path string) string {
			t.Helper()
			return servertest.Text(t, c, s.URL+path)
		}
		upload := func(batchID, csv string) string {
			t.Helper()
			var body bytes.Buffer
			mw := multipart.NewWriter(&body)
			mw.WriteField("batchId", batchID)
			fw, _ := mw.CreateFormFile("file", "payroll.csv")
			fw.Write([]byte(csv))
			mw.Close()
			req, _ := http.NewRequest("POST", s.URL+"/dashboard/merchants/"+m.MerchantID+"/batches", &body)
			req.Header.Set("Content-Type", mw.FormDataContentType())
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusSeeOther {
				t.Fatalf("upload %s: %d", batchID, resp.StatusCode)
			}
			return resp.Header.Get("Location")
		}

		if page := get("/dashboard/merchants/" + m.MerchantID); !strings.Contains(page, `id="batches-link"`) {
			t.Fatal("the merchant's page has no link to its batches")
		}
		own := upload("dash-1", servertest.BatchCSV("DB-", 2))
		page := get(own)
		if !strings.Contains(page, `id="batch-status">DRAFT<`) || !strings.Contains(page, `id="b-self"`) || strings.Contains(page, `id="b-approve"`) {
			t.Fatalf("a batch the dashboard uploaded: want DRAFT, no approve button for its maker:\n%s", page)
		}
		resp, err := c.PostForm(s.URL+own+"/approve", url.Values{})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if page := get(own); !strings.Contains(page, "2915") || !strings.Contains(page, `id="batch-status">DRAFT<`) {
			t.Fatalf("the maker approving its own batch from the dashboard was not refused with 2915:\n%s", page)
		}

		bad := strings.Replace(servertest.BatchCSV("DX-", 2), "45678912", "123", 1)
		page = get(upload("dash-2", bad))
		if !strings.Contains(page, `id="batch-status">INVALID<`) || !regexp.MustCompile(`(?s)id="b-errors".*>1</th>.*<code>1201</code>.*<code>beneficiary.document.number</code>`).MatchString(page) {
			t.Fatalf("the validation report lacks item 1's error:\n%s", page)
		}

		// A key's batch, approved in the dashboard by the signed-in principal.
		code, _, raw := m.Do(t, "POST", "batches", map[string]any{"batchId": "api-1", "items": servertest.BatchItems("DA-", 2)}, "")
		if code != 201 {
			t.Fatalf("upload by key: %d %s", code, raw)
		}
		b := servertest.DecodeBatch(t, raw)
		href := "/dashboard/merchants/" + m.MerchantID + "/batches/" + strconv.FormatInt(b.ID, 10)
		if page := get(href); !strings.Contains(page, `id="b-approve"`) {
			t.Fatalf("no approve button for a key's batch:\n%s", page)
		}
		resp, err = c.PostForm(s.URL+href+"/approve", url.Values{})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		done := m.WaitBatch(t, b.ID, 30*time.Second, func(b servertest.Batch) bool { return b.Status == "COMPLETED" })
		if !strings.HasPrefix(done.ApprovedBy, "dashboard:admin-token:") || done.Counts.Created != 2 {
			t.Fatalf("approved in the dashboard: %+v", done)
		}
		page = get(href)
		if !strings.Contains(page, `id="b-counts"`) || !strings.Contains(page, "dashboard:admin-token:") {
			t.Fatalf("the batch's page after approval:\n%s", page)
		}
		csv := get(href + "/result.csv")
		if lines := strings.Split(strings.TrimSpace(csv), "\n"); len(lines) != 3 || !strings.HasPrefix(lines[0], "item,orderId,payoutId") || !strings.Contains(lines[2], "DA-2") {
			t.Fatalf("result CSV: %q", csv)
		}
		if list := get("/dashboard/merchants/" + m.MerchantID + "/batches"); strings.Count(list, "<tr>") != 4 {
			t.Errorf("the batches list: want 3 rows and the header:\n%s", list)
		}

		// A checker key from the merchant's page: shown with its role, refused a create.
		resp, err = c.PostForm(s.URL+"/dashboard/merchants/"+m.MerchantID+"/keys", url.Values{"role": {"checker"}, "grace": {"24h0m0s"}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		page = get("/dashboard/merchants/" + m.MerchantID)
		key := regexp.MustCompile(`id="api-key">([^<]+)<`).FindStringSubmatch(page)
		secret := regexp.MustCompile(`id="api-secret">([^<]+)<`).FindStringSubmatch(page)
		if key == nil || secret == nil || !strings.Contains(page, `<span class="badge">checker</span>`) {
			t.Fatalf("the checker key is not shown with its role:\n%s", page)
		}
		checker := m.With(func(n *servertest.Merchant) { n.Key, n.Secret = key[1], strings.ReplaceAll(secret[1], "&#43;", "+") })
		if code, _, raw := checker.Do(t, "POST", "payouts", servertest.PerBankRequest("DCHK-1"), ""); code != 403 {
			t.Fatalf("the dashboard's checker key creates: %d %s", code, raw)
		}
		if code, _, _ := m.Do(t, "GET", "balance", nil, ""); code != 200 {
			t.Fatal("the full key stopped working after a checker key was added")
		}
	})
}
