package store_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"payouts/store"
)

// A database held by another server fails fast with a clear message instead of hanging.
func TestOpenHeldDatabaseFailsFast(t *testing.T) {
	path := filepath.Join(t.TempDir(), "payouts.db")
	db, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	start := time.Now()
	_, err = store.Open(path, store.Options{})
	if err == nil || !strings.Contains(err.Error(), "in use by another process") {
		t.Fatalf("second open: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("second open took %v", d)
	}
}

func TestSealerBindsToItsOwner(t *testing.T) {
	key, err := store.LoadOrCreateKey(filepath.Join(t.TempDir(), "k"))
	if err != nil {
		t.Fatal(err)
	}
	s, _ := store.NewSealer(key)
	sealed := s.Seal([]byte("secret"), []byte("merchant-1"))
	if strings.Contains(string(sealed), "secret") {
		t.Fatal("sealed value shows the plain text")
	}
	if got, err := s.Open(sealed, []byte("merchant-1")); err != nil || string(got) != "secret" {
		t.Fatalf("open: %q %v", got, err)
	}
	if _, err := s.Open(sealed, []byte("merchant-2")); err == nil {
		t.Fatal("a value sealed for one owner opened for another")
	}
}
