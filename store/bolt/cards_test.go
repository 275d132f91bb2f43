package bolt_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"payouts/rules"
	"payouts/store/bolt"
)

func openCardDB(t *testing.T) *bolt.DB {
	t.Helper()
	db, err := bolt.Open(filepath.Join(t.TempDir(), "payouts.db"), bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close(context.Background()) })
	return db
}

func TestCardVault(t *testing.T) {
	db := openCardDB(t)
	if _, ok, err := db.SavedCard(context.Background(), "7", 1, "45678912"); ok || err != nil {
		t.Fatalf("empty vault: %v %v", ok, err)
	}
	ref := rules.CardRef{Token: "card_a", Brand: "VISA", BIN: "411111", Last4: "1111"}
	sealed := []byte("sealed-bytes")
	if err := db.PutCard(context.Background(), "7", 1, "45678912", 100, ref, sealed, true); err != nil {
		t.Fatal(err)
	}
	sealed[0] = 'X' // the store keeps its own copy
	got, ok, err := db.SavedCard(context.Background(), "7", 1, "45678912")
	if err != nil || !ok || got != ref {
		t.Fatalf("saved card: %+v %v %v", got, ok, err)
	}
	for _, other := range []struct {
		m    string
		typ  int
		num  string
		name string
	}{{"8", 1, "45678912", "another merchant"}, {"7", 2, "45678912", "another document type"}, {"7", 1, "45678913", "another number"}} {
		if _, ok, _ := db.SavedCard(context.Background(), other.m, other.typ, other.num); ok {
			t.Errorf("%s sees the card", other.name)
		}
	}
	pref, psealed, err := db.PayoutCard(context.Background(), 100, ref.Token)
	if err != nil || pref != ref || !bytes.Equal(psealed, []byte("sealed-bytes")) {
		t.Fatalf("payout card: %+v %q %v", pref, psealed, err)
	}
	// The next payout of the beneficiary uses the card on file.
	if used, err := db.UseSavedCard(context.Background(), "7", 1, "45678912", 101); err != nil || used != ref {
		t.Fatalf("use saved: %+v %v", used, err)
	}
	if _, err := db.UseSavedCard(context.Background(), "7", 1, "00000000", 102); !errors.Is(err, rules.ErrNotFound) {
		t.Errorf("use of a missing card: %v", err)
	}
	// A payout's own copy goes at its outcome; the card on file stays.
	if err := db.DropPayoutCard(context.Background(), 100); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.PayoutCard(context.Background(), 100, ref.Token); !errors.Is(err, rules.ErrNotFound) {
		t.Errorf("dropped payout card: %v", err)
	}
	if _, ok, _ := db.SavedCard(context.Background(), "7", 1, "45678912"); !ok {
		t.Errorf("the card on file went with the payout's copy")
	}
	// Card on file off: registered for the payout only.
	one := rules.CardRef{Token: "card_b", Brand: "VISA", BIN: "424242", Last4: "4242"}
	db.PutCard(context.Background(), "9", 1, "11111111", 200, one, []byte("s"), false)
	if _, ok, _ := db.SavedCard(context.Background(), "9", 1, "11111111"); ok {
		t.Errorf("a one-time card is on file")
	}
	if r, _, err := db.PayoutCard(context.Background(), 200, one.Token); err != nil || r != one {
		t.Errorf("one-time card: %+v %v", r, err)
	}
}

func TestDropFinishedPayoutCards(t *testing.T) {
	db := openCardDB(t)
	now := time.Now().UTC()
	newPayout := func(order string) *rules.Payout {
		p := &rules.Payout{MerchantID: "7", OrderID: order, Country: "PER", Currency: "PEN", Amount: 100,
			Channel: rules.ChannelCard, Stage: rules.StageInProgress, Status: rules.StatusCreated, CreatedAt: now, StatusChangedAt: now}
		stored, _, err := db.CreatePayout(context.Background(), p, time.Time{}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		return stored
	}
	live, done := newPayout("A"), newPayout("B")
	for _, p := range []*rules.Payout{live, done} {
		db.PutCard(context.Background(), "7", 1, "45678912", p.ID, rules.CardRef{Token: "t" + p.OrderID}, []byte("s"), false)
	}
	db.PutCard(context.Background(), "7", 1, "45678912", 999, rules.CardRef{Token: "orphan"}, []byte("s"), false) // no such payout
	err := db.UpdatePayouts(context.Background(), []int64{done.ID}, func(p *rules.Payout, _ rules.Ledger) (time.Time, error) {
		p.Move(rules.StatusProcessed, now, "", "")
		return time.Time{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	n, err := db.DropFinishedPayoutCards(context.Background())
	if err != nil || n != 2 {
		t.Fatalf("dropped %d (%v), want the finished payout's and the orphan's", n, err)
	}
	if _, _, err := db.PayoutCard(context.Background(), live.ID, "t"+live.OrderID); err != nil {
		t.Errorf("the card of a payout in progress was dropped: %v", err)
	}
	if _, _, err := db.PayoutCard(context.Background(), done.ID, "t"+done.OrderID); !errors.Is(err, rules.ErrNotFound) {
		t.Errorf("the card of a finished payout is kept: %v", err)
	}
}
