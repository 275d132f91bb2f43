package bolt

import (
	"os"
	"sync"
	"time"

	bbolt "go.etcd.io/bbolt"
)

// bbolt extends the file itself when a commit needs pages past its end: in the commit, under
// the writer, with a truncate and an fsync of the file's metadata, which on a busy disk is
// a pause of every write waiting behind it. It reads the file's size at each commit, so the
// file extended beforehand is simply used. The grower does that off the writer's path: when
// the room left past the data falls under growMargin, it extends the file by growStep. Only
// past growFrom: a small store keeps a small file (bbolt's own growth below 16 MiB is cheap).
const (
	growFrom   = 16 << 20
	growMargin = 32 << 20
	growStep   = 64 << 20
	growEvery  = 250 * time.Millisecond
)

// grower extends the file ahead of the writer until stopped.
type grower struct {
	quit, done chan struct{}
	once       sync.Once
}

func startGrower(db *bbolt.DB, path string) *grower {
	g := &grower{quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(g.done)
		t := time.NewTicker(growEvery)
		defer t.Stop()
		for {
			select {
			case <-g.quit:
				return
			case <-t.C:
			}
			// A failure (a full disk) leaves the growth to bbolt's commit, which reports it.
			growAhead(db, path, growFrom, growMargin, growStep)
		}
	}()
	return g
}

func (g *grower) stop() {
	g.once.Do(func() { close(g.quit) })
	<-g.done
}

// growAhead extends the file at path to the data's size plus step when less than margin is
// left past the data and the file is at least from bytes; it reports whether it did. It only
// ever extends (fallocate, never a truncate that could cut what a commit wrote meanwhile):
// the room past the data holds nothing, and a commit that extends the file meanwhile to a
// smaller size takes back only room that held nothing.
func growAhead(db *bbolt.DB, path string, from, margin, step int64) (bool, error) {
	var used int64
	if err := db.View(func(tx *bbolt.Tx) error { used = tx.Size(); return nil }); err != nil {
		return false, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return false, err
	}
	if fi.Size() < from || fi.Size()-used >= margin {
		return false, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return false, err
	}
	defer f.Close()
	if err := extend(f, used+step); err != nil {
		return false, err
	}
	// the new size durable before the writer puts pages there, as bbolt's own growth does
	return true, f.Sync()
}
