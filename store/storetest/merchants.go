package storetest

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"

	"payouts/rules"
)

// testMerchants: rules.MerchantStore.
func testMerchants(t *testing.T, e Engine) {
	t.Run("an empty id takes the next number, never one in use", func(t *testing.T) {
		s := e.open(t)
		first := &rules.Merchant{Name: "Uno", CreatedAt: T0}
		if err := s.CreateMerchant(context.Background(), first, nil); err != nil {
			t.Fatal(err)
		}
		n1, err := strconv.ParseInt(first.ID, 10, 64)
		if err != nil || n1 <= 0 {
			t.Fatalf("first numbered id %q, want a positive number", first.ID)
		}
		// A merchant created with the id the numbering would give next does not make the
		// numbering fail or reuse it.
		taken := strconv.FormatInt(n1+1, 10)
		addMerchants(t, s, taken)
		second := &rules.Merchant{Name: "Dos", CreatedAt: T0}
		if err := s.CreateMerchant(context.Background(), second, nil); err != nil {
			t.Fatalf("numbering past a taken id: %v", err)
		}
		n2, err := strconv.ParseInt(second.ID, 10, 64)
		if err != nil || n2 <= n1 || second.ID == taken {
			t.Fatalf("second numbered id %q after %q with %q taken, want a larger unused number", second.ID, first.ID, taken)
		}
		if got, err := s.Merchant(context.Background(), taken); err != nil || got.Name != "Tienda "+taken {
			t.Errorf("the merchant with the taken id: %+v, %v", got, err)
		}
	})

	t.Run("prepare runs with the final id and what it sets is stored", func(t *testing.T) {
		s := e.open(t)
		for _, id := range []string{"", "explicit"} {
			m := &rules.Merchant{ID: id, Name: "Sellada", CreatedAt: T0}
			var seen string
			err := s.CreateMerchant(context.Background(), m, func(m *rules.Merchant) error {
				seen = m.ID
				m.SealedSecret = []byte("sealed-for-" + m.ID)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if seen == "" || seen != m.ID || (id != "" && seen != id) {
				t.Fatalf("prepare saw id %q; the merchant has %q (asked %q)", seen, m.ID, id)
			}
			got, err := s.Merchant(context.Background(), m.ID)
			if err != nil || string(got.SealedSecret) != "sealed-for-"+m.ID {
				t.Fatalf("stored %+v, %v; want the secret prepare sealed", got, err)
			}
		}
	})

	t.Run("a failing prepare stores nothing", func(t *testing.T) {
		s := e.open(t)
		boom := errors.New("no sealer")
		err := s.CreateMerchant(context.Background(), &rules.Merchant{ID: "X", CreatedAt: T0}, func(*rules.Merchant) error { return boom })
		if !errors.Is(err, boom) {
			t.Fatalf("CreateMerchant: %v, want prepare's error", err)
		}
		if _, err := s.Merchant(context.Background(), "X"); !isNotFound(err) {
			t.Errorf("Merchant after a failed create: %v, want ErrNotFound", err)
		}
		if ms, err := s.Merchants(context.Background()); err != nil || len(ms) != 0 {
			t.Errorf("Merchants after a failed create: %d, %v", len(ms), err)
		}
	})

	t.Run("a duplicate id is ErrExists and leaves the first", func(t *testing.T) {
		s := e.open(t)
		addMerchants(t, s, m1)
		err := s.CreateMerchant(context.Background(), &rules.Merchant{ID: m1, Name: "Impostor", CreatedAt: T0}, nil)
		if !errors.Is(err, rules.ErrExists) {
			t.Fatalf("second create of %s: %v, want ErrExists", m1, err)
		}
		if got, _ := s.Merchant(context.Background(), m1); got == nil || got.Name != "Tienda "+m1 {
			t.Errorf("the first merchant became %+v", got)
		}
	})

	t.Run("Merchant reads every field back and ErrNotFound for an unknown id", func(t *testing.T) {
		s := e.open(t)
		want := &rules.Merchant{ID: "full", Name: "Completa", APIKeyHash: "abc123", SealedSecret: []byte{0, 1, 2, 255},
			Settings: rules.AllSettings(), CreatedAt: T0, KeyCreatedAt: at(time.Hour),
			OldKeys: []rules.OldKey{{APIKeyHash: "old", SealedSecret: []byte("s"), CreatedAt: T0, ExpiresAt: at(24 * time.Hour)}}}
		want.Settings.NotificationURL = "https://tienda.example/hook"
		want.Settings.AllowedOrigins = []string{"https://tienda.example"}
		if err := s.CreateMerchant(context.Background(), want, nil); err != nil {
			t.Fatal(err)
		}
		got, err := s.Merchant(context.Background(), "full")
		if err != nil {
			t.Fatal(err)
		}
		if g, w := jsonOf(t, got), jsonOf(t, want); g != w {
			t.Errorf("read back:\n got  %s\n want %s", g, w)
		}
		if _, err := s.Merchant(context.Background(), "nobody"); !isNotFound(err) {
			t.Errorf("unknown merchant: %v, want ErrNotFound", err)
		}
	})

	t.Run("UpdateMerchant changes under fn, keeps the id, and a failing fn changes nothing", func(t *testing.T) {
		s := e.open(t)
		addMerchants(t, s, m1)
		got, err := s.UpdateMerchant(context.Background(), m1, func(m *rules.Merchant) error {
			m.Name = "Renombrada"
			m.Settings.PendingOnNoBalance = true
			m.ID = "hijacked" // the id is not fn's to change
			return nil
		})
		if err != nil || got.ID != m1 || got.Name != "Renombrada" || !got.Settings.PendingOnNoBalance {
			t.Fatalf("UpdateMerchant returned %+v, %v", got, err)
		}
		if stored, _ := s.Merchant(context.Background(), m1); stored == nil || stored.Name != "Renombrada" || !stored.Settings.PendingOnNoBalance {
			t.Errorf("stored after the update: %+v", stored)
		}
		if _, err := s.Merchant(context.Background(), "hijacked"); !isNotFound(err) {
			t.Errorf("fn's id change made a merchant: %v", err)
		}
		boom := errors.New("refused")
		if _, err := s.UpdateMerchant(context.Background(), m1, func(m *rules.Merchant) error { m.Name = "Lost"; return boom }); !errors.Is(err, boom) {
			t.Errorf("failing fn: %v, want its error", err)
		}
		if stored, _ := s.Merchant(context.Background(), m1); stored == nil || stored.Name != "Renombrada" {
			t.Errorf("a failing fn's change was stored: %+v", stored)
		}
		if _, err := s.UpdateMerchant(context.Background(), "nobody", func(*rules.Merchant) error { return nil }); !isNotFound(err) {
			t.Errorf("update of an unknown merchant: %v, want ErrNotFound", err)
		}
	})

	t.Run("Merchants lists every merchant", func(t *testing.T) {
		s := e.open(t)
		if ms, err := s.Merchants(context.Background()); err != nil || len(ms) != 0 {
			t.Fatalf("empty store: %d merchants, %v", len(ms), err)
		}
		addMerchants(t, s, m1, m2, "10")
		ms, err := s.Merchants(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range ms {
			got = append(got, m.ID)
			if m.Name != "Tienda "+m.ID || !m.CreatedAt.Equal(T0) {
				t.Errorf("listed %+v", m)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, []string{"10", m1, m2}) {
			t.Errorf("Merchants %v, want 10 M1 M2", got)
		}
	})
}
