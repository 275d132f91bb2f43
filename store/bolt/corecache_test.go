package bolt

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"payouts/rules"
)

// A read transaction that began before a step rewrote a payout's core (a link's destination,
// its failed attempts) reads the old core, and may cache it after the step forgot it: the
// cache then must not hand that old core to the reads and steps that come after.
func TestCoreCacheKeepsNoCoreOlderThanTheFile(t *testing.T) {
	ctx := context.Background()
	db, err := Open(filepath.Join(t.TempDir(), "payouts.db"), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(ctx)
	p := samplePayout()
	p.Link = &rules.Link{Kinds: []int{2}}
	stored, _, err := db.CreatePayout(ctx, p, time.Time{}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}

	// What a read transaction begun before the step reads of the payout: the core and the
	// state as they were. (Held open across the step, it would keep a step that grows the
	// file's map waiting: the same read is made here after the step, from the old bytes.)
	var oldCore, oldState []byte
	db.bdb.View(func(tx *bbolt.Tx) error {
		pb := db.buckets(tx)
		oldCore, oldState = bytes.Clone(pb.getCore(be64(uint64(stored.ID)))), bytes.Clone(pb.getState(be64(uint64(stored.ID))))
		return nil
	})
	err = db.UpdatePayouts(ctx, []int64{stored.ID}, func(p *rules.Payout, l rules.Ledger) (time.Time, error) {
		link := *p.Link
		link.Failures++
		p.Link = &link
		return time.Time{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	db.bdb.View(func(tx *bbolt.Tx) error {
		if q, _, err := db.buckets(tx).decode(stored.ID, oldCore, oldState); err != nil || q.Link.Failures != 0 {
			t.Fatalf("the older read: %+v %v, want the link as it was when it began", q.Link, err)
		}
		return nil
	})

	got, err := db.Payout(ctx, stored.MerchantID, stored.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Link.Failures != 1 {
		t.Errorf("a read after the step sees %d failures, want 1: the cache kept the core an older read decoded", got.Link.Failures)
	}
	err = db.UpdatePayouts(ctx, []int64{stored.ID}, func(p *rules.Payout, l rules.Ledger) (time.Time, error) {
		if p.Link.Failures != 1 {
			t.Errorf("the next step reads %d failures, want 1", p.Link.Failures)
		}
		return time.Time{}, rules.ErrNoChange
	})
	if err != nil {
		t.Fatal(err)
	}
}
