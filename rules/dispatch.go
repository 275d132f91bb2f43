package rules

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"
)

// Lane is a queue of the outbox with its own dispatcher, so that a slow merchant endpoint
// (up to its 15 s timeout, per try) never holds up a beneficiary's email or cash code.
type Lane string

const (
	LaneMail   Lane = "mail"   // beneficiary emails and cash codes
	LaneNotify Lane = "notify" // merchant notifications
)

// LaneOf is the lane an event kind travels in.
func LaneOf(kind string) Lane {
	if kind == EventMerchantNotification {
		return LaneNotify
	}
	return LaneMail
}

// OutboxEntry is one stored event with its place in the outbox.
type OutboxEntry struct {
	Seq uint64
	Event
}

// OutboxStore is the durable outbox (contract section 7): the events written with the
// state changes, the ids already delivered, and the dead letters.
type OutboxStore interface {
	// DueEvents lists up to limit events of a lane whose NextAt is at or before now, oldest
	// first, leaving out (and dropping) those whose id was already delivered. next is the
	// earliest NextAt of the lane's events not yet due, zero when there is none (or when the
	// batch is full).
	DueEvents(lane Lane, now time.Time, limit int) (due []OutboxEntry, next time.Time, err error)
	// EventDelivered removes the entry and records its event id as delivered, in one
	// transaction, so that no later copy of the event is ever delivered.
	EventDelivered(seq uint64, id string, at time.Time) error
	// RescheduleEvent writes the entry back with its new attempts, NextAt and LastError.
	RescheduleEvent(seq uint64, ev Event) error
	// DeadEvent moves the entry to the dead letters: kept for inspection, never retried.
	DeadEvent(seq uint64, ev Event) error
}

// Deliverer delivers one kind of event: sends the email, POSTs the notification. An
// error means "try again later", unless it is Permanent.
type Deliverer interface {
	Deliver(ctx context.Context, ev Event) error
}

// DelivererFunc adapts a function to a Deliverer.
type DelivererFunc func(ctx context.Context, ev Event) error

// Deliver calls f.
func (f DelivererFunc) Deliver(ctx context.Context, ev Event) error { return f(ctx, ev) }

// permanentError marks a failure that no retry can fix.
type permanentError struct{ err error }

func (e permanentError) Error() string { return e.err.Error() }
func (e permanentError) Unwrap() error { return e.err }

// Permanent marks err as a failure that retrying cannot fix (the payout is gone, the
// address is malformed, the claim already ended): the dispatcher dead-letters the event.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanentError{err}
}

// IsPermanent reports whether err was marked Permanent.
func IsPermanent(err error) bool {
	var p permanentError
	return errors.As(err, &p)
}

// Dispatcher delivers the outbox: it takes the due events, delivers each by its kind,
// records a success so that the event id is never delivered again, and reschedules a
// failure with exponential backoff and jitter until GiveUpAfter has passed since the event
// was written; then the event goes to the dead letters. All its state is in the store, so a
// restart resumes where it stopped.
type Dispatcher struct {
	Store      OutboxStore
	Lane       Lane                 // the lane this dispatcher takes; empty: every lane, one after the other
	Deliverers map[string]Deliverer // by Event.Kind
	Now        func() time.Time
	// Rand returns a number in [0, 1) for the jitter; nil uses math/rand/v2.
	Rand func() float64
	Log  *slog.Logger

	BaseDelay   time.Duration // the first retry waits about this long (default 2s)
	MaxDelay    time.Duration // no two tries are further apart (default 1h)
	GiveUpAfter time.Duration // failures before this age are retried (default 24h)
	BatchSize   int           // events taken at once (default 64)
	Parallel    int           // deliveries in flight at once (default 4)
	Poll        time.Duration // the longest sleep of Run between looks at the outbox (default 1s)

	// Delivered and Failed are told of each delivery and failed try (metrics). May be nil.
	Delivered func(kind string)
	Failed    func(kind string)

	once sync.Once
	wake chan struct{}
}

func (d *Dispatcher) init() {
	d.once.Do(func() {
		d.wake = make(chan struct{}, 1)
		if d.BaseDelay <= 0 {
			d.BaseDelay = 2 * time.Second
		}
		if d.MaxDelay <= 0 {
			d.MaxDelay = time.Hour
		}
		if d.GiveUpAfter <= 0 {
			d.GiveUpAfter = 24 * time.Hour
		}
		if d.BatchSize <= 0 {
			d.BatchSize = 64
		}
		if d.Parallel <= 0 {
			d.Parallel = 4
		}
		if d.Poll <= 0 {
			d.Poll = time.Second
		}
		if d.Rand == nil {
			d.Rand = rand.Float64
		}
		if d.Log == nil {
			d.Log = slog.Default()
		}
	})
}

