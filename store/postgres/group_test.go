package postgres

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"payouts/rules"
)

// put is a write that stores key in meta.
func put(key string) func(context.Context, pgx.Tx) error {
	return func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO meta (key, value) VALUES ($1, 'v')`, key)
		return err
	}
}

func stored(t *testing.T, db *DB, keys map[string]bool) {
	t.Helper()
	for k, want := range keys {
		if got := count(t, db, `SELECT count(*) FROM meta WHERE key = $1`, k) == 1; got != want {
			t.Errorf("%s stored %v, want %v", k, got, want)
		}
	}
}

func answers(ops []*groupOp) []error {
	errs := make([]error, len(ops))
	for i, op := range ops {
		errs[i] = <-op.done
	}
	return errs
}

func newOps(ops ...*groupOp) []*groupOp {
	for _, op := range ops {
		op.done = make(chan error, 1)
	}
	return ops
}

// When one write of a group fails (an error, a failed statement, a panic), it alone gets
// the error and is rolled back to its savepoint; the others commit, each once.
func TestGroupCommitIsolatesAFailedWrite(t *testing.T) {
	for _, failure := range []string{"error", "statement", "panic"} {
		t.Run(failure, func(t *testing.T) {
			db := newDB(t)
			boom := errors.New("boom")
			runs := 0
			ops := newOps(
				&groupOp{fn: func(ctx context.Context, tx pgx.Tx) error { runs++; return put("first")(ctx, tx) }, rerun: true},
				&groupOp{fn: put("once")},
				&groupOp{fn: func(ctx context.Context, tx pgx.Tx) error {
					if err := put("failed")(ctx, tx); err != nil {
						return err
					}
					switch failure {
					case "panic":
						panic("boom")
					case "statement":
						return put("failed")(ctx, tx) // a duplicate key: the transaction is aborted
					}
					return boom
				}, rerun: true},
				&groupOp{fn: put("after")},
			)
			db.writer.commit(ops)
			errs := answers(ops)
			if errs[0] != nil || errs[1] != nil || errs[3] != nil || runs != 1 {
				t.Errorf("the other writes: %v after %d runs, want nil after 1", errs, runs)
			}
			if errs[2] == nil || failure == "error" && !errors.Is(errs[2], boom) {
				t.Errorf("the failed write: err %v", errs[2])
			}
			stored(t, db, map[string]bool{"first": true, "once": true, "failed": false, "after": true})
		})
	}
}

// A deadlock (or a serialization failure) rolls the whole group back and runs it again: the
// writes that may run again do, one that already ran and may not is told errGroupAborted
// with nothing of it stored, and those that had not run yet run.
func TestGroupCommitRetriesADeadlock(t *testing.T) {
	db := newDB(t)
	runs, deadlocks := 0, 0
	ops := newOps(
		&groupOp{fn: func(ctx context.Context, tx pgx.Tx) error { runs++; return put("rerun")(ctx, tx) }, rerun: true},
		&groupOp{fn: put("once")},
		&groupOp{fn: func(ctx context.Context, tx pgx.Tx) error {
			if deadlocks++; deadlocks == 1 {
				_, err := tx.Exec(ctx, `DO $$ BEGIN RAISE EXCEPTION 'a deadlock' USING ERRCODE = '40P01'; END $$`)
				return err
			}
			return put("deadlocked")(ctx, tx)
		}, rerun: true},
		&groupOp{fn: put("after")},
	)
	db.writer.commit(ops)
	errs := answers(ops)
	if errs[0] != nil || runs != 2 {
		t.Errorf("the write that may run again: %v after %d runs, want nil after 2", errs[0], runs)
	}
	if !errors.Is(errs[1], errGroupAborted) {
		t.Errorf("the write that ran once: %v, want errGroupAborted", errs[1])
	}
	if errs[2] != nil || errs[3] != nil {
		t.Errorf("the deadlocked write and the one after it: %v %v", errs[2], errs[3])
	}
	stored(t, db, map[string]bool{"rerun": true, "once": false, "deadlocked": true, "after": true})
}

// A group that keeps deadlocking gives up after maxGroupAttempts, with the error.
func TestGroupCommitGivesUp(t *testing.T) {
	db := newDB(t)
	runs := 0
	ops := newOps(&groupOp{fn: func(ctx context.Context, tx pgx.Tx) error {
		runs++
		_, err := tx.Exec(ctx, `DO $$ BEGIN RAISE EXCEPTION 'no luck' USING ERRCODE = '40001'; END $$`)
		return err
	}, rerun: true})
	db.writer.commit(ops)
	if err := <-ops[0].done; !retryable(err) || runs != maxGroupAttempts {
		t.Fatalf("err %v after %d runs", err, runs)
	}
}

// Writes after Close fail rather than hang.
func TestGroupCommitAfterClose(t *testing.T) {
	db := newDB(t)
	db.Close(context.Background())
	err := db.UpdatePayouts(context.Background(), []int64{1}, func(*rules.Payout, rules.Ledger) (time.Time, error) { return time.Time{}, nil })
	if !errors.Is(err, errClosed) {
		t.Fatalf("err %v, want errClosed", err)
	}
	if err := db.writer.write(put("late"), true); !errors.Is(err, errClosed) {
		t.Fatalf("err %v, want errClosed", err)
	}
}

// The writes of a group read the balances their transaction holds as the writes before them
// left them, without those that failed: a failed write's reservation is rolled back with it,
// even when it was the first to read the balance.
func TestGroupBalancesAfterAFailedWrite(t *testing.T) {
	db := newDB(t)
	if _, err := db.Fund(context.Background(), "m1", "PER", "PEN", 1000, time.Now()); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	failing := func(p *rules.Payout, l rules.Ledger) (time.Time, error) {
		if _, err := reserve(p, l); err != nil {
			return time.Time{}, err
		}
		return time.Time{}, boom
	}
	createOp := func(order string, admit rules.Step) *groupOp {
		return &groupOp{fn: func(ctx context.Context, tx pgx.Tx) error {
			_, _, err := createPayout(ctx, tx, newPayout(order, 100), time.Time{}, nil, admit, queueLease{})
			return err
		}, rerun: true}
	}
	ops := newOps(createOp("A", failing), createOp("B", reserve), createOp("C", failing), createOp("D", reserve))
	db.writer.commit(ops)
	errs := answers(ops)
	if !errors.Is(errs[0], boom) || errs[1] != nil || !errors.Is(errs[2], boom) || errs[3] != nil {
		t.Fatalf("answers %v", errs)
	}
	if bs, _ := db.Balances(context.Background(), "m1"); bs[0].Available != 800 {
		t.Errorf("balance %+v, want 200 of 1000 reserved by B and D", bs[0])
	}
	if n := count(t, db, `SELECT count(*) FROM payouts`); n != 2 {
		t.Errorf("%d payouts stored, want 2", n)
	}
	if err := db.CheckAllLedgers(context.Background()); err != nil {
		t.Error(err)
	}

	// A write that fails after writing its balance.
	fund := func(amount int64, fail error) *groupOp {
		return &groupOp{fn: func(ctx context.Context, tx pgx.Tx) error {
			l := newLedger(ctx, tx)
			if _, err := l.lt.Fund("m1", "PER", "PEN", amount, time.Now()); err != nil {
				return err
			}
			if err := l.finish(); err != nil {
				return err
			}
			return fail
		}}
	}
	ops = newOps(fund(100, nil), fund(10, boom), fund(1, nil))
	db.writer.commit(ops)
	if errs := answers(ops); errs[0] != nil || !errors.Is(errs[1], boom) || errs[2] != nil {
		t.Fatalf("answers %v", errs)
	}
	if bs, _ := db.Balances(context.Background(), "m1"); bs[0].Balance != 1101 {
		t.Errorf("balance %+v, want 1101", bs[0])
	}
}
