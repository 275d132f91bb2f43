package bolt

import (
	"sync"
	"time"

	bbolt "go.etcd.io/bbolt"
)

// A page of the file read through bbolt's map stays in the process's resident set until the
// map is replaced, and under a steady load the map is replaced rarely (it doubles up to
// 1 GiB, then grows by 1 GiB): on a small machine the mapped pages, not the heap, become most
// of the memory the process holds (197 of 242 MiB in a 256 MiB control group under full
// load). The trimmer gives them back once they pass a budget: madvise(MADV_DONTNEED) drops
// the map's pages from the process, not from the page cache, so a later read maps the page
// again from the cache without a disk read, and the kernel can reclaim what is no longer
// mapped. bbolt writes the file with pwrite, never through the map, so nothing written is lost.
const trimEvery = time.Second

// trimmer drops the map's resident pages whenever the process's file-backed resident memory
// passes budget, until stopped.
type trimmer struct {
	quit, done chan struct{}
	once       sync.Once
}

func startTrimmer(db *bbolt.DB, budget int64) *trimmer {
	t := &trimmer{quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(t.done)
		tick := time.NewTicker(trimEvery)
		defer tick.Stop()
		for {
			select {
			case <-t.quit:
				return
			case <-tick.C:
			}
			if mapped, ok := residentFileBytes(); ok && mapped > budget {
				trimMapped(db)
			}
		}
	}()
	return t
}

func (t *trimmer) stop() {
	t.once.Do(func() { close(t.quit) })
	<-t.done
}

// trimMapped drops the resident pages of the part of the map that holds data. It runs in a
// read transaction: bbolt replaces the map only under its map lock, which a reader holds, so
// the range cannot be unmapped or reused while it is advised.
func trimMapped(db *bbolt.DB) error {
	return db.View(func(tx *bbolt.Tx) error {
		return dropResident(db.Info().Data, tx.Size())
	})
}
