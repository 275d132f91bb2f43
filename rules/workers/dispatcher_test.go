package workers_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"payouts/rules"
	"payouts/rules/workers"
)

// dispClock is the injected clock: tests move it, nothing sleeps.
type dispClock struct {
	mu sync.Mutex
	t  time.Time
}

func newDispClock() *dispClock {
	return &dispClock{t: time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)}
}

func (c *dispClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *dispClock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

func (c *dispClock) Advance(d time.Duration) { c.Set(c.Now().Add(d)) }

// dispOutbox is rules.OutboxStore in memory, with the same semantics as the engines' outboxes.
type dispOutbox struct {
	mu     sync.Mutex
	seq    uint64
	events map[uint64]rules.Event
	sent   map[string]time.Time
	dead   []rules.Event
}

func newDispOutbox() *dispOutbox {
	return &dispOutbox{events: map[uint64]rules.Event{}, sent: map[string]time.Time{}}
}

func (m *dispOutbox) add(ev rules.Event) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.seq++
	m.events[m.seq] = ev
}

func (m *dispOutbox) DueEvents(ctx context.Context, lane rules.Lane, now time.Time, limit int) ([]rules.OutboxEntry, time.Time, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var seqs []uint64
	for s := range m.events {
		seqs = append(seqs, s)
	}
	slices.Sort(seqs)
	var due []rules.OutboxEntry
	var next time.Time
	for _, s := range seqs {
		ev := m.events[s]
		if rules.LaneOf(ev.Kind) != lane {
			continue
		}
		if _, ok := m.sent[ev.ID]; ok {
			delete(m.events, s)
			continue
		}
		if ev.NextAt.After(now) {
			if next.IsZero() || ev.NextAt.Before(next) {
				next = ev.NextAt
			}
			continue
		}
		if len(due) < limit {
			due = append(due, rules.OutboxEntry{Seq: s, Event: ev})
		}
	}
	return due, next, nil
}

func (m *dispOutbox) EventDelivered(ctx context.Context, seq uint64, id string, at time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.events, seq)
	m.sent[id] = at
	return nil
}

func (m *dispOutbox) RescheduleEvent(ctx context.Context, seq uint64, ev rules.Event) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.events[seq]; ok {
		m.events[seq] = ev
	}
	return nil
}

func (m *dispOutbox) DeadEvent(ctx context.Context, seq uint64, ev rules.Event) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.events, seq)
	m.dead = append(m.dead, ev)
	return nil
}

func (m *dispOutbox) pending() []rules.Event {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []rules.Event
	for _, ev := range m.events {
		out = append(out, ev)
	}
	return out
}

// recorder is a deliverer that fails while fail says so and counts its calls per event.
type dispRecorder struct {
	mu    sync.Mutex
	calls map[string]int
	ok    map[string]int
	fail  func(ev rules.Event, call int) error
}

func newDispRecorder(fail func(ev rules.Event, call int) error) *dispRecorder {
	return &dispRecorder{calls: map[string]int{}, ok: map[string]int{}, fail: fail}
}

func (r *dispRecorder) Deliver(ctx context.Context, ev rules.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls[ev.ID]++
	if r.fail != nil {
		if err := r.fail(ev, r.calls[ev.ID]); err != nil {
			return err
		}
	}
	r.ok[ev.ID]++
	return nil
}

func (r *dispRecorder) count(id string) (calls, ok int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[id], r.ok[id]
}

var dispQuiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func newDispDispatcher(st rules.OutboxStore, clock *dispClock, d rules.Deliverer) *workers.Dispatcher {
	return &workers.Dispatcher{Store: st, Now: clock.Now, Log: dispQuiet, Rand: func() float64 { return 0.5 },
		Deliverers: map[string]rules.Deliverer{rules.EventBeneficiaryMail: d, rules.EventMerchantNotification: d, rules.EventCashOTP: d}}
}

func dispEvent(id string, at time.Time) rules.Event {
	return rules.Event{ID: id, Kind: rules.EventMerchantNotification, MerchantID: "m1", PayoutID: 7, CreatedAt: at, NextAt: at}
}

func TestDispatchDeliversOnlyDueEventsAndRecordsThem(t *testing.T) {
	clock := newDispClock()
	st := newDispOutbox()
	st.add(dispEvent("now", clock.Now()))
	st.add(dispEvent("later", clock.Now().Add(time.Hour)))
	rec := newDispRecorder(nil)
	d := newDispDispatcher(st, clock, rec)

	if n, err := d.RunOnce(context.Background()); err != nil || n != 1 {
		t.Fatalf("RunOnce = %d, %v; want 1 due event", n, err)
	}
	if _, ok := rec.count("now"); ok != 1 {
		t.Errorf("due event delivered %d times, want 1", ok)
	}
	if calls, _ := rec.count("later"); calls != 0 {
		t.Errorf("event due in an hour was tried %d times, want 0", calls)
	}
	if _, ok := st.sent["now"]; !ok {
		t.Errorf("delivered event id not recorded")
	}
	clock.Advance(time.Hour)
	d.RunOnce(context.Background())
	if _, ok := rec.count("later"); ok != 1 {
		t.Errorf("event delivered %d times once due, want 1", ok)
	}
	if p := st.pending(); len(p) != 0 {
		t.Errorf("outbox keeps %d events after delivery, want 0", len(p))
	}
}

