package rules

import (
	"context"
	"errors"
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
	if kind == EventMerchantNotification || kind == EventBatchNotification || kind == EventLinkNotification {
		return LaneNotify
	}
	return LaneMail
}

// OutboxEntry is one stored event with its place in the outbox.
type OutboxEntry struct {
	Seq uint64
	Event
}

// OutboxStore is the durable outbox: the events written with the
// state changes, the ids already delivered, and the dead letters.
type OutboxStore interface {
	// DueEvents lists up to limit events of a lane whose NextAt is at or before now, oldest
	// first, leaving out (and dropping) those whose id was already delivered. next is the
	// earliest NextAt of the lane's events not yet due, zero when there is none (or when the
	// batch is full).
	DueEvents(ctx context.Context, lane Lane, now time.Time, limit int) (due []OutboxEntry, next time.Time, err error)
	// EventDelivered removes the entry and records its event id as delivered, in one
	// transaction, so that no later copy of the event is ever delivered.
	EventDelivered(ctx context.Context, seq uint64, id string, at time.Time) error
	// RescheduleEvent writes the entry back with its new attempts, NextAt and LastError.
	RescheduleEvent(ctx context.Context, seq uint64, ev Event) error
	// DeadEvent moves the entry to the dead letters: kept for inspection, never retried.
	DeadEvent(ctx context.Context, seq uint64, ev Event) error
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

// OutboxSkipper is an OutboxStore that can leave out, while it looks, the events a
// dispatcher cannot take now (already in flight, or their merchant has used its share of
// the workers), so that a merchant with many due events never hides another's.
type OutboxSkipper interface {
	DueEventsSkipping(ctx context.Context, lane Lane, now time.Time, limit int, skip func(seq uint64, merchantID string) bool) ([]OutboxEntry, time.Time, error)
}
