package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/alexedwards/scs/v2"

	"payouts/rules"
)

// The session store is what scs keeps its sessions in, and lists them with.
var _ scs.IterableStore = rules.SessionStore(nil)

// testCards: rules.CardStore.
func testCards(t *testing.T, e Engine) {
	visa := rules.CardRef{Token: "card_a", Brand: "VISA", BIN: "411111", Last4: "1111"}

	t.Run("a card on file is the beneficiary's, for the merchant only", func(t *testing.T) {
		s := e.open(t)
		if _, ok, err := s.SavedCard(context.Background(), m1, 1, "45678912"); ok || err != nil {
			t.Fatalf("empty vault: %v %v", ok, err)
		}
		sealed := []byte("sealed-bytes")
		if err := s.PutCard(context.Background(), m1, 1, "45678912", 100, visa, sealed, true); err != nil {
			t.Fatal(err)
		}
		sealed[0] = 'X' // the store keeps its own copy
		got, ok, err := s.SavedCard(context.Background(), m1, 1, "45678912")
		if err != nil || !ok || got != visa {
			t.Fatalf("SavedCard: %+v %v %v", got, ok, err)
		}
		for _, other := range []struct {
			m    string
			typ  int
			num  string
			name string
		}{{m2, 1, "45678912", "another merchant"}, {m1, 2, "45678912", "another document type"}, {m1, 1, "45678913", "another number"}} {
			if _, ok, _ := s.SavedCard(context.Background(), other.m, other.typ, other.num); ok {
				t.Errorf("%s sees the card", other.name)
			}
		}
		ref, raw, err := s.PayoutCard(context.Background(), 100, visa.Token)
		if err != nil || ref != visa || !bytes.Equal(raw, []byte("sealed-bytes")) {
			t.Fatalf("PayoutCard: %+v %q %v", ref, raw, err)
		}
		// A new card on file replaces the old one; the earlier payout keeps its own.
		mc := rules.CardRef{Token: "card_b", Brand: "MASTERCARD", BIN: "555555", Last4: "4444"}
		if err := s.PutCard(context.Background(), m1, 1, "45678912", 101, mc, []byte("sealed-b"), true); err != nil {
			t.Fatal(err)
		}
		if got, _, _ := s.SavedCard(context.Background(), m1, 1, "45678912"); got != mc {
			t.Errorf("card on file %+v, want the newer one", got)
		}
		if ref, _, _ := s.PayoutCard(context.Background(), 100, visa.Token); ref != visa {
			t.Errorf("the earlier payout's card became %+v", ref)
		}
	})

	t.Run("UseSavedCard makes the card on file a payout's card", func(t *testing.T) {
		s := e.open(t)
		if err := s.PutCard(context.Background(), m1, 1, "45678912", 100, visa, []byte("sealed"), true); err != nil {
			t.Fatal(err)
		}
		used, err := s.UseSavedCard(context.Background(), m1, 1, "45678912", 101)
		if err != nil || used != visa {
			t.Fatalf("UseSavedCard: %+v %v", used, err)
		}
		ref, raw, err := s.PayoutCard(context.Background(), 101, visa.Token)
		if err != nil || ref != visa || string(raw) != "sealed" {
			t.Errorf("PayoutCard(101): %+v %q %v", ref, raw, err)
		}
		if _, err := s.UseSavedCard(context.Background(), m1, 1, "00000000", 102); !isNotFound(err) {
			t.Errorf("UseSavedCard without a card on file: %v, want ErrNotFound", err)
		}
		if _, _, err := s.PayoutCard(context.Background(), 102, visa.Token); !isNotFound(err) {
			t.Errorf("PayoutCard(102): %v, want ErrNotFound", err)
		}
	})

	t.Run("a card not on file is the payout's only", func(t *testing.T) {
		s := e.open(t)
		if err := s.PutCard(context.Background(), m1, 1, "11111111", 200, visa, []byte("s"), false); err != nil {
			t.Fatal(err)
		}
		if _, ok, _ := s.SavedCard(context.Background(), m1, 1, "11111111"); ok {
			t.Errorf("a one-time card is on file")
		}
		if ref, _, err := s.PayoutCard(context.Background(), 200, visa.Token); err != nil || ref != visa {
			t.Errorf("PayoutCard: %+v %v", ref, err)
		}
	})

	t.Run("DropPayoutCard forgets the payout's card and keeps the card on file", func(t *testing.T) {
		s := e.open(t)
		if err := s.PutCard(context.Background(), m1, 1, "45678912", 100, visa, []byte("s"), true); err != nil {
			t.Fatal(err)
		}
		if err := s.DropPayoutCard(context.Background(), 100); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.PayoutCard(context.Background(), 100, visa.Token); !isNotFound(err) {
			t.Errorf("PayoutCard after the drop: %v, want ErrNotFound", err)
		}
		if _, ok, _ := s.SavedCard(context.Background(), m1, 1, "45678912"); !ok {
			t.Errorf("the card on file went with the payout's")
		}
		if err := s.DropPayoutCard(context.Background(), 100); err != nil {
			t.Errorf("dropping again: %v", err)
		}
	})

	t.Run("two submissions at once: the payout pays the card it took, the other leaves no trace", func(t *testing.T) {
		s := e.open(t)
		addMerchants(t, s, m1)
		const doc = "45678912"
		earlier := rules.CardRef{Token: "card_earlier", Brand: "VISA", BIN: "400000", Last4: "0000"}
		if err := s.PutCard(context.Background(), m1, 1, doc, 9999, earlier, []byte("sealed-earlier"), true); err != nil {
			t.Fatal(err)
		}
		// take is the lifecycle's conditional write: the payout takes a card once. A payout
		// that has one already is no change (ErrNoChange), its reason kept aside, as
		// LinkCard and CardEntered do: a refusal never rolls back another write of its group.
		errTaken := errors.New("the payout already has its card")
		take := func(id int64, ref rules.CardRef) error {
			var refused error
			err := s.UpdatePayouts(context.Background(), []int64{id}, func(p *rules.Payout, _ rules.Ledger) (time.Time, error) {
				if p.Card != nil {
					refused = errTaken
					return time.Time{}, rules.ErrNoChange
				}
				refused = nil
				p.Card = &ref
				return time.Time{}, nil
			})
			if err != nil {
				return err
			}
			return refused
		}
		// Each round: two cards put, taken and dropped at once; in the first rounds every
		// put comes before either take and every take before either drop (the order that
		// lost the card), in the others the submissions run freely.
		for round := range 12 {
			p := create(t, s, newPayout(m1, fmt.Sprintf("CARD-TWICE-%d", round), 100, T0), time.Time{})
			cards := [2]rules.CardRef{
				{Token: fmt.Sprintf("card_%d_a", round), Brand: "VISA", BIN: "411111", Last4: "1111"},
				{Token: fmt.Sprintf("card_%d_b", round), Brand: "VISA", BIN: "422222", Last4: "2222"},
			}
			lockstep := round < 4
			var put, took sync.WaitGroup
			put.Add(2)
			took.Add(2)
			var won [2]bool
			var errs [2]error
			var wg sync.WaitGroup
			for i, ref := range cards {
				wg.Add(1)
				go func() {
					defer wg.Done()
					err := s.PutCard(context.Background(), m1, 1, doc, p.ID, ref, []byte("sealed-"+ref.Token), false)
					put.Done()
					if err != nil {
						t.Error(err)
						took.Done()
						return
					}
					if lockstep {
						put.Wait()
					}
					errs[i] = take(p.ID, ref)
					won[i] = errs[i] == nil
					took.Done()
					if lockstep {
						took.Wait()
					}
					if won[i] {
						if err := s.KeepCardOnFile(context.Background(), m1, 1, doc, p.ID, ref.Token); err != nil {
							t.Error(err)
						}
					} else if err := s.DropUntakenCard(context.Background(), p.ID, ref.Token); err != nil {
						t.Error(err)
					}
				}()
			}
			wg.Wait()
			if won[0] == won[1] {
				t.Fatalf("round %d: takes answered %v, want exactly one to win", round, errs)
			}
			winner, loser := cards[0], cards[1]
			if won[1] {
				winner, loser = loser, winner
			}
			if got := payoutOf(t, s, m1, p.ID).Card; got == nil || *got != winner {
				t.Fatalf("round %d: the payout took %+v, want %+v", round, got, winner)
			}
			ref, sealed, err := s.PayoutCard(context.Background(), p.ID, winner.Token)
			if err != nil || ref != winner || string(sealed) != "sealed-"+winner.Token {
				t.Errorf("round %d: the payout would pay %+v %q (%v), want the card it took, %+v", round, ref, sealed, err, winner)
			}
			if _, _, err := s.PayoutCard(context.Background(), p.ID, loser.Token); !isNotFound(err) {
				t.Errorf("round %d: the losing card is kept: %v", round, err)
			}
			if got, ok, _ := s.SavedCard(context.Background(), m1, 1, doc); !ok || got != winner {
				t.Errorf("round %d: card on file %+v, want the card the payout took", round, got)
			}
		}
	})

	t.Run("a card left by a crash before its take is another's; the taken card never goes untaken", func(t *testing.T) {
		s := e.open(t)
		addMerchants(t, s, m1)
		p := create(t, s, newPayout(m1, "CARD-CRASH", 100, T0), time.Time{})
		crashed := rules.CardRef{Token: "card_crashed", Brand: "VISA", BIN: "411111", Last4: "1111"}
		taken := rules.CardRef{Token: "card_taken", Brand: "VISA", BIN: "422222", Last4: "2222"}
		for _, ref := range []rules.CardRef{crashed, taken} {
			if err := s.PutCard(context.Background(), m1, 1, "45678912", p.ID, ref, []byte("sealed-"+ref.Token), false); err != nil {
				t.Fatal(err)
			}
		}
		update(t, s, []int64{p.ID}, func(p *rules.Payout, _ rules.Ledger) (time.Time, error) {
			p.Card = &taken
			return time.Time{}, nil
		})
		// A submission that lost with the same token (a card on file used twice at once)
		// leaves the payout its card.
		if err := s.DropUntakenCard(context.Background(), p.ID, taken.Token); err != nil {
			t.Fatal(err)
		}
		if ref, sealed, err := s.PayoutCard(context.Background(), p.ID, taken.Token); err != nil || ref != taken || string(sealed) != "sealed-card_taken" {
			t.Errorf("PayoutCard: %+v %q %v; want the card the payout took", ref, sealed, err)
		}
		if err := s.KeepCardOnFile(context.Background(), m1, 1, "45678912", p.ID, "card_never_put"); !isNotFound(err) {
			t.Errorf("KeepCardOnFile of a card the payout has not: %v, want ErrNotFound", err)
		}
		if _, ok, _ := s.SavedCard(context.Background(), m1, 1, "45678912"); ok {
			t.Errorf("a card went on file")
		}
		// At the outcome all of the payout's cards go, the crashed one's with them.
		if err := s.DropPayoutCard(context.Background(), p.ID); err != nil {
			t.Fatal(err)
		}
		for _, ref := range []rules.CardRef{crashed, taken} {
			if _, _, err := s.PayoutCard(context.Background(), p.ID, ref.Token); !isNotFound(err) {
				t.Errorf("%s after the outcome: %v, want ErrNotFound", ref.Token, err)
			}
		}
	})

	t.Run("DropFinishedPayoutCards drops the cards of finished and missing payouts", func(t *testing.T) {
		s := e.open(t)
		addMerchants(t, s, m1)
		live := create(t, s, newPayout(m1, "CARD-live", 100, T0), time.Time{})
		done := create(t, s, newPayout(m1, "CARD-done", 100, T0), time.Time{})
		held := create(t, s, newPayout(m1, "CARD-held", 100, T0), time.Time{})
		for _, p := range []*rules.Payout{live, done, held} {
			if err := s.PutCard(context.Background(), m1, 1, "45678912", p.ID, rules.CardRef{Token: "t-" + p.OrderID}, []byte("s"), false); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.PutCard(context.Background(), m1, 1, "45678912", done.ID+1000, rules.CardRef{Token: "orphan"}, []byte("s"), false); err != nil {
			t.Fatal(err)
		}
		update(t, s, []int64{done.ID}, moveTo(rules.StatusProcessed, T0, time.Time{}))
		update(t, s, []int64{held.ID}, moveTo(rules.StatusPendingBalance, T0, time.Time{}))
		n, err := s.DropFinishedPayoutCards(context.Background())
		if err != nil || n != 2 {
			t.Fatalf("DropFinishedPayoutCards = %d, %v; want the finished payout's and the orphan's", n, err)
		}
		for _, p := range []*rules.Payout{live, held} {
			if _, _, err := s.PayoutCard(context.Background(), p.ID, "t-"+p.OrderID); err != nil {
				t.Errorf("the card of %s (not finished) was dropped: %v", p.OrderID, err)
			}
		}
		for id, token := range map[int64]string{done.ID: "t-" + done.OrderID, done.ID + 1000: "orphan"} {
			if _, _, err := s.PayoutCard(context.Background(), id, token); !errors.Is(err, rules.ErrNotFound) {
				t.Errorf("the card of payout %d is kept: %v", id, err)
			}
		}
		if n, err := s.DropFinishedPayoutCards(context.Background()); err != nil || n != 0 {
			t.Errorf("a second sweep dropped %d, %v", n, err)
		}
	})
}

// testSessions: the session store (Sessions(now)), with an injected clock.
func testSessions(t *testing.T, e Engine) {
	t.Run("Find, Commit, Delete and All, expiring by the injected clock", func(t *testing.T) {
		clk := &clock{t: T0}
		s := e.open(t).Sessions(context.Background(), clk.Now)
		if _, found, err := s.Find("nope"); found || err != nil {
			t.Fatalf("unknown token: %v %v", found, err)
		}
		if err := s.Commit("a", []byte("data-a"), at(time.Minute)); err != nil {
			t.Fatal(err)
		}
		if err := s.Commit("b", []byte("data-b"), at(time.Hour)); err != nil {
			t.Fatal(err)
		}
		b, found, err := s.Find("a")
		if err != nil || !found || string(b) != "data-a" {
			t.Fatalf("Find(a): %q %v %v", b, found, err)
		}
		b[0] = 'X' // the bytes are the caller's
		if again, _, _ := s.Find("a"); string(again) != "data-a" {
			t.Errorf("stored data changed through a returned slice: %q", again)
		}
		if err := s.Commit("b", []byte("data-b2"), at(2*time.Hour)); err != nil {
			t.Fatal(err)
		}
		if got, _, _ := s.Find("b"); string(got) != "data-b2" {
			t.Errorf("Commit did not replace: %q", got)
		}
		all, err := s.All()
		if err != nil || len(all) != 2 || string(all["a"]) != "data-a" || string(all["b"]) != "data-b2" {
			t.Errorf("All: %q %v", all, err)
		}
		clk.Add(time.Minute) // a expires exactly now
		if _, found, _ := s.Find("a"); found {
			t.Errorf("a session is found at its expiry")
		}
		if all, _ := s.All(); len(all) != 1 || all["b"] == nil {
			t.Errorf("All after the expiry: %q", all)
		}
		if err := s.Delete("b"); err != nil {
			t.Fatal(err)
		}
		if err := s.Delete("b"); err != nil {
			t.Errorf("deleting an unknown token: %v", err)
		}
		if _, found, _ := s.Find("b"); found {
			t.Errorf("a deleted session is found")
		}
	})

	t.Run("each store reads the same sessions by its own clock", func(t *testing.T) {
		st := e.open(t)
		early, late := &clock{t: T0}, &clock{t: at(time.Hour)}
		if err := st.Sessions(context.Background(), early.Now).Commit("tok", []byte("d"), at(time.Minute)); err != nil {
			t.Fatal(err)
		}
		if _, found, _ := st.Sessions(context.Background(), early.Now).Find("tok"); !found {
			t.Errorf("not found before its expiry")
		}
		if _, found, _ := st.Sessions(context.Background(), late.Now).Find("tok"); found {
			t.Errorf("found after its expiry by a later clock")
		}
	})

	t.Run("Cleanup deletes expired sessions and card-session bindings and says how many", func(t *testing.T) {
		clk := &clock{t: T0}
		s := e.open(t).Sessions(context.Background(), clk.Now)
		s.Commit("short", []byte("1"), at(time.Minute))
		s.Commit("long", []byte("2"), at(time.Hour))
		if err := s.BindCardSession(41, "sid-short", at(time.Minute)); err != nil {
			t.Fatal(err)
		}
		s.BindCardSession(42, "sid-long", at(time.Hour))
		if sid, err := s.CardSession(41); err != nil || sid != "sid-short" {
			t.Fatalf("CardSession(41) = %q, %v", sid, err)
		}
		s.BindCardSession(41, "sid-new", at(time.Minute))
		if sid, _ := s.CardSession(41); sid != "sid-new" {
			t.Errorf("rebinding: %q", sid)
		}
		if sid, err := s.CardSession(43); err != nil || sid != "" {
			t.Errorf("CardSession of an unbound payout = %q, %v; want empty", sid, err)
		}
		if n, err := s.Cleanup(); n != 0 || err != nil {
			t.Fatalf("Cleanup before any expiry: %d %v", n, err)
		}
		clk.Add(2 * time.Minute)
		if n, err := s.Cleanup(); n != 2 || err != nil {
			t.Fatalf("Cleanup = %d, %v; want the short session and its binding", n, err)
		}
		if sid, _ := s.CardSession(41); sid != "" {
			t.Errorf("expired binding kept: %q", sid)
		}
		if sid, _ := s.CardSession(42); sid != "sid-long" {
			t.Errorf("live binding lost: %q", sid)
		}
		if _, found, _ := s.Find("long"); !found {
			t.Errorf("live session lost")
		}
		clk.Add(-time.Hour) // cleaned records are gone, not hidden
		if _, found, _ := s.Find("short"); found {
			t.Errorf("a cleaned session came back")
		}
	})

	t.Run("scs keeps its sessions in it, with tokens from a URL (no cookie)", func(t *testing.T) {
		clk := &clock{t: time.Now()} // scs stamps a new session's deadline with the real clock
		sm := scs.New()
		sm.Store = e.open(t).Sessions(context.Background(), clk.Now)
		sm.HashTokenInStore = true
		ctx, err := sm.Load(context.Background(), "")
		if err != nil {
			t.Fatal(err)
		}
		sm.Put(ctx, "payout", int64(73))
		sm.SetDeadline(ctx, clk.Now().Add(10*time.Minute))
		token, expiry, err := sm.Commit(ctx)
		if err != nil || token == "" || !expiry.Equal(clk.Now().Add(10*time.Minute).UTC()) {
			t.Fatalf("Commit: %q %v %v", token, expiry, err)
		}
		ctx2, err := sm.Load(context.Background(), token)
		if err != nil || sm.GetInt64(ctx2, "payout") != 73 {
			t.Fatalf("Load by token: %v %d", err, sm.GetInt64(ctx2, "payout"))
		}
		clk.Add(10 * time.Minute)
		ctx3, _ := sm.Load(context.Background(), token)
		if sm.Exists(ctx3, "payout") {
			t.Errorf("an expired session loads")
		}
	})
}
