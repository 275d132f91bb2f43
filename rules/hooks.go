package rules

import (
	"context"
	"time"
)

// What reacts to a payout's create and to its outcome is a list of hooks, bound once where
// the service is assembled and run in the order bound: a feature adds its hook to a list
// instead of wrapping the function before it, so the order is the list's and nothing is
// reassigned. Hooks are bound before the service runs; the lists are not guarded for binding
// while they run.

// A CreateHook adds to the events written with a new payout, in the transaction that
// creates it; evs holds what the hooks before it returned. An error refuses the create.
type CreateHook func(p *Payout, m *Merchant, evs []Event) ([]Event, error)

// An OutcomeHook adds to, or fills in, the events written with a payout's outcome (SUCCESS
// or REJECTED), in the transaction that records it; evs holds what the hooks before it
// returned.
type OutcomeHook func(p *Payout, m *Merchant, evs []Event) []Event

// A DoneHook is told a payout after the transaction that created it or recorded its
// outcome committed (metrics, waking a worker, dropping what the payout no longer needs).
type DoneHook func(ctx context.Context, p *Payout)

// CreateHooks is an ordered list of CreateHook.
type CreateHooks struct{ list []CreateHook }

// Bind appends hooks, to run after those bound before.
func (h *CreateHooks) Bind(hooks ...CreateHook) { h.list = append(h.list, hooks...) }

// Trigger runs the hooks in order and returns the events they gave; the first error stops it.
func (h *CreateHooks) Trigger(p *Payout, m *Merchant) ([]Event, error) {
	var evs []Event
	for _, hook := range h.list {
		var err error
		if evs, err = hook(p, m, evs); err != nil {
			return nil, err
		}
	}
	return evs, nil
}

// OutcomeHooks is an ordered list of OutcomeHook.
type OutcomeHooks struct{ list []OutcomeHook }

// Bind appends hooks, to run after those bound before.
func (h *OutcomeHooks) Bind(hooks ...OutcomeHook) { h.list = append(h.list, hooks...) }

// Trigger runs the hooks in order and returns the events they gave.
func (h *OutcomeHooks) Trigger(p *Payout, m *Merchant) []Event {
	var evs []Event
	for _, hook := range h.list {
		evs = hook(p, m, evs)
	}
	return evs
}

// DoneHooks is an ordered list of DoneHook.
type DoneHooks struct{ list []DoneHook }

// Bind appends hooks, to run after those bound before.
func (h *DoneHooks) Bind(hooks ...DoneHook) { h.list = append(h.list, hooks...) }

// Trigger tells each hook p, in order.
func (h *DoneHooks) Trigger(ctx context.Context, p *Payout) {
	for _, hook := range h.list {
		hook(ctx, p)
	}
}

// OutcomeEventsHook is the OutcomeHook that adds a payout's OutcomeEvents at the time now
// tells: the first hook of every lifecycle that mails and notifies outcomes.
func OutcomeEventsHook(now func() time.Time) OutcomeHook {
	return func(p *Payout, m *Merchant, evs []Event) []Event {
		return append(evs, OutcomeEvents(p, m, now())...)
	}
}
