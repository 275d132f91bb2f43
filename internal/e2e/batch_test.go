package e2e

import (
	"encoding/csv"
	"encoding/json"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"payouts/internal/servertest"
)

// Batches and key roles, end to end on the real server.

// roleKey issues merchant c a key with role and returns a client signing with it.
func (s *testServer) roleKey(t testing.TB, c *merchantClient, role string) *merchantClient {
	t.Helper()
	return &merchantClient{servertest.NewRole(t, s.URL, s.AdminToken, s.client(), c.Merchant, role)}
}

// The batches' answers, their items and their waits are servertest's.
type batchAnswer = servertest.Batch

var (
	decodeBatch = servertest.DecodeBatch
	batchItems  = servertest.BatchItems
	batchCSV    = servertest.BatchCSV
)

// waitBatch polls the batch until done says so (servertest.Merchant.WaitBatch).
func (c *merchantClient) waitBatch(t testing.TB, id int64, within time.Duration, done func(batchAnswer) bool) batchAnswer {
	t.Helper()
	return c.WaitBatch(t, id, within, done)
}

func TestBatchMakerCheckerKeyRolesAndNotification(t *testing.T) {
	t.Parallel()
	hook := &hookReceiver{}
	s, full := startWithSignedHook(t, "", hook, "/hook", nil)
	maker, checker, reader := s.roleKey(t, full, "maker"), s.roleKey(t, full, "checker"), s.roleKey(t, full, "read")

	var keys []struct{ KeyID, Role string }
	s.admin(t, "GET", "/admin/v1/merchants/"+full.MerchantID+"/keys", nil, &keys)
	roles := map[string]int{}
	for _, k := range keys {
		roles[k.Role]++
	}
	if len(keys) != 4 || roles["full"] != 1 || roles["maker"] != 1 || roles["checker"] != 1 || roles["read"] != 1 {
		t.Fatalf("keys listed: %+v, want the full key and one of each role", keys)
	}

	// A read key reads, and is refused a create with 403 2913 naming its role.
	if code, _, raw := reader.do(t, "GET", "balance", nil, ""); code != 200 {
		t.Fatalf("read key GET balance: %d %s", code, raw)
	}
	code, _, raw := reader.do(t, "POST", "payouts", perBankRequest("READ-1"), "")
	if p := decodeProblem(t, raw); code != 403 || p.Code != "2913" || !strings.Contains(p.Detail+strings.Join(p.Message, ""), "read") {
		t.Fatalf("read key create: %d %s, want 403 2913 naming the role", code, raw)
	}
	if code, _, raw := checker.do(t, "POST", "payouts", perBankRequest("CHK-1"), ""); code != 403 || decodeProblem(t, raw).Code != "2913" {
		t.Fatalf("checker key create: %d %s, want 403 2913", code, raw)
	}

	// The maker uploads; the maker cannot approve (its role), the checker can.
	code, hdr, raw := maker.do(t, "POST", "batches", map[string]any{"batchId": "payroll-1", "items": batchItems("MC-", 3)}, "")
	if code != 201 {
		t.Fatalf("upload: %d %s", code, raw)
	}
	b := decodeBatch(t, raw)
	if b.Status != "DRAFT" || b.Counts.Items != 3 || b.Counts.Valid != 3 || len(b.Errors) != 0 || !strings.HasPrefix(b.MadeBy, "key:key_") ||
		len(b.Totals) != 1 || b.Totals[0].Currency != "PEN" || b.Totals[0].Amount != 300000 || hdr.Get("Location") == "" {
		t.Fatalf("upload answer: %+v", b)
	}
	bid := strconv.FormatInt(b.ID, 10)
	if code, hdr, raw := maker.do(t, "POST", "batches", map[string]any{"batchId": "payroll-1", "items": batchItems("MC-", 3)}, ""); code != 200 ||
		hdr.Get("Idempotent-Replayed") != "true" || decodeBatch(t, raw).ID != b.ID {
		t.Fatalf("the same upload again: %d %s, want 200 with the same batch", code, raw)
	}
	if code, _, raw := maker.do(t, "POST", "batches", map[string]any{"batchId": "payroll-1", "items": batchItems("MX-", 2)}, ""); code != 409 ||
		decodeProblem(t, raw).Code != "2916" {
		t.Fatalf("the batchId with other items: %d %s, want 409 2916", code, raw)
	}
	if code, _, raw := maker.do(t, "POST", "batches/"+bid+"/approve", nil, ""); code != 403 || decodeProblem(t, raw).Code != "2913" {
		t.Fatalf("maker approves: %d %s, want 403 2913", code, raw)
	}
	if code, _, raw := reader.do(t, "POST", "batches/"+bid+"/approve", nil, ""); code != 403 || decodeProblem(t, raw).Code != "2913" {
		t.Fatalf("read key approves: %d %s, want 403 2913", code, raw)
	}
	code, _, raw = checker.do(t, "POST", "batches/"+bid+"/approve", nil, "")
	if a := decodeBatch(t, raw); code != 200 || a.Status != "APPROVED" || a.ApprovedBy == "" || a.ApprovedBy == a.MadeBy {
		t.Fatalf("checker approves: %d %s", code, raw)
	}
	if code, _, raw := checker.do(t, "POST", "batches/"+bid+"/approve", nil, ""); code != 409 || decodeProblem(t, raw).Code != "2922" {
		t.Fatalf("approve twice: %d %s, want 409 2922", code, raw)
	}
	done := reader.waitBatch(t, b.ID, 30*time.Second, func(b batchAnswer) bool { return b.NotifiedAt != "" })
	if done.Status != "COMPLETED" || done.Counts.Created != 3 || done.Counts.Final != 3 || done.Counts.ByStage["SUCCESS"] != 3 || done.Totals[0].Paid != 300000 {
		t.Fatalf("completed batch: %+v", done)
	}

	// Every item is a payout of its orderId; the result CSV says so.
	code, _, raw = reader.do(t, "GET", "batches/"+bid+"/items", nil, "limit=2")
	var page struct {
		Items []struct {
			Item     int
			OrderID  string
			PayoutID *int64
			Status   string
		}
		NextCursor *string
	}
	if err := json.Unmarshal(raw, &page); err != nil || code != 200 || len(page.Items) != 2 || page.NextCursor == nil || *page.NextCursor != "2" {
		t.Fatalf("items page: %d %s", code, raw)
	}
	for _, it := range page.Items {
		if it.PayoutID == nil {
			t.Fatalf("item %d has no payout", it.Item)
		}
		code, _, raw := reader.do(t, "GET", "payouts/"+strconv.FormatInt(*it.PayoutID, 10), nil, "")
		if p := decodePayout(t, raw); code != 200 || p.Payout.OrderID != it.OrderID || p.Output.Stage != "SUCCESS" {
			t.Fatalf("item %d's payout: %d %s", it.Item, code, raw)
		}
	}
	code, _, raw = reader.do(t, "GET", "batches/"+bid+"/result.csv", nil, "")
	rows, err := csv.NewReader(strings.NewReader(string(raw))).ReadAll()
	if code != 200 || err != nil || len(rows) != 4 || rows[0][0] != "item" || rows[3][1] != "MC-3" || rows[3][2] == "" {
		t.Fatalf("result.csv: %d %v %q", code, err, raw)
	}
	req := reader.request("GET", "batches/"+bid+"/items", nil, "status=PROCESSED")
	req.Header.Set("Accept", "text/csv")
	code, raw = sendRaw(t, req)
	if rows, err := csv.NewReader(strings.NewReader(string(raw))).ReadAll(); code != 200 || err != nil || len(rows) != 4 {
		t.Fatalf("items as CSV: %d %v %q", code, err, raw)
	}

	// A full key that made a batch cannot approve it; another full key could.
	code, _, raw = full.do(t, "POST", "batches", map[string]any{"batchId": "payroll-2", "items": batchItems("FK-", 1)}, "")
	if code != 201 {
		t.Fatalf("full key upload: %d %s", code, raw)
	}
	own := decodeBatch(t, raw)
	if code, _, raw := full.do(t, "POST", "batches/"+strconv.FormatInt(own.ID, 10)+"/approve", nil, ""); code != 403 || decodeProblem(t, raw).Code != "2915" {
		t.Fatalf("the maker approves its own batch: %d %s, want 403 2915", code, raw)
	}
	code, _, raw = reader.do(t, "GET", "batches", nil, "limit=1")
	var list struct {
		Items      []batchAnswer
		NextCursor *string
	}
	if json.Unmarshal(raw, &list); code != 200 || len(list.Items) != 1 || list.NextCursor == nil {
		t.Fatalf("list: %d %s", code, raw)
	}
	code, _, raw = reader.do(t, "GET", "batches", nil, "cursor="+*list.NextCursor)
	if json.Unmarshal(raw, &list); code != 200 || len(list.Items) != 1 || list.Items[0].ID != own.ID || list.NextCursor != nil {
		t.Fatalf("list page 2: %d %s", code, raw)
	}

	// One notification for the batch, signed, of the documented shape (hookReceiver checks both).
	waitFor(t, "the batch notification", 20*time.Second, func() bool {
		acc, _, _, _ := hook.snapshot()
		return len(acc["batch.notification.b"+bid+".COMPLETED"]) > 0
	})
	acc, _, _, _ := hook.snapshot()
	var note struct {
		Type  string
		Batch batchAnswer
	}
	if got := acc["batch.notification.b"+bid+".COMPLETED"]; len(got) != 1 || json.Unmarshal(got[0], &note) != nil ||
		note.Type != "batch.COMPLETED" || note.Batch.ID != b.ID || note.Batch.Counts.Final != 3 {
		t.Fatalf("batch notifications: %q", got)
	}
	// It is in the event log too.
	code, _, raw = reader.do(t, "GET", "events", nil, "")
	if code != 200 || !strings.Contains(string(raw), "batch.COMPLETED") {
		t.Errorf("the event log lacks the batch notification: %d %.400s", code, raw)
	}
}

