package workers

import (
	"context"
	"log/slog"
	"maps"
	"sync"
	"time"

	"payouts/rules"
)

// Lifecycle is the lifecycle's worker: it takes the payouts whose next step is due, asks
// their rail outside any transaction, and records each rail's answer as a step of the
// domain's lifecycle (rules.Lifecycle.Step), which it embeds: the transitions from outside
// the rail (Settle, Cancel, Fund…) are called on it as on the domain's.
type Lifecycle struct {
	*rules.Lifecycle
	Rail func(rules.Channel) rules.Rail
	// Trace, when set, spans each round that finds work and each rail call in it; nil
	// traces nothing.
	Trace rules.Tracer
	// BatchSize caps the payouts moved in one transaction.
	BatchSize int
	// Workers bounds the rounds run at once while a backlog lasts (a round took a full
	// batch); 0 or 1, one at a time. A round on a database at network distance waits mostly
	// on round trips, and one round at a time falls behind a sustained stream of creates:
	// the payouts' steps would lag further and further. The claims keep rounds apart.
	Workers int

	once sync.Once
}

func (lc *Lifecycle) init() {
	lc.once.Do(func() {
		lc.Woken() // the domain lifecycle's own defaults first: its wake channel and its logger
		if lc.BatchSize == 0 {
			lc.BatchSize = 512
		}
	})
}

// Run works until ctx ends: it processes what is due, then sleeps until the next due time
// or a Kick.
func (lc *Lifecycle) Run(ctx context.Context) {
	lc.init()
	backlog := make(chan struct{}, 1)
	var helpers sync.WaitGroup
	defer helpers.Wait()
	for range lc.Workers - 1 {
		helpers.Go(func() { lc.help(ctx, backlog) })
	}
	for {
		n, err := lc.RunOnce(ctx)
		if err != nil && ctx.Err() == nil {
			lc.Log.Error("lifecycle step failed", "err", err)
		}
		if n == lc.BatchSize {
			select {
			case backlog <- struct{}{}: // a helper runs rounds beside this one until it is gone
			default:
			}
		}
		wait := time.Second
		if n == lc.BatchSize {
			wait = 0 // more is due
		} else if len(lc.Woken()) > 0 {
			// Kicked meanwhile: the next round comes after the gather window whatever the
			// queue holds, and takes all that is due by then. Under a stream of creates
			// this is every round, and NextDue is a walk of the queue's index.
		} else if next, err := lc.Store.NextDue(ctx); err == nil && !next.IsZero() {
			wait = min(max(next.Sub(lc.Now()), 0), time.Second)
		}
		if err != nil {
			wait = time.Second
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-lc.Woken():
			t.Stop()
			// Under a stream of creates, gather a batch rather than commit (and fsync)
			// once per payout: the worker is throughput work, the API is latency work.
			time.Sleep(gatherWindow)
		case <-t.C:
		}
	}
}

// help runs rounds while a backlog lasts, each time Run finds one.
func (lc *Lifecycle) help(ctx context.Context, backlog <-chan struct{}) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-backlog:
		}
		for ctx.Err() == nil {
			n, err := lc.RunOnce(ctx)
			if err != nil {
				if ctx.Err() == nil {
					lc.Log.Error("lifecycle step failed", "err", err)
				}
				break
			}
			if n < lc.BatchSize {
				break
			}
		}
	}
}

// gatherWindow is how long the worker lets new payouts gather after a wake-up.
const gatherWindow = 20 * time.Millisecond

