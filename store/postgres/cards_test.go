package postgres

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"payouts/rules"
)

func TestCardVault(t *testing.T) {
	db := openRest(t)
	if _, ok, err := db.SavedCard("7", 1, "45678912"); ok || err != nil {
		t.Fatalf("empty vault: %v %v", ok, err)
	}
	ref := rules.CardRef{Token: "card_a", Brand: "VISA", BIN: "411111", Last4: "1111"}
	sealed := []byte("sealed-bytes")
	if err := db.PutCard("7", 1, "45678912", 100, ref, sealed, true); err != nil {
		t.Fatal(err)
	}
	sealed[0] = 'X' // the store keeps its own copy
	got, ok, err := db.SavedCard("7", 1, "45678912")
	if err != nil || !ok || got != ref {
		t.Fatalf("saved card: %+v %v %v", got, ok, err)
	}
	for _, other := range []struct {
		m    string
		typ  int
		num  string
		name string
	}{{"8", 1, "45678912", "another merchant"}, {"7", 2, "45678912", "another document type"}, {"7", 1, "45678913", "another number"}} {
		if _, ok, _ := db.SavedCard(other.m, other.typ, other.num); ok {
			t.Errorf("%s sees the card", other.name)
		}
	}
	pref, psealed, err := db.PayoutCard(100)
	if err != nil || pref != ref || !bytes.Equal(psealed, []byte("sealed-bytes")) {
		t.Fatalf("payout card: %+v %q %v", pref, psealed, err)
	}
	// The next payout of the beneficiary uses the card on file.
	if used, err := db.UseSavedCard("7", 1, "45678912", 101); err != nil || used != ref {
		t.Fatalf("use saved: %+v %v", used, err)
	}
	if r, s, err := db.PayoutCard(101); err != nil || r != ref || string(s) != "sealed-bytes" {
		t.Errorf("the card on file is not the next payout's: %+v %q %v", r, s, err)
	}
	if _, err := db.UseSavedCard("7", 1, "00000000", 102); !errors.Is(err, rules.ErrNotFound) {
		t.Errorf("use of a missing card: %v", err)
	}
	// A newer card on file replaces the older one.
	newer := rules.CardRef{Token: "card_c", Brand: "MASTERCARD", BIN: "555555", Last4: "4444"}
	if err := db.PutCard("7", 1, "45678912", 103, newer, []byte("s2"), true); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := db.SavedCard("7", 1, "45678912"); got != newer {
		t.Errorf("card on file after a new one: %+v", got)
	}
	// A payout's own copy goes at its outcome; the card on file stays.
	if err := db.DropPayoutCard(100); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.PayoutCard(100); !errors.Is(err, rules.ErrNotFound) {
		t.Errorf("dropped payout card: %v", err)
	}
	if _, ok, _ := db.SavedCard("7", 1, "45678912"); !ok {
		t.Errorf("the card on file went with the payout's copy")
	}
	// Card on file off: registered for the payout only.
	one := rules.CardRef{Token: "card_b", Brand: "VISA", BIN: "424242", Last4: "4242"}
	if err := db.PutCard("9", 1, "11111111", 200, one, []byte("s"), false); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := db.SavedCard("9", 1, "11111111"); ok {
		t.Errorf("a one-time card is on file")
	}
	if r, _, err := db.PayoutCard(200); err != nil || r != one {
		t.Errorf("one-time card: %+v %v", r, err)
	}
}

func TestDropFinishedPayoutCards(t *testing.T) {
	db := openRest(t)
	now := time.Now().UTC()
	newPayout := func(order string, st rules.Status) int64 {
		return restInsertPayout(t, db, &rules.Payout{MerchantID: "7", OrderID: order, Country: "PER", Currency: "PEN",
			Amount: 100, Channel: rules.ChannelCard, Stage: rules.StageOf(st), Status: st, CreatedAt: now, StatusChangedAt: now}, time.Time{})
	}
	live, pending, done, denied := newPayout("A", rules.StatusCreated), newPayout("B", rules.StatusPendingBalance),
		newPayout("C", rules.StatusProcessed), newPayout("D", rules.StatusDenied)
	for _, id := range []int64{live, pending, done, denied, 999} { // 999: no such payout
		if err := db.PutCard("7", 1, "45678912", id, rules.CardRef{Token: "t"}, []byte("s"), false); err != nil {
			t.Fatal(err)
		}
	}
	n, err := db.DropFinishedPayoutCards()
	if err != nil || n != 3 {
		t.Fatalf("dropped %d (%v), want the two finished payouts' and the orphan's", n, err)
	}
	for _, id := range []int64{live, pending} {
		if _, _, err := db.PayoutCard(id); err != nil {
			t.Errorf("the card of payout %d, not finished, was dropped: %v", id, err)
		}
	}
	for _, id := range []int64{done, denied, 999} {
		if _, _, err := db.PayoutCard(id); !errors.Is(err, rules.ErrNotFound) {
			t.Errorf("the card of payout %d is kept: %v", id, err)
		}
	}
}
