package bolt_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"payouts/store/bolt"
)

// A database held by another server fails fast with a clear message instead of hanging.
func TestOpenHeldDatabaseFailsFast(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "payouts.db")
	db, err := bolt.Open(path, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	start := time.Now()
	_, err = bolt.Open(path, bolt.Options{})
	if err == nil || !strings.Contains(err.Error(), "in use by another process") {
		t.Fatalf("second open: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("second open took %v", d)
	}
}
