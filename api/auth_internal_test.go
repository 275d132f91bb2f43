package api

import (
	"crypto/sha256"
	"encoding/binary"
	"testing"
	"time"
)

func sig(i int) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(i))
	s := sha256.Sum256(b[:])
	return s[:]
}

// The replay guard accepts a signature once and keeps its memory bounded however fast
// signatures come: past its size it refuses old timestamps rather than forget them.
func TestReplayGuardIsBoundedAndNeverAcceptsTwice(t *testing.T) {
	g := newReplayGuard(1000)
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC).UnixMilli()
	if !g.accept(sig(0), now, now) || g.accept(sig(0), now, now) {
		t.Fatal("the same signature was not accepted exactly once")
	}
	// 10,000 signatures over 10 seconds: memory stays at the bound.
	for i := 1; i <= 10_000; i++ {
		ts := now + int64(i)
		g.accept(sig(i), ts, ts)
		if g.n > 1000 {
			t.Fatalf("after %d signatures the guard holds %d", i, g.n)
		}
	}
	// The first signature is forgotten, so its timestamp must now be refused, not accepted.
	if g.accept(sig(0), now, now+10_000) {
		t.Fatal("a replay was accepted after its entry was dropped")
	}
	// A fresh signature with a current timestamp is accepted.
	if !g.accept(sig(20_000), now+10_001, now+10_001) {
		t.Fatal("a fresh signature was refused")
	}
	// Seconds that left the ±5 minute window are dropped.
	later := now + 10*time.Minute.Milliseconds()
	g.accept(sig(30_000), later, later)
	if g.n != 1 {
		t.Fatalf("after the window passed the guard holds %d entries, want 1", g.n)
	}
}

// A snapshot taken at shutdown keeps refusing the same signatures after a restart.
func TestReplayGuardSurvivesARestart(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC).UnixMilli()
	g := newReplayGuard(1000)
	for i := 0; i < 10; i++ {
		g.accept(sig(i), now+int64(i)*100, now+int64(i)*100)
	}
	snap := g.snapshot()
	g2 := newReplayGuard(1000)
	if err := g2.restore(snap, now+2000); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		if g2.accept(sig(i), now+int64(i)*100, now+2000) {
			t.Fatalf("signature %d was accepted again after the restart", i)
		}
	}
	if !g2.accept(sig(99), now+2000, now+2000) {
		t.Fatal("a fresh signature was refused after the restart")
	}
	if err := g2.restore([]byte{1, 2, 3}, now); err == nil {
		t.Fatal("a corrupt snapshot was loaded")
	}
	// After an unclean stop everything signed before the start is refused.
	g3 := newReplayGuard(1000)
	g3.refuseUpTo(now)
	if g3.accept(sig(1), now-1000, now) || !g3.accept(sig(2), now+1000, now+1000) {
		t.Fatal("refuseUpTo did not draw the line at the start")
	}
}
