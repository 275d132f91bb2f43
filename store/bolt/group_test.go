package bolt

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"payouts/rules"
)

// Concurrent creates share groups and each gets its own id, stored with its order.
func TestGroupCommitConcurrentCreates(t *testing.T) {
	db := openTemp(t)
	const n = 300
	ids := make([]int64, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := samplePayout()
			p.OrderID = "ORD-" + strconv.Itoa(i)
			p.Request.OrderID = p.OrderID
			stored, created, err := db.CreatePayout(context.Background(), p, time.Time{}, nil, nil)
			if err != nil || !created {
				t.Errorf("create %d: created %v, err %v", i, created, err)
				return
			}
			ids[i] = stored.ID
		}()
	}
	wg.Wait()
	seen := map[int64]bool{}
	for i, id := range ids {
		if id < 1 || id > n || seen[id] {
			t.Fatalf("create %d got id %d (ids must be 1..%d, each once)", i, id, n)
		}
		seen[id] = true
		if _, err := db.Payout(context.Background(), "1", id); err != nil {
			t.Fatalf("payout %d: %v", id, err)
		}
	}
}

// When one write of a group fails, it alone gets the error: the writes that may run again
// do, in a new transaction; one that already ran and may not run twice is told so, with
// nothing of it stored; the writes after the failed one run. A panic is a failed write.
func TestGroupCommitIsolatesAFailedWrite(t *testing.T) {
	for _, failure := range []string{"error", "panic"} {
		t.Run(failure, func(t *testing.T) {
			db := openTemp(t)
			put := func(k string) func(*bbolt.Tx) error {
				return func(tx *bbolt.Tx) error { return tx.Bucket(bMisc).Put([]byte(k), []byte("v")) }
			}
			runs := 0
			boom := errors.New("boom")
			ops := []*writeOp{
				{fn: func(tx *bbolt.Tx) error { runs++; return put("rerun")(tx) }, rerun: true},
				{fn: put("once")},
				{fn: func(tx *bbolt.Tx) error {
					put("failed")(tx)
					if failure == "panic" {
						panic("boom")
					}
					return boom
				}, rerun: true},
				{fn: put("after")},
			}
			for _, op := range ops {
				op.done = make(chan error, 1)
			}
			db.writer.commit(ops)
			errs := make([]error, len(ops))
			for i, op := range ops {
				errs[i] = <-op.done
			}
			if errs[0] != nil || runs != 2 {
				t.Errorf("the write that may run again: err %v after %d runs, want nil after 2", errs[0], runs)
			}
			if !errors.Is(errs[1], errGroupAborted) {
				t.Errorf("the write that ran once: err %v, want errGroupAborted", errs[1])
			}
			if errs[2] == nil || failure == "error" && !errors.Is(errs[2], boom) {
				t.Errorf("the failed write: err %v", errs[2])
			}
			if errs[3] != nil {
				t.Errorf("the write after the failed one: err %v", errs[3])
			}
			db.bdb.View(func(tx *bbolt.Tx) error {
				for k, want := range map[string]bool{"rerun": true, "once": false, "failed": false, "after": true} {
					if got := tx.Bucket(bMisc).Get([]byte(k)) != nil; got != want {
						t.Errorf("%s stored %v, want %v", k, got, want)
					}
				}
				return nil
			})
		})
	}
}

// Writes after Close fail rather than hang.
func TestGroupCommitAfterClose(t *testing.T) {
	db := openTemp(t)
	db.Close(context.Background())
	err := db.UpdatePayouts(context.Background(), []int64{1}, func(*rules.Payout, rules.Ledger) (time.Time, error) { return time.Time{}, nil })
	if !errors.Is(err, errClosed) {
		t.Fatalf("err %v, want errClosed", err)
	}
}

