package main

import "testing"

// The lanes are kicked for an outcome that wrote events, once, when it is committed; the set
// of outcomes waiting for their commit stays bounded.
func TestEventfulOutcomesKickOnceAndStayBounded(t *testing.T) {
	o := &eventfulOutcomes{}
	if o.committed(1) {
		t.Error("an outcome that wrote no event kicks the lanes")
	}
	o.wrote(2)
	if !o.committed(2) || o.committed(2) {
		t.Error("an outcome that wrote events does not kick the lanes exactly once")
	}
	for id := range int64(maxEventfulOutcomes + 10) {
		o.wrote(id + 100)
	}
	if n := len(o.ids); n > maxEventfulOutcomes {
		t.Errorf("%d outcomes kept, want at most %d", n, maxEventfulOutcomes)
	}
}
