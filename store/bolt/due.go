package bolt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/google/btree"
	"go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"payouts/rules"
)

// The lifecycle's queue lives in memory, ordered by due time. The payouts' states are the
// truth (each records its queue time: encodeState) and the queue an index of them: a clean
// close saves it in the file for the next Open to read, and after a crash Open builds it
// again from the states. Kept in a bucket, it was one more tree that every create and
// every step wrote (a delete and a put, each copying the page and its path into bbolt's
// nodes) and every round read back; in memory a change is made once its transaction has
// committed (bbolt's OnCommit), so the queue never holds what a failed group rolled back.
// bbolt is one process, so no other writer has to see it.

// dueItem is one queued payout: its step is due at (unix nanos), queued in status.
type dueItem struct {
	at     int64
	id     int64
	status rules.Status
}

func dueLess(a, b dueItem) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.id < b.id
}

// dueQueue is the queue; mu guards the tree, never a read of the file.
type dueQueue struct {
	mu   sync.Mutex
	tree *btree.BTreeG[dueItem]
}

func newDueQueue() *dueQueue {
	return &dueQueue{tree: btree.NewG(32, dueLess)}
}

// dueMove is a payout's queue entry moved from the time it had (zero: none) to next (zero:
// none), by a write that has not committed yet.
type dueMove struct {
	id        int64
	had, next int64
	status    rules.Status
	drop      bool // the payout is gone: every entry of its id goes
}

// onCommit makes moves once tx commits; a transaction rolled back never makes them.
func (q *dueQueue) onCommit(tx *bbolt.Tx, moves ...dueMove) {
	if len(moves) == 0 {
		return
	}
	tx.OnCommit(func() { q.apply(moves) })
}

func (q *dueQueue) apply(moves []dueMove) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, m := range moves {
		if m.drop {
			q.dropLocked(m.id)
			continue
		}
		if m.had != 0 {
			q.tree.Delete(dueItem{at: m.had, id: m.id})
		}
		if m.next != 0 {
			q.tree.ReplaceOrInsert(dueItem{at: m.next, id: m.id, status: m.status})
		}
	}
}

// dropLocked removes every entry of id (a whole walk: payouts are never deleted, so this
// is not expected to happen).
func (q *dueQueue) dropLocked(id int64) {
	var gone []dueItem
	q.tree.Ascend(func(it dueItem) bool {
		if it.id == id {
			gone = append(gone, it)
		}
		return true
	})
	for _, it := range gone {
		q.tree.Delete(it)
	}
}

// claim lists up to limit payouts due at or before now that claims does not hold, oldest
// first, and claims them, all under mu: two callers never hand out the same entry, and an
// entry a step has moved is never handed out at its old time, since the move is made
// (at its commit) before the step's claim is released.
func (q *dueQueue) claim(claims *claimTable[int64], now time.Time, limit int) []rules.DueEntry {
	end := now.UnixNano()
	q.mu.Lock()
	defer q.mu.Unlock()
	var due []rules.DueEntry
	var ids []int64
	q.tree.Ascend(func(it dueItem) bool {
		if it.at > end || len(due) >= limit {
			return false
		}
		if !claims.held(it.id, now) {
			due = append(due, rules.DueEntry{ID: it.id, Status: it.status})
			ids = append(ids, it.id)
		}
		return true
	})
	taken := claims.take(ids, now)
	out := due[:0]
	for i, d := range due {
		if taken[i] {
			out = append(out, d)
		}
	}
	return out
}

// next is the earliest queued time, zero when the queue is empty.
func (q *dueQueue) next() time.Time {
	q.mu.Lock()
	defer q.mu.Unlock()
	if it, ok := q.tree.Min(); ok {
		return fromNanos(it.at)
	}
	return time.Time{}
}

// len is the number of queued payouts.
func (q *dueQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.tree.Len()
}

// metaDueSaved marks a queue saved in bDue by a clean close, true to the states it was
// saved with; Open takes it and removes both, so that after a crash (nothing saved) the
// queue is found again in the states.
var metaDueSaved = []byte("due-saved")

// loadDue reads the queue a clean close saved, else builds it from the payouts' states (a
// walk of them all: after a crash, or on a store of a version before due.go), then removes
// what it read from the file: from here the queue lives in memory. It reports whether it
// walked the states.
func loadDue(db *bbolt.DB) (q *dueQueue, walked bool, err error) {
	q = newDueQueue()
	err = db.View(func(tx *bbolt.Tx) error {
		if saved := tx.Bucket(bDue); saved != nil && tx.Bucket(bMeta).Get(metaDueSaved) != nil {
			return saved.ForEach(func(k, v []byte) error {
				if len(k) != 16 {
					return fmt.Errorf("a saved queue entry of %d bytes", len(k))
				}
				q.tree.ReplaceOrInsert(dueItem{at: int64(binary.BigEndian.Uint64(k)), id: int64(binary.BigEndian.Uint64(k[8:])),
					status: statusOf(v)})
				return nil
			})
		}
		walked = true
		c := tx.Bucket(bPayoutState).Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			at, status, err := stateDue(v)
			if err != nil {
				return fmt.Errorf("payout %d: %w", binary.BigEndian.Uint64(k), err)
			}
			if at != 0 {
				q.tree.ReplaceOrInsert(dueItem{at: at, id: int64(binary.BigEndian.Uint64(k)), status: status})
			}
		}
		return nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("the lifecycle queue: %w", err)
	}
	if walked {
		// The walk mapped in every state's page: give them back, as the trimmer would
		// (trim.go), rather than start with the whole state tree resident.
		trimMapped(db)
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		if err := tx.DeleteBucket(bDue); err != nil && !errors.Is(err, berrors.ErrBucketNotFound) {
			return err
		}
		return tx.Bucket(bMeta).Delete(metaDueSaved)
	})
	return q, walked, err
}

// save writes the queue into the file at a clean close, for the next Open to read rather
// than walk every payout's state. No write may follow it.
func (q *dueQueue) save(db *bbolt.DB) error {
	q.mu.Lock()
	items := make([]dueItem, 0, q.tree.Len())
	q.tree.Ascend(func(it dueItem) bool { items = append(items, it); return true })
	q.mu.Unlock()
	return db.Update(func(tx *bbolt.Tx) error {
		if err := tx.DeleteBucket(bDue); err != nil && !errors.Is(err, berrors.ErrBucketNotFound) {
			return err
		}
		b, err := tx.CreateBucket(bDue)
		if err != nil {
			return err
		}
		b.FillPercent = 1.0 // written in order, never again
		var k [16]byte
		for _, it := range items {
			binary.BigEndian.PutUint64(k[:], uint64(it.at))
			binary.BigEndian.PutUint64(k[8:], uint64(it.id))
			if err := b.Put(k[:], []byte(it.status)); err != nil {
				return err
			}
		}
		return tx.Bucket(bMeta).Put(metaDueSaved, []byte{1})
	})
}

// statusOf is a saved entry's status, the constant when it is one.
func statusOf(v []byte) rules.Status {
	if s, ok := names[string(v)]; ok {
		return rules.Status(s)
	}
	return rules.Status(v)
}

// stateDue reads a state record's queue time (zero: not queued) and status, as
// decodeState would, without the rest.
func stateDue(raw []byte) (int64, rules.Status, error) {
	r := &stateReader{b: raw}
	if r.byte() != stateVersion {
		return 0, "", errBadState
	}
	flags := r.byte()
	status := rules.Status(r.name())
	if flags&stateStageOwn != 0 {
		r.name()
	}
	r.fixed64()
	at := r.varint()
	return at, status, r.err
}
