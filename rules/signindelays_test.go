package rules_test

import (
	"fmt"
	"testing"
	"time"

	"payouts/rules"
)

func TestSignInDelaysDoubleUpToTheCapAndAreForgotten(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	d := rules.NewSignInDelays(func() time.Time { return now })
	if w := d.Wait("ana@example.com"); w != 0 {
		t.Fatalf("a fresh account waits %v", w)
	}
	want := []time.Duration{0, 0, 0, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 32 * time.Second,
		64 * time.Second, 128 * time.Second, 256 * time.Second, 512 * time.Second, 15 * time.Minute, 15 * time.Minute}
	for i, w := range want {
		n, wait := d.Fail("ana@example.com")
		if n != i+1 || wait != w {
			t.Errorf("failure %d: %d, %v; want %d, %v", i+1, n, wait, i+1, w)
		}
		if got := d.Wait("ana@example.com"); got != w {
			t.Errorf("failure %d: Wait %v, want %v", i+1, got, w)
		}
		if got := d.Wait("bob@example.com"); got != 0 {
			t.Errorf("another account waits %v", got)
		}
		now = now.Add(w) // the next attempt once the wait has passed
	}
	if w := d.Wait("ana@example.com"); w != 0 {
		t.Errorf("after the wait: %v", w)
	}
	for range 1000 { // 15 minutes a try however long it goes on
		d.Fail("ana@example.com")
		now = now.Add(15 * time.Minute)
	}
	if n, w := d.Fail("ana@example.com"); w != 15*time.Minute || n != len(want)+1001 {
		t.Errorf("after 1000 more: %d %v", n, w)
	}
	now = now.Add(15*time.Minute + time.Hour + time.Second)
	if n, w := d.Fail("ana@example.com"); n != 1 || w != 0 {
		t.Errorf("after a quiet hour: %d %v, want the count forgotten", n, w)
	}
	d.Succeeded("ana@example.com")
	if n, _ := d.Fail("ana@example.com"); n != 1 {
		t.Errorf("after a success: %d failures, want 1", n)
	}
}

func TestSignInDelaysTableIsBoundedAndKeepsRepeatedFailures(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	d := rules.NewSignInDelays(func() time.Time { return now })
	d.Max = 100
	for range 5 {
		d.Fail("target@example.com")
	}
	for i := range 1000 {
		d.Fail(fmt.Sprintf("sprayed-%d@example.com", i))
	}
	if w := d.Wait("target@example.com"); w != 2*time.Second {
		t.Errorf("the account that failed five times, after 1000 made-up ones: waits %v, want 2s", w)
	}
}
