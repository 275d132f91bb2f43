package bolt

import (
	"context"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"payouts/rules"
)

// An event that another reader claimed, delivered and released while this read still
// showed it due is not handed out again: it would be delivered twice.
func TestDueEventsLeavesOutWhatWasDeliveredSinceItWasRead(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	ev := rules.Event{ID: "x", Kind: rules.EventMerchantNotification, MerchantID: "m1", CreatedAt: t0, NextAt: t0}
	if _, _, err := db.CreatePayout(ctx, &rules.Payout{MerchantID: "m1", OrderID: "O-1", Status: rules.StatusCreated}, time.Time{}, []rules.Event{ev}, nil); err != nil {
		t.Fatal(err)
	}
	// Room in the file beforehand: the other reader's write below runs while this read
	// holds its transaction, and a write that grew the file's mapping would wait for it.
	for _, fill := range []func(tx *bbolt.Tx) error{
		func(tx *bbolt.Tx) error {
			b, err := tx.CreateBucket([]byte("room"))
			if err != nil {
				return err
			}
			return b.Put([]byte("room"), make([]byte, 1<<20))
		},
		func(tx *bbolt.Tx) error { return tx.DeleteBucket([]byte("room")) },
		func(tx *bbolt.Tx) error { return nil },
	} {
		if err := db.bdb.Update(fill); err != nil {
			t.Fatal(err)
		}
	}
	delivered := false
	// The skip function runs as the read scans: the other reader's whole delivery fits
	// between this read's look at the claims and its claim.
	due, _, err := db.DueEventsSkipping(ctx, rules.LaneNotify, t0, 10, func(seq uint64, _ string) bool {
		if delivered {
			return false
		}
		delivered = true
		other, _, err := db.DueEvents(ctx, rules.LaneNotify, t0, 10)
		if err != nil || len(other) != 1 || other[0].Seq != seq {
			t.Fatalf("the other reader got %+v, %v", other, err)
		}
		if err := db.EventDelivered(ctx, seq, other[0].ID, t0); err != nil {
			t.Fatal(err)
		}
		return false
	})
	if err != nil || !delivered {
		t.Fatalf("DueEventsSkipping: %v (the other delivery ran: %v)", err, delivered)
	}
	if len(due) != 0 {
		t.Fatalf("handed out %+v, delivered already", due)
	}
}
