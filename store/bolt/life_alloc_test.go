package bolt_test

import (
	"context"
	"runtime"
	"testing"

	"payouts/rules"
	"payouts/rules/workers"
	"payouts/store/bolt"
)

// The garbage of a payout's life, created alone in its transaction (as at a low rate) and
// stepped with others in the lifecycle's rounds, through the service and this store: what
// BenchmarkPayoutLife's "1 client" measures, held here so that a change which multiplies it
// fails rather than goes unseen. Measured when set (go1.26, bbolt 1.5): 459 allocations and
// 101 KiB a payout; 421–423 and 98 KiB once the request's body was decoded without
// encoding/json and a step's history and core no longer copied and allocated anew. Most of
// them are bbolt's own (the pages a transaction touches, copied into nodes: about 64 bytes
// for each key of a leaf page written, half again as much when the key is new; a cursor and
// its stack for every key). With three list indexes in place of the one
// of lists.go it was 532 allocations and 135 KiB; with the lifecycle's queue in a bucket
// rather than in memory (due.go), 455 and 94 KiB; 410 and 84 KiB before the request's
// generic tree was read by jsontext (rules/tree.go) and a round handed what it read to its
// own step rather than the store keeping a copy (rules.RoundReads); now 370 and 81 KiB. The
// bounds leave room for a Go or bbolt release, not for another index written by
// each create or another decoding or copy of a payout per step (about 40 allocations).
const (
	maxLifeAllocs = 400
	maxLifeBytes  = 92 << 10
)

func TestPayoutLifeAllocations(t *testing.T) {
	if testing.Short() {
		t.Skip("allocations of 400 payouts' lives")
	}
	if raceDetector {
		t.Skip("the race detector allocates for itself")
	}
	db, svc, lc := lifeFixture(t, bolt.Options{NoSync: true})
	ctx := context.Background()
	m := benchMerchant
	const n = 400
	for i := range int64(50) { // a store that is not empty: pages and branches as in use
		if _, err := svc.CreatePayout(ctx, m, lifeBody(-i-1), rules.EndpointPayouts); err != nil {
			t.Fatal(err)
		}
	}
	settle(t, db, lc)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range int64(n) {
		if _, err := svc.CreatePayout(ctx, m, lifeBody(i+1), rules.EndpointPayouts); err != nil {
			t.Fatal(err)
		}
	}
	settle(t, db, lc)
	runtime.ReadMemStats(&after)
	allocs := (after.Mallocs - before.Mallocs) / n
	bytes := (after.TotalAlloc - before.TotalAlloc) / n
	t.Logf("a payout's life: %d allocations, %.1f KiB", allocs, float64(bytes)/1024)
	if allocs > maxLifeAllocs {
		t.Errorf("a payout's life allocates %d times, more than %d", allocs, maxLifeAllocs)
	}
	if bytes > maxLifeBytes {
		t.Errorf("a payout's life allocates %.1f KiB, more than %d KiB", float64(bytes)/1024, maxLifeBytes>>10)
	}
}

// settle runs the lifecycle's rounds until nothing is due: the simulated rail answers at once.
func settle(t *testing.T, db *bolt.DB, lc *workers.Lifecycle) {
	t.Helper()
	ctx := context.Background()
	for range 100 {
		next, err := db.NextDue(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if next.IsZero() {
			return
		}
		if _, err := lc.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatal("payouts still due after 100 rounds")
}