// RunOnce processes one batch of due payouts and says how many it took. Tests call it with
// an injected clock instead of sleeping.
func (lc *Lifecycle) RunOnce(ctx context.Context) (n int, err error) {
	lc.init()
	now := lc.Now().UTC()
	// The payouts this round reads are handed to its UpdatePayouts (rules.RoundReads): it
	// looks at them no more once it calls it.
	ctx = rules.WithRoundReads(ctx)
	var due []rules.DueEntry
	var read map[int64]*rules.Payout
	due, read, err = lc.Store.DueRead(ctx, now, lc.BatchSize)
	if err != nil || len(due) == 0 {
		return 0, err
	}
	if lc.Trace != nil { // a round that found nothing is not worth a span: the worker polls every second
		var span rules.Span
		ctx, span = lc.Trace.Start(ctx, "lifecycle.round", slog.Int(rules.AttrPayouts, len(due)))
		defer func() { span.End(err) }()
	}
	// Only the payouts that wait on a rail need reading before the transaction.
	ids := make([]int64, 0, len(due))
	var railIDs []int64
	for _, d := range due {
		ids = append(ids, d.ID)
		// A PROCESSED payout is queued only when its rail has a later word on it (a return, say).
		if d.Status == rules.StatusWaitingRouting || d.Status == rules.StatusPendingBank || d.Status == rules.StatusProcessed {
			railIDs = append(railIDs, d.ID)
		}
	}
	ps, err := lc.railPayouts(ctx, railIDs, read)
	if err != nil {
		return 0, err
	}
	// Talk to the rails before the transaction, never inside it.
	type railAnswer struct {
		status rules.Status
		sub    rules.Submission
		out    rules.Outcome
		err    error
	}
	answers := make(map[int64]railAnswer, len(ps))
	for _, p := range ps {
		switch p.Status {
		case rules.StatusWaitingRouting:
			sub, err := lc.submit(ctx, p)
			answers[p.ID] = railAnswer{status: p.Status, sub: sub, err: err}
		case rules.StatusPendingBank, rules.StatusProcessed:
			out, err := lc.outcome(ctx, p, now)
			answers[p.ID] = railAnswer{status: p.Status, out: out, err: err}
		}
	}
	var finished []*rules.Payout
	merchants := map[string]*rules.Merchant{}
	err = lc.Store.UpdatePayouts(ctx, ids, func(p *rules.Payout, l rules.Ledger) (time.Time, error) {
		m, err := lc.merchant(merchants, p.MerchantID)
		if err != nil {
			return time.Time{}, err
		}
		a, asked := answers[p.ID]
		if asked && a.status != p.Status {
			return time.Time{}, rules.ErrNoChange // moved by someone else meanwhile; its queue entry is right
		}
		if !asked && (p.Status == rules.StatusWaitingRouting || p.Status == rules.StatusPendingBank) {
			// Queued under an older status, and moved to a rail status by another round
			// since: that round queued it right; this one has no rail answer for it.
			return time.Time{}, rules.ErrNoChange
		}
		next, err := lc.Step(p, m, l, now, rules.RailAnswer{Submission: a.sub, Outcome: a.out, Err: a.err})
		if err == nil && p.Status.Final() {
			finished = append(finished, p) // the step's own (rules.Step): no copy
		}
		return next, err
	})
	if err != nil {
		return 0, err
	}
	for _, p := range finished {
		lc.OnFinished().Trigger(ctx, p)
	}
	return len(ids), nil
}

// submit hands p to its rail, in a span of its own when tracing.
func (lc *Lifecycle) submit(ctx context.Context, p *rules.Payout) (rules.Submission, error) {
	if lc.Trace == nil {
		return lc.Rail(p.Channel).Submit(ctx, p)
	}
	ctx, span := lc.railSpan(ctx, p, "submit")
	sub, err := lc.Rail(p.Channel).Submit(ctx, p)
	span.End(err)
	return sub, err
}

// outcome asks p's rail what became of it, in a span of its own when tracing.
func (lc *Lifecycle) outcome(ctx context.Context, p *rules.Payout, now time.Time) (rules.Outcome, error) {
	if lc.Trace == nil {
		return lc.Rail(p.Channel).Outcome(ctx, p, now)
	}
	ctx, span := lc.railSpan(ctx, p, "outcome")
	out, err := lc.Rail(p.Channel).Outcome(ctx, p, now)
	span.Set(slog.Bool(rules.AttrRailSettle, out.Settled))
	if out.Settled {
		span.Set(slog.String(rules.AttrStatus, string(out.Status)))
	}
	span.End(err)
	return out, err
}

// railSpan starts the span of a rail call (rail.submit, rail.outcome) for p. A payout created
// by a traced request keeps that request's traceparent: the call is then a span of the
// create's trace, so that one trace follows the payout from its request to its settlement,
// and is linked to the round (ctx's span) that made it, with the payouts settled alongside.
func (lc *Lifecycle) railSpan(ctx context.Context, p *rules.Payout, call string) (context.Context, rules.Span) {
	round := ctx
	ctx, span := lc.Trace.Start(lc.Trace.Resume(ctx, p.Traceparent), "rail."+call, slog.String(rules.AttrRailCall, call),
		slog.String(rules.AttrChannel, string(p.Channel)), slog.Int64(rules.AttrPayoutID, p.ID))
	if p.Traceparent != "" {
		span.Link(round)
	}
	return ctx, span
}

// railPayouts are the payouts of ids, in their order: those read with the claim, the others
// read now.
func (lc *Lifecycle) railPayouts(ctx context.Context, ids []int64, read map[int64]*rules.Payout) ([]*rules.Payout, error) {
	var missing []int64
	for _, id := range ids {
		if read[id] == nil {
			missing = append(missing, id)
		}
	}
	if len(missing) == len(ids) {
		return lc.Store.PayoutsByID(ctx, ids)
	}
	if len(missing) > 0 {
		more, err := lc.Store.PayoutsByID(ctx, missing)
		if err != nil {
			return nil, err
		}
		read = maps.Clone(read)
		for _, p := range more {
			read[p.ID] = p
		}
	}
	ps := make([]*rules.Payout, 0, len(ids))
	for _, id := range ids {
		if p := read[id]; p != nil {
			ps = append(ps, p)
		}
	}
	return ps, nil
}

func (lc *Lifecycle) merchant(cache map[string]*rules.Merchant, id string) (*rules.Merchant, error) {
	if m := cache[id]; m != nil {
		return m, nil
	}
	m, err := lc.Merchants(id)
	if err != nil {
		return nil, err
	}
	cache[id] = m
	return m, nil
}
