package api

import (
	"math/rand/v2"
	"testing"
	"time"
)

// wireTime writes what TimeFormat does, in UTC, for any time.
func TestWireTimeIsTimeFormat(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	times := []time.Time{{}, time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 26, 19, 5, 7, 1_000_000, time.FixedZone("PE", -5*3600))}
	for range 10000 {
		times = append(times, time.Unix(r.Int64N(1<<36)-1<<35, r.Int64N(1e9)))
	}
	for _, tm := range times {
		if got, want := wireTime(tm), tm.UTC().Format(TimeFormat); got != want {
			t.Fatalf("wireTime(%v) = %s, want %s", tm, got, want)
		}
	}
}
