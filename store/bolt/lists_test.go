package bolt

import (
	"context"
	"encoding/binary"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"payouts/rules"
)

// oldPutIndexes writes a payout's list entries as the layout before the list index did:
// one key in each of three indexes, of the merchant's payouts, by stage and by status.
func oldPutIndexes(tx *bbolt.Tx, p *rules.Payout) error {
	for _, e := range []struct {
		bucket []byte
		key    []byte
	}{
		{bByMerch, indexKey(p.ID, p.MerchantID)},
		{bByStage, indexKey(p.ID, p.MerchantID, string(p.Stage))},
		{bByStatus, indexKey(p.ID, p.MerchantID, string(p.Status))},
	} {
		b, err := tx.CreateBucketIfNotExists(e.bucket)
		if err != nil {
			return err
		}
		if err := b.Put(e.key, nil); err != nil {
			return err
		}
	}
	return nil
}

// writeOldLayout turns the closed store at path into one of the layout before the list
// index: its payouts' entries written by the old writer, and no list index.
func writeOldLayout(t *testing.T, path string) {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bbolt.Tx) error {
		pb := payoutBucketsOf(tx)
		err := pb.core.ForEach(func(k, _ []byte) error {
			p, err := pb.readState(int64(binary.BigEndian.Uint64(k)))
			if err != nil {
				return err
			}
			core := new(payoutCore)
			if err := unmarshal(pb.core.Get(k), core); err != nil {
				return err
			}
			p.MerchantID = core.MerchantID
			return oldPutIndexes(tx, p)
		})
		if err != nil {
			return err
		}
		return tx.DeleteBucket(bLists)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A file of the layout before the list index lists every payout as before: read-only (from
// its old indexes), after an upgrade a crash interrupted (still from the old ones, which
// stay whole), and once Open has upgraded it (from the list index, the old ones gone); the
// payouts then move and new ones come as in a new file.
func TestOpenUpgradesListIndexes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "payouts.db")
	db, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	statuses := []rules.Status{rules.StatusProcessed, rules.StatusProcessed, rules.StatusRejectedBank, rules.StatusPendingBank,
		rules.StatusPendingBalance, rules.StatusProcessed, rules.StatusReversed, rules.StatusAuthorized, rules.StatusDenied}
	var all []*rules.Payout
	for i := range 2_345 { // several chunks of the upgrade
		p := samplePayout()
		p.MerchantID = []string{"1", "2", "1"}[i%3]
		p.OrderID = "O-" + strconv.Itoa(i)
		p.Request.OrderID = p.OrderID
		p.Status = statuses[i%len(statuses)]
		p.Stage = rules.StageOf(p.Status)
		if i == 1_000 {
			p.Stage = rules.StagePending // a stage that is not its status's, as an import may bring
		}
		all = append(all, p)
	}
	if err := db.ImportPayouts(ctx, all); err != nil {
		t.Fatal(err)
	}
	dueAt := time.Now().Add(time.Hour).Truncate(time.Second)
	queued, _, err := db.CreatePayout(ctx, samplePayout(), dueAt, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	all = append(all, queued)

	// check lists every filter of both merchants, in pages, against the payouts themselves.
	check := func(t *testing.T, db *DB, when string) {
		t.Helper()
		var filters []rules.ListFilter
		filters = append(filters, rules.ListFilter{}, rules.ListFilter{Stage: rules.StagePending, Status: rules.StatusProcessed},
			rules.ListFilter{Stage: rules.StageSuccess, Status: rules.StatusProcessed})
		for _, g := range rules.Stages {
			filters = append(filters, rules.ListFilter{Stage: g})
		}
		for _, s := range rules.Statuses {
			filters = append(filters, rules.ListFilter{Status: s})
		}
		for _, m := range []string{"1", "2", "3"} {
			for _, f := range filters {
				var want, got []int64
				for _, p := range slices.Backward(all) {
					if p.MerchantID == m && f.Match(p) {
						want = append(want, p.ID)
					}
				}
				f.Limit = 100
				for {
					page, err := db.ListPayouts(ctx, m, f)
					if err != nil {
						t.Fatalf("%s: merchant %s %+v: %v", when, m, f, err)
					}
					for _, p := range page.Items {
						got = append(got, p.ID)
					}
					if f.Cursor = page.NextCursor; f.Cursor == 0 {
						break
					}
				}
				if !slices.Equal(got, want) {
					t.Fatalf("%s: merchant %s stage %q status %q lists %d payouts %v…, want %d %v…", when, m, f.Stage, f.Status,
						len(got), got[:min(5, len(got))], len(want), want[:min(5, len(want))])
				}
				if f.Stage != "" {
					continue
				}
				ids, err := db.WithStatus(ctx, m, f.Status, 10_000)
				slices.Reverse(want)
				if err != nil || f.Status != "" && !slices.Equal(ids, want) {
					t.Fatalf("%s: merchant %s with status %q: %d ids, want %d (%v)", when, m, f.Status, len(ids), len(want), err)
				}
			}
		}
	}
	check(t, db, "as written")
	db.Close(ctx)
	writeOldLayout(t, path)

	open := func(opt Options) *DB {
		t.Helper()
		db, err := Open(path, opt)
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	ro := open(Options{ReadOnly: true})
	check(t, ro, "old layout, read-only")
	ro.Close(ctx)

	raw, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if done, err := upgradeLists(raw, 500, 2); err != nil || done {
		t.Fatalf("two chunks of the upgrade: done %v, %v", done, err)
	}
	raw.Close()
	ro = open(Options{ReadOnly: true})
	check(t, ro, "upgrade interrupted, read-only")
	ro.bdb.View(func(tx *bbolt.Tx) error {
		if tx.Bucket(bMeta).Get(listsUpgradeKey) == nil || tx.Bucket(bLists).Stats().KeyN != 1_000 {
			t.Errorf("after two chunks: no record of the upgrade's progress, or not 1000 keys in the list index")
		}
		return nil
	})
	ro.Close(ctx)

	db = open(Options{NoSync: true})
	defer func() { db.Close(ctx) }()
	db.bdb.View(func(tx *bbolt.Tx) error {
		for _, b := range [][]byte{bByMerch, bByStage, bByStatus} {
			if tx.Bucket(b) != nil {
				t.Errorf("bucket %s is still there", b)
			}
		}
		if tx.Bucket(bMeta).Get(listsUpgradeKey) != nil {
			t.Error("the upgrade's progress is still recorded")
		}
		if n := tx.Bucket(bLists).Stats().KeyN; n != len(all) {
			t.Errorf("%d keys in the list index, want %d", n, len(all))
		}
		return nil
	})
	check(t, db, "upgraded")
	if due, err := db.Due(ctx, dueAt, 10); err != nil || len(due) != 1 || due[0].ID != queued.ID {
		t.Fatalf("queue %+v (%v), want payout %d", due, err, queued.ID)
	}

	err = db.UpdatePayouts(ctx, []int64{queued.ID}, func(p *rules.Payout, l rules.Ledger) (time.Time, error) {
		p.Move(rules.StatusRejectedBank, time.Now(), "", "")
		return time.Time{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	queued.Status, queued.Stage = rules.StatusRejectedBank, rules.StageRejected
	p := samplePayout()
	p.OrderID, p.Request.OrderID = "NEW", "NEW"
	stored, created, err := db.CreatePayout(ctx, p, time.Time{}, nil, nil)
	if err != nil || !created || stored.ID != int64(len(all)+1) {
		t.Fatalf("a new payout: %v created %v err %v", stored, created, err)
	}
	all = append(all, stored)
	check(t, db, "after a step and a create")
	db.Close(ctx)
	db = open(Options{NoSync: true})
	check(t, db, "reopened")
}
