package e2e

// The create benchmark: the real HTTP server (run(), fsync on) on loopback,
// driven by 64 parallel clients signing POST /payouts, on an empty store and on one that
// already holds a million payouts.
//
//	go test -run '^$' -bench CreatePayouts -benchtime 40000x -timeout 30m .
//
// PAYOUTS_BENCH_STORED sets the size of the loaded store (default 1000000).

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"payouts/internal/server"
	"payouts/internal/servertest"
	"payouts/rules"
	"payouts/rules/merchants"
)

const benchClients = 64

// seedStore writes n settled payouts of a new merchant straight into dir's database and
// returns the merchant's client (without a base URL).
func seedStore(tb testing.TB, dir string, n int) *merchantClient {
	db, sealer, err := server.Open(context.Background(), server.Config{Storage: server.StorageConfig{Data: dir, NoSync: false}})
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close(context.Background())
	// A typical merchant: default settings (no emails, no notifications to deliver).
	m, c, err := merchants.New(db, sealer).Create(context.Background(), "", "Bench", rules.DefaultSettings(), time.Now())
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := db.Fund(context.Background(), m.ID, "PER", "PEN", 1<<60, time.Now()); err != nil {
		tb.Fatal(err)
	}
	req, err := rules.DecodePayoutRequest(mustJSON(perBankRequest("SEED")))
	if err != nil {
		tb.Fatal(err)
	}
	route, err := rules.Check(req, m, time.Now(), rules.EndpointPayouts)
	if err != nil {
		tb.Fatal(err)
	}
	const chunk = 20_000
	start := time.Now().Add(-time.Duration(n) * time.Millisecond)
	for done := 0; done < n; done += chunk {
		ps := make([]*rules.Payout, 0, chunk)
		for i := done; i < min(done+chunk, n); i++ {
			r := *req
			r.OrderID = "SEED-" + strconv.Itoa(i)
			p := rules.NewPayout(m.ID, &r, route, start.Add(time.Duration(i)*time.Millisecond))
			p.Move(rules.StatusProcessed, p.CreatedAt.Add(time.Second), "", "")
			ps = append(ps, p)
		}
		if err := db.ImportPayouts(context.Background(), ps); err != nil {
			tb.Fatal(err)
		}
	}
	return &merchantClient{&servertest.Merchant{MerchantID: m.ID, Key: c.APIKey, Secret: c.APISecret}}
}

var seeded = struct {
	sync.Mutex
	dirs map[int]string
	cli  map[int]*merchantClient
}{dirs: map[int]string{}, cli: map[int]*merchantClient{}}

// loadResult is what one load run measured.
type loadResult struct {
	n        int
	failures int
	elapsed  time.Duration
	p50, p99 time.Duration
	heap     uint64
}

func (r loadResult) perSecond() float64 { return float64(r.n) / r.elapsed.Seconds() }

// createLoad sends n signed creates from benchClients goroutines and measures them.
func createLoad(c *merchantClient, n int, prefix string) loadResult {
	tr := &http.Transport{MaxIdleConns: 2 * benchClients, MaxIdleConnsPerHost: 2 * benchClients}
	defer tr.CloseIdleConnections()
	c.HTTP = &http.Client{Transport: tr, Timeout: 30 * time.Second}
	// The body is made from a template: building it must cost the client little.
	body := string(mustJSON(perBankRequest("%s")))
	var next atomic.Int64
	var failures atomic.Int64
	lat := make([][]time.Duration, benchClients)
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < benchClients; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(n) {
					return
				}
				b := fmt.Appendf(nil, body, prefix+strconv.FormatInt(i, 36))
				t0 := time.Now()
				resp, err := c.HTTP.Do(c.request("POST", "payouts", b, ""))
				if err != nil {
					failures.Add(1)
					continue
				}
				io.Copy(io.Discard, resp.Body) // drained, the connection is reused
				resp.Body.Close()
				if resp.StatusCode != 201 {
					failures.Add(1)
				}
				lat[w] = append(lat[w], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	r := loadResult{n: n, failures: int(failures.Load()), elapsed: time.Since(start)}
	all := slices.Concat(lat...)
	slices.Sort(all)
	if len(all) > 0 {
		r.p50 = all[len(all)/2]
		r.p99 = all[len(all)*99/100]
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	r.heap = ms.HeapAlloc
	return r
}

func mustJSON(v any) []byte {
	b, err := jsonMarshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func BenchmarkCreatePayouts(b *testing.B) {
	stored := 1_000_000
	if v := os.Getenv("PAYOUTS_BENCH_STORED"); v != "" {
		stored, _ = strconv.Atoi(v)
	}
	for _, size := range []int{0, stored} {
		b.Run(fmt.Sprintf("stored=%d", size), func(b *testing.B) {
			seeded.Lock()
			dir, c := seeded.dirs[size], seeded.cli[size]
			if dir == "" {
				dir, _ = os.MkdirTemp("", "payouts-bench-")
				b.Cleanup(func() {})
				t0 := time.Now()
				c = seedStore(b, dir, size)
				seeded.dirs[size], seeded.cli[size] = dir, c
				b.Logf("seeded %d payouts in %v", size, time.Since(t0))
			}
			seeded.Unlock()
			// The contract's default rail delays, as a deployment runs: the worker authorizes
			// and routes every payout during the run; batch settlement comes 30 s later.
			s := startServer(b, dir, "--log-level", "warn", "--sandbox-delay", "2s", "--sandbox-batch-delay", "30s")
			c = c.with(func(c *merchantClient) { c.Base = s.URL })
			b.ResetTimer()
			r := createLoad(c, b.N, fmt.Sprintf("B%d-", time.Now().UnixNano()%1e9))
			b.StopTimer()
			if r.failures > 0 {
				b.Fatalf("%d of %d creates failed", r.failures, r.n)
			}
			b.ReportMetric(r.perSecond(), "payouts/s")
			b.ReportMetric(float64(r.p50.Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(r.p99.Microseconds())/1000, "p99-ms")
			b.ReportMetric(float64(r.heap)/(1<<20), "heap-MiB")
		})
	}
	b.Cleanup(func() {
		for _, d := range seeded.dirs {
			os.RemoveAll(d)
		}
	})
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }
