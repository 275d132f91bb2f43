package storetest

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"payouts/rules"
)

// testImportPayouts: ImportPayouts.
func testImportPayouts(t *testing.T, e Engine) {
	t.Run("keeps the payouts' ids, indexes them and queues none", func(t *testing.T) {
		s := e.open(t)
		addMerchants(t, s, m1)
		a := newPayout(m1, "IMP-a", 1000, T0)
		a.ID = 100
		b := newPayout(m1, "IMP-b", 2000, at(time.Second))
		b.ID = 205
		b.Move(rules.StatusAuthorized, at(2*time.Second), "", "")
		if err := s.ImportPayouts(context.Background(), []*rules.Payout{a, b}); err != nil {
			t.Fatal(err)
		}
		samePayout(t, "imported a", payoutOf(t, s, m1, 100), a)
		samePayout(t, "imported b", payoutOf(t, s, m1, 205), b)
		if got, err := s.PayoutByOrder(context.Background(), m1, "IMP-b"); err != nil || got.ID != 205 {
			t.Errorf("PayoutByOrder: %+v %v", got, err)
		}
		if page, _ := s.ListPayouts(context.Background(), m1, rules.ListFilter{Status: rules.StatusAuthorized}); !slices.Equal(ids(page.Items), []int64{205}) {
			t.Errorf("listed AUTHORIZED %v", ids(page.Items))
		}
		if page, _ := s.ListPayouts(context.Background(), m1, rules.ListFilter{}); !slices.Equal(ids(page.Items), []int64{205, 100}) {
			t.Errorf("listed %v", ids(page.Items))
		}
		if due, _ := s.Due(context.Background(), at(24*time.Hour), 10); len(due) != 0 {
			t.Errorf("imported payouts are queued: %+v", due)
		}
		// Numbering goes on after the imported ids.
		if p := create(t, s, newPayout(m1, "AFTER", 1000, T0), time.Time{}); p.ID <= 205 {
			t.Errorf("a payout created after the import got id %d, want above 205", p.ID)
		}
	})

	t.Run("a payout without an id is numbered", func(t *testing.T) {
		s := e.open(t)
		addMerchants(t, s, m1)
		first := create(t, s, newPayout(m1, "FIRST", 1000, T0), time.Time{})
		if err := s.ImportPayouts(context.Background(), []*rules.Payout{newPayout(m1, "SEED-0", 1000, T0), newPayout(m1, "SEED-1", 1000, T0)}); err != nil {
			t.Fatal(err)
		}
		s0, err0 := s.PayoutByOrder(context.Background(), m1, "SEED-0")
		s1, err1 := s.PayoutByOrder(context.Background(), m1, "SEED-1")
		if err0 != nil || err1 != nil || s0.ID <= first.ID || s1.ID <= s0.ID {
			t.Errorf("seeded ids %v %v after %d (%v %v); want new numbers in order", s0, s1, first.ID, err0, err1)
		}
	})

	t.Run("an orderId or id in use fails the whole import", func(t *testing.T) {
		s := e.open(t)
		addMerchants(t, s, m1)
		used := create(t, s, newPayout(m1, "USED", 1000, T0), time.Time{})
		fresh := newPayout(m1, "FRESH", 1000, T0)
		fresh.ID = used.ID + 500
		sameOrder := newPayout(m1, "USED", 1000, T0)
		sameOrder.ID = used.ID + 501
		if err := s.ImportPayouts(context.Background(), []*rules.Payout{fresh, sameOrder}); err == nil {
			t.Errorf("an import reusing an orderId succeeded")
		}
		sameID := newPayout(m1, "OTHER", 1000, T0)
		sameID.ID = used.ID
		if err := s.ImportPayouts(context.Background(), []*rules.Payout{fresh, sameID}); err == nil {
			t.Errorf("an import reusing an id succeeded")
		}
		if _, err := s.PayoutByOrder(context.Background(), m1, "FRESH"); !isNotFound(err) {
			t.Errorf("part of a failed import was stored: %v", err)
		}
		samePayout(t, "the payout in use", payoutOf(t, s, m1, used.ID), used)
	})
}

// testBackup: Backup and Ping.
func testBackup(t *testing.T, e Engine) {
	t.Run("Ping answers on an open store", func(t *testing.T) {
		if err := e.open(t).Ping(context.Background()); err != nil {
			t.Errorf("Ping: %v", err)
		}
	})

	t.Run("Backup writes a copy or says the engine cannot", func(t *testing.T) {
		s := e.open(t)
		addMerchants(t, s, m1)
		var buf bytes.Buffer
		n, err := s.Backup(context.Background(), &buf)
		switch {
		case errors.Is(err, rules.ErrNotSupported):
			t.Logf("Backup: %v", err)
		case err != nil:
			t.Errorf("Backup: %v, want a copy or an error wrapping rules.ErrNotSupported", err)
		case n <= 0 || n != int64(buf.Len()):
			t.Errorf("Backup said %d bytes and wrote %d", n, buf.Len())
		}
	})
}