func TestDispatchBackoffDoublesWithJitterAndCapsAtOneHour(t *testing.T) {
	for _, tc := range []struct {
		name     string
		rand     float64
		attempts int
		want     time.Duration
	}{
		{"first retry, low jitter", 0, 1, 1500 * time.Millisecond},
		{"first retry, mid jitter", 0.5, 1, 2 * time.Second},
		{"second retry doubles", 0.5, 2, 4 * time.Second},
		{"fifth retry", 0.5, 5, 32 * time.Second},
		{"high jitter", 0.75, 3, 9 * time.Second},
		{"capped at one hour", 0.999, 12, time.Hour},
		{"still capped far later", 0, 40, 45 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &workers.Dispatcher{Rand: func() float64 { return tc.rand }}
			if got := d.Backoff(tc.attempts); got != tc.want {
				t.Errorf("Backoff(%d) with jitter %v = %v, want %v", tc.attempts, tc.rand, got, tc.want)
			}
		})
	}
}

func TestDispatchRetriesFailuresOnTheBackoffSchedule(t *testing.T) {
	clock := newDispClock()
	st := newDispOutbox()
	start := clock.Now()
	st.add(dispEvent("e1", start))
	rec := newDispRecorder(func(ev rules.Event, call int) error {
		if call <= 2 {
			return errors.New("503 Service Unavailable")
		}
		return nil
	})
	d := newDispDispatcher(st, clock, rec)
	var failed, delivered int
	d.Failed = func(string) { failed++ }
	d.Delivered = func(string) { delivered++ }

	d.RunOnce(context.Background())
	ev := st.pending()[0]
	if ev.Attempts != 1 || ev.LastError == "" || !ev.NextAt.Equal(start.Add(2*time.Second)) {
		t.Fatalf("after one failure: attempts %d, lastError %q, nextAt %v; want 1, the error, start+2s", ev.Attempts, ev.LastError, ev.NextAt.Sub(start))
	}
	clock.Advance(1999 * time.Millisecond)
	d.RunOnce(context.Background())
	if calls, _ := rec.count("e1"); calls != 1 {
		t.Fatalf("tried again before its backoff: %d calls", calls)
	}
	clock.Advance(time.Millisecond)
	d.RunOnce(context.Background())
	if ev := st.pending()[0]; ev.Attempts != 2 || !ev.NextAt.Equal(clock.Now().Add(4*time.Second)) {
		t.Fatalf("after the second failure: attempts %d, next in %v; want 2, 4s", ev.Attempts, ev.NextAt.Sub(clock.Now()))
	}
	clock.Advance(4 * time.Second)
	d.RunOnce(context.Background())
	if calls, ok := rec.count("e1"); calls != 3 || ok != 1 {
		t.Fatalf("calls %d, successes %d; want 3 and 1", calls, ok)
	}
	if failed != 2 || delivered != 1 {
		t.Errorf("metrics: %d failures, %d deliveries; want 2 and 1", failed, delivered)
	}
	if len(st.pending()) != 0 || len(st.dead) != 0 {
		t.Errorf("outbox %d, dead %d; want both empty", len(st.pending()), len(st.dead))
	}
}