// TestBatchKilledDuringCreationCreatesEveryItemOnce kills the binary with SIGKILL while an
// approved batch's items are being created; after a restart the runner resumes, and every
// item is exactly one payout.
func TestBatchKilledDuringCreationCreatesEveryItemOnce(t *testing.T) {
	t.Parallel()
	boltOnly(t, "kills the binary on its own bbolt file")
	if testing.Short() {
		t.Skip("kills the binary")
	}
	dir := t.TempDir()
	cmd, base := startProcess(t, dir)
	s := &testServer{URL: base, AdminToken: "test-admin-token-0123456789"}
	c := s.newMerchant(t, nil)
	checker := s.roleKey(t, c, "checker")
	const n = 3000
	code, _, raw := c.do(t, "POST", "batches", map[string]any{"batchId": "crash", "items": batchItems("K-", n)}, "")
	if code != 201 {
		t.Fatalf("upload: %d %.300s", code, raw)
	}
	b := decodeBatch(t, raw)
	if code, _, raw := checker.do(t, "POST", "batches/"+strconv.FormatInt(b.ID, 10)+"/approve", nil, ""); code != 200 {
		t.Fatalf("approve: %d %s", code, raw)
	}
	var seen int
	poll(20*time.Second, func() bool {
		code, _, raw := c.do(t, "GET", "batches/"+strconv.FormatInt(b.ID, 10)+"/items", nil, "status=NOT_CREATED&limit=1")
		if code != 200 {
			t.Fatalf("items: %d %s", code, raw)
		}
		var page struct{ Items []struct{ Item int } }
		json.Unmarshal(raw, &page)
		if len(page.Items) == 1 && page.Items[0].Item > 1 {
			seen = page.Items[0].Item
		}
		return seen != 0
	})
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if seen == 0 {
		t.Fatal("no item was recorded before the kill: the test needs a kill midway")
	}
	t.Logf("killed with items recorded up to about %d of %d", seen-1, n)

	s2 := startServer(t, dir)
	c = c.with(func(c *merchantClient) { c.Base = s2.URL })
	done := c.waitBatch(t, b.ID, 120*time.Second, func(b batchAnswer) bool { return b.Status == "COMPLETED" }) // -race is slow
	if done.Counts.Created != n || done.Counts.Refused != 0 || done.Counts.Pending != 0 {
		t.Fatalf("after the restart: %+v", done.Counts)
	}
	code, _, raw = c.do(t, "GET", "batches/"+strconv.FormatInt(b.ID, 10)+"/items", nil, "limit=10000")
	var page struct {
		Items []struct {
			OrderID  string
			PayoutID int64
		}
	}
	if err := json.Unmarshal(raw, &page); err != nil || code != 200 || len(page.Items) != n {
		t.Fatalf("items: %d %v", code, err)
	}
	ids := map[int64]string{}
	for _, it := range page.Items {
		if prev, dup := ids[it.PayoutID]; dup || it.PayoutID == 0 {
			t.Fatalf("payout %d for %s and %s", it.PayoutID, prev, it.OrderID)
		}
		ids[it.PayoutID] = it.OrderID
	}
	// The merchant has exactly n payouts: none created twice, none lost.
	total, cursor := 0, ""
	for {
		q := "limit=200"
		if cursor != "" {
			q += "&cursor=" + cursor
		}
		code, _, raw := c.do(t, "GET", "payouts", nil, q)
		var p struct {
			Items []struct {
				Payout struct {
					ID      int64 `json:"Id"`
					OrderID string
				}
			}
			NextCursor *string
		}
		if json.Unmarshal(raw, &p); code != 200 {
			t.Fatalf("payouts: %d %s", code, raw)
		}
		for _, it := range p.Items {
			if ids[it.Payout.ID] != it.Payout.OrderID {
				t.Fatalf("payout %d (%s) is no item's", it.Payout.ID, it.Payout.OrderID)
			}
		}
		total += len(p.Items)
		if p.NextCursor == nil {
			break
		}
		cursor = *p.NextCursor
	}
	if total != n {
		t.Fatalf("%d payouts, want %d", total, n)
	}
}

