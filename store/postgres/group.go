package postgres

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"payouts/rules"
)

// Group commit, as store/bolt/group.go: one goroutine per DB owns the payout writes (creates
// and lifecycle steps). It takes every write waiting when it becomes free and runs them in
// one PostgreSQL transaction, one commit (one WAL flush) for all. Every create of a merchant
// changes that merchant's balance row, locked until its transaction commits, so one
// transaction per create would serialize a merchant's creates on the commit's flush; one per
// group amortizes it.
//
// The creates of a group are written set-based (creates.go): a constant number of round
// trips, the balance row locked for the last statement and the commit only. The other
// writes (lifecycle rounds), and the creates the set-based path hands back, run write by
// write (run): the balances locked up front, each write inside a SAVEPOINT of its own, so
// that a write that fails is rolled back alone and gets its error, the others commit. A
// deadlock or a serialization failure aborts the whole transaction: the group runs again (a
// write that cannot run twice and had already run is told errGroupAborted instead).

// maxGroup bounds one group. Each write of a group is a subtransaction with an xid of its
// own, and PostgreSQL keeps only 64 of them per transaction in shared memory: beyond that
// every other session's snapshots overflow to pg_subtrans, which slows the whole server.
const maxGroup = 64

// maxGroupAttempts bounds the runs of a group that deadlocks or fails to serialize.
const maxGroupAttempts = 5

// groupTimeout bounds one run of a group (a lost connection, a lock never released).
const groupTimeout = time.Minute

// callTimeout bounds the database work of one call that takes no context, so that a lost
// connection or a lock held forever fails the call rather than hanging it.
const callTimeout = 30 * time.Second

func callContext(parent context.Context) (context.Context, context.CancelFunc) {
	// The caller's values (its trace) without its cancellation: a request that goes away
	// does not cut a statement short; the engine's own timeout bounds it.
	return context.WithTimeout(context.WithoutCancel(parent), callTimeout)
}

// errGroupAborted is returned to a write that cannot run again after its group was rolled
// back whole (a deadlock, a serialization failure): nothing of it was stored, and the caller
// may simply retry.
var errGroupAborted = errors.New("store: the write was rolled back with its group; nothing was stored")

// errClosed is returned to writes after Close.
var errClosed = errors.New("store: the database is closed")

// groupOp is one write of a group. fn runs inside the group's transaction; when rerun is set,
// fn resets its own state on entry, so that it may run again after its group was rolled back.
type groupOp struct {
	fn     func(ctx context.Context, tx pgx.Tx) error
	create *createWrite // a create, tried set-based first (fn is its write-by-write path)
	keys   []balanceKey // the balances fn will touch, locked up front in key order
	rerun  bool
	ran    bool
	done   chan error
	err    error            // the answer sent on done
	trace  rules.WriteTrace // the spans of the write and of its group's commit (trace.go); zero when off
}

// answer gives op its answer.
func (op *groupOp) answer(err error) {
	op.err = err
	op.done <- err
}

// groupWriter is the goroutine that commits the writes in groups.
type groupWriter struct {
	pool     *pgxpool.Pool
	ops      chan *groupOp
	quit     chan struct{}
	gone     chan struct{}
	quitOnce sync.Once
	// alone runs every write in a transaction of its own, in its caller's goroutine (the
	// benchmark's baseline).
	alone bool
	// afterReadAhead, in tests, runs between a create group's read of the balances (or its
	// taking them as known) and its write: another instance's change in between.
	afterReadAhead func()
	// known and stock are the writer goroutine's own (creates.go): the balances as it last
	// read or wrote them, and payout ids drawn ahead. Unused when alone.
	known map[balanceKey]knownBalance
	stock idStock
	// lease is what the creates give the steps they queue (payouts.go).
	lease queueLease
	// trace, when set, spans each commit and each write waiting for one (trace.go).
	trace rules.Tracer
}

func newGroupWriter(pool *pgxpool.Pool, lease queueLease, trace rules.Tracer) *groupWriter {
	w := &groupWriter{pool: pool, ops: make(chan *groupOp), quit: make(chan struct{}), gone: make(chan struct{}),
		known: map[balanceKey]knownBalance{}, lease: lease, trace: trace}
	go w.loop()
	return w
}

// write runs fn in the next group and returns once the group committed (or fn failed).
func (w *groupWriter) write(fn func(ctx context.Context, tx pgx.Tx) error, rerun bool, keys ...balanceKey) error {
	return w.send(context.Background(), &groupOp{fn: fn, keys: keys, rerun: rerun, done: make(chan error, 1)})
}

// send runs op in the next group and returns once it has its answer; ctx names the
// caller's span, if any, when tracing.
func (w *groupWriter) send(ctx context.Context, op *groupOp) (err error) {
	if w.trace != nil {
		end := w.traceWrite(ctx, op)
		defer func() { end(err) }()
	}
	if w.alone {
		select {
		case <-w.quit:
			return errClosed
		default:
		}
		w.traced([]*groupOp{op})
		return <-op.done
	}
	select {
	case w.ops <- op:
	case <-w.quit:
		return errClosed
	}
	return unreachable(<-op.done)
}

// unreachable marks an error that says the database could not be reached (a connection
// closed under the write, a time-out) with rules.ErrUnavailable, so that the API answers 503
// rather than 500; the network's own errors are recognised by rules.Unavailable itself.
func unreachable(err error) error {
	if err == nil || rules.Unavailable(err) {
		return err
	}
	if errors.Is(err, pgconn.ErrConnClosed) || pgconn.SafeToRetry(err) || pgconn.Timeout(err) {
		return fmt.Errorf("%w: %w", rules.ErrUnavailable, err)
	}
	return err
}

