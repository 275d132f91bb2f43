package store_test

import (
	"path/filepath"
	"strings"
	"testing"

	"payouts/store"
)

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
