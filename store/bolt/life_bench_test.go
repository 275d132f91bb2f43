package bolt_test

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"payouts/rules"
	"payouts/rules/sandbox"
	"payouts/rules/workers"
	"payouts/store/bolt"
)

// BenchmarkPayoutLife is the store's share of a payout's whole life as the server lives it:
// clients create payouts through the service (validation, the create with its admission in
// the same transaction) while the lifecycle worker submits and settles them on a simulated
// rail with no delay. One op is one payout created and settled; fsync is on. With 64 clients
// the group writer shares each transaction among many creates, as under load; with one, each
// create is a transaction of its own, as at a low rate, where a payout's garbage is largest
// (bbolt copies every page a transaction touches). B/op and allocs/op are what the store and
// the rules allocate per payout over its life.
//
//	go test -run '^$' -bench PayoutLife -benchmem -cpu 2 ./store/bolt/
func BenchmarkPayoutLife(b *testing.B) {
	b.Run("64 clients", func(b *testing.B) { benchmarkPayoutLife(b, 32) })
	b.Run("1 client", func(b *testing.B) { benchmarkPayoutLife(b, 0) })
}

// benchmarkPayoutLife creates from parallelism×GOMAXPROCS goroutines, or from this one when
// parallelism is 0.
func benchmarkPayoutLife(b *testing.B, parallelism int) {
	db, svc, lc := lifeFixture(b, bolt.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { lc.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	var orders atomic.Int64
	m := benchMerchant
	b.ReportAllocs()
	cpu0 := cpuTime()
	b.ResetTimer()
	if parallelism == 0 {
		for range b.N {
			if _, err := svc.CreatePayout(ctx, m, lifeBody(orders.Add(1)), rules.EndpointPayouts); err != nil {
				b.Fatal(err)
			}
		}
	} else {
		b.SetParallelism(parallelism)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := svc.CreatePayout(ctx, m, lifeBody(orders.Add(1)), rules.EndpointPayouts); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	// Until every payout is settled: the lifecycle's writes are part of a payout's cost.
	for {
		next, err := db.NextDue(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if next.IsZero() {
			break
		}
		lc.Kick()
		time.Sleep(time.Millisecond)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "payouts/s")
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Microsecond)/float64(b.N), "cpu-µs/op")
}

var benchMerchant = &rules.Merchant{ID: "1", Name: "Bench", Settings: rules.DefaultSettings()}

// lifeFixture opens a store with the benchmark merchant, funded, and the service and the
// lifecycle over it, on a simulated rail with no delay.
func lifeFixture(tb testing.TB, opt bolt.Options) (*bolt.DB, *rules.Service, *workers.Lifecycle) {
	db, err := bolt.Open(filepath.Join(tb.TempDir(), "payouts.db"), opt)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close(context.Background()) })
	m := benchMerchant
	if err := db.CreateMerchant(context.Background(), m, nil); err != nil {
		tb.Fatal(err)
	}
	if _, err := db.Fund(context.Background(), m.ID, "PER", "PEN", 900_000_000_000_000, time.Now()); err != nil {
		tb.Fatal(err)
	}
	rail := &sandbox.Rail{Now: time.Now}
	lc := &workers.Lifecycle{
		Lifecycle: &rules.Lifecycle{Store: db, Merchants: func(string) (*rules.Merchant, error) { return m, nil }, Now: time.Now, Log: slog.New(slog.NewTextHandler(io.Discard, nil))},
		Rail:      func(rules.Channel) rules.Rail { return rail },
	}
	svc := &rules.Service{Store: db, Now: time.Now, Admit: lc.Admit}
	svc.OnCreated().Bind(func(context.Context, *rules.Payout) { lc.Kick() })
	return db, svc, lc
}

// lifeBody is a Peru bank payout's request, the benchmark's, with order n.
func lifeBody(n int64) []byte {
	return []byte(`{"country":"PER","amount":150000,"currency":"PEN","orderId":"L-` + strconv.FormatInt(n, 10) + `","description":"bench",` +
		`"beneficiary":{"name":"Ana","lastName":"Rojas","email":"ana.rojas@correo.pe","document":{"type":1,"number":"45678912"}},` +
		`"destination":{"bankAccount":{"bankCode":"002","accountType":2,"accountNumber":"19312345678012"}}}`)
}

// cpuTime is the process's CPU time so far (user and system), which the machine's other
// load does not inflate the way it does wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
