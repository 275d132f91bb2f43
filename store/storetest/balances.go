package storetest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"payouts/rules"
)

// testBalances: Fund and Balances.
func testBalances(t *testing.T, e Engine) {
	t.Run("Fund adds to one balance per country and currency and returns it", func(t *testing.T) {
		s := e.open(t)
		addMerchants(t, s, m1, m2)
		if bs, err := s.Balances(context.Background(), m1); err != nil || len(bs) != 0 {
			t.Fatalf("no funding yet: %+v, %v", bs, err)
		}
		got := fund(t, s, m1, "PER", "PEN", 1000)
		want := rules.Balance{Country: "PER", Currency: "PEN", Available: 1000, Balance: 1000, Funded: 1000}
		if got != want {
			t.Errorf("Fund returned %+v, want %+v", got, want)
		}
		got = fund(t, s, m1, "PER", "PEN", 500)
		want = rules.Balance{Country: "PER", Currency: "PEN", Available: 1500, Balance: 1500, Funded: 1500}
		if got != want {
			t.Errorf("second Fund returned %+v, want %+v", got, want)
		}
		fund(t, s, m1, "PER", "USD", 7)
		fund(t, s, m1, "COL", "COP", 300_000)
		fund(t, s, m2, "PER", "PEN", 9)
		bs, err := s.Balances(context.Background(), m1)
		if err != nil {
			t.Fatal(err)
		}
		slices.SortFunc(bs, func(a, b rules.Balance) int {
			if a.Country+a.Currency < b.Country+b.Currency {
				return -1
			}
			return 1
		})
		wantAll := []rules.Balance{
			{Country: "COL", Currency: "COP", Available: 300_000, Balance: 300_000, Funded: 300_000},
			{Country: "PER", Currency: "PEN", Available: 1500, Balance: 1500, Funded: 1500},
			{Country: "PER", Currency: "USD", Available: 7, Balance: 7, Funded: 7},
		}
		if !slices.Equal(bs, wantAll) {
			t.Errorf("Balances %+v, want %+v", bs, wantAll)
		}
		if b := balanceOf(t, s, m2, "PER", "PEN"); b.Balance != 9 {
			t.Errorf("the other merchant's balance %+v", b)
		}
	})

	t.Run("a withdrawal takes only what is available, as rules.ApplyFunding says", func(t *testing.T) {
		s := e.open(t)
		addMerchants(t, s, m1)
		fund(t, s, m1, "PER", "PEN", 1000)
		p := create(t, s, newPayout(m1, "HOLD", 600, T0), time.Time{})
		update(t, s, []int64{p.ID}, reserveStep(T0, time.Time{})) // 600 held: 400 available
		got := fund(t, s, m1, "PER", "PEN", -300)
		want := rules.Balance{Country: "PER", Currency: "PEN", Available: 100, Balance: 700, Funded: 700}
		if got != want {
			t.Fatalf("withdrawal of 300: %+v, want %+v", got, want)
		}
		before := balanceOf(t, s, m1, "PER", "PEN")
		for _, amount := range []int64{-101, 0, rules.MaxBalance + 1, -rules.MaxBalance - 1, rules.MaxBalance} {
			_, wantErr := rules.ApplyFunding(before, amount)
			_, err := s.Fund(context.Background(), m1, "PER", "PEN", amount, time.Now())
			if (err == nil) != (wantErr == nil) {
				t.Errorf("Fund %d: %v; rules.ApplyFunding says %v", amount, err, wantErr)
				continue
			}
			if wantErr == nil {
				continue
			}
			var got, want *rules.Error
			if !errors.As(err, &got) || !errors.As(wantErr, &want) || got.Code != want.Code {
				t.Errorf("Fund %d: %v, want code %s (%v)", amount, err, want.Code, wantErr)
			}
			if b := balanceOf(t, s, m1, "PER", "PEN"); b != before {
				t.Errorf("a refused Fund %d changed the balance to %+v", amount, b)
			}
		}
		// Funding a new balance up to the limit, then one more unit, is refused.
		fund(t, s, m1, "PER", "USD", rules.MaxBalance)
		if _, err := s.Fund(context.Background(), m1, "PER", "USD", 1, time.Now()); err == nil {
			t.Errorf("a balance went above rules.MaxBalance")
		}
		if err := s.CheckAllLedgers(context.Background()); err != nil {
			t.Error(err)
		}
	})
}
