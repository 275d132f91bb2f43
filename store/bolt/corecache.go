package bolt

import (
	"sync"
)

// coreCache keeps the decoded cores of the payouts merchants read. A core is written once and
// never changes (record.go), and decoding its JSON is most of what reading a payout costs:
// with it, reads by id gained 10–12 % (`go run ./bench reads`). Only the API's reads fill it;
// the lifecycle's reads and the creates look it up but do not fill it: filled by every
// create, it held every payout in flight, which gained the creates nothing and added 3 ms to
// their p99 (the collector's work on a larger heap). Two generations bound it: when the newer
// one is full it becomes the older, and the older is dropped.
//
// Only what is committed goes in: a write transaction that rolls back gives its ids out
// again, so a core read inside one is never cached (payoutBuckets.fill).
type coreCache struct {
	mu       sync.RWMutex
	cur, old map[int64]*payoutCore
}

// coreCacheSize is how many cores a generation holds: about 2 KB each with the request,
// so the cache stays under 2 × 16 MB.
const coreCacheSize = 8192

func (c *coreCache) get(id int64) *payoutCore {
	if c == nil {
		return nil
	}
	c.mu.RLock()
	core := c.cur[id]
	if core == nil {
		core = c.old[id]
	}
	c.mu.RUnlock()
	return core
}

// put keeps core, which the caller no longer changes.
func (c *coreCache) put(id int64, core *payoutCore) {
	if c == nil {
		return
	}
	c.mu.Lock()
	if c.cur == nil || len(c.cur) >= coreCacheSize {
		c.old, c.cur = c.cur, make(map[int64]*payoutCore, coreCacheSize)
	}
	c.cur[id] = core
	c.mu.Unlock()
}

func (c *coreCache) forget(id int64) {
	if c == nil {
		return
	}
	c.mu.Lock()
	delete(c.cur, id)
	delete(c.old, id)
	c.mu.Unlock()
}
