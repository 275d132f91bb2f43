// Command loadgen drives a server with parallel clients signing POST /payouts (or GET
// /payouts/{id}) from a process of its own, and prints one line of what it measured:
//
//	created_per_s=N non201=N errors=N p50_ms=X p99_ms=X    (read_per_s, non200 with -mode get)
//
// It signs every request as the service checks it, so the same requests go to the payouts
// server and, harmlessly, to the unsigned bare stacks. It exits 1 when no request succeeded.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"payouts/bench/internal/sign"
)

// merchant is whose credentials a client signs with.
type merchant struct{ id, key, secret string }

func main() {
	base := flag.String("base", "http://127.0.0.1:8080", "server base URL")
	id := flag.String("merchant", "M1", "merchant id (the bare stacks take any)")
	key := flag.String("key", "", "the merchant's API key")
	secret := flag.String("secret", "", "the merchant's API secret")
	list := flag.String("merchants", "", "several merchants, id:key:secret,id:key:secret…: client i signs as merchant i mod their number (instead of -merchant, -key, -secret)")
	conc := flag.Int("c", 64, "parallel clients")
	dur := flag.Duration("d", 10*time.Second, "how long to send")
	mode := flag.String("mode", "create", "create: signed POST /payouts; get: signed GET /payouts/{id} of ids first-id…first-id+ids-1")
	ids := flag.Int("ids", 1000, "with -mode get: how many ids to read (create them first)")
	firstID := flag.Int("first-id", 1, "with -mode get: the first id to read (the first payout of this merchant)")
	flag.Parse()
	ms := []merchant{{*id, *key, *secret}}
	if *list != "" {
		var err error
		if ms, err = parseMerchants(*list); err != nil {
			fmt.Fprintln(os.Stderr, "loadgen:", err)
			os.Exit(2)
		}
	}
	if *mode != "create" && *mode != "get" {
		fmt.Fprintln(os.Stderr, "loadgen: -mode is create or get")
		os.Exit(2)
	}

	tr := &http.Transport{MaxIdleConns: *conc * 2, MaxIdleConnsPerHost: *conc * 2}
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	var ok, bad, errs atomic.Int64
	var mu sync.Mutex
	var lats []time.Duration
	deadline := time.Now().Add(*dur)
	// orderIds unique across runs and across load generators started at the same moment
	run := strconv.FormatInt(time.Now().UnixNano()%1e9, 36) + strconv.FormatInt(int64(os.Getpid()), 36)
	var wg sync.WaitGroup
	for w := 0; w < *conc; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			m := ms[w%len(ms)]
			path := "/api/v1/" + m.id + "/payouts"
			local := make([]time.Duration, 0, 4096)
			for i := 0; time.Now().Before(deadline); i++ {
				var req *http.Request
				want := http.StatusCreated
				if *mode == "get" {
					p := path + "/" + strconv.Itoa(*firstID+(w*7919+i)%*ids)
					req, _ = http.NewRequest("GET", *base+p+"?"+sign.Query(m.secret, "GET", p, nil, time.Now()), nil)
					want = http.StatusOK
				} else {
					body := []byte(fmt.Sprintf(`{"country":"PER","amount":150000,"currency":"PEN","orderId":"%s%d-%d","description":"bench","beneficiary":{"name":"Ana","lastName":"Rojas","email":"ana.rojas@correo.pe","document":{"type":1,"number":"45678912"}},"destination":{"bankAccount":{"bankCode":"002","accountType":2,"accountNumber":"19312345678012"}}}`, run, w, i))
					req, _ = http.NewRequest("POST", *base+path+"?"+sign.Query(m.secret, "POST", path, body, time.Now()), bytes.NewReader(body))
					req.Header.Set("Content-Type", "application/json")
				}
				req.Header.Set(sign.Header, m.key)
				t0 := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					errs.Add(1)
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				local = append(local, time.Since(t0))
				if resp.StatusCode == want {
					ok.Add(1)
				} else {
					bad.Add(1)
				}
			}
			mu.Lock()
			lats = append(lats, local...)
			mu.Unlock()
		}(w)
	}
	wg.Wait()
	slices.Sort(lats)
	pct := func(p float64) float64 {
		if len(lats) == 0 {
			return 0
		}
		return float64(lats[int(float64(len(lats)-1)*p)].Microseconds()) / 1000
	}
	label, badLabel := "created_per_s", "non201"
	if *mode == "get" {
		label, badLabel = "read_per_s", "non200"
	}
	fmt.Printf("%s=%.0f %s=%d errors=%d p50_ms=%.2f p99_ms=%.2f\n",
		label, float64(ok.Load())/dur.Seconds(), badLabel, bad.Load(), errs.Load(), pct(0.5), pct(0.99))
	if ok.Load() == 0 {
		os.Exit(1)
	}
}

// parseMerchants reads id:key:secret,… (merchant ids, keys and secrets hold no ':' or ',').
func parseMerchants(s string) ([]merchant, error) {
	var ms []merchant
	for _, one := range strings.Split(s, ",") {
		f := strings.Split(one, ":")
		if len(f) != 3 || f[0] == "" {
			return nil, errors.New("-merchants: want id:key:secret,… got " + strconv.Quote(one))
		}
		ms = append(ms, merchant{f[0], f[1], f[2]})
	}
	return ms, nil
}
