// Command openloop sends signed POST /payouts (or GET /payouts/{id}) at a fixed rate, open
// loop, from a process of its own, and prints one line of what it measured:
//
//	rate=R sent=N ok=N bad=N errors=N dropped=N p50_ms=X p90_ms=X p99_ms=X p999_ms=X max_ms=X sender_late_ms=X
//
// Request i is due at start + i/rate whether or not earlier ones have answered, and its
// latency is measured from when it was due, not from when it was sent: a stall of the server
// counts for every request that waited behind it (no coordinated omission, as wrk2 and vegeta
// measure). A closed loop (loadgen) measures saturation, where p99 is mostly the clients'
// queue; merchants send at a rate. sender_late_ms is how far the sender itself fell behind its
// schedule, a check on the generator. A request that finds -max-inflight requests
// outstanding is not sent and counts as dropped. It exits 1 when no request succeeded.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"payouts/bench/internal/sign"
)

func main() {
	base := flag.String("base", "http://127.0.0.1:8080", "server base URL")
	id := flag.String("merchant", "M1", "merchant id (the bare stacks take any)")
	key := flag.String("key", "", "the merchant's API key")
	secret := flag.String("secret", "", "the merchant's API secret")
	rate := flag.Float64("rate", 1000, "requests a second")
	dur := flag.Duration("d", 20*time.Second, "how long to send")
	mode := flag.String("mode", "create", "create: signed POST /payouts; get: signed GET /payouts/{id} of ids first-id…first-id+ids-1")
	ids := flag.Int("ids", 1000, "with -mode get: how many ids to read (create them first)")
	firstID := flag.Int("first-id", 1, "with -mode get: the first id to read")
	maxIn := flag.Int("max-inflight", 4000, "requests outstanding at most; one due beyond is dropped")
	flag.Parse()
	if *mode != "create" && *mode != "get" || *rate <= 0 || *ids < 1 {
		fmt.Fprintln(os.Stderr, "openloop: -mode is create or get, -rate and -ids positive")
		os.Exit(2)
	}
	tr := &http.Transport{MaxIdleConns: *maxIn, MaxIdleConnsPerHost: *maxIn}
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	n := int(*rate * dur.Seconds())
	lats := make([]time.Duration, n) // -1: no answer
	var ok, bad, errs, dropped atomic.Int64
	var late time.Duration
	sem := make(chan struct{}, *maxIn)
	// orderIds unique across runs and across generators started at the same moment
	run := strconv.FormatInt(time.Now().UnixNano()%1e9, 36) + strconv.FormatInt(int64(os.Getpid()), 36)
	path := "/api/v1/" + *id + "/payouts"
	var wg sync.WaitGroup
	start := time.Now().Add(50 * time.Millisecond)
	for i := range n {
		due := start.Add(time.Duration(float64(i) / *rate * float64(time.Second)))
		if d := time.Until(due); d > 0 {
			time.Sleep(d)
		} else {
			late = max(late, -d)
		}
		select {
		case sem <- struct{}{}:
		default:
			dropped.Add(1)
			lats[i] = -1
			continue
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			var req *http.Request
			want := http.StatusCreated
			now := time.Now()
			if *mode == "get" {
				p := path + "/" + strconv.Itoa(*firstID+(i*7919)%*ids)
				req, _ = http.NewRequest("GET", *base+p+"?"+sign.Query(*secret, "GET", p, nil, now), nil)
				want = http.StatusOK
			} else {
				body := []byte(fmt.Sprintf(`{"country":"PER","amount":150000,"currency":"PEN","orderId":"OL%s-%d","description":"bench","beneficiary":{"name":"Ana","lastName":"Rojas","email":"ana.rojas@correo.pe","document":{"type":1,"number":"45678912"}},"destination":{"bankAccount":{"bankCode":"002","accountType":2,"accountNumber":"19312345678012"}}}`, run, i))
				req, _ = http.NewRequest("POST", *base+path+"?"+sign.Query(*secret, "POST", path, body, now), bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
			}
			req.Header.Set(sign.Header, *key)
			resp, err := client.Do(req)
			if err != nil {
				errs.Add(1)
				lats[i] = -1
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			lats[i] = time.Since(due)
			if resp.StatusCode == want {
				ok.Add(1)
			} else {
				bad.Add(1)
			}
		}()
	}
	wg.Wait()
	var ls []time.Duration
	for _, l := range lats {
		if l >= 0 {
			ls = append(ls, l)
		}
	}
	slices.Sort(ls)
	pct := func(q float64) float64 {
		if len(ls) == 0 {
			return 0
		}
		return float64(ls[int(float64(len(ls)-1)*q)].Microseconds()) / 1000
	}
	fmt.Printf("rate=%s sent=%d ok=%d bad=%d errors=%d dropped=%d p50_ms=%.2f p90_ms=%.2f p99_ms=%.2f p999_ms=%.2f max_ms=%.2f sender_late_ms=%.2f\n",
		strconv.FormatFloat(*rate, 'f', -1, 64), n, ok.Load(), bad.Load(), errs.Load(), dropped.Load(),
		pct(0.5), pct(0.9), pct(0.99), pct(0.999), pct(1), float64(late.Microseconds())/1000)
	if ok.Load() == 0 {
		os.Exit(1)
	}
}