// The file gauges follow the database: the file's size as the file system has it, and the
// free pages that its updates leave behind (a commit copies the pages it changes and frees
// the old ones).
func TestFileGauges(t *testing.T) {
	db := openTemp(t)
	gauge := func(name string) float64 {
		for _, g := range db.Gauges() {
			if g.Name == name {
				return g.Value
			}
		}
		t.Fatalf("no gauge %s", name)
		return 0
	}
	var ids []int64
	for i := range 200 {
		p := samplePayout()
		p.OrderID = "GAUGE-" + strconv.Itoa(i)
		p.Request.OrderID = p.OrderID
		stored, _, err := db.CreatePayout(context.Background(), p, time.Now(), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, stored.ID)
	}
	for range 3 { // steps rewrite the payouts' states, freeing the pages they were on
		err := db.UpdatePayouts(context.Background(), ids, func(p *rules.Payout, _ rules.Ledger) (time.Time, error) {
			p.ClaimAttempts++
			return time.Now(), nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	fi, err := os.Stat(db.path)
	if err != nil {
		t.Fatal(err)
	}
	if got := gauge("payouts_db_file_bytes"); got != float64(fi.Size()) || got <= 0 {
		t.Errorf("payouts_db_file_bytes %v, the file has %d bytes", got, fi.Size())
	}
	free, page := gauge("payouts_db_free_bytes"), float64(db.bdb.Info().PageSize)
	if free <= 0 || free >= float64(fi.Size()) || free/page != float64(int64(free/page)) {
		t.Errorf("payouts_db_free_bytes %v: want some whole pages of %v bytes, fewer than the file's %d", free, page, fi.Size())
	}
}

// A write that follows a group of one is committed at once; one that follows a group of two
// to seven waits for the linger, and the writes that arrive meanwhile join its group. Eight
// writes waiting are taken at once, and a write that follows a group of eight is committed
// at once: the writer is then the bottleneck.
func TestGroupCommitLingersUnderAStream(t *testing.T) {
	held, hold := make(chan struct{}), make(chan struct{})
	stop := make(chan struct{}) // the test is over: the writer no longer waits for it
	var groups int              // commits so far; read by the writes, which run in the writer's goroutine
	db, err := Open(filepath.Join(t.TempDir(), "payouts.db"), Options{NoSync: true, Fault: func() error {
		groups++
		if groups <= 4 { // the first four groups wait for the test
			select {
			case held <- struct{}{}:
				<-hold
			case <-stop:
			}
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { close(stop); db.Close(context.Background()) })
	c := db.writer
	lingering, lingered := make(chan struct{}), make(chan struct{})
	lingers := 0
	c.linger = func() {
		if lingers++; lingers > 1 {
			return // counted: the test expects one
		}
		select {
		case lingering <- struct{}{}:
			<-lingered
		case <-stop:
		}
	}

	groupOf := make([]int, 15) // the group each write was committed in
	var wg sync.WaitGroup
	write := func(i int) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := c.write(context.Background(), func(*bbolt.Tx) error { groupOf[i] = groups + 1; return nil }, true)
			if err != nil {
				t.Errorf("write %d: %v", i, err)
			}
		}()
	}
	waitFor := func(unanswered, pending int) { // writes handed in, and those not taken yet
		deadline := time.Now().Add(10 * time.Second)
		for c.waiting.Load() != int64(unanswered) || c.waitingNow() != pending {
			if time.Now().After(deadline) {
				t.Fatalf("writes unanswered %d, not taken %d; want %d and %d", c.waiting.Load(), c.waitingNow(), unanswered, pending)
			}
			runtime.Gosched()
		}
	}
	await := func(ch chan struct{}, what string) {
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatalf("still waiting for %s", what)
		}
	}
	write(1)
	await(held, "group 1") // taken alone
	write(2)
	write(3)
	waitFor(3, 2)
	hold <- struct{}{} // group 1 commits; after a group of one, 2 and 3 are taken at once
	await(held, "group 2 (writes 2 and 3, at once after a group of one)")
	write(4)
	waitFor(3, 1)
	hold <- struct{}{} // group 2 commits; after a group of two, the writer lingers with 4 waiting
	await(lingering, "the writer to linger after a group of two")
	write(5)
	waitFor(2, 2)
	lingered <- struct{}{}
	await(held, "group 3 (writes 4 and 5, after the linger)")
	for i := 6; i <= 13; i++ {
		write(i)
	}
	waitFor(10, 8)
	hold <- struct{}{} // group 3 commits; eight wait, taken at once
	await(held, "group 4 (writes 6 to 13)")
	write(14)
	waitFor(9, 1)
	hold <- struct{}{} // group 4 commits; after a group of eight, 14 is taken at once
	wg.Wait()
	want := []int{0, 1, 2, 2, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4, 5}
	if !slices.Equal(groupOf, want) || lingers != 1 {
		t.Errorf("writes 1–14 in groups %v, want %v; lingered %d times, want once", groupOf[1:], want[1:], lingers)
	}
}
