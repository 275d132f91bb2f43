package bolt

import (
	"context"
	"encoding/binary"
	"errors"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"payouts/rules"
)

// A payout comes back from its core and its state exactly as it was stored, whatever
// optional parts it has, and with its queue time.
func TestPayoutRecordRoundTrips(t *testing.T) {
	full := samplePayout()
	full.ClaimUntil = time.Date(2026, 11, 28, 5, 0, 0, 0, time.UTC)
	full.SessionExpiresAt = time.Date(2026, 11, 21, 15, 15, 0, 0, time.UTC)
	full.Card = &rules.CardRef{Token: "tok", Brand: "VISA", BIN: "411111", Last4: "1111"}
	full.Request.ExpirationTime = "10"
	full.Request.SubMerchantInfo = &rules.SubMerchantInfo{Code: "S1", Name: "Shop", URL: "https://shop.example"}
	full.Reserved, full.RailRef, full.ClaimCodeHash, full.ClaimAttempts = 100000, "SIM-1", "ab12", 2
	full.Move(rules.StatusRejectedBank, time.Now(), rules.CodeBankRejected, "rejected by the bank (ñandú)")
	odd := samplePayout()
	odd.OrderID, odd.Country, odd.Currency = "OTHER", "COL", "COP" // not the request's
	odd.History[1].Stage = rules.StagePending                      // a stage that is not its status's
	odd.Stage = rules.StagePending
	form := samplePayout()
	form.Channel, form.SessionExpiresAt, form.CardAttempts = rules.ChannelCard, time.Date(2026, 11, 21, 15, 15, 0, 0, time.UTC), 3
	cases := map[string]struct {
		p   *rules.Payout
		due time.Time
	}{
		"settled with every optional part": {full, time.Time{}},
		"a card form with failed attempts": {form, time.Date(2026, 11, 21, 15, 15, 0, 0, time.UTC)},
		"in progress and queued":           {samplePayout(), time.Date(2026, 11, 21, 15, 0, 2, 5, time.UTC)},
		"fields that differ from the rule": {odd, time.Unix(0, 1)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tc.p.ID = 42
			db := openTemp(t)
			err := db.bdb.Update(func(tx *bbolt.Tx) error { return payoutBucketsOf(tx).insert(tc.p, tc.due) })
			if err != nil {
				t.Fatal(err)
			}
			var got *rules.Payout
			var due time.Time
			err = db.bdb.View(func(tx *bbolt.Tx) error {
				got, due, err = payoutBucketsOf(tx).read(42)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(normal(got), normal(tc.p)) {
				t.Errorf("round trip changed the payout:\n got %+v\nwant %+v", normal(got), normal(tc.p))
			}
			if !due.Equal(tc.due) {
				t.Errorf("queue time %s, want %s", due, tc.due)
			}
		})
	}
}

// A damaged state record is an error, never a panic or a payout made up of garbage.
func TestDamagedStateIsAnError(t *testing.T) {
	p := samplePayout()
	raw, err := encodeState(p, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; n < len(raw); n++ {
		if _, err := decodeState(raw[:n], &rules.Payout{}); !errors.Is(err, errBadState) {
			t.Fatalf("cut to %d of %d bytes: err %v, want errBadState", n, len(raw), err)
		}
	}
	if _, err := decodeState(append(raw, 0), &rules.Payout{}); !errors.Is(err, errBadState) {
		t.Fatalf("a trailing byte: err %v", err)
	}
	raw[0] = 99
	if _, err := decodeState(raw, &rules.Payout{}); !errors.Is(err, errBadState) {
		t.Fatalf("unknown version: err %v", err)
	}
}

// Decoding a state allocates its history and nothing for the statuses and stages in it,
// which every step and every read of a payout decodes.
func TestDecodeStateSharesNames(t *testing.T) {
	p := samplePayout()
	at := time.Date(2026, 11, 28, 5, 0, 0, 0, time.UTC)
	p.History = nil
	for i, st := range []rules.Status{rules.StatusCreated, rules.StatusAuthorized, rules.StatusWaitingRouting, rules.StatusPendingBank, rules.StatusProcessed} {
		p.History = append(p.History, rules.Transition{Stage: rules.StageOf(st), Status: st, At: at.Add(time.Duration(i) * time.Second)})
	}
	p.Status, p.Stage = rules.StatusProcessed, rules.StageSuccess
	p.RailRef, p.ClaimCodeHash, p.Card, p.Errors = "", "", nil, nil
	raw, err := encodeState(p, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	var got rules.Payout
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := decodeState(raw, &got); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 1 {
		t.Errorf("decoding a state of %d transitions: %v allocations, want 1 (the history)", len(p.History), allocs)
	}
	if got.Status != p.Status || got.Stage != p.Stage || len(got.History) != 5 || got.History[2].Status != rules.StatusWaitingRouting {
		t.Errorf("decoded %s/%s %+v", got.Stage, got.Status, got.History)
	}
}

// A database written by the version that stored payouts whole (bucket "payouts", queue
// index "due_by_id") opens with every payout readable, queued where it was, moved by the
// next step, and new ids after the old ones.
func TestOpenMigratesWholePayouts(t *testing.T) {
	defer func(was int) { migrationChunk = was }(migrationChunk)
	migrationChunk = 1_000 // the chunks of a large store, in a store of a few thousand
	path := filepath.Join(t.TempDir(), "payouts.db")
	old, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	dueAt := time.Date(2026, 11, 21, 15, 0, 2, 0, time.UTC)
	var want []*rules.Payout
	err = old.Update(func(tx *bbolt.Tx) error {
		payouts, _ := tx.CreateBucket(bPayoutsV1)
		due, _ := tx.CreateBucket(bDue)
		byID, _ := tx.CreateBucket(bDueByID)
		for i := 1; i <= 2_501; i++ { // more than one migration chunk
			p := samplePayout()
			p.ID = int64(i)
			p.OrderID = "ORD-" + strconv.Itoa(i)
			p.Request.OrderID = p.OrderID
			if err := putJSON(payouts, be64(uint64(i)), p); err != nil {
				return err
			}
			if i%1_000 == 1 {
				want = append(want, p)
			}
		}
		k := dueKeyOf(2_501, dueAt)
		if err := due.Put(k, []byte(rules.StatusPendingBank)); err != nil {
			return err
		}
		if err := byID.Put(be64(2_501), k); err != nil {
			return err
		}
		return payouts.SetSequence(2_501)
	})
	if err != nil {
		t.Fatal(err)
	}
	old.Close()

	db, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	for _, p := range want {
		got, err := db.Payout(context.Background(), "1", p.ID)
		if err != nil {
			t.Fatalf("payout %d: %v", p.ID, err)
		}
		if !reflect.DeepEqual(normal(got), normal(p)) {
			t.Fatalf("payout %d migrated as %+v, want %+v", p.ID, normal(got), normal(p))
		}
	}
	db.bdb.View(func(tx *bbolt.Tx) error {
		if tx.Bucket(bPayoutsV1) != nil || tx.Bucket(bDueByID) != nil {
			t.Error("the old buckets are still there")
		}
		return nil
	})
	due, err := db.Due(context.Background(), dueAt, 10)
	if err != nil || len(due) != 1 || due[0].ID != 2_501 {
		t.Fatalf("queue %+v (%v), want payout 25001", due, err)
	}
	later := dueAt.Add(time.Minute)
	err = db.UpdatePayouts(context.Background(), []int64{2_501}, func(p *rules.Payout, l rules.Ledger) (time.Time, error) {
		return later, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if due, _ := db.Due(context.Background(), later.Add(-time.Second), 10); len(due) != 0 {
		t.Fatalf("the old queue entry is left: %+v", due)
	}
	if due, _ := db.Due(context.Background(), later, 10); len(due) != 1 || due[0].ID != 2_501 {
		t.Fatalf("queue %+v, want payout 25001 at its new time", due)
	}
	p := samplePayout()
	p.OrderID, p.Request.OrderID = "NEW", "NEW"
	stored, created, err := db.CreatePayout(context.Background(), p, time.Time{}, nil, nil)
	if err != nil || !created || stored.ID != 2_502 {
		t.Fatalf("a new payout: id %v created %v err %v, want 25002", stored, created, err)
	}
}

func openTemp(t *testing.T) *DB {
	t.Helper()
	db, err := Open(filepath.Join(t.TempDir(), "payouts.db"), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close(context.Background()) })
	return db
}

// dueKeyOf is a key of the queue's bucket, as versions before due.go kept it.
func dueKeyOf(id int64, at time.Time) []byte {
	k := make([]byte, 16)
	binary.BigEndian.PutUint64(k, uint64(at.UnixNano()))
	binary.BigEndian.PutUint64(k[8:], uint64(id))
	return k
}
