package bolt

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	bbolt "go.etcd.io/bbolt"

	"payouts/rules"
)

// Group commit: one goroutine owns the payout writes (creates and lifecycle steps). It takes
// every write waiting when it becomes free and commits them in one transaction, one fsync.
// Under load a group is whatever arrived during the previous commit and a short linger
// after it, so groups grow with the load; idle, a write commits at once. (bbolt's db.Batch cuts
// a batch when its timer fires and then queues it behind the lock, so under load it commits
// many small batches, each with its own fsyncs.)
//
// Writes wait in a list, not on a channel: a writer appends its write and sleeps until the
// write is answered, once. Handed over an unbuffered channel, each write woke its writer
// twice (when the group took it, then when it was answered), and under load the goroutines
// woken for nothing queued for the processors ahead of the answers.

// maxGroup bounds one group: its size is the latency added to the last write in it.
const maxGroup = 512

// Under a stream of writes the writer lingers before taking a group: a commit costs two
// fdatasyncs whatever it holds, and on a virtual disk their kernel time was a fifth of the
// server's CPU at 3,000 creates/s, in groups of two or three. When the last group had
// lingerFrom writes or more (writes are arriving while it commits) but fewer than
// lingerEnough, and some but fewer than lingerEnough are waiting, it waits lingerFor more.
// A write that arrives alone, the usual at a few hundred a second, is committed at once;
// after a group of lingerEnough or more the writer is the bottleneck, and lingering would
// only leave it idle. The sleep lasts longer than lingerFor: a processor left idle waits in
// the network poller, whose timeout is whole milliseconds, so the linger is 1–2 ms in
// practice; a precise half millisecond (nanosleep) made groups smaller for up to a fifth more
// CPU, and a tail no better (docs/guides/performance.md, "What the tail at 3,000/s is made of").
const (
	lingerFrom   = 2
	lingerEnough = 8
	lingerFor    = 500 * time.Microsecond
)

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
	trace rules.WriteTrace // the spans of the write and of its group's commit (trace.go); zero when off
}

type committer struct {
	db *bbolt.DB
	// mu guards pending and closed, for nanoseconds: never across a commit.
	mu      sync.Mutex
	pending []*writeOp
	closed  bool
	// wake tells the loop that pending has writes (one signal may stand for many).
	wake     chan struct{}
	quit     chan struct{}
	gone     chan struct{}
	quitOnce sync.Once
	// fault, when set (tests), runs in each group's transaction before it commits: its
	// error fails the commit, its wait stalls it.
	fault func() error
	// trace, when set, spans each commit and each write waiting for one (trace.go).
	trace rules.Tracer
	// now is the watchdog's clock (Options.Now).
	now func() time.Time
	// linger waits for more writes to join the next group (lingerFor; tests hold it).
	linger func()

	// The watchdog's view (WriterStalled): writes handed in and not yet answered, when the group
	// being committed started (0 when idle), and why the last commit failed for lack of space.
	waiting   atomic.Int64
	busySince atomic.Int64
	noSpace   atomic.Pointer[string]
}

func newCommitter(db *bbolt.DB, fault func() error, trace rules.Tracer, now func() time.Time) *committer {
	if now == nil {
		now = time.Now
	}
	c := &committer{db: db, fault: fault, trace: trace, now: now, wake: make(chan struct{}, 1), quit: make(chan struct{}), gone: make(chan struct{}),
		linger: func() { time.Sleep(lingerFor) }}
	go c.loop()
	return c
}

// StallAfter is how long a group may take to commit before the writer counts as stalled.
const StallAfter = 5 * time.Second

// stalled says why the writer cannot be relied on, or "": a group has been committing for
// longer than StallAfter (a disk that stopped answering), or the last commit failed for
// lack of space.
func (c *committer) stalled(now time.Time) string {
	if since := c.busySince.Load(); since != 0 {
		if d := now.Sub(time.Unix(0, since)); d > StallAfter {
			return fmt.Sprintf("the database writer has not committed for %s, with %d write(s) waiting", d.Round(time.Second), c.waiting.Load())
		}
	}
	if why := c.noSpace.Load(); why != nil {
		return "the database's last commit failed for lack of space: " + *why
	}
	return ""
}

// lackOfSpace reports whether err is a write that found no room: a full disk, a quota, a
// file size limit.
func lackOfSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) || errors.Is(err, syscall.EFBIG)
}

// write runs fn in the next group and returns once the group is durable (or failed); ctx
// names the caller's span, if any, when tracing.
func (c *committer) write(ctx context.Context, fn func(tx *bbolt.Tx) error, rerun bool) (err error) {
	op := &writeOp{fn: fn, rerun: rerun, done: make(chan error, 1)}
	if c.trace != nil {
		end := c.traceWrite(ctx, op)
		defer func() { end(err) }()
	}
	c.waiting.Add(1)
	defer c.waiting.Add(-1)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return errClosed
	}
	c.pending = append(c.pending, op)
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default: // a signal is already standing
	}
	return <-op.done
}

func (c *committer) loop() {
	defer close(c.gone)
	var spare []*writeOp // the list the writers fill next: the one taken before, reused
	last := 0            // how many writes the last group took
	for {
		select {
		case <-c.wake:
		case <-c.quit:
			c.mu.Lock()
			left := c.pending
			c.pending, c.closed = nil, true
			c.mu.Unlock()
			for _, op := range left {
				op.done <- errClosed
			}
			return
		}
		if n := c.waitingNow(); last >= lingerFrom && last < lingerEnough && n > 0 && n < lingerEnough {
			c.linger()
		}
		c.mu.Lock()
		taken := c.pending
		c.pending = spare
		c.mu.Unlock()
		last = len(taken)
		for waiting := taken; len(waiting) > 0; { // every write that was waiting, maxGroup at a time
			group := waiting[:min(len(waiting), maxGroup)]
			waiting = waiting[len(group):]
			c.busySince.Store(c.now().UnixNano())
			if c.trace != nil {
				end := c.traceCommit(group)
				c.commit(group)
				end()
			} else {
				c.commit(group)
			}
			c.busySince.Store(0)
		}
		clear(taken) // answered: let them go
		spare = taken[:0]
	}
}

// waitingNow is how many writes wait for the next group.
func (c *committer) waitingNow() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pending)
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
			if c.fault != nil {
				return c.fault()
			}
			return nil
		})
		if err == nil {
			c.noSpace.Store(nil)
		} else if failed < 0 && lackOfSpace(err) {
			why := err.Error()
			c.noSpace.Store(&why)
		}
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
