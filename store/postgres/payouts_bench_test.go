package postgres

import (
	"context"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"payouts/rules"
	"payouts/store/postgres/pgtest"
)

// BenchmarkCreatePayoutsOneMerchant creates payouts of one merchant from 64 goroutines, each
// create reserving its amount on the merchant's one balance in its transaction (as the
// service's Admit does), so that every create holds the balance row's lock until it commits:
// grouped, the writer commits whatever arrived meanwhile in one transaction; alone, every
// create is a transaction of its own.
//
//	PAYOUTS_TEST_DATABASE_URL=... go test -run '^$' -bench CreatePayoutsOneMerchant -benchtime 5s ./store/postgres/
func BenchmarkCreatePayoutsOneMerchant(b *testing.B) {
	for _, mode := range []string{"grouped", "alone"} {
		db := openDB(b, pgtest.Database(b), Options{})
		db.writer.alone = mode == "alone"
		if _, err := db.Fund(context.Background(), "m1", "PER", "PEN", rules.MaxBalance, time.Now()); err != nil {
			b.Fatal(err)
		}
		var orders atomic.Int64
		b.Run(mode, func(b *testing.B) {
			b.SetParallelism(64 / max(1, testingProcs()))
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					p := newPayout("B-"+strconv.FormatInt(orders.Add(1), 10), 100)
					if _, created, err := db.CreatePayout(context.Background(), p, time.Time{}, nil, reserve); err != nil || !created {
						b.Errorf("create: created %v, err %v", created, err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "creates/s")
		})
		if err := db.CheckAllLedgers(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}

// testingProcs is GOMAXPROCS, which RunParallel multiplies the parallelism by.
func testingProcs() int { return runtime.GOMAXPROCS(0) }
