package postgres

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"payouts/store/postgres/pgtest"
)

// Instances starting at once on a new database each record their key's fingerprint: every one
// is told the one recorded, none an error (the insert of one meets another's row that its
// statement's snapshot does not see yet).
func TestKeyFingerprintRecordedByInstancesStartingAtOnce(t *testing.T) {
	url := pgtest.Database(t)
	for round := range 20 {
		name := fmt.Sprintf("race-%d", round)
		const instances = 8
		dbs := make([]*DB, instances)
		for i := range dbs {
			dbs[i] = openDB(t, url, Options{})
		}
		got := make([]string, instances)
		errs := make([]error, instances)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i, db := range dbs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				got[i], errs[i] = db.RecordKeyFingerprint(context.Background(), name, fmt.Sprintf("fp-%d", i))
			}()
		}
		close(start)
		wg.Wait()
		for i := range dbs {
			if errs[i] != nil {
				t.Fatalf("round %d, instance %d: %v", round, i, errs[i])
			}
			if got[i] != got[0] {
				t.Fatalf("round %d: instance %d was told %q, instance 0 %q", round, i, got[i], got[0])
			}
			dbs[i].Close(context.Background())
		}
	}
}
