package merchants_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"payouts/rules"
	"payouts/rules/merchants"
)

// memStore keeps merchants in a map, numbering them as the engines do.
type memStore struct{ m map[string]*rules.Merchant }

func (s *memStore) CreateMerchant(_ context.Context, m *rules.Merchant, prepare func(*rules.Merchant) error) error {
	if m.ID == "" {
		m.ID = strconv.Itoa(len(s.m) + 1)
	}
	if _, ok := s.m[m.ID]; ok {
		return rules.ErrExists
	}
	if prepare != nil {
		if err := prepare(m); err != nil {
			return err
		}
	}
	s.m[m.ID] = m
	return nil
}

func (s *memStore) UpdateMerchant(_ context.Context, id string, fn func(*rules.Merchant) error) (*rules.Merchant, error) {
	m, ok := s.m[id]
	if !ok {
		return nil, rules.ErrNotFound
	}
	c := *m
	if err := fn(&c); err != nil {
		return nil, err
	}
	s.m[id] = &c
	return &c, nil
}

// boundSealer is a readable seal that fails to open under other additional data.
type boundSealer struct{}

func (boundSealer) Seal(plain, additional []byte) []byte {
	return append(append([]byte{}, additional...), plain...)
}

func (boundSealer) Open(sealed, additional []byte) ([]byte, error) {
	if len(sealed) < len(additional) || string(sealed[:len(additional)]) != string(additional) {
		return nil, errors.New("sealed for another merchant")
	}
	return sealed[len(additional):], nil
}

func TestCreateSealsTheSecretToItsMerchant(t *testing.T) {
	st := &memStore{m: map[string]*rules.Merchant{}}
	svc := merchants.New(st, boundSealer{})
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	m, c, err := svc.Create(context.Background(), "", "Tienda", rules.DefaultSettings(), now)
	if err != nil {
		t.Fatal(err)
	}
	if m.ID != "1" || m.APIKeyHash != merchants.HashAPIKey(c.APIKey) || string(m.SealedSecret) == c.APISecret {
		t.Fatalf("got merchant %q hash %q sealed %q; want id 1, the key's hash, a sealed secret", m.ID, m.APIKeyHash, m.SealedSecret)
	}
	got, err := svc.OpenSecret(m, m.SealedSecret)
	if err != nil || got != c.APISecret {
		t.Fatalf("OpenSecret = %q, %v; want the secret", got, err)
	}
	other := &rules.Merchant{ID: "2"}
	if _, err := svc.OpenSecret(other, m.SealedSecret); err == nil {
		t.Fatal("a secret opened for another merchant")
	}
	var e *rules.Error
	if _, _, err := svc.Create(context.Background(), "1", "Otra", rules.DefaultSettings(), now); !errors.As(err, &e) || e.Kind != rules.KindConflict {
		t.Fatalf("a second merchant 1: %v; want a conflict", err)
	}
}

func TestCheckNewRefuses(t *testing.T) {
	for _, tc := range []struct{ name, id, merchant, field string }{
		{"a reserved path segment", "Notifications", "Tienda", "merchantId"},
		{"a slash", "a/b", "Tienda", "merchantId"},
		{"no name", "7", "  ", "name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var e *rules.Error
			if err := merchants.CheckNew(tc.id, tc.merchant); !errors.As(err, &e) || e.Field != tc.field {
				t.Fatalf("CheckNew(%q, %q) = %v; want an error on %s", tc.id, tc.merchant, err, tc.field)
			}
		})
	}
	if err := merchants.CheckNew("tienda_7", "Tienda"); err != nil {
		t.Fatalf("a good id refused: %v", err)
	}
}

func TestKeysRotateAddAndRevoke(t *testing.T) {
	ctx := context.Background()
	st := &memStore{m: map[string]*rules.Merchant{}}
	svc := merchants.New(st, boundSealer{})
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	m, first, err := svc.Create(ctx, "", "Tienda", rules.DefaultSettings(), now)
	if err != nil {
		t.Fatal(err)
	}
	m, second, err := svc.RotateKey(ctx, m.ID, time.Hour, now)
	if err != nil {
		t.Fatal(err)
	}
	if m.APIKeyHash != merchants.HashAPIKey(second.APIKey) || len(m.OldKeys) != 1 || m.OldKeys[0].APIKeyHash != merchants.HashAPIKey(first.APIKey) {
		t.Fatalf("after a rotation: current %q, old %+v; want the new key current and the first kept", m.APIKeyHash, m.OldKeys)
	}
	if got, _ := svc.OpenSecret(m, m.OldKeys[0].SealedSecret); got != first.APISecret {
		t.Fatalf("the old key's secret opens to %q; want the first secret", got)
	}
	if live := m.LiveOldKeys(now.Add(2 * time.Hour)); len(live) != 0 {
		t.Fatalf("the old key still lives past its grace: %+v", live)
	}
	m, maker, err := svc.AddRoleKey(ctx, m.ID, rules.KeyRoleMaker, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.RoleKeys) != 1 || m.RoleKeys[0].Role != rules.KeyRoleMaker || m.APIKeyHash != merchants.HashAPIKey(second.APIKey) {
		t.Fatalf("after adding a maker key: %+v, current %q; want one maker key beside the current one", m.RoleKeys, m.APIKeyHash)
	}
	var e *rules.Error
	if err := svc.RevokeKey(ctx, m.ID, rules.KeyID(m.APIKeyHash), now); !errors.As(err, &e) || e.Kind != rules.KindConflict {
		t.Fatalf("revoking the current key: %v; want a conflict", err)
	}
	if err := svc.RevokeKey(ctx, m.ID, rules.KeyID(merchants.HashAPIKey(maker.APIKey)), now); err != nil {
		t.Fatal(err)
	}
	if err := svc.RevokeKey(ctx, m.ID, rules.KeyID(merchants.HashAPIKey(first.APIKey)), now); err != nil {
		t.Fatal(err)
	}
	if got := st.m[m.ID]; len(got.RoleKeys) != 0 || len(got.OldKeys) != 0 {
		t.Fatalf("after revoking both: role keys %+v, old keys %+v; want none", got.RoleKeys, got.OldKeys)
	}
	if err := svc.RevokeKey(ctx, m.ID, "nope", now); !errors.As(err, &e) || e.Kind != rules.KindNotFound {
		t.Fatalf("revoking an unknown key: %v; want not found", err)
	}
}
