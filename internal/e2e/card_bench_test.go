package e2e

import (
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkCardForm measures the card form on loopback against the real server: the GET of
// the form page (session load, payout and merchant read, render, CSP) and a card submission
// (checks, sealing, the vault write, the lifecycle hand-off, the 303), each timed on its
// own and reported as p50 and p99 in milliseconds. Creating the payout (a signed API call)
// is outside the timings.
//
//	go test -run '^$' -bench BenchmarkCardForm -benchtime 200x .
func BenchmarkCardForm(b *testing.B) {
	s := startServer(b, "")
	c := s.newMerchant(b, map[string]any{"cardPayouts": true})
	client := &http.Client{Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	vals := cardValues("4111111111111111", futureExpiry(), "123").Encode()
	gets := make([]time.Duration, 0, b.N)
	posts := make([]time.Duration, 0, b.N)

	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		a := c.openCard(b, cardRequest("BENCH-"+strconv.Itoa(i)), 200)
		b.StartTimer()

		start := time.Now()
		resp, err := client.Get(a.Iframe)
		if err != nil {
			b.Fatal(err)
		}
		cardDrain(resp)
		gets = append(gets, time.Since(start))
		if resp.StatusCode != 200 {
			b.Fatalf("GET form: %d", resp.StatusCode)
		}

		start = time.Now()
		req, _ := http.NewRequest("POST", a.Iframe, strings.NewReader(vals))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		resp, err = client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		cardDrain(resp)
		posts = append(posts, time.Since(start))
		if resp.StatusCode != http.StatusSeeOther {
			b.Fatalf("POST card: %d", resp.StatusCode)
		}
	}
	b.StopTimer()
	for name, d := range map[string][]time.Duration{"get": gets, "submit": posts} {
		p50, p99 := cardPercentiles(d)
		b.ReportMetric(msOf(p50), name+"-p50-ms")
		b.ReportMetric(msOf(p99), name+"-p99-ms")
	}
}

func cardDrain(resp *http.Response) {
	buf := make([]byte, 32<<10)
	for {
		if _, err := resp.Body.Read(buf); err != nil {
			break
		}
	}
	resp.Body.Close()
}

func cardPercentiles(d []time.Duration) (p50, p99 time.Duration) {
	if len(d) == 0 {
		return 0, 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)*50/100], s[min(len(s)-1, len(s)*99/100)]
}

func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
