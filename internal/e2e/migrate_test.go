package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"payouts/internal/server"
	"payouts/store/postgres/pgtest"
)

// `payouts migrate` moves a bbolt data directory into an empty PostgreSQL database and back:
// the service on the copy answers the same merchant with the same signatures, payouts,
// statuses and balances, and goes on numbering after them.
func TestMigrateBoltToPostgreSQLAndBack(t *testing.T) {
	t.Parallel()
	boltOnly(t, "it starts from a bbolt data directory")
	url := pgtest.EmptyDatabase(t)
	dir := t.TempDir()
	s := startServer(t, dir)
	m := s.newMerchant(t, map[string]any{})
	var ids []int64
	for i := range 12 {
		code, _, raw := m.do(t, "POST", "payouts", perBankRequest(fmt.Sprintf("MIG-%02d", i)), "")
		if code != 201 {
			t.Fatalf("create: %d %s", code, raw)
		}
		ids = append(ids, decodePayout(t, raw).Payout.ID)
	}
	for _, id := range ids {
		m.waitStage(t, id, "SUCCESS", 10*time.Second)
	}
	_, _, balanceBefore := m.do(t, "GET", "balance", nil, "")
	_, _, listBefore := m.do(t, "GET", "payouts", nil, "limit=50")
	// A batch goes along with its items (dump kind batch).
	code, _, raw := m.do(t, "POST", "batches", map[string]any{"batchId": "mig", "items": batchItems("MIGB-", 2)}, "")
	if code != 201 {
		t.Fatalf("batch: %d %s", code, raw)
	}
	batchPath := "batches/" + strconv.FormatInt(decodeBatch(t, raw).ID, 10)
	_, _, batchBefore := m.do(t, "GET", batchPath, nil, "")
	_, _, itemsBefore := m.do(t, "GET", batchPath+"/items", nil, "")
	s.Stop(t)

	out, err := runCLI(t, nil, "migrate", "--from", dir, "--to", url)
	if err != nil {
		t.Fatalf("migrate: %v\n%s", err, out)
	}
	for _, want := range []string{"payout            12", "merchant          1", "balances equal", "--master-key-file " + filepath.Join(dir, "master.key")} {
		if !strings.Contains(out, want) {
			t.Errorf("migrate output lacks %q:\n%s", want, out)
		}
	}
	if _, err := runCLI(t, nil, "migrate", "--from", dir, "--to", url); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("a second migrate into the filled database: %v, want a refusal", err)
	}

	// The service on PostgreSQL with the data directory's keys: same answers.
	pg := startServer(t, t.TempDir(), "--database", url, "--master-key-file", filepath.Join(dir, "master.key"),
		"--card-key-file", filepath.Join(dir, server.CardKeyFile), "--notification-key-file", filepath.Join(dir, server.NotificationKeyFile))
	onPG := m.with(func(c *merchantClient) { c.Base = pg.URL })
	if code, _, raw := onPG.do(t, "GET", "balance", nil, ""); code != 200 || string(raw) != string(balanceBefore) {
		t.Errorf("balance on the copy: %d %s, want %s", code, raw, balanceBefore)
	}
	if code, _, raw := onPG.do(t, "GET", "payouts", nil, "limit=50"); code != 200 || string(raw) != string(listBefore) {
		t.Errorf("listing on the copy differs:\n%s\nwant\n%s", raw, listBefore)
	}
	if code, _, raw := onPG.do(t, "GET", batchPath, nil, ""); code != 200 || string(raw) != string(batchBefore) {
		t.Errorf("the batch on the copy: %d %s, want %s", code, raw, batchBefore)
	}
	if code, _, raw := onPG.do(t, "GET", batchPath+"/items", nil, ""); code != 200 || string(raw) != string(itemsBefore) {
		t.Errorf("the batch's items on the copy: %d %s, want %s", code, raw, itemsBefore)
	}
	code, _, raw = onPG.do(t, "POST", "payouts", perBankRequest("MIG-00"), "")
	if code != 200 || decodePayout(t, raw).Payout.ID != ids[0] {
		t.Errorf("a resent create on the copy: %d %s, want 200 with payout %d", code, raw, ids[0])
	}
	code, _, raw = onPG.do(t, "POST", "payouts", perBankRequest("MIG-NEW"), "")
	if code != 201 || decodePayout(t, raw).Payout.ID <= ids[len(ids)-1] {
		t.Errorf("a new create on the copy: %d %s, want 201 numbered after %d", code, raw, ids[len(ids)-1])
	}
	onPG.waitStage(t, decodePayout(t, raw).Payout.ID, "SUCCESS", 10*time.Second)
	pg.Stop(t)

	// And back, for a demo.
	back := t.TempDir()
	out, err = runCLI(t, nil, "migrate", "--from", url, "--to", back)
	if err != nil {
		t.Fatalf("migrate back: %v\n%s", err, out)
	}
	if !strings.Contains(out, "payout            13") {
		t.Errorf("migrate back output:\n%s", out)
	}
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	for _, f := range []string{"master.key", server.CardKeyFile, server.NotificationKeyFile} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err == nil {
			err = os.WriteFile(filepath.Join(back, f), b, 0o600)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	again := startServer(t, back)
	onBolt := m.with(func(c *merchantClient) { c.Base = again.URL })
	code, _, raw = onBolt.do(t, "GET", "payouts", nil, "limit=50")
	if err := json.Unmarshal(raw, &list); code != 200 || err != nil || len(list.Items) != 13 {
		t.Errorf("listing after the way back: %d %v, %d items", code, err, len(list.Items))
	}
}
