package sandbox

import (
	"context"
	"sync"
	"time"

	"payouts/rules"
)

// later is the step of the rule's timeline that follows a payout now in status from.
func later(r *rules.ScriptRule, from rules.Status) (rules.ScriptStep, bool) {
	prev := r.Outcome.Status
	for _, st := range r.Outcome.Then {
		if prev == from {
			return st, true
		}
		prev = st.Status
	}
	return rules.ScriptStep{}, false
}

// FirstScript is the first rule of rs that fits p, or nil. Cash payouts are never scripted.
func FirstScript(rs []rules.ScriptRule, p *rules.Payout) *rules.ScriptRule {
	if p.Channel == rules.ChannelCash {
		return nil
	}
	for i := range rs {
		if rs[i].Match.Matches(p) {
			return &rs[i]
		}
	}
	return nil
}

// scriptDelay is how long after PENDING_BANK the rule's outcome comes, or def.
func scriptDelay(r *rules.ScriptRule, def time.Duration) time.Duration {
	if r.Outcome.AfterSeconds == nil || r.Outcome.Stage == rules.StageInProgress {
		return def
	}
	return time.Duration(*r.Outcome.AfterSeconds) * time.Second
}

// scriptOutcome is the rail's answer the rule scripts.
func scriptOutcome(r *rules.ScriptRule) rules.Outcome {
	o := r.Outcome
	switch o.Stage {
	case rules.StageSuccess, rules.StageRejected:
		out := rules.Outcome{Settled: true, Status: rules.StatusProcessed, Note: "scripted sandbox outcome"}
		if o.Stage == rules.StageRejected {
			out.Status, out.Code = o.Status, o.Code
		}
		if st, ok := later(r, o.Status); ok {
			out.Then = time.Duration(st.AfterSeconds) * time.Second
		}
		return out
	}
	return rules.Outcome{} // held until simulated
}

// ScriptBook reads the merchants' scripted rules for the rail, cached: the rail asks once per
// outcome, and the rules change only through Put.
type ScriptBook struct {
	Store rules.ScriptStore
	// TTL, when set, rereads a merchant's rules older than it: another instance on the same
	// database may have changed them (PostgreSQL). Zero keeps them until Put.
	TTL time.Duration

	// mu guards the cache for the time of a map access, never across the store (the rail
	// reads rules while the group writer waits on it: held there, the two would deadlock;
	// and no lock is held across a store call).
	mu     sync.RWMutex
	cache  map[string][]rules.ScriptRule
	loaded map[string]time.Time
	gen    uint64 // counts Puts begun and ended: a read older than one is not cached
	puts   int    // Puts begun and not ended
}

// Rules are a merchant's rules, in order.
func (b *ScriptBook) Rules(ctx context.Context, merchantID string) ([]rules.ScriptRule, error) {
	b.mu.RLock()
	rs, ok := b.cache[merchantID]
	fresh := b.TTL <= 0 || time.Since(b.loaded[merchantID]) < b.TTL
	gen := b.gen
	b.mu.RUnlock()
	if ok && fresh {
		return rs, nil
	}
	rs, err := b.Store.SandboxRules(ctx, merchantID)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	if b.gen == gen { // no Put began or ended while the store was read
		b.keep(merchantID, rs)
	}
	b.mu.Unlock()
	return rs, nil
}

// Put checks and replaces a merchant's rules (an empty list removes them).
func (b *ScriptBook) Put(ctx context.Context, merchantID string, rs []rules.ScriptRule) ([]rules.ScriptRule, error) {
	if rs == nil {
		rs = []rules.ScriptRule{}
	}
	if err := rules.CheckScriptRules(rs); err != nil {
		return nil, err
	}
	// Puts run at once, and the store alone knows which of them it wrote last: a Put
	// caches its rules only when no other Put began or ended while it ran, else it leaves
	// the merchant's rules to be read again from the store.
	b.mu.Lock()
	b.gen++
	b.puts++
	began := b.gen
	b.mu.Unlock()
	err := b.Store.PutSandboxRules(ctx, merchantID, rs)
	b.mu.Lock()
	defer b.mu.Unlock()
	alone := b.gen == began && b.puts == 1
	b.gen++
	b.puts--
	if err != nil || !alone {
		delete(b.cache, merchantID) // the store may or may not hold rs: read it again
	} else {
		b.keep(merchantID, rs)
	}
	if err != nil {
		return nil, err
	}
	return rs, nil
}

// keep caches rs as merchantID's rules; b.mu is held.
func (b *ScriptBook) keep(merchantID string, rs []rules.ScriptRule) {
	if b.cache == nil {
		b.cache, b.loaded = map[string][]rules.ScriptRule{}, map[string]time.Time{}
	}
	b.cache[merchantID], b.loaded[merchantID] = rs, time.Now()
}
