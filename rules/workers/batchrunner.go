package workers

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"payouts/rules"
)

// BatchRunner creates the items of approved batches as payouts, and notifies the merchant
// once every item of a batch reached a final stage. All its state is in the store: after a
// crash it resumes where it stopped, and an item whose payout was created but not yet
// recorded is found again by its orderId (the create is idempotent on it), so every item
// becomes exactly one payout.
type BatchRunner struct {
	Store     rules.BatchStore
	Service   *rules.Service
	Merchants func(id string) (*rules.Merchant, error)
	Now       func() time.Time
	Log       *slog.Logger
	// Parallel is how many items are created at once (they meet in the engine's group
	// writes, as concurrent single creates do). Zero is 64.
	Parallel int
	// Notice builds a batch's notification body (api); nil writes no notification.
	Notice func(b *rules.Batch, items []rules.BatchItem) ([]byte, error)
	// Notified is told after a notification is written (wakes the dispatcher). May be nil.
	Notified func()
	// Poll is how often the runner looks for work besides its kicks (final stages come from
	// the lifecycle). Zero is one second.
	Poll time.Duration

	once sync.Once
	wake chan struct{}
}

// Kick wakes the runner.
func (r *BatchRunner) Kick() {
	r.init()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

func (r *BatchRunner) init() { r.once.Do(func() { r.wake = make(chan struct{}, 1) }) }

// Run works until ctx ends.
func (r *BatchRunner) Run(ctx context.Context) {
	r.init()
	poll := r.Poll
	if poll <= 0 {
		poll = time.Second
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		if err := r.RunOnce(ctx); err != nil && ctx.Err() == nil {
			r.log().Warn("batch runner", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-r.wake:
		case <-t.C:
		}
	}
}

func (r *BatchRunner) log() *slog.Logger {
	if r.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return r.Log
}

// RunOnce takes every runnable batch one step on: creates the items of the approved ones,
// and notifies the completed ones whose items are all final.
func (r *BatchRunner) RunOnce(ctx context.Context) error {
	bs, err := r.Store.RunnableBatches(ctx)
	if err != nil {
		return err
	}
	for _, b := range bs {
		if ctx.Err() != nil {
			return nil
		}
		switch b.Status {
		case rules.BatchApproved, rules.BatchProcessing:
			err = r.create(ctx, b)
		case rules.BatchCompleted:
			err = r.notify(ctx, b)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// create creates the batch's items not yet created, Parallel at a time, recording their
// payouts in chunks; then the batch is COMPLETED. An item the create refuses (no balance,
// an orderId taken since the upload) keeps that error; an outage stops the run, to resume.
func (r *BatchRunner) create(ctx context.Context, b *rules.Batch) error {
	if b.Status == rules.BatchApproved {
		if _, err := r.Store.UpdateBatch(ctx, b.MerchantID, b.ID, func(b *rules.Batch) ([]rules.Event, error) {
			if b.Status == rules.BatchApproved {
				b.Status = rules.BatchProcessing
			}
			return nil, nil
		}); err != nil {
			return err
		}
	}
	m, err := r.Merchants(b.MerchantID)
	if err != nil {
		return err
	}
	items, err := r.Store.BatchItems(ctx, b.MerchantID, b.ID, 0, 0)
	if err != nil {
		return err
	}
	var todo []rules.BatchItem
	for _, it := range items {
		if !it.Done() && it.OrderID != "" {
			todo = append(todo, it)
		}
	}
	parallel := r.Parallel
	if parallel <= 0 {
		parallel = 64
	}
	jobs := make(chan rules.BatchItem)
	results := make(chan rules.BatchItem)
	var stop error
	var stopOnce sync.Once
	halt, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for w := 0; w < parallel; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range jobs {
				var res rules.CreateResult
				var err error
				if it.Link {
					res, err = r.Service.CreateLink(halt, m, it.Body)
				} else {
					res, err = r.Service.CreatePayout(halt, m, it.Body, rules.EndpointPayouts)
				}
				switch {
				case err == nil:
					it.PayoutID = res.Payout.ID
				case rules.Unavailable(err) || !isRefusal(err):
					stopOnce.Do(func() { stop = err; cancel() })
					continue
				default:
					it.Code, it.Location, it.Message = refusal(err)
				}
				results <- it
			}
		}()
	}
	go func() {
		defer close(jobs)
		for _, it := range todo {
			select {
			case jobs <- it:
			case <-halt.Done():
				return
			}
		}
	}()
	go func() { wg.Wait(); close(results) }()
	const chunk = 500
	var done []rules.BatchItem
	var werr error
	for it := range results {
		done = append(done, it)
		if len(done) >= chunk && werr == nil {
			werr = r.Store.RecordBatchItems(ctx, b.MerchantID, b.ID, done)
			done = done[:0]
			if werr != nil {
				cancel()
			}
		}
	}
	if werr == nil && len(done) > 0 {
		werr = r.Store.RecordBatchItems(ctx, b.MerchantID, b.ID, done)
	}
	if werr != nil {
		return werr
	}
	if stop != nil {
		return stop
	}
	if ctx.Err() != nil {
		return nil
	}
	_, err = r.Store.UpdateBatch(ctx, b.MerchantID, b.ID, func(b *rules.Batch) ([]rules.Event, error) {
		if b.Status == rules.BatchProcessing {
			b.Status, b.CompletedAt = rules.BatchCompleted, r.Now().UTC()
		}
		return nil, nil
	})
	return err
}

// isRefusal says whether err is the create's answer about the item (a code to record), not
// a failure of the service.
func isRefusal(err error) bool {
	var p *rules.Problem
	var e *rules.Error
	switch {
	case errors.As(err, &p):
		return p.Kind != rules.KindInternal && p.Kind != rules.KindUnavailable
	case errors.As(err, &e):
		return e.Kind != rules.KindInternal && e.Kind != rules.KindUnavailable
	}
	return false
}

func refusal(err error) (code, location, message string) {
	var p *rules.Problem
	if errors.As(err, &p) && len(p.Errors) > 0 {
		return p.Errors[0].Code, p.Errors[0].Field, p.Errors[0].Message
	}
	var e *rules.Error
	if errors.As(err, &e) {
		return e.Code, e.Field, e.Message
	}
	return rules.CodeInternal, "", err.Error()
}

// notify writes the batch's notification once every item is final (and marks the batch
// notified, in the same transaction, so that it is written once).
func (r *BatchRunner) notify(ctx context.Context, b *rules.Batch) error {
	items, err := r.Store.BatchItems(ctx, b.MerchantID, b.ID, 0, 0)
	if err != nil {
		return err
	}
	for i := range items {
		if !items[i].Final() {
			return nil
		}
	}
	m, err := r.Merchants(b.MerchantID)
	if err != nil {
		return err
	}
	wrote := false
	_, err = r.Store.UpdateBatch(ctx, b.MerchantID, b.ID, func(cur *rules.Batch) ([]rules.Event, error) {
		if !cur.NotifiedAt.IsZero() {
			return nil, nil
		}
		now := r.Now().UTC()
		cur.NotifiedAt = now
		if r.Notice == nil || m.Settings.NotificationURL == "" {
			return nil, nil
		}
		body, err := r.Notice(cur, items)
		if err != nil {
			return nil, err
		}
		wrote = true
		return []rules.Event{{ID: rules.BatchEventID(cur.ID), Kind: rules.EventBatchNotification, MerchantID: cur.MerchantID,
			Data: body, CreatedAt: now, NextAt: now}}, nil
	})
	if err == nil && wrote && r.Notified != nil {
		r.Notified()
	}
	return err
}
