package storetest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"payouts/rules"
)

// testCardAttempts: what the card form relies on the engine for, with no lock of its own
// (rules.Lifecycle.CountCardAttempt, CardEntered, RestartCardSession): each is one
// conditional write of the payout, so concurrent failures, on one handle or two, count each
// and lock the form once, and a card is taken before the lock or not at all.
func testCardAttempts(t *testing.T, e Engine) {
	const callers = 8

	t.Run("concurrent failed attempts on both handles count each, and the fifth locks the form once", func(t *testing.T) {
		w := newLinkWorld(t, e)
		p := w.cardForm(t, "CARD-FAIL")
		var mu sync.Mutex
		var locked []*rules.Payout
		errs := w.concurrently(callers, func(lc *rules.Lifecycle) error {
			got, err := lc.CountCardAttempt(context.Background(), w.m, p.ID, p.SessionExpiresAt)
			if err == nil && got.CardLocked() {
				mu.Lock()
				locked = append(locked, got)
				mu.Unlock()
			}
			return err
		})
		if n := countNil(errs); n != rules.CardAttemptsMax {
			t.Errorf("%d of %d concurrent failures were counted, want %d: %v", n, callers, rules.CardAttemptsMax, errs)
		}
		if len(locked) != 1 {
			t.Fatalf("%d failures locked the form, want 1", len(locked))
		}
		for _, err := range errs {
			var re *rules.Error
			if err != nil && (!errors.As(err, &re) || re.Code != rules.CodeWrongState) {
				t.Errorf("a failure after the lock: %v, want %s", err, rules.CodeWrongState)
			}
		}
		got := payoutOf(t, w.s, w.m.ID, p.ID)
		if got.Status != rules.StatusExpired || got.Reserved != 0 || got.CardAttempts != rules.CardAttemptsMax || !got.CardLocked() ||
			len(got.Errors) != 1 || got.Errors[0].Code != rules.CodeCardAttemptsExceded {
			t.Fatalf("locked form: %s reserved %d, attempts %d, errors %+v", got.Status, got.Reserved, got.CardAttempts, got.Errors)
		}
		if n := countStatus(got.History, rules.StatusExpired); n != 1 {
			t.Errorf("the payout expired %d times, want once", n)
		}
		w.paidOnce(t, 0)
		card := rules.CardRef{Token: "card_late", Brand: "VISA", BIN: "411111", Last4: "1111"}
		if _, err := w.lcB.CardEntered(context.Background(), p.ID, card); err == nil {
			t.Error("a locked form took a card")
		}
	})

	t.Run("a card racing the fifth failure is taken before the lock, or the form is locked and takes none", func(t *testing.T) {
		for round := range 6 {
			w := newLinkWorld(t, e)
			p := w.cardForm(t, "CARD-RACE")
			for range rules.CardAttemptsMax - 1 {
				if _, err := w.lc.CountCardAttempt(context.Background(), w.m, p.ID, p.SessionExpiresAt); err != nil {
					t.Fatal(err)
				}
			}
			card := rules.CardRef{Token: "card_race", Brand: "VISA", BIN: "411111", Last4: "1111"}
			errs := w.concurrently(2, func(lc *rules.Lifecycle) error {
				if lc == w.lc.Lifecycle {
					_, err := lc.CardEntered(context.Background(), p.ID, card)
					return err
				}
				_, err := lc.CountCardAttempt(context.Background(), w.m, p.ID, p.SessionExpiresAt)
				return err
			})
			if n := countNil(errs); n != 1 {
				t.Fatalf("round %d: the card and the fifth failure: %v, want exactly one written", round, errs)
			}
			w.settle(t)
			w.clk.Add(lifeBatchDelay)
			w.settle(t)
			got := payoutOf(t, w.s, w.m.ID, p.ID)
			switch {
			case errs[0] == nil && got.Card != nil && got.Status == rules.StatusProcessed && got.CardAttempts == rules.CardAttemptsMax-1:
				w.paidOnce(t, linkAmount)
			case errs[1] == nil && got.Card == nil && got.Status == rules.StatusExpired && got.CardLocked():
				w.paidOnce(t, 0)
			default:
				t.Fatalf("round %d: card %v, failure %v: the payout ended %s with card %v, %d attempts", round, errs[0], errs[1],
					got.Status, got.Card, got.CardAttempts)
			}
		}
	})

	t.Run("a restarted session counts from none, and a failure on the session before counts nothing", func(t *testing.T) {
		w := newLinkWorld(t, e)
		p := w.cardForm(t, "CARD-RESTART")
		for range rules.CardAttemptsMax - 1 {
			if _, err := w.lc.CountCardAttempt(context.Background(), w.m, p.ID, p.SessionExpiresAt); err != nil {
				t.Fatal(err)
			}
		}
		w.clk.Add(time.Minute)
		restarted, err := w.lcB.RestartCardSession(context.Background(), p.ID, w.clk.Now().Add(10*time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if restarted.CardAttempts != 0 {
			t.Errorf("the restarted session starts with %d attempts, want none", restarted.CardAttempts)
		}
		if _, err := w.lc.CountCardAttempt(context.Background(), w.m, p.ID, p.SessionExpiresAt); err == nil {
			t.Error("a failure on the session before the restart was counted")
		}
		got, err := w.lc.CountCardAttempt(context.Background(), w.m, p.ID, restarted.SessionExpiresAt)
		if err != nil || got.CardAttempts != 1 || got.Status.Final() {
			t.Fatalf("the restarted session's first failure: %v, %+v", err, got)
		}
		if got := payoutOf(t, w.s, w.m.ID, p.ID); got.CardAttempts != 1 || got.Status != rules.StatusAuthorized || got.Reserved != linkAmount {
			t.Errorf("after the restart: %s, %d attempts, reserved %d", got.Status, got.CardAttempts, got.Reserved)
		}
		w.clk.Add(11 * time.Minute)
		var re *rules.Error
		if _, err := w.lc.CountCardAttempt(context.Background(), w.m, p.ID, restarted.SessionExpiresAt); !errors.As(err, &re) || re.Code != rules.CodeCardSessionExpired {
			t.Errorf("a failure after the expiry: %v, want %s", err, rules.CodeCardSessionExpired)
		}
	})
}

// cardForm creates a Peru card payout of linkAmount whose form is open for ten minutes, as
// the card endpoint does, and waits until it is reserved.
func (w *linkWorld) cardForm(t *testing.T, orderID string) *rules.Payout {
	t.Helper()
	p := newPayoutTo(w.m.ID, orderID, linkAmount, w.clk.Now(), "PER", "")
	p.Channel, p.AccountType, p.BankCode = rules.ChannelCard, 5, ""
	p.SessionExpiresAt = w.clk.Now().Add(10 * time.Minute)
	admit := func(p *rules.Payout, l rules.Ledger) (time.Time, error) { return w.lc.Admit(p, w.m, l) }
	stored, created, err := w.s.CreatePayout(context.Background(), p, w.clk.Now(), nil, admit)
	if err != nil || !created {
		t.Fatalf("create card payout %s: %v %v", orderID, created, err)
	}
	w.settle(t)
	got := payoutOf(t, w.s, w.m.ID, stored.ID)
	if got.Channel != rules.ChannelCard || got.Status != rules.StatusAuthorized || got.Reserved != linkAmount || got.CardAttempts != 0 {
		t.Fatalf("card payout %s: %s %s reserved %d, %d attempts", orderID, got.Channel, got.Status, got.Reserved, got.CardAttempts)
	}
	return got
}

func countStatus(h []rules.Transition, s rules.Status) int {
	n := 0
	for _, tr := range h {
		if tr.Status == s {
			n++
		}
	}
	return n
}
