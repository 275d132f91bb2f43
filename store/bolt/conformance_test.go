package bolt_test

import (
	"context"
	"path/filepath"
	"testing"

	"payouts/rules"
	"payouts/store/bolt"
	"payouts/store/storetest"
)

// TestConformance runs the storage engines' conformance suite on bbolt: one handle per file.
func TestConformance(t *testing.T) {
	storetest.Run(t, storetest.Engine{
		Open: func(t *testing.T) rules.Storage {
			db, err := bolt.Open(filepath.Join(t.TempDir(), "payouts.db"), bolt.Options{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			return db
		},
	})
}

func BenchmarkAppendAudit(b *testing.B) {
	db, err := bolt.Open(filepath.Join(b.TempDir(), "payouts.db"), bolt.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close(context.Background())
	storetest.BenchmarkAppendAudit(b, db)
}
