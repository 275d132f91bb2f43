package workers

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"payouts/rules"
)

// Dispatcher delivers the outbox: it takes the due events, delivers each by its kind,
// records a success so that the event id is never delivered again, and reschedules a
// failure with exponential backoff and jitter until GiveUpAfter has passed since the event
// was written; then the event goes to the dead letters. All its state is in the store, so a
// restart resumes where it stopped.
//
// Deliveries are fair per merchant: Run keeps up to Parallel deliveries in flight, at most
// PerMerchant of them for one merchant, and starts the next due event as soon as any one
// finishes. There is no batch barrier, so a merchant endpoint that hangs until its timeout
// holds only its own share of the workers, never another merchant's notification.
type Dispatcher struct {
	Store      rules.OutboxStore
	Lane       rules.Lane                 // the lane this dispatcher takes; empty: every lane, one after the other
	Deliverers map[string]rules.Deliverer // by Event.Kind
	Now        func() time.Time
	// Rand returns a number in [0, 1) for the jitter; nil uses math/rand/v2.
	Rand func() float64
	Log  *slog.Logger

	BaseDelay   time.Duration // the first retry waits about this long (default 2s)
	MaxDelay    time.Duration // no two tries are further apart (default 1h)
	GiveUpAfter time.Duration // failures before this age are retried (default 24h)
	BatchSize   int           // events RunOnce takes at once (default 64)
	Parallel    int           // deliveries in flight at once (default 16)
	PerMerchant int           // deliveries in flight at once for one merchant (default Parallel/4, at least 1)
	Poll        time.Duration // the longest sleep of Run between looks at the outbox (default 1s)

	// Delivered and Failed are told of each delivery and failed try (metrics). May be nil.
	Delivered func(kind string)
	Failed    func(kind string)

	once sync.Once
	wake chan struct{}

	mu         sync.Mutex
	inFlight   map[uint64]bool // by outbox seq
	inFlightID map[string]bool // by event id: two copies of one id are never delivered at once
	perKey     map[string]int  // deliveries in flight by merchant
	total      int
	storeErr   error // the first store error of a background delivery, reported by Run
}

