package bolt

import (
	"hash/maphash"
	"sync"
)

// coreCache keeps the decoded cores of the payouts merchants read. Decoding a core's JSON is
// most of what reading a payout costs: with it, reads by id gained 10–12 % (`go run ./bench
// reads`). Only the API's reads fill it;
// the lifecycle's reads and the creates look it up but do not fill it: filled by every
// create, it held every payout in flight, which gained the creates nothing and added 3 ms to
// their p99 (the collector's work on a larger heap). Two generations bound it: when the newer
// one is full it becomes the older, and the older is dropped.
//
// Only what is committed goes in: a write transaction that rolls back gives its ids out
// again, so a core read inside one is never cached (payoutBuckets.fill).
//
// A core is written at the create and rewritten only by the few steps that change what it
// holds (a link's destination, its attempts, a resend), which forget it here. That is not
// enough: a read transaction begun before such a step commits reads the old core, and may
// decode and cache it after the step forgot it. So an entry is the core with the hash of the
// bytes it was decoded from, and serves only a read of those same bytes.
type coreCache struct {
	mu       sync.RWMutex
	cur, old map[int64]cachedCore
}

// cachedCore is a decoded core and the hash of its record (coreSum).
type cachedCore struct {
	sum  uint64
	core *payoutCore
}

var coreSeed = maphash.MakeSeed()

// coreSum is the hash of a core's record that its cache entry must match.
func coreSum(raw []byte) uint64 { return maphash.Bytes(coreSeed, raw) }

// coreCacheSize is how many cores a generation holds: about 2 KB each with the request,
// so the cache stays under 2 × 16 MB.
const coreCacheSize = 8192

// get is the core of payout id decoded from the record whose coreSum is sum; nil when
// the cache has none, or one of other bytes.
func (c *coreCache) get(id int64, sum uint64) *payoutCore {
	if c == nil {
		return nil
	}
	c.mu.RLock()
	e, ok := c.cur[id]
	if !ok {
		e = c.old[id]
	}
	c.mu.RUnlock()
	if e.core == nil || e.sum != sum {
		return nil
	}
	return e.core
}

// put keeps core, decoded from the record whose coreSum is sum; the caller no longer
// changes it.
func (c *coreCache) put(id int64, sum uint64, core *payoutCore) {
	if c == nil {
		return
	}
	c.mu.Lock()
	if c.cur == nil || len(c.cur) >= coreCacheSize {
		c.old, c.cur = c.cur, make(map[int64]cachedCore, coreCacheSize)
	}
	c.cur[id] = cachedCore{sum: sum, core: core}
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
