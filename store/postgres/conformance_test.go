package postgres_test

import (
	"context"
	"sync"
	"testing"

	"payouts/rules"
	"payouts/store/postgres"
	"payouts/store/postgres/pgtest"
	"payouts/store/storetest"
)

// TestConformance runs the storage conformance suite on PostgreSQL, with a second handle on
// the same database standing for a second instance.
func TestConformance(t *testing.T) {
	if !pgtest.Available() {
		pgtest.Database(t) // skips, saying why
	}
	var mu sync.Mutex
	urls := map[rules.Storage]string{}
	open := func(t *testing.T, url string, instance string) rules.Storage {
		db, err := postgres.Open(context.Background(), url, postgres.Options{Instance: instance})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close(context.Background()) })
		mu.Lock()
		urls[db] = url
		mu.Unlock()
		return db
	}
	storetest.Run(t, storetest.Engine{
		Open: func(t *testing.T) rules.Storage { return open(t, pgtest.Database(t), "first") },
		Second: func(t *testing.T, first rules.Storage) rules.Storage {
			mu.Lock()
			url := urls[first]
			mu.Unlock()
			return open(t, url, "second")
		},
	})
}

func BenchmarkAppendAudit(b *testing.B) {
	db, err := postgres.Open(context.Background(), pgtest.Database(b), postgres.Options{Instance: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close(context.Background())
	storetest.BenchmarkAppendAudit(b, db)
}
