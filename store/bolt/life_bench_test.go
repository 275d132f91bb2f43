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
	"payouts/store/bolt"
)

// BenchmarkPayoutLife is the store's share of a payout's whole life as the server lives it:
// 64 clients create payouts through the service (validation, the create with its admission
// in the same transaction) while the lifecycle worker submits and settles them on a
// simulated rail with no delay. One op is one payout created and settled; fsync is on.
//
//	go test -run '^$' -bench PayoutLife -benchmem -cpu 2 ./store/bolt/
func BenchmarkPayoutLife(b *testing.B) {
	db, err := bolt.Open(filepath.Join(b.TempDir(), "payouts.db"), bolt.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close(context.Background())
	m := &rules.Merchant{ID: "1", Name: "Bench", Settings: rules.DefaultSettings()}
	if err := db.CreateMerchant(context.Background(), m, nil); err != nil {
		b.Fatal(err)
	}
	if _, err := db.Fund(context.Background(), m.ID, "PER", "PEN", 900_000_000_000_000, time.Now()); err != nil {
		b.Fatal(err)
	}
	rail := &rules.SimulatedRail{Now: time.Now}
	lc := &rules.Lifecycle{Store: db, Rail: func(rules.Channel) rules.Rail { return rail },
		Merchants: func(string) (*rules.Merchant, error) { return m, nil }, Now: time.Now,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	svc := &rules.Service{Store: db, Now: time.Now, Admit: lc.Admit}
	svc.OnCreated().Bind(func(context.Context, *rules.Payout) { lc.Kick() })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { lc.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	var orders atomic.Int64
	body := func(n int64) []byte {
		return []byte(`{"country":"PER","amount":150000,"currency":"PEN","orderId":"L-` + strconv.FormatInt(n, 10) + `","description":"bench",` +
			`"beneficiary":{"name":"Ana","lastName":"Rojas","email":"ana.rojas@correo.pe","document":{"type":1,"number":"45678912"}},` +
			`"destination":{"bankAccount":{"bankCode":"002","accountType":2,"accountNumber":"19312345678012"}}}`)
	}
	b.ReportAllocs()
	b.SetParallelism(32)
	cpu0 := cpuTime()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := svc.CreatePayout(ctx, m, body(orders.Add(1)), rules.EndpointPayouts); err != nil {
				b.Error(err)
				return
			}
		}
	})
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

// cpuTime is the process's CPU time so far (user and system), which the machine's other
// load does not inflate the way it does wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