func (d *Dispatcher) init() {
	d.once.Do(func() {
		d.wake = make(chan struct{}, 1)
		d.inFlight, d.inFlightID, d.perKey = map[uint64]bool{}, map[string]bool{}, map[string]int{}
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
			d.Parallel = 16
		}
		if d.PerMerchant <= 0 {
			d.PerMerchant = max(1, d.Parallel/4)
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

// Kick wakes Run: events were written, or a delivery finished and freed a worker.
func (d *Dispatcher) Kick() {
	d.init()
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// Run delivers until ctx ends, sleeping until the next event is due, a Kick, a finished
// delivery, or Poll. When ctx ends it waits for the deliveries in flight, which end with it.
func (d *Dispatcher) Run(ctx context.Context) {
	d.init()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		started, next, err := d.fill(ctx, &wg)
		if err == nil {
			d.mu.Lock()
			err, d.storeErr = d.storeErr, nil
			d.mu.Unlock()
		}
		if err != nil && ctx.Err() == nil {
			d.Log.Error("outbox dispatch failed", "err", err)
		}
		wait := d.Poll
		switch {
		case err != nil:
		case started > 0:
			wait = 0 // more may be due, and workers may still be free
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

// fill starts deliveries of due events on the free workers, fairly per merchant, and says
// how many it started and when the next event not yet due is.
func (d *Dispatcher) fill(ctx context.Context, wg *sync.WaitGroup) (int, time.Time, error) {
	lanes := []rules.Lane{d.Lane}
	if d.Lane == "" {
		lanes = []rules.Lane{rules.LaneMail, rules.LaneNotify}
	}
	started := 0
	var next time.Time
	for _, lane := range lanes {
		due, laneNext, err := d.take(ctx, lane, 0)
		if err != nil {
			return started, next, err
		}
		if !laneNext.IsZero() && (next.IsZero() || laneNext.Before(next)) {
			next = laneNext
		}
		for _, e := range due {
			wg.Add(1)
			started++
			go func() {
				defer wg.Done()
				err := d.deliver(ctx, e)
				d.release(e)
				if err != nil {
					d.mu.Lock()
					if d.storeErr == nil {
						d.storeErr = err
					}
					d.mu.Unlock()
				}
				d.Kick() // a worker is free
			}()
		}
	}
	return started, next, nil
}

// take lists the due events of a lane that may start now and marks them in flight: no more
// than the free workers, no merchant above its share, no event or event id twice. limit 0
// is as many as the free workers.
func (d *Dispatcher) take(ctx context.Context, lane rules.Lane, limit int) ([]rules.OutboxEntry, time.Time, error) {
	d.mu.Lock()
	free := d.Parallel - d.total
	perKey := make(map[string]int, len(d.perKey))
	for k, n := range d.perKey {
		perKey[k] = n
	}
	inFlight := make(map[uint64]bool, len(d.inFlight))
	for s := range d.inFlight {
		inFlight[s] = true
	}
	d.mu.Unlock()
	if limit == 0 {
		limit = free
	}
	limit = min(limit, free)
	if limit <= 0 {
		return nil, time.Time{}, nil
	}
	// skip runs in the order the store lists the events, so it can count what it lets through.
	skip := func(seq uint64, merchantID string) bool {
		if inFlight[seq] || perKey[merchantID] >= d.PerMerchant {
			return true
		}
		perKey[merchantID]++
		return false
	}
	var due []rules.OutboxEntry
	var next time.Time
	var err error
	if sk, ok := d.Store.(rules.OutboxSkipper); ok {
		due, next, err = sk.DueEventsSkipping(ctx, lane, d.Now(), limit, skip)
	} else {
		var all []rules.OutboxEntry
		all, next, err = d.Store.DueEvents(ctx, lane, d.Now(), max(limit, d.BatchSize))
		for _, e := range all {
			if len(due) < limit && !skip(e.Seq, e.MerchantID) {
				due = append(due, e)
			}
		}
	}
	if err != nil {
		return nil, next, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	out := due[:0]
	for _, e := range due {
		if d.inFlight[e.Seq] || d.inFlightID[e.ID] {
			continue // the other copy is being delivered; the store drops this one after it
		}
		d.inFlight[e.Seq], d.inFlightID[e.ID] = true, true
		d.perKey[e.MerchantID]++
		d.total++
		out = append(out, e)
	}
	return out, next, nil
}

func (d *Dispatcher) release(e rules.OutboxEntry) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.inFlight, e.Seq)
	delete(d.inFlightID, e.ID)
	if d.perKey[e.MerchantID]--; d.perKey[e.MerchantID] <= 0 {
		delete(d.perKey, e.MerchantID)
	}
	d.total--
}

// RunOnce delivers one batch of due events (fairly per merchant, like Run) and waits for
// them; it says how many it took. Tests call it with an injected clock instead of sleeping.
func (d *Dispatcher) RunOnce(ctx context.Context) (int, error) {
	d.init()
	lanes := []rules.Lane{d.Lane}
	if d.Lane == "" {
		lanes = []rules.Lane{rules.LaneMail, rules.LaneNotify}
	}
	var taken int
	for _, lane := range lanes {
		due, _, err := d.take(ctx, lane, d.BatchSize)
		if err != nil {
			return taken, err
		}
		taken = max(taken, len(due))
		var wg sync.WaitGroup
		var mu sync.Mutex
		var firstErr error
		for _, e := range due {
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := d.deliver(ctx, e)
				d.release(e)
				mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}()
		}
		wg.Wait()
		if firstErr != nil {
			return taken, firstErr
		}
	}
	return taken, nil
}

// deliver tries one event and records what happened; the error is the store's.
func (d *Dispatcher) deliver(ctx context.Context, e rules.OutboxEntry) error {
	ev := e.Event
	var err error
	if dl := d.Deliverers[ev.Kind]; dl == nil {
		err = rules.Permanent(errors.New("no deliverer for event kind " + ev.Kind))
	} else {
		err = dl.Deliver(ctx, ev)
	}
	now := d.Now()
	if err == nil {
		if serr := d.Store.EventDelivered(ctx, e.Seq, ev.ID, now); serr != nil {
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
	// The dashboard shows LastError to the merchant's users: only its public form; the log
	// has the whole error.
	ev.LastError = truncate(rules.PublicDeliveryError(err), 500)
	attrs := []any{"event", ev.ID, "kind", ev.Kind, "merchant", ev.MerchantID, "payout", ev.PayoutID,
		"attempts", ev.Attempts, "err", truncate(err.Error(), 1000)}
	if rules.IsPermanent(err) || now.Sub(ev.CreatedAt) >= d.GiveUpAfter {
		if ev.Kind == rules.EventCashOTP {
			ev.Data = nil // the sealed one-time code: nothing will deliver it now
		}
		d.Log.Error("outbox: gave up on an event; kept in the dead letters", attrs...)
		return d.Store.DeadEvent(ctx, e.Seq, ev)
	}
	ev.NextAt = now.Add(d.Backoff(ev.Attempts))
	d.Log.Warn("outbox: delivery failed; retrying", append(attrs, "nextAt", ev.NextAt)...)
	return d.Store.RescheduleEvent(ctx, e.Seq, ev)
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