// processCPU is the CPU time (user and system) process pid has used, from /proc (Linux);
// zero elsewhere.
func processCPU(pid int) time.Duration {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(raw)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	k, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+k) * 10 * time.Millisecond // USER_HZ is 100 on Linux
}

// TestBatchBenchmark10k measures a 10,000-item batch through the built binary, from this
// process: the upload (every item validated) and the creation (approve → COMPLETED).
// PAYOUTS_BATCH_BENCH=1 runs it (PAYOUTS_TEST_ENGINE=postgres for PostgreSQL).
func TestBatchBenchmark10k(t *testing.T) {
	t.Parallel()
	if os.Getenv("PAYOUTS_BATCH_BENCH") == "" {
		t.Skip("PAYOUTS_BATCH_BENCH=1 runs it")
	}
	dir := t.TempDir()
	cmd, base := startProcess(t, dir, engineArgs(t, dir, nil)...)
	defer func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() }()
	s := &testServer{URL: base, AdminToken: "test-admin-token-0123456789"}
	c := s.newMerchant(t, nil)
	c.HTTP = &http.Client{Timeout: 60 * time.Second}
	checker := s.roleKey(t, c, "checker")
	const n = 10_000
	body, _ := json.Marshal(map[string]any{"batchId": "bench", "items": batchItems("B-", n)})
	cpu0 := processCPU(cmd.Process.Pid)
	start := time.Now()
	code, _, raw := c.do(t, "POST", "batches", body, "")
	validated := time.Since(start)
	cpu1 := processCPU(cmd.Process.Pid)
	b := decodeBatch(t, raw)
	if code != 201 || b.Status != "DRAFT" {
		t.Fatalf("upload: %d %.300s", code, raw)
	}
	start = time.Now()
	if code, _, raw := checker.do(t, "POST", "batches/"+strconv.FormatInt(b.ID, 10)+"/approve", nil, ""); code != 200 {
		t.Fatalf("approve: %d %s", code, raw)
	}
	done := c.waitBatch(t, b.ID, 120*time.Second, func(b batchAnswer) bool { return b.Status == "COMPLETED" })
	created := time.Since(start)
	cpu2 := processCPU(cmd.Process.Pid)
	if done.Counts.Created != n {
		t.Fatalf("created %d of %d: %+v", done.Counts.Created, n, done.Counts)
	}
	load, _ := os.ReadFile("/proc/loadavg")
	t.Logf("10,000 items (%d KiB): validated and stored in %v (server CPU %v), created as payouts in %v (server CPU %v, the lifecycle's included); load average %s",
		len(body)>>10, validated.Round(time.Millisecond), cpu1-cpu0, created.Round(time.Millisecond), cpu2-cpu1, strings.Fields(string(load) + " ?")[0])
	if validated > 2*time.Second || created > 10*time.Second {
		t.Errorf("over the goals: validated in %v (goal 2 s), created in %v (goal 10 s)", validated, created)
	}
}

