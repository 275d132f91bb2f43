package rules

import (
	"context"
	"sync"
	"time"
)

// RoundReads carries the payouts a lifecycle round read (PayoutsByID, DueRead) to the
// UpdatePayouts of the same round, through the round's context (WithRoundReads). The round
// reads its payouts before its transaction, to ask the rails, and its step then needs them
// again inside it, in the writer every write waits for: an engine that finds there the
// payout it read, from a record that has not changed since, gives the step that very
// payout rather than decoding it again.
//
// The round hands its payouts over: once it calls UpdatePayouts it no longer looks at
// them, so the engine keeps no copy. A payout read with any other context (the API's, the
// dashboard's) is the caller's alone, and an engine keeps nothing of it.
type RoundReads struct {
	mu sync.Mutex
	m  map[int64]RoundRead
}

// RoundRead is one payout a round read, with what its engine needs to tell whether its
// record changed since: the bytes it was decoded from, or the row's version.
type RoundRead struct {
	Payout  *Payout
	Record  []byte    // the engine's own copy
	Version int64     // a row's version, for an engine that has one
	Due     time.Time // the payout's queue time as read, for an engine that keeps it apart
}

type roundReadsKey struct{}

// WithRoundReads marks ctx as a lifecycle round's, the one context of its reads and its
// UpdatePayouts.
func WithRoundReads(ctx context.Context) context.Context {
	return context.WithValue(ctx, roundReadsKey{}, &RoundReads{})
}

// RoundReadsOf is ctx's RoundReads, or nil when ctx is not a round's.
func RoundReadsOf(ctx context.Context) *RoundReads {
	r, _ := ctx.Value(roundReadsKey{}).(*RoundReads)
	return r
}

// Keep keeps what was read of payout id for the round's UpdatePayouts.
func (r *RoundReads) Keep(id int64, read RoundRead) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = make(map[int64]RoundRead)
	}
	r.m[id] = read
}

// Take gives what was read of payout id, once: a step that fails leaves its payout
// changed, and the next step must read it again.
func (r *RoundReads) Take(id int64) (RoundRead, bool) {
	if r == nil {
		return RoundRead{}, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	read, ok := r.m[id]
	if ok {
		delete(r.m, id)
	}
	return read, ok
}