// Kick wakes Run: events were written.
func (d *Dispatcher) Kick() {
	d.init()
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// Run delivers until ctx ends, sleeping until the next event is due, a Kick, or Poll.
func (d *Dispatcher) Run(ctx context.Context) {
	d.init()
	for {
		n, next, err := d.runOnce(ctx)
		if err != nil && ctx.Err() == nil {
			d.Log.Error("outbox dispatch failed", "err", err)
		}
		wait := d.Poll
		switch {
		case err != nil:
		case n == d.BatchSize:
			wait = 0 // more may be due
		case !next.IsZero():
			wait = min(max(next.Sub(d.Now()), 0), d.Poll)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-d.wake:
			t.Stop()
		case <-t.C:
		}
	}
}

// RunOnce delivers one batch of due events and says how many it took. Tests call it with
// an injected clock instead of sleeping.
func (d *Dispatcher) RunOnce(ctx context.Context) (int, error) {
	n, _, err := d.runOnce(ctx)
	return n, err
}

func (d *Dispatcher) runOnce(ctx context.Context) (int, time.Time, error) {
	d.init()
	lanes := []Lane{d.Lane}
	if d.Lane == "" {
		lanes = []Lane{LaneMail, LaneNotify}
	}
	var taken int
	var next time.Time
	for _, lane := range lanes {
		due, laneNext, err := d.Store.DueEvents(lane, d.Now(), d.BatchSize)
		if err != nil {
			return taken, next, err
		}
		if !laneNext.IsZero() && (next.IsZero() || laneNext.Before(next)) {
			next = laneNext
		}
		taken = max(taken, len(due))
		if err := d.deliverAll(ctx, due); err != nil {
			return taken, next, err
		}
	}
	return taken, next, nil
}

// deliverAll delivers a batch, Parallel at a time, and returns the first store error.
func (d *Dispatcher) deliverAll(ctx context.Context, due []OutboxEntry) error {
	// Two copies of one event id in a batch: deliver the first; the store drops the
	// others once it is recorded as delivered.
	seen := make(map[string]bool, len(due))
	sem := make(chan struct{}, d.Parallel)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for _, e := range due {
		if seen[e.ID] {
			continue
		}
		seen[e.ID] = true
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := d.deliver(ctx, e); err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return firstErr
}

// deliver tries one event and records what happened; the error is the store's.
func (d *Dispatcher) deliver(ctx context.Context, e OutboxEntry) error {
	ev := e.Event
	var err error
	if dl := d.Deliverers[ev.Kind]; dl == nil {
		err = Permanent(errors.New("no deliverer for event kind " + ev.Kind))
	} else {
		err = dl.Deliver(ctx, ev)
	}
	now := d.Now()
	if err == nil {
		if serr := d.Store.EventDelivered(e.Seq, ev.ID, now); serr != nil {
			// Sent but not recorded: it will be sent again after the next look.
			d.Log.Error("outbox: delivered but not recorded", "event", ev.ID, "err", serr)
			return serr
		}
		if d.Delivered != nil {
			d.Delivered(ev.Kind)
		}
		return nil
	}
	if ctx.Err() != nil {
		return nil // shutting down: the event stays due and is tried on the next start
	}
	if d.Failed != nil {
		d.Failed(ev.Kind)
	}
	ev.Attempts++
	ev.LastError = truncate(err.Error(), 500)
	attrs := []any{"event", ev.ID, "kind", ev.Kind, "merchant", ev.MerchantID, "payout", ev.PayoutID,
		"attempts", ev.Attempts, "err", ev.LastError}
	if IsPermanent(err) || now.Sub(ev.CreatedAt) >= d.GiveUpAfter {
		if ev.Kind == EventCashOTP {
			ev.Data = nil // the sealed one-time code: nothing will deliver it now
		}
		d.Log.Error("outbox: gave up on an event; kept in the dead letters", attrs...)
		return d.Store.DeadEvent(e.Seq, ev)
	}
	ev.NextAt = now.Add(d.Backoff(ev.Attempts))
	d.Log.Warn("outbox: delivery failed; retrying", append(attrs, "nextAt", ev.NextAt)...)
	return d.Store.RescheduleEvent(e.Seq, ev)
}

// Backoff is the wait after the given number of failed tries: BaseDelay doubled for each
// earlier failure, times a jitter between 0.75 and 1.25, never above MaxDelay.
func (d *Dispatcher) Backoff(attempts int) time.Duration {
	d.init()
	base := d.BaseDelay
	for i := 1; i < attempts && base < d.MaxDelay; i++ {
		base = min(base*2, d.MaxDelay)
	}
	jittered := time.Duration(float64(base) * (0.75 + 0.5*d.Rand()))
	return min(jittered, d.MaxDelay)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
