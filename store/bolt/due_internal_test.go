package bolt

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"payouts/rules"
)

// The queue is found again at Open: each queued payout where its last step left it, nothing
// for a finished one. After a crash (nothing saved), or from a store of a version that kept
// the queue in a bucket, it is built from the payouts' states; after a clean close it is
// read from where the close saved it. Either way nothing of it stays in the file.
func TestQueueIsFoundAgainAtOpen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "p.db")
	db, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	var ids []int64
	for i, due := range []time.Time{t0, t0.Add(time.Minute), t0, {}} {
		p, _, err := db.CreatePayout(ctx, &rules.Payout{MerchantID: "m1", OrderID: "O-" + string(rune('a'+i)), Status: rules.StatusCreated}, due, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.ID)
	}
	// The first moves an hour on, the third leaves the queue.
	step := func(next time.Time) rules.Step {
		return func(p *rules.Payout, _ rules.Ledger) (time.Time, error) {
			p.Status = rules.StatusPendingBank
			return next, nil
		}
	}
	if err := db.UpdatePayouts(ctx, ids[:1], step(t0.Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	if err := db.UpdatePayouts(ctx, ids[2:3], step(time.Time{})); err != nil {
		t.Fatal(err)
	}
	// A bucket of the queue as versions before kept it, with an entry it would hand out.
	err = db.bdb.Update(func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucket(bDue)
		if err != nil {
			return err
		}
		return b.Put(dueKeyOf(ids[2], t0), []byte(rules.StatusCreated))
	})
	if err != nil {
		t.Fatal(err)
	}
	crash := func(db *DB) { db.writer.close(); db.bdb.Close() } // nothing saved
	reopen := func() *DB {
		t.Helper()
		db, err := Open(path, Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		if next, _ := db.NextDue(ctx); !next.Equal(t0.Add(time.Minute)) {
			t.Errorf("next due at %v, want %v", next, t0.Add(time.Minute))
		}
		due, _ := db.Due(ctx, t0.Add(time.Hour), 10)
		if len(due) != 2 || due[0] != (rules.DueEntry{ID: ids[1], Status: rules.StatusCreated}) ||
			due[1] != (rules.DueEntry{ID: ids[0], Status: rules.StatusPendingBank}) {
			t.Errorf("due in an hour: %+v, want payout %d (CREATED), then %d (PENDING_BANK)", due, ids[1], ids[0])
		}
		db.bdb.View(func(tx *bbolt.Tx) error {
			if tx.Bucket(bDue) != nil || tx.Bucket(bMeta).Get(metaDueSaved) != nil {
				t.Error("the queue is still in the file")
			}
			return nil
		})
		return db
	}
	crash(db)
	db = reopen() // from the states, the old bucket ignored
	crash(db)
	db = reopen() // from the states
	if err := db.Close(ctx); err != nil {
		t.Fatal(err)
	}
	raw, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if q, walked, err := loadDue(raw); err != nil {
		t.Error(err)
	} else if walked || q.len() != 2 {
		t.Errorf("after a clean close: %d entries, states walked %v; want the 2 saved", q.len(), walked)
	}
	raw.Close()
	// loadDue took the saved queue out of the file: the next Open walks the states.
	reopen().Close(ctx)
}

// A write whose group fails to commit leaves the queue as it was: the queue changes only
// with what is stored.
func TestQueueMovesOnlyWithACommit(t *testing.T) {
	ctx := context.Background()
	full := errors.New("no space left on device")
	var fail bool
	db, err := Open(filepath.Join(t.TempDir(), "p.db"), Options{NoSync: true, Fault: func() error {
		if fail {
			return full
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(ctx)
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	p, _, err := db.CreatePayout(ctx, &rules.Payout{MerchantID: "m1", OrderID: "O-1", Status: rules.StatusCreated}, t0, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	fail = true
	if _, _, err := db.CreatePayout(ctx, &rules.Payout{MerchantID: "m1", OrderID: "O-2", Status: rules.StatusCreated}, t0, nil, nil); !errors.Is(err, full) {
		t.Fatalf("create in a failing commit: %v", err)
	}
	err = db.UpdatePayouts(ctx, []int64{p.ID}, func(p *rules.Payout, _ rules.Ledger) (time.Time, error) {
		return t0.Add(time.Hour), nil
	})
	if !errors.Is(err, full) {
		t.Fatalf("step in a failing commit: %v", err)
	}
	fail = false
	if due, _ := db.Due(ctx, t0, 10); len(due) != 1 || due[0].ID != p.ID {
		t.Errorf("due: %+v, want only payout %d, where it was", due, p.ID)
	}
}

// Two rounds never get the same entry, and a claimed entry comes back when its lease ends.
func TestQueueClaims(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	for _, o := range []string{"O-1", "O-2", "O-3"} {
		if _, _, err := db.CreatePayout(ctx, &rules.Payout{MerchantID: "m1", OrderID: o, Status: rules.StatusCreated}, t0, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	a, _ := db.Due(ctx, t0, 2)
	b, _ := db.Due(ctx, t0, 2)
	if len(a) != 2 || len(b) != 1 || b[0].ID == a[0].ID || b[0].ID == a[1].ID {
		t.Fatalf("rounds got %+v and %+v", a, b)
	}
	if c, _ := db.Due(ctx, t0.Add(rules.ClaimLease), 10); len(c) != 3 {
		t.Fatalf("after the leases: %+v, want all three", c)
	}
}
