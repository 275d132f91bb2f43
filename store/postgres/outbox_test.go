package postgres

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"payouts/rules"
	"payouts/rules/workers"
	"payouts/store/postgres/pgtest"
)

func TestOutboxDueEventsByDueTimeWithTheNextTime(t *testing.T) {
	db := openRest(t)
	restEnqueue(t, db, restEvent("a", restT0), restEvent("later", restT0.Add(time.Hour)), restEvent("b", restT0.Add(-time.Minute)))
	due, next, err := db.DueEvents(context.Background(), rules.LaneNotify, restT0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(due) != 2 || due[0].ID != "b" || due[1].ID != "a" {
		t.Fatalf("due %+v; want b (due earlier) then a", due)
	}
	if !next.Equal(restT0.Add(time.Hour)) {
		t.Errorf("next %v, want the later event's NextAt", next)
	}
	if due, _, _ := db.DueEvents(context.Background(), rules.LaneMail, restT0, 10); len(due) != 0 {
		t.Errorf("the mail lane has %d events of the notify lane", len(due))
	}
	if n := db.OutboxDepth(context.Background()); n != 3 {
		t.Errorf("depth %d, want 3", n)
	}
}

func TestOutboxFullBatchLeavesNextZero(t *testing.T) {
	db := openRest(t)
	restEnqueue(t, db, restEvent("a", restT0), restEvent("b", restT0), restEvent("later", restT0.Add(time.Hour)))
	due, next, err := db.DueEvents(context.Background(), rules.LaneNotify, restT0, 1)
	if err != nil || len(due) != 1 || due[0].ID != "a" || !next.IsZero() {
		t.Fatalf("limit 1: %+v next %v (%v); want a, and no next for a full batch", due, next, err)
	}
	// a is claimed: the next look gets b.
	if due, _, _ := db.DueEvents(context.Background(), rules.LaneNotify, restT0, 10); len(due) != 1 || due[0].ID != "b" {
		t.Fatalf("second look %+v; want b only", due)
	}
	if got := db.claimedEvents.Load(); got != 2 {
		t.Errorf("claimed events %d, want 2", got)
	}
}

func TestOutboxDeliveredIDDropsEveryLaterCopy(t *testing.T) {
	db := openRest(t)
	restEnqueue(t, db, restEvent("x", restT0))
	due, _, _ := db.DueEvents(context.Background(), rules.LaneNotify, restT0, 10)
	if err := db.EventDelivered(context.Background(), due[0].Seq, "x", restT0); err != nil {
		t.Fatal(err)
	}
	if got := db.claimedEvents.Load(); got != 0 {
		t.Errorf("claimed events %d after the delivery, want 0", got)
	}
	restEnqueue(t, db, restEvent("x", restT0)) // the same event written again
	if due, _, _ := db.DueEvents(context.Background(), rules.LaneNotify, restT0, 10); len(due) != 0 {
		t.Fatalf("a delivered event id is due again: %+v", due)
	}
	if n := db.OutboxDepth(context.Background()); n != 0 {
		t.Errorf("depth %d after dropping the copy, want 0", n)
	}
	if at, ok, err := db.WasDelivered(context.Background(), "x"); !ok || err != nil || !at.Equal(restT0) {
		t.Errorf("WasDelivered = %v %v %v", at, ok, err)
	}
	// A second EventDelivered of the id (the copy's) keeps the first time.
	if err := db.EventDelivered(context.Background(), due[0].Seq, "x", restT0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if at, _, _ := db.WasDelivered(context.Background(), "x"); !at.Equal(restT0) {
		t.Errorf("delivered at %v, want the first delivery's time", at)
	}
}

func TestOutboxRescheduleAndDeadLettersReleaseTheClaim(t *testing.T) {
	url := pgtest.Database(t)
	db := openRestURL(t, url, Options{})
	restEnqueue(t, db, restEvent("retry", restT0), restEvent("dead", restT0))
	due, _, _ := db.DueEvents(context.Background(), rules.LaneNotify, restT0, 10)
	if len(due) != 2 {
		t.Fatalf("due %d, want 2", len(due))
	}
	r := due[0].Event
	r.Attempts, r.NextAt, r.LastError = 3, restT0.Add(8*time.Second), "503"
	if err := db.RescheduleEvent(context.Background(), due[0].Seq, r); err != nil {
		t.Fatal(err)
	}
	if err := db.DeadEvent(context.Background(), due[1].Seq, due[1].Event); err != nil {
		t.Fatal(err)
	}
	if got := db.claimedEvents.Load(); got != 0 {
		t.Errorf("claimed events %d after settling both, want 0", got)
	}

	other := openRestURL(t, url, Options{}) // another instance (or this one restarted)
	if due, next, _ := other.DueEvents(context.Background(), rules.LaneNotify, restT0, 10); len(due) != 0 || !next.Equal(restT0.Add(8*time.Second)) {
		t.Fatalf("due %+v next %v; want nothing due until +8s", due, next)
	}
	due, _, _ = other.DueEvents(context.Background(), rules.LaneNotify, restT0.Add(8*time.Second), 10)
	if len(due) != 1 || due[0].ID != "retry" || due[0].Attempts != 3 || due[0].LastError != "503" {
		t.Fatalf("%+v; want the rescheduled event with its attempts, free to claim", due)
	}
	dead, err := other.DeadEvents(context.Background(), 10)
	if err != nil || len(dead) != 1 || dead[0].ID != "dead" {
		t.Errorf("dead letters %+v %v", dead, err)
	}
	if n := other.OutboxDepth(context.Background()); n != 1 {
		t.Errorf("depth %d, want the rescheduled event only", n)
	}
	if pending, _ := other.OutboxEvents(context.Background(), 10); len(pending) != 1 || pending[0].ID != "retry" {
		t.Errorf("pending %+v", pending)
	}
}

// The due-time order keeps each event's merchant, so that a dispatcher can skip the events
// of a merchant that used its share of the workers without hiding another's.
func TestDueEventsSkippingLeavesOutAMerchantsEvents(t *testing.T) {
	db := openRest(t)
	var evs []rules.Event
	for i := range 150 { // more than a page of candidates
		evs = append(evs, restEvent(fmt.Sprintf("slow-%d", i), restT0))
	}
	other := restEvent("other", restT0)
	other.MerchantID = "m2"
	restEnqueue(t, db, append(evs, other)...)
	due, _, err := db.DueEventsSkipping(context.Background(), rules.LaneNotify, restT0, 2, func(seq uint64, merchantID string) bool { return merchantID == "m1" })
	if err != nil || len(due) != 1 || due[0].ID != "other" {
		t.Fatalf("DueEventsSkipping = %v, %v; want only the other merchant's event", due, err)
	}
	// The skipped events were not claimed.
	if due, _, _ := db.DueEvents(context.Background(), rules.LaneNotify, restT0, 200); len(due) != 150 {
		t.Errorf("%d of the skipped events due, want all 150", len(due))
	}
}

// Two instances looking at the outbox at once never get the same event.
func TestOutboxTwoInstancesNeverClaimTheSameEvent(t *testing.T) {
	url := pgtest.Database(t)
	a, b := openRestURL(t, url, Options{Instance: "a"}), openRestURL(t, url, Options{Instance: "b"})
	const n = 400
	var evs []rules.Event
	for i := range n {
		ev := restEvent(fmt.Sprintf("e-%d", i), restT0.Add(-time.Duration(i%7)*time.Second))
		ev.MerchantID = fmt.Sprintf("m%d", i%5)
		evs = append(evs, ev)
	}
	restEnqueue(t, a, evs...)

	var mu sync.Mutex
	seen := map[uint64]string{}
	var wg sync.WaitGroup
	for _, db := range []*DB{a, b} {
		wg.Go(func() {
			for range n { // bounded: an outbox that hands events out twice never empties
				due, _, err := db.DueEventsSkipping(context.Background(), rules.LaneNotify, restT0, 7, func(uint64, string) bool { return false })
				if err != nil {
					t.Error(err)
					return
				}
				if len(due) == 0 {
					return
				}
				mu.Lock()
				for _, e := range due {
					if by, dup := seen[e.Seq]; dup {
						t.Errorf("event %d claimed by %s and %s", e.Seq, by, db.instance)
					}
					seen[e.Seq] = db.instance
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(seen) != n {
		t.Errorf("%d events claimed, want %d", len(seen), n)
	}
	if got := a.claimedEvents.Load() + b.claimedEvents.Load(); got != n {
		t.Errorf("claimed gauges add up to %d, want %d", got, n)
	}
}

// A crashed instance's claim is taken over by another once its lease has passed; its late
// write does not undo the new claim.
func TestOutboxExpiredClaimIsTakenOver(t *testing.T) {
	url := pgtest.Database(t)
	lease := 200 * time.Millisecond
	a := openRestURL(t, url, Options{Instance: "a", Lease: lease})
	b := openRestURL(t, url, Options{Instance: "b", Lease: time.Minute})
	restEnqueue(t, a, restEvent("x", restT0))
	due, _, err := a.DueEvents(context.Background(), rules.LaneNotify, restT0, 10)
	if err != nil || len(due) != 1 {
		t.Fatalf("a: %+v %v", due, err)
	}
	if due, _, _ := b.DueEvents(context.Background(), rules.LaneNotify, restT0, 10); len(due) != 0 {
		t.Fatalf("b got an event a holds: %+v", due)
	}
	// Leases run on the service's clock (the now given): b looks after a's lease ended.
	later := restT0.Add(lease + 100*time.Millisecond)
	taken, _, err := b.DueEvents(context.Background(), rules.LaneNotify, later, 10)
	if err != nil || len(taken) != 1 || taken[0].Seq != due[0].Seq {
		t.Fatalf("b after a's lease: %+v %v; want a's event", taken, err)
	}
	if got := b.takenOver.Load(); got != 1 {
		t.Errorf("b took over %d claims, want 1", got)
	}
	// a wakes up and reschedules: b's claim stands.
	late := due[0].Event
	late.Attempts, late.NextAt = 1, restT0
	if err := a.RescheduleEvent(context.Background(), due[0].Seq, late); err != nil {
		t.Fatal(err)
	}
	if again, _, _ := a.DueEvents(context.Background(), rules.LaneNotify, later, 10); len(again) != 0 {
		t.Errorf("a's late write freed b's claim: %+v", again)
	}
	if err := b.EventDelivered(context.Background(), taken[0].Seq, "x", restT0); err != nil {
		t.Fatal(err)
	}
	if n := b.OutboxDepth(context.Background()); n != 0 {
		t.Errorf("depth %d, want 0", n)
	}
}

// An instance closed (a server stopped, its dispatchers first) gives up the events it
// still claims: another instance delivers them at once, not after the lease.
func TestOutboxClaimsEndWithTheInstanceClosed(t *testing.T) {
	url := pgtest.Database(t)
	a := openRestURL(t, url, Options{Instance: "a", Lease: time.Hour})
	b := openRestURL(t, url, Options{Instance: "b", Lease: time.Hour})
	restEnqueue(t, a, restEvent("x", restT0), restEvent("y", restT0))
	due, _, err := a.DueEvents(context.Background(), rules.LaneNotify, restT0, 1)
	if err != nil || len(due) != 1 {
		t.Fatalf("a: %+v %v", due, err)
	}
	a.Close(context.Background())
	got, _, err := b.DueEvents(context.Background(), rules.LaneNotify, restT0, 10)
	if err != nil || len(got) != 2 {
		t.Fatalf("b after a closed: %+v %v; want both events, a's claim given up", got, err)
	}
}

// Two dispatchers on two instances deliver every event exactly once. The test clock jumps
// 5 s a round, 1,000 s in all: leases run on that clock, so they are made to outlast it
// (an expired lease is another test's).
func TestOutboxTwoDispatchersDeliverOnce(t *testing.T) {
	url := pgtest.Database(t)
	a, b := openRestURL(t, url, Options{Instance: "a", Lease: time.Hour}), openRestURL(t, url, Options{Instance: "b", Lease: time.Hour})
	const n = 120
	var evs []rules.Event
	for i := range n {
		ev := restEvent(fmt.Sprintf("n-%d", i), restT0)
		ev.MerchantID = fmt.Sprintf("m%d", i%6)
		evs = append(evs, ev)
	}
	restEnqueue(t, a, evs...)
	var mu sync.Mutex
	count := map[string]int{}
	var failures atomic.Int32
	deliver := rules.DelivererFunc(func(ctx context.Context, ev rules.Event) error {
		if failures.Add(1)%10 == 0 {
			return fmt.Errorf("503") // retried later
		}
		mu.Lock()
		count[ev.ID]++
		mu.Unlock()
		return nil
	})
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	var elapsed atomic.Int64 // the clock moves on so that the failed tries come due again
	now := func() time.Time { return restT0.Add(time.Duration(elapsed.Load())) }
	var wg sync.WaitGroup
	for _, db := range []*DB{a, b} {
		d := &workers.Dispatcher{Store: db, Now: now, Log: quiet,
			Deliverers: map[string]rules.Deliverer{rules.EventMerchantNotification: deliver}}
		wg.Go(func() {
			for range 200 {
				if db.OutboxDepth(context.Background()) == 0 {
					return
				}
				elapsed.Add(int64(5 * time.Second))
				if _, err := d.RunOnce(context.Background()); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if len(count) != n {
		t.Errorf("%d events delivered, want %d", len(count), n)
	}
	for id, c := range count {
		if c != 1 {
			t.Errorf("%s delivered %d times", id, c)
		}
	}
}