func (w *groupWriter) loop() {
	defer close(w.gone)
	for {
		var op *groupOp
		select {
		case op = <-w.ops:
		case <-w.quit:
			return
		}
		group := []*groupOp{op}
	gather: // every write already waiting (ops is unbuffered: a waiting writer is a ready sender)
		for len(group) < maxGroup {
			select {
			case op := <-w.ops:
				group = append(group, op)
			default:
				break gather
			}
		}
		w.traced(group)
	}
}

// traced commits a group, in a span when tracing.
func (w *groupWriter) traced(group []*groupOp) {
	if w.trace == nil {
		w.commit(group)
		return
	}
	end := w.traceCommit(group)
	w.commit(group)
	end()
}

// commit runs a group until every write of it has its answer: its creates set-based, then
// the rest write by write.
func (w *groupWriter) commit(all []*groupOp) {
	var creates, group []*groupOp
	for _, op := range all {
		if op.create != nil {
			creates = append(creates, op)
		} else {
			group = append(group, op)
		}
	}
	if len(creates) > 0 {
		fallback, again := w.createSetBased(creates)
		group = append(group, fallback...)
		defer answerAgain(again)
	}
	if !w.alone {
		w.forget(group)
	}
	for attempt := 1; len(group) > 0; attempt++ {
		pending, err := w.run(group)
		if err == nil {
			return
		}
		if !retryable(err) || attempt == maxGroupAttempts {
			for _, op := range pending {
				op.answer(err)
			}
			return
		}
		group = group[:0:0]
		for _, op := range pending {
			if op.ran && !op.rerun {
				op.answer(fmt.Errorf("%w (%v)", errGroupAborted, err))
				continue
			}
			group = append(group, op)
		}
		time.Sleep(time.Duration(1+rand.IntN(10*attempt)) * time.Millisecond) // let the other side finish
	}
}

// run runs a group once, in one transaction, each write in a savepoint of its own (a group
// of one needs none). A write that fails alone is answered at once and rolled back to its
// savepoint. It returns nil once every write is answered; otherwise the transaction was
// rolled back, and it returns the writes still waiting for their answer with the error.
func (w *groupWriter) run(group []*groupOp) ([]*groupOp, error) {
	ctx, cancel := context.WithTimeout(context.Background(), groupTimeout)
	defer cancel()
	tx, err := w.pool.Begin(ctx)
	if err != nil {
		return group, fmt.Errorf("store: begin: %w", err)
	}
	defer tx.Rollback(ctx) // after a commit, a no-op
	held := &heldBalances{}
	ctx = withHeldBalances(ctx, held)
	if err := lockInOrder(ctx, tx, group, held); err != nil {
		return group, err
	}
	savepoints := len(group) > 1
	ok := make([]*groupOp, 0, len(group))
	for i, op := range group {
		if savepoints {
			if _, err := tx.Exec(ctx, "SAVEPOINT op"); err != nil {
				return append(ok, group[i:]...), fmt.Errorf("store: savepoint: %w", err)
			}
		}
		op.ran = true
		err := safely(ctx, op.fn, tx)
		if err == nil {
			held.keep()
			ok = append(ok, op)
			continue
		}
		held.drop()
		if retryable(err) {
			return append(ok, group[i:]...), err
		}
		if savepoints {
			if _, rerr := tx.Exec(ctx, "ROLLBACK TO SAVEPOINT op"); rerr != nil {
				op.answer(err)
				return append(ok, group[i+1:]...), fmt.Errorf("store: rollback to savepoint: %w", rerr)
			}
		}
		op.answer(err)
	}
	if len(ok) == 0 {
		return nil, nil
	}
	if err := tx.Commit(ctx); err != nil {
		return ok, fmt.Errorf("store: commit: %w", err)
	}
	for _, op := range ok {
		op.answer(nil)
	}
	return nil, nil
}

// retryable reports a deadlock or a serialization failure: the transaction may simply run
// again.
func retryable(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40001" || pgErr.Code == "40P01")
}

func safely(ctx context.Context, fn func(context.Context, pgx.Tx) error, tx pgx.Tx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("store: panic in a write: %v", p)
		}
	}()
	return fn(ctx, tx)
}

// close stops the writer after the group it is committing, if any; it may be called again.
func (w *groupWriter) close() {
	w.quitOnce.Do(func() { close(w.quit) })
	<-w.gone
}

// lockInOrder locks, before any write of the group runs, every balance the group's writes
// said they touch, in one order (merchant, country, currency): the writes of one group come
// in any order, and two instances' groups (or lifecycle rounds) taking the same balances in
// different orders would deadlock, each waiting for PostgreSQL's deadlock_timeout (1 s) to
// end it. What the locks read is the group's held balances.
func lockInOrder(ctx context.Context, tx pgx.Tx, group []*groupOp, held *heldBalances) error {
	seen := map[balanceKey]bool{}
	var keys []balanceKey
	for _, op := range group {
		for _, k := range op.keys {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	slices.SortFunc(keys, compareBalanceKeys)
	for _, k := range keys {
		b, stored, err := lockBalance(ctx, tx, k)
		if err != nil {
			return fmt.Errorf("store: lock balance %s %s/%s: %w", k.MerchantID, k.Country, k.Currency, err)
		}
		held.put(k, heldBalance{b: b, stored: stored})
	}
	held.keep()
	return nil
}