// keepBatchExamples takes the batch operations' real answers for the document's examples
// (TestOpenAPIExamplesAreRealAnswers).
func keepBatchExamples(t *testing.T, s *testServer, c *merchantClient, keep func(op string, want, code int, raw []byte)) {
	t.Helper()
	checker := s.roleKey(t, c, "checker")
	items := batchItems("EX-", 2)
	code, _, raw := c.do(t, "POST", "batches", map[string]any{"batchId": "payroll-2026-11", "items": items}, "")
	keep("create-batch", 201, code, raw)
	b := decodeBatch(t, raw)
	id := strconv.FormatInt(b.ID, 10)
	code, _, raw = c.do(t, "POST", "batches", map[string]any{"batchId": "payroll-2026-11", "items": items}, "")
	keep("create-batch", 200, code, raw)
	code, _, raw = c.do(t, "POST", "batches", map[string]any{"batchId": "payroll-2026-11", "items": batchItems("EY-", 1)}, "")
	keep("create-batch", 409, code, raw)
	code, _, raw = c.do(t, "POST", "batches", map[string]any{"batchId": "", "items": items}, "")
	keep("create-batch", 400, code, raw)
	code, _, raw = checker.do(t, "POST", "payouts", perBankRequest("EX-REFUSED"), "")
	keep("create-payout", 403, code, raw)
	code, _, raw = c.do(t, "POST", "batches/"+id+"/approve", nil, "")
	keep("approve-batch", 403, code, raw)
	code, _, raw = checker.do(t, "POST", "batches/"+id+"/approve", nil, "")
	keep("approve-batch", 200, code, raw)
	code, _, raw = checker.do(t, "POST", "batches/"+id+"/approve", nil, "")
	keep("approve-batch", 409, code, raw)
	c.waitBatch(t, b.ID, 30*time.Second, func(b batchAnswer) bool { return b.NotifiedAt != "" })
	code, _, raw = c.do(t, "GET", "batches/"+id, nil, "")
	keep("get-batch", 200, code, raw)
	code, _, raw = c.do(t, "GET", "batches/999999", nil, "")
	keep("get-batch", 404, code, raw)
	code, _, raw = c.do(t, "GET", "batches", nil, "")
	keep("list-batches", 200, code, raw)
	code, _, raw = c.do(t, "GET", "batches/"+id+"/items", nil, "")
	keep("list-batch-items", 200, code, raw)
}
