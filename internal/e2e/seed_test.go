package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"payouts/rules"
	"payouts/store/bolt"
)

// `payouts seed` stores settled payouts with their indexes, and a server started with
// --bench-seed-from on an empty data directory serves a copy of them (README, Performance).
func TestSeedAndStartFromASeed(t *testing.T) {
	t.Parallel()
	seed := t.TempDir()
	out, err := runCLI(t, nil, "seed", "--data", seed, "--payouts", "2500")
	if err != nil || !strings.Contains(out, "2500 settled payouts") {
		t.Fatalf("seed: %v\n%s", err, out)
	}
	dir := filepath.Join(t.TempDir(), "data")
	s := startServer(t, dir, "--bench-seed-from", seed)
	s.Stop(t)
	db, err := bolt.Open(filepath.Join(dir, "payouts.db"), bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	page, err := db.ListPayouts(context.Background(), "1", rules.ListFilter{Status: rules.StatusProcessed, Limit: 200})
	if err != nil || len(page.Items) != 200 || page.Items[0].ID != 2500 || page.NextCursor == 0 {
		t.Fatalf("the copy lists %d processed payouts from %v (%v)", len(page.Items), page.Items, err)
	}
	p, err := db.PayoutByOrder(context.Background(), "1", "SEED-0")
	if err != nil || p.Status != rules.StatusProcessed || len(p.History) != 5 {
		t.Fatalf("SEED-0: %+v (%v)", p, err)
	}
}
