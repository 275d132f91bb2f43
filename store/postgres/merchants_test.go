package postgres

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"

	"payouts/rules"
	"payouts/store/postgres/pgtest"
)

// Merchants without an id take the next number no merchant uses; a taken id is ErrExists
// before prepare runs; they are listed by id byte-wise, as in store/bolt.
func TestMerchants(t *testing.T) {
	db := newDB(t)
	prepared := ""
	prepare := func(m *rules.Merchant) error {
		prepared = m.ID
		m.SealedSecret = []byte("sealed for " + m.ID)
		return nil
	}
	m1 := &rules.Merchant{Name: "One"}
	if err := db.CreateMerchant(context.Background(), m1, prepare); err != nil || m1.ID != "1" || prepared != "1" {
		t.Fatalf("first merchant: id %q, prepared %q, %v", m1.ID, prepared, err)
	}
	if err := db.CreateMerchant(context.Background(), &rules.Merchant{ID: "2", Name: "Two"}, nil); err != nil {
		t.Fatal(err)
	}
	m3 := &rules.Merchant{Name: "Three"}
	if err := db.CreateMerchant(context.Background(), m3, prepare); err != nil || m3.ID != "3" {
		t.Fatalf("a numbered merchant after an explicit 2: id %q, %v", m3.ID, err)
	}
	prepared = ""
	if err := db.CreateMerchant(context.Background(), &rules.Merchant{ID: "2"}, prepare); !errors.Is(err, rules.ErrExists) || prepared != "" {
		t.Fatalf("a taken id: %v (prepared %q), want ErrExists before prepare", err, prepared)
	}
	if err := db.CreateMerchant(context.Background(), &rules.Merchant{ID: "10"}, nil); err != nil {
		t.Fatal(err)
	}
	got, err := db.Merchant(context.Background(), "1")
	if err != nil || got.Name != "One" || string(got.SealedSecret) != "sealed for 1" {
		t.Fatalf("merchant 1: %+v %v", got, err)
	}
	if _, err := db.Merchant(context.Background(), "nope"); !errors.Is(err, rules.ErrNotFound) {
		t.Errorf("unknown merchant: %v, want ErrNotFound", err)
	}
	up, err := db.UpdateMerchant(context.Background(), "2", func(m *rules.Merchant) error {
		m.ID, m.Name = "elsewhere", "Deux"
		return nil
	})
	if err != nil || up.ID != "2" || up.Name != "Deux" {
		t.Fatalf("update: %+v %v", up, err)
	}
	boom := errors.New("boom")
	if _, err := db.UpdateMerchant(context.Background(), "2", func(m *rules.Merchant) error { m.Name = "lost"; return boom }); !errors.Is(err, boom) {
		t.Errorf("a failing update: %v", err)
	}
	if _, err := db.UpdateMerchant(context.Background(), "nope", func(*rules.Merchant) error { return nil }); !errors.Is(err, rules.ErrNotFound) {
		t.Errorf("updating an unknown merchant: %v, want ErrNotFound", err)
	}
	all, err := db.Merchants(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var ids, names []string
	for _, m := range all {
		ids, names = append(ids, m.ID), append(names, m.Name)
	}
	if want := "[1 10 2 3] [One  Deux Three]"; "["+strings.Join(ids, " ")+"] ["+strings.Join(names, " ")+"]" != want {
		t.Errorf("merchants %v %v, want %s", ids, names, want)
	}
}

// Numbered merchants created at once on two instances all get ids of their own.
func TestConcurrentNumberedMerchants(t *testing.T) {
	url := pgtest.Database(t)
	dbs := []*DB{openDB(t, url, Options{}), openDB(t, url, Options{})}
	const n = 20
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			m := &rules.Merchant{Name: strconv.Itoa(i)}
			if err := dbs[i%2].CreateMerchant(context.Background(), m, nil); err != nil {
				t.Errorf("create %d: %v", i, err)
			}
			ids[i] = m.ID
		})
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("id %s twice: %v", id, ids)
		}
		seen[id] = true
	}
	if all, _ := dbs[0].Merchants(context.Background()); len(all) != n {
		t.Errorf("%d merchants stored, want %d", len(all), n)
	}
}
