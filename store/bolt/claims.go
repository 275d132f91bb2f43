package bolt

import (
	"sync"
	"time"

	"payouts/rules"
)

// Claims (rules.Storage): an entry of a work queue that Due or DueEventsSkipping hands out
// goes to that caller only, until the claim is written (UpdatePayouts; EventDelivered,
// RescheduleEvent, DeadEvent) or its lease (rules.ClaimLease) ends. bbolt is one process,
// so the claims live in memory: a restart forgets them, as a crash's claims are taken over
// once their lease ends in the other engines.
//
// A lease is counted on the clock of the caller that took the claim (the now given to Due
// or DueEvents): the service's clock, which the sandbox moves and tests inject.

// claimSweep is the size at which taking a claim first forgets the expired ones, so that
// claims never written (a worker that stopped between Due and UpdatePayouts) do not pile up.
const claimSweep = 4096

// claimTable is the in-memory lease table of one work queue, by entry (a payout id, an
// outbox seq). mu guards the map only, never a read of the file: a queue's reader leaves
// out the entries claimed as it scans (held), then claims what it read (take), which
// leaves out what another reader claimed meanwhile, so that two concurrent readers never
// hand out the same entry.
type claimTable[K comparable] struct {
	mu sync.Mutex
	at map[K]time.Time // when each entry was claimed, by its claimer's clock
}

// held reports whether k is claimed at now.
func (c *claimTable[K]) held(k K, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.heldLocked(k, now)
}

// heldLocked reports whether k is claimed at now; mu is held.
func (c *claimTable[K]) heldLocked(k K, now time.Time) bool {
	at, ok := c.at[k]
	return ok && now.Before(at.Add(rules.ClaimLease))
}

// take claims at now those of keys no one holds, and says which it claimed.
func (c *claimTable[K]) take(keys []K, now time.Time) []bool {
	taken := make([]bool, len(keys))
	if len(keys) == 0 {
		return taken
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.at == nil {
		c.at = make(map[K]time.Time, len(keys))
	}
	if len(c.at) >= claimSweep {
		for k := range c.at {
			if !c.heldLocked(k, now) {
				delete(c.at, k)
			}
		}
	}
	for i, k := range keys {
		if !c.heldLocked(k, now) {
			c.at[k], taken[i] = now, true
		}
	}
	return taken
}

// release ends the claims of keys (claimed or not).
func (c *claimTable[K]) release(keys ...K) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.at) == 0 {
		return
	}
	for _, k := range keys {
		delete(c.at, k)
	}
}
