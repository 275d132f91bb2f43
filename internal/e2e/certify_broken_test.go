package e2e

import (
	"encoding/json"
	"net/http/httptest"
	"slices"
	"sort"
	"testing"
	"time"

	"payouts/internal/certify/receivertest"
	"payouts/internal/server"
	"payouts/web/notify"
)

// Every deliberately broken receiver of receivertest, certified through the server's signed
// API with the server's own notification key, fails exactly the checks meant for its flaw,
// and the two sound ones pass: the grading in process (internal/certify) holds through the
// service, on either engine. Each receiver has a merchant of its own, since a merchant runs
// one certification at a time; the runs go at once, the slow receiver's bounded by the
// runs' delivery timeout, 5 s here instead of the deliveries' 15 s: the others answer in
// milliseconds, in process, and 5 s is what the certification's own tests give them, under
// the race detector on a busy machine too.
func TestBrokenReceiversFailExactlyTheirChecksThroughTheServer(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: the slow receiver waits out the runs' delivery timeout")
	}
	s := startServerWith(t, "", server.Options{CertificationTimeout: 5 * time.Second}, "--allow-private-notification-urls")
	pub, err := notify.ParsePublicKeyPEM(fetchPublicKey(t, s.URL))
	if err != nil {
		t.Fatal(err)
	}
	type started struct {
		c     *merchantClient
		runID string
		tc    receivertest.Case
	}
	var runs []started
	for _, tc := range receivertest.Cases() {
		c := s.newMerchant(t, nil)
		rc := httptest.NewServer(receivertest.New(pub, c.MerchantID, tc.Flaw))
		t.Cleanup(rc.Close)
		code, _, raw := c.do(t, "POST", "certifications/receiver", map[string]string{"url": rc.URL + "/payouts/notifications"}, "")
		var run struct{ RunID string }
		if json.Unmarshal(raw, &run); code != 202 || run.RunID == "" {
			t.Fatalf("%s: start: %d %s", tc.Name(), code, raw)
		}
		runs = append(runs, started{c, run.RunID, tc})
	}
	for _, r := range runs {
		var run struct {
			State  string
			Report *struct {
				Passed bool
				Checks []struct{ Name, Result string }
			}
		}
		waitFor(t, r.tc.Name()+": the run done", 90*time.Second, func() bool {
			code, _, raw := r.c.do(t, "GET", "certifications/receiver/"+r.runID, nil, "")
			json.Unmarshal(raw, &run)
			return code == 200 && run.State == "done"
		})
		if run.Report == nil {
			t.Errorf("%s: a done run without its report", r.tc.Name())
			continue
		}
		var failed []string
		for _, c := range run.Report.Checks {
			if c.Result == "fail" {
				failed = append(failed, c.Name)
			}
		}
		sort.Strings(failed)
		if !slices.Equal(failed, r.tc.Fails) || run.Report.Passed != (len(r.tc.Fails) == 0) {
			t.Errorf("%s: failed %v (passed %v), want %v", r.tc.Name(), failed, run.Report.Passed, r.tc.Fails)
		}
	}
}
