package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// counters are the payouts server's own counts, from its /metrics: what its runtime allocated
// (go_memstats_alloc_bytes_total and go_memstats_mallocs_total, the runtime's
// /gc/heap/allocs:bytes and :objects) and the payouts it created and finished. Two readings
// give the garbage a payout makes over its life: the create, its steps and its settlement.
type counters struct {
	Bytes, Allocs, Created, Finished float64
}

// parseCounters reads counters from a Prometheus text exposition.
func parseCounters(r io.Reader) (counters, error) {
	var c counters
	seen := map[string]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		name, value, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		if i := strings.IndexByte(name, '{'); i >= 0 {
			// labels hold no space in these series (country, channel, stage, status)
			name = name[:i]
		}
		var dst *float64
		switch name {
		case "go_memstats_alloc_bytes_total":
			dst = &c.Bytes
		case "go_memstats_mallocs_total":
			dst = &c.Allocs
		case "payouts_created_total":
			dst = &c.Created
		case "payouts_finished_total":
			dst = &c.Finished
		default:
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			return c, fmt.Errorf("metrics: %q: %v", line, err)
		}
		*dst += v // the payouts counters are one series a label set: their sum
		seen[name] = true
	}
	if err := sc.Err(); err != nil {
		return c, err
	}
	for _, k := range []string{"go_memstats_alloc_bytes_total", "go_memstats_mallocs_total"} {
		if !seen[k] {
			return c, fmt.Errorf("metrics: no %s", k)
		}
	}
	return c, nil
}

// readCounters reads the payouts server's counters at base.
func readCounters(ctx context.Context, base, token string) (counters, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", base+"/metrics", nil)
	if err != nil {
		return counters{}, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return counters{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return counters{}, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	return parseCounters(resp.Body)
}

// settled waits until every payout created since from has finished (SUCCESS or REJECTED), or
// until timeout, and returns the counters then: a payout's garbage is that of its whole life.
func settled(ctx context.Context, base, token string, from counters, timeout time.Duration) (counters, error) {
	deadline := time.Now().Add(timeout)
	for {
		c, err := readCounters(ctx, base, token)
		if err != nil || c.Finished-from.Finished >= c.Created-from.Created || time.Now().After(deadline) {
			return c, err
		}
		select {
		case <-ctx.Done():
			return c, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// perPayout is what the server allocated between two readings for each payout created
// between them: "allocated per payout: 31.2 KiB, 148 allocations (12,000 created, 12,000
// finished)". The finished count says whether their settlement is all in it.
func perPayout(a, b counters) string {
	n := b.Created - a.Created
	if n <= 0 {
		return "allocated per payout: no payout created"
	}
	return fmt.Sprintf("allocated per payout: %.1f KiB, %.0f allocations (%s created, %s finished)",
		(b.Bytes-a.Bytes)/n/1024, (b.Allocs-a.Allocs)/n, thousands(n), thousands(b.Finished-a.Finished))
}

// perCreate is what the bare stack allocated between two readings for each payout it created:
// "allocated per create: 14.8 KiB, 108 allocations (60,000 created)". A create is the whole
// of a payout's life there, so this is the floor under perPayout's figure: one request and
// one write of chi, net/http and bbolt, with nothing of the service's.
func perCreate(a, b counters) string {
	n := b.Created - a.Created
	if n <= 0 {
		return "allocated per create: no payout created"
	}
	return fmt.Sprintf("allocated per create: %.1f KiB, %.0f allocations (%s created)",
		(b.Bytes-a.Bytes)/n/1024, (b.Allocs-a.Allocs)/n, thousands(n))
}