func TestDispatchGivesUpOnlyAfter24HoursIntoTheDeadLetters(t *testing.T) {
	clock := newDispClock()
	st := newDispOutbox()
	start := clock.Now()
	st.add(dispEvent("down", start))
	// The error names the service's own network; the dead letter keeps only its class.
	refused := &rules.DeliveryFailure{Public: "the notificationUrl of merchant 1 could not be reached: connection refused",
		Err: errors.New("dial tcp 10.0.0.7:443: connect: connection refused")}
	rec := newDispRecorder(func(rules.Event, int) error { return refused })
	d := newDispDispatcher(st, clock, rec)
	d.Rand = func() float64 { return 0.999 } // the longest waits: the fewest tries

	var tries []time.Time
	for i := 0; i < 1000 && len(st.dead) == 0; i++ {
		p := st.pending()
		if len(p) != 1 {
			t.Fatalf("the event left the outbox without a dead letter")
		}
		clock.Set(p[0].NextAt)
		tries = append(tries, clock.Now())
		d.RunOnce(context.Background())
	}
	if len(st.dead) != 1 {
		t.Fatalf("the event never reached the dead letters")
	}
	last := tries[len(tries)-1]
	if age := last.Sub(start); age < 24*time.Hour {
		t.Errorf("gave up after %v, want at least 24h", age)
	}
	for i := 1; i < len(tries); i++ {
		if gap := tries[i].Sub(tries[i-1]); gap > time.Hour {
			t.Errorf("tries %d and %d are %v apart, over the 1h cap", i-1, i, gap)
		}
	}
	if calls, _ := rec.count("down"); calls != len(tries) || calls < 24 {
		t.Errorf("%d deliveries tried over %d looks; want one per look and at least 24", calls, len(tries))
	}
	dead := st.dead[0]
	if dead.ID != "down" || dead.Attempts != len(tries) || dead.LastError != refused.Public {
		t.Errorf("dead letter %+v", dead)
	}
	// The day before: still retrying.
	if tries[len(tries)-2].Sub(start) >= 24*time.Hour {
		t.Errorf("kept trying after 24h had passed")
	}
}

func TestDispatchNeverDeliversAnEventIDTwiceEvenIfReenqueued(t *testing.T) {
	clock := newDispClock()
	st := newDispOutbox()
	st.add(dispEvent("once", clock.Now()))
	st.add(dispEvent("once", clock.Now())) // the same event twice in one batch
	rec := newDispRecorder(nil)
	d := newDispDispatcher(st, clock, rec)
	d.RunOnce(context.Background())
	st.add(dispEvent("once", clock.Now())) // and again after its delivery
	d.RunOnce(context.Background())
	d.RunOnce(context.Background())
	if calls, ok := rec.count("once"); calls != 1 || ok != 1 {
		t.Errorf("delivered %d times (%d calls), want exactly once", ok, calls)
	}
	if p := st.pending(); len(p) != 0 {
		t.Errorf("%d copies left in the outbox, want 0", len(p))
	}
}

func TestDispatchPermanentFailureGoesStraightToTheDeadLetters(t *testing.T) {
	clock := newDispClock()
	st := newDispOutbox()
	otp := rules.Event{ID: "cash.otp:1", Kind: rules.EventCashOTP, CreatedAt: clock.Now(), NextAt: clock.Now(),
		Data: []byte(`{"sealedCode":"c2VhbGVk"}`)}
	st.add(otp)
	st.add(rules.Event{ID: "unknown:1", Kind: "no.such.kind", CreatedAt: clock.Now(), NextAt: clock.Now()})
	rec := newDispRecorder(func(rules.Event, int) error { return rules.Permanent(errors.New("the cash claim already ended")) })
	d := newDispDispatcher(st, clock, rec)
	d.RunOnce(context.Background())
	if len(st.dead) != 2 || len(st.pending()) != 0 {
		t.Fatalf("dead %d, pending %d; want 2 dead, 0 pending", len(st.dead), len(st.pending()))
	}
	for _, ev := range st.dead {
		if ev.ID == otp.ID && ev.Data != nil {
			t.Errorf("the dead cash.otp event keeps its sealed code: %s", ev.Data)
		}
	}
	if calls, _ := rec.count(otp.ID); calls != 1 {
		t.Errorf("permanent failure tried %d times, want 1", calls)
	}
}

func TestDispatchShutdownLeavesTheEventDueUncounted(t *testing.T) {
	clock := newDispClock()
	st := newDispOutbox()
	st.add(dispEvent("e", clock.Now()))
	ctx, cancel := context.WithCancel(context.Background())
	d := newDispDispatcher(st, clock, rules.DelivererFunc(func(ctx context.Context, ev rules.Event) error {
		cancel()
		return ctx.Err()
	}))
	d.RunOnce(ctx)
	p := st.pending()
	if len(p) != 1 || p[0].Attempts != 0 || p[0].NextAt.After(clock.Now()) {
		t.Errorf("after a delivery cut by shutdown: %+v; want the event untouched and due", p)
	}
}

func TestDispatchRunWakesOnKickAndStopsWithContext(t *testing.T) {
	st := newDispOutbox()
	rec := newDispRecorder(nil)
	d := &workers.Dispatcher{Store: st, Now: time.Now, Log: dispQuiet, Poll: time.Hour,
		Deliverers: map[string]rules.Deliverer{rules.EventMerchantNotification: rec}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { d.Run(ctx); close(done) }()
	st.add(dispEvent("kicked", time.Now()))
	d.Kick()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if _, ok := rec.count("kicked"); ok == 1 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, ok := rec.count("kicked"); ok != 1 {
		t.Errorf("a kicked Run did not deliver (Poll is an hour)")
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not stop with its context")
	}
}
