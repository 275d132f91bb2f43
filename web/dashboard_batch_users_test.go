package web_test

import (
	"bytes"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"payouts/internal/server"
	"payouts/internal/servertest"
)

// TestDashboardCheckerUserApprovesMakerUsersBatch joins users, batches and the ledger: a maker user
// uploads a batch in the dashboard, is refused approving it, a checker user of the same
// merchant approves it (and cannot upload one), the items become payouts; the audit log
// names who uploaded and who approved, in the dashboard and through a checker key on the
// signed API; the ledger's entries of the batch's payouts add up (the harness checks it
// at the server's stop).
//
// Serial: its sign-in codes are those of one 30-second window of real time from its start,
// which the other tests running at once could make it overrun (serial tests run before the
// parallel ones start).
func TestDashboardCheckerUserApprovesMakerUsersBatch(t *testing.T) {
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		// Codes of two steps are used in turn (set-up, then sign-in): stay inside one step's window.
		clock := servertest.StepStartClock()
		now := clock.Now().Unix() / 30
		s := servertest.Start(t, servertest.Setup{Engine: e, Options: server.Options{Now: clock.Now}})
		m := s.NewMerchant(t, nil)

		signedIn := func(name, email, role string) (*http.Client, string) {
			t.Helper()
			var c struct{ ID, SetupLink string }
			if code := s.Admin(t, "POST", "/admin/v1/users", map[string]any{"name": name, "email": email, "role": role, "merchantId": m.MerchantID}, &c); code != 201 {
				t.Fatalf("create %s: %d", role, code)
			}
			u := servertest.User{ID: c.ID, Email: email, Password: "correct horse " + role}
			s.SetUpUser(t, c.SetupLink, &u, now-1)
			client, code := s.UserSignIn(t, u, now)
			if client == nil {
				t.Fatalf("%s sign-in: %d", role, code)
			}
			return client, c.ID
		}
		maker, makerID := signedIn("Marta Maker", "marta@nomina.pe", "maker")
		checker, checkerID := signedIn("Carlos Checker", "carlos@nomina.pe", "checker")

		upload := func(c *http.Client, batchID string) (int, string) {
			t.Helper()
			var body bytes.Buffer
			mw := multipart.NewWriter(&body)
			mw.WriteField("batchId", batchID)
			fw, _ := mw.CreateFormFile("file", "payroll.csv")
			fw.Write([]byte(servertest.BatchCSV(batchID+"-", 3)))
			mw.Close()
			req, _ := http.NewRequest("POST", s.URL+"/dashboard/merchants/"+m.MerchantID+"/batches", &body)
			req.Header.Set("Content-Type", mw.FormDataContentType())
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp.StatusCode, resp.Header.Get("Location")
		}

		// The checker may not upload; the maker may, and is refused approving its own batch.
		if code, _ := upload(checker, "PAY-C"); code != http.StatusForbidden {
			t.Errorf("a checker uploading a batch: %d, want 403", code)
		}
		code, href := upload(maker, "PAY-M")
		if code != http.StatusSeeOther || !strings.Contains(href, "/batches/") {
			t.Fatalf("the maker's upload: %d %q", code, href)
		}
		batchID, _ := strconv.ParseInt(href[strings.LastIndexByte(href, '/')+1:], 10, 64)
		if _, body, _ := servertest.GetPage(t, maker, s.URL+href); strings.Contains(body, `id="b-approve"`) {
			t.Error("the maker's page of its own batch offers to approve it")
		}
		if code, _, _ := servertest.PostValues(t, maker, s.URL+href+"/approve", url.Values{}); code != http.StatusForbidden {
			t.Errorf("the maker approving its batch: %d, want 403", code)
		}
		if _, body, _ := servertest.GetPage(t, checker, s.URL+href); !strings.Contains(body, `id="b-approve"`) || !strings.Contains(body, `id="batch-status">DRAFT<`) {
			t.Fatalf("the checker's page of the maker's DRAFT batch has no approve button:\n%s", body)
		}
		if code, _, _ := servertest.PostValues(t, checker, s.URL+href+"/approve", url.Values{}); code != http.StatusSeeOther {
			t.Fatalf("the checker approving: %d", code)
		}
		b := m.WaitBatch(t, batchID, 30*time.Second, func(b servertest.Batch) bool { return b.Status == "COMPLETED" })
		if b.MadeBy != "dashboard:user:"+makerID || b.ApprovedBy != "dashboard:user:"+checkerID || b.Counts.Created != 3 {
			t.Errorf("the batch: made by %q, approved by %q, %d created; want the maker's and the checker's ids, 3", b.MadeBy, b.ApprovedBy, b.Counts.Created)
		}

		// A checker key approves a maker key's batch on the signed API.
		makerKey, checkerKey := s.Role(t, m, "maker"), s.Role(t, m, "checker")
		code, _, raw := makerKey.Do(t, "POST", "batches", map[string]any{"batchId": "PAY-K", "items": servertest.BatchItems("PAY-K-", 2)}, "")
		if code != 201 {
			t.Fatalf("the maker key's batch: %d %s", code, raw)
		}
		kb := servertest.DecodeBatch(t, raw)
		if code, _, raw := checkerKey.Do(t, "POST", "batches/"+strconv.FormatInt(kb.ID, 10)+"/approve", nil, ""); code != 200 {
			t.Fatalf("the checker key approving: %d %s", code, raw)
		}

		// The audit log: who uploaded and approved, from where.
		var au struct {
			Entries []struct {
				Action, Principal, Target, MerchantID, RemoteAddr string
				Detail                                            json.RawMessage
			}
		}
		if code := s.Admin(t, "GET", "/admin/v1/audit?limit=1000", nil, &au); code != 200 {
			t.Fatalf("audit: %d", code)
		}
		want := map[string]string{
			"batch.upload batch:" + strconv.FormatInt(batchID, 10):  "user:" + makerID + ":",
			"batch.approve batch:" + strconv.FormatInt(batchID, 10): "user:" + checkerID + ":",
			"batch.approve batch:" + strconv.FormatInt(kb.ID, 10):   "key:",
		}
		for _, e := range au.Entries {
			prefix, ok := want[e.Action+" "+e.Target]
			if !ok {
				continue
			}
			if !strings.HasPrefix(e.Principal, prefix) || e.MerchantID != m.MerchantID || e.RemoteAddr == "" {
				t.Errorf("%s %s: principal %q (want %q…), merchant %q, from %q", e.Action, e.Target, e.Principal, prefix, e.MerchantID, e.RemoteAddr)
			}
			delete(want, e.Action+" "+e.Target)
		}
		for k := range want {
			t.Errorf("no audit entry %s", k)
		}
	})
}
