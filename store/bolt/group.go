package bolt

import (
	"errors"
	"fmt"
	"sync"

	bbolt "go.etcd.io/bbolt"
)

// Group commit: one goroutine owns the payout writes (creates and lifecycle steps). It takes
// every write waiting when it becomes free and commits them in one transaction, one fsync.
// Under load a group is whatever arrived during the previous commit, so groups grow with the
// load and no write waits on a timer; idle, a write commits at once. (bbolt's db.Batch cuts
// a batch when its timer fires and then queues it behind the lock, so under load it commits
// many small batches, each with its own fsyncs.)

// maxGroup bounds one group: its size is the latency added to the last write in it.
const maxGroup = 512

// errGroupAborted is returned to a write that cannot run again after another write of its
// group failed: nothing of it was committed, and the caller may simply retry.
var errGroupAborted = errors.New("store: the write was rolled back with a failed write of its group; nothing was stored")

// errClosed is returned to writes after Close.
var errClosed = errors.New("store: the database is closed")

// writeOp is one write of a group. fn runs inside the group's transaction; when rerun is
// set, fn resets its own state on entry, so that it may run again in a later group after
// another write's failure rolled its first run back.
type writeOp struct {
	fn    func(tx *bbolt.Tx) error
	rerun bool
	done  chan error
}

type committer struct {
	db       *bbolt.DB
	ops      chan *writeOp
	quit     chan struct{}
	gone     chan struct{}
	quitOnce sync.Once
}

func newCommitter(db *bbolt.DB) *committer {
	c := &committer{db: db, ops: make(chan *writeOp), quit: make(chan struct{}), gone: make(chan struct{})}
	go c.loop()
	return c
}

// write runs fn in the next group and returns once the group is durable (or failed).
func (c *committer) write(fn func(tx *bbolt.Tx) error, rerun bool) error {
	op := &writeOp{fn: fn, rerun: rerun, done: make(chan error, 1)}
	select {
	case c.ops <- op:
	case <-c.quit:
		return errClosed
	}
	return <-op.done
}

func (c *committer) loop() {
	defer close(c.gone)
	for {
		var op *writeOp
		select {
		case op = <-c.ops:
		case <-c.quit:
			return
		}
		group := []*writeOp{op}
	gather: // every write already waiting (ops is unbuffered: a waiting writer is a ready sender)
		for len(group) < maxGroup {
			select {
			case op := <-c.ops:
				group = append(group, op)
			default:
				break gather
			}
		}
		c.commit(group)
	}
}

// commit runs a group in one transaction. When a write fails, the transaction is rolled back:
// that write gets its error, and the others run again in a new transaction (those that cannot
// run twice and had already run are told errGroupAborted).
func (c *committer) commit(group []*writeOp) {
	for len(group) > 0 {
		failed := -1
		err := c.db.Update(func(tx *bbolt.Tx) error {
			for i, op := range group {
				if err := safely(op.fn, tx); err != nil {
					failed = i
					return err
				}
			}
			return nil
		})
		if err == nil || failed < 0 { // committed, or the commit itself failed: one answer for all
			for _, op := range group {
				op.done <- err
			}
			return
		}
		group[failed].done <- err
		again := group[:0:0]
		for i, op := range group {
			switch {
			case i == failed:
			case i > failed || op.rerun: // never ran, or may run again
				again = append(again, op)
			default:
				op.done <- errGroupAborted
			}
		}
		group = again
	}
}

func safely(fn func(*bbolt.Tx) error, tx *bbolt.Tx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("store: panic in a write: %v", p)
		}
	}()
	return fn(tx)
}

// close stops the writer after the group it is committing, if any; it may be called again.
func (c *committer) close() {
	c.quitOnce.Do(func() { close(c.quit) })
	<-c.gone
}
