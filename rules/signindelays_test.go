package rules_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"payouts/rules"
)

func TestSignInDelaysDoubleUpToTheCapAndAreForgotten(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	d := rules.NewSignInDelays(func() time.Time { return now })
	want := []time.Duration{0, 0, 0, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 32 * time.Second,
		64 * time.Second, 128 * time.Second, 256 * time.Second, 512 * time.Second, 15 * time.Minute, 15 * time.Minute}
	for i, w := range want {
		n, wait, ok := d.Attempt("ana@example.com")
		if !ok || n != i+1 || wait != w {
			t.Errorf("attempt %d: %d, %v, %v; want %d, %v, let through", i+1, n, wait, ok, i+1, w)
		}
		if w > 0 {
			if _, left, ok := d.Attempt("ana@example.com"); ok || left != w {
				t.Errorf("an attempt right after failure %d: let through %v, wait %v; want refused, %v", i+1, ok, left, w)
			}
			now = now.Add(w / 2)
			if _, left, ok := d.Attempt("ana@example.com"); ok || left != w-w/2 {
				t.Errorf("halfway through wait %d: let through %v, wait %v; want refused, %v", i+1, ok, left, w-w/2)
			}
			now = now.Add(w - w/2)
		}
		if _, _, ok := d.Attempt("bob@example.com"); !ok {
			t.Errorf("another account is held up")
		}
		d.Succeeded("bob@example.com")
	}
	for range 1000 { // 15 minutes a try however long it goes on
		d.Attempt("ana@example.com")
		now = now.Add(15 * time.Minute)
	}
	if n, w, ok := d.Attempt("ana@example.com"); !ok || w != 15*time.Minute || n != len(want)+1001 {
		t.Errorf("after 1000 more: %d %v %v", n, w, ok)
	}
	now = now.Add(15*time.Minute + time.Hour + time.Second)
	if n, w, ok := d.Attempt("ana@example.com"); !ok || n != 1 || w != 0 {
		t.Errorf("after a quiet hour: %d %v %v, want the count forgotten", n, w, ok)
	}
	d.Succeeded("ana@example.com")
	if n, _, _ := d.Attempt("ana@example.com"); n != 1 {
		t.Errorf("after a success: %d failures, want 1", n)
	}
	for range 5 {
		d.Attempt("ana@example.com")
		now = now.Add(time.Hour / 2)
	}
	d.Unchecked("ana@example.com")
	if n, _, ok := d.Attempt("ana@example.com"); !ok || n != 6 {
		t.Errorf("after an unchecked attempt: %d %v, want the 6th let through at once", n, ok)
	}
}

// Attempts sent together: only those within the free failures and the first with a wait
// are let through, whatever their number.
func TestSignInDelaysLetFewAttemptsThroughAtOnce(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	d := rules.NewSignInDelays(func() time.Time { return now })
	var mu sync.Mutex
	through := 0
	var wg sync.WaitGroup
	for range 200 {
		wg.Go(func() {
			if _, _, ok := d.Attempt("ana@example.com"); ok {
				mu.Lock()
				through++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if through != rules.SignInDelayFree+1 {
		t.Errorf("%d of 200 attempts at once let through, want %d", through, rules.SignInDelayFree+1)
	}
}

func TestSignInDelaysTableIsBoundedAndKeepsRepeatedFailures(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	d := rules.NewSignInDelays(func() time.Time { return now })
	d.Max = 100
	for range 5 {
		d.Attempt("target@example.com")
		now = now.Add(time.Second)
	}
	for i := range 1000 {
		d.Attempt(fmt.Sprintf("sprayed-%d@example.com", i))
	}
	if _, w, ok := d.Attempt("target@example.com"); ok || w != time.Second {
		t.Errorf("the account that failed five times, after 1000 made-up ones: let through %v, waits %v; want refused, 1s", ok, w)
	}
}
