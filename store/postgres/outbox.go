package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"payouts/rules"
)

// The outbox's consumer (rules.OutboxStore, rules.OutboxSkipper). Several instances take
// events from one outbox: a look at it claims what it returns (lease_owner, lease_until)
// in the transaction that selected it FOR UPDATE SKIP LOCKED, so that no other instance
// gets the same event until the claim is settled (EventDelivered, RescheduleEvent,
// DeadEvent) or its lease ends. The semantics are store/bolt's outbox.go otherwise.

// minOutboxPage is the fewest candidates one look locks at a time: skip may refuse many
// (a merchant with its share of the workers in use), and the look goes on, a page at a
// time, until the batch is full or the lane's due events are all seen.
const minOutboxPage = 64

// dueCandidate is an event due now and free of claims, locked by the look at the outbox.
type dueCandidate struct {
	seq        int64
	merchantID string
	nextAt     time.Time
	owner      *string // the owner of an expired claim, nil when never claimed
	sent       bool    // its id was delivered already
	doc        []byte
}

// dueLook is one look at a lane's due events: what it returns, what it drops.
type dueLook struct {
	due       []rules.OutboxEntry
	claim     []int64 // the seqs of due
	stale     []int64 // delivered copies, dropped
	takenOver int     // expired claims of other instances among claim
	next      time.Time
}

// DueEvents lists and claims up to limit outbox events of a lane due at now, earliest due
// first (then in the order they were written), and the NextAt of the first event not yet
// due when the batch is not full. Events whose id was already delivered are dropped from
// the outbox instead of being listed (rules.OutboxStore).
func (s *DB) DueEvents(lane rules.Lane, now time.Time, limit int) ([]rules.OutboxEntry, time.Time, error) {
	return s.DueEventsSkipping(lane, now, limit, nil)
}

// DueEventsSkipping is DueEvents leaving out the events skip refuses (rules.OutboxSkipper),
// asked in order with each event's merchant; an event skipped is not claimed. A limit of
// zero or less lists nothing.
func (s *DB) DueEventsSkipping(lane rules.Lane, now time.Time, limit int, skip func(seq uint64, merchantID string) bool) ([]rules.OutboxEntry, time.Time, error) {
	if limit <= 0 {
		return nil, time.Time{}, nil
	}
	ctx := context.Background()
	var look *dueLook
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		look = &dueLook{}
		if err := look.collect(ctx, tx, s.instance, lane, now, limit, skip); err != nil {
			return err
		}
		if err := look.write(ctx, tx, s.instance, now, s.lease); err != nil {
			return err
		}
		if len(look.due) < limit {
			return look.nextDue(ctx, tx, lane, now)
		}
		return nil
	})
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("due events of lane %s: %w", lane, err)
	}
	s.claimedEvents.Add(int64(len(look.due)))
	s.takenOver.Add(int64(look.takenOver))
	return look.due, look.next, nil
}

// collect goes through the lane's due, unclaimed events a page at a time, in order, until
// limit events are due or none is left: skip first, then a delivered copy is stale, and
// the rest is due.
func (l *dueLook) collect(ctx context.Context, tx pgx.Tx, instance string, lane rules.Lane, now time.Time, limit int, skip func(uint64, string) bool) error {
	page := max(minOutboxPage, 2*limit)
	var afterAt time.Time
	var afterSeq int64
	for {
		cands, err := dueCandidates(ctx, tx, lane, now, afterAt, afterSeq, page)
		if err != nil {
			return err
		}
		for _, c := range cands {
			afterAt, afterSeq = c.nextAt, c.seq
			if skip != nil && skip(uint64(c.seq), c.merchantID) {
				continue
			}
			if c.sent {
				l.stale = append(l.stale, c.seq)
				continue
			}
			if err := l.add(c, instance); err != nil {
				return err
			}
			if len(l.due) == limit {
				return nil // a full batch: the dispatcher looks again at once
			}
		}
		if len(cands) < page {
			return nil
		}
	}
}

// add makes a candidate one of the look's due events.
func (l *dueLook) add(c dueCandidate, instance string) error {
	ev, err := eventOfDoc(c.doc)
	if err != nil {
		return fmt.Errorf("outbox event %d: %w", c.seq, err)
	}
	l.due = append(l.due, rules.OutboxEntry{Seq: uint64(c.seq), Event: ev})
	l.claim = append(l.claim, c.seq)
	if c.owner != nil && *c.owner != instance {
		l.takenOver++
	}
	return nil
}

// dueCandidates locks the next page of the lane's events due at now and free of claims,
// after (afterAt, afterSeq) in the order next_at, seq. Rows another transaction holds are
// passed over: they are another look's (or being settled).
func dueCandidates(ctx context.Context, tx pgx.Tx, lane rules.Lane, now, afterAt time.Time, afterSeq int64, page int) ([]dueCandidate, error) {
	rows, err := tx.Query(ctx, `
		SELECT seq, merchant_id, next_at, lease_owner, doc,
			EXISTS (SELECT 1 FROM delivered d WHERE d.event_id = o.event_id)
		FROM outbox o
		WHERE lane = $1 AND NOT dead AND next_at <= $2
			AND (lease_until IS NULL OR lease_until < $2)
			AND (next_at, seq) > ($3, $4)
		ORDER BY next_at, seq
		LIMIT $5
		FOR UPDATE OF o SKIP LOCKED`,
		string(lane), now.UTC(), afterAt.UTC(), afterSeq, page)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (dueCandidate, error) {
		var c dueCandidate
		err := r.Scan(&c.seq, &c.merchantID, &c.nextAt, &c.owner, &c.doc, &c.sent)
		return c, err
	})
}

// write drops the stale copies and claims the due events for instance until lease after now.
// Leases run on the service's clock, the now of the look (rules.Storage): the instances'
// clocks are the same real time, and in the sandbox the same offset, shared through the
// database.
func (l *dueLook) write(ctx context.Context, tx pgx.Tx, instance string, now time.Time, lease time.Duration) error {
	if len(l.stale) > 0 {
		if _, err := tx.Exec(ctx, `DELETE FROM outbox WHERE seq = ANY($1)`, l.stale); err != nil {
			return fmt.Errorf("drop delivered copies: %w", err)
		}
	}
	if len(l.claim) > 0 {
		_, err := tx.Exec(ctx, `UPDATE outbox
			SET lease_owner = $1, lease_until = $2
			WHERE seq = ANY($3)`, instance, now.Add(lease).UTC(), l.claim)
		if err != nil {
			return fmt.Errorf("claim events: %w", err)
		}
	}
	return nil
}

// nextDue finds the NextAt of the lane's first event not yet due at now (zero: none).
func (l *dueLook) nextDue(ctx context.Context, tx pgx.Tx, lane rules.Lane, now time.Time) error {
	var doc []byte
	err := tx.QueryRow(ctx, `SELECT doc FROM outbox
		WHERE lane = $1 AND NOT dead AND next_at > $2
		ORDER BY next_at, seq LIMIT 1`, string(lane), now.UTC()).Scan(&doc)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("next due event: %w", err)
	}
	ev, err := eventOfDoc(doc)
	l.next = ev.NextAt
	return err
}

// eventOfDoc decodes an outbox row's event.
func eventOfDoc(doc []byte) (rules.Event, error) {
	var ev rules.Event
	if err := json.Unmarshal(doc, &ev); err != nil {
		return rules.Event{}, fmt.Errorf("decode event: %w", err)
	}
	return ev, nil
}

// settledClaim is what a write learnt of the event's claim before it released it.
type settledClaim struct {
	found bool // the event is still pending
	mine  bool // no other instance took it over
	owner *string
}

// lockClaim locks a pending event for the write that settles its claim.
func lockClaim(ctx context.Context, tx pgx.Tx, seq uint64, instance string) (settledClaim, error) {
	var c settledClaim
	err := tx.QueryRow(ctx, `SELECT lease_owner
		FROM outbox WHERE seq = $1 AND NOT dead FOR UPDATE`, int64(seq)).Scan(&c.owner)
	if errors.Is(err, pgx.ErrNoRows) {
		return c, nil
	}
	if err != nil {
		return c, fmt.Errorf("lock event %d: %w", seq, err)
	}
	c.found = true
	// Another instance's claim means it took the event over after this one's lease ended:
	// the event is its now.
	c.mine = c.owner == nil || *c.owner == instance
	return c, nil
}

// released counts a claim of this instance settled.
func (s *DB) released(owner *string) {
	if owner != nil && *owner == s.instance {
		s.claimedEvents.Add(-1)
	}
}

// EventDelivered removes a delivered event and records its id, in one transaction, so that
// no later copy of the event is ever delivered.
func (s *DB) EventDelivered(seq uint64, id string, at time.Time) error {
	ctx := context.Background()
	var owner *string
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `DELETE FROM outbox WHERE seq = $1 RETURNING lease_owner`, int64(seq)).Scan(&owner)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO delivered (event_id, at) VALUES ($1, $2) ON CONFLICT DO NOTHING`, id, at.UTC())
		return err
	})
	if err != nil {
		return fmt.Errorf("event %s delivered: %w", id, err)
	}
	s.released(owner)
	return nil
}

// RescheduleEvent writes a pending event back with its new attempts, NextAt and LastError,
// and releases its claim. An event no longer pending stays as it is, and so does one whose
// expired claim another instance took over (its write is the one that counts).
func (s *DB) RescheduleEvent(seq uint64, ev rules.Event) error {
	err := s.settle(seq, func(ctx context.Context, tx pgx.Tx) error {
		doc, err := json.Marshal(ev)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE outbox SET lane = $2, kind = $3, merchant_id = $4, payout_id = $5,
			next_at = $6, doc = $7, lease_owner = NULL, lease_until = NULL WHERE seq = $1`,
			int64(seq), string(rules.LaneOf(ev.Kind)), ev.Kind, ev.MerchantID, ev.PayoutID, ev.NextAt.UTC(), doc)
		return err
	})
	if err != nil {
		return fmt.Errorf("reschedule event %s: %w", ev.ID, err)
	}
	return nil
}

// DeadEvent moves a pending event to the dead letters (kept for inspection, never retried)
// and releases its claim; the same exceptions as RescheduleEvent.
func (s *DB) DeadEvent(seq uint64, ev rules.Event) error {
	err := s.settle(seq, func(ctx context.Context, tx pgx.Tx) error {
		doc, err := json.Marshal(ev)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE outbox SET dead = true, doc = $2, lease_owner = NULL, lease_until = NULL
			WHERE seq = $1`, int64(seq), doc)
		return err
	})
	if err != nil {
		return fmt.Errorf("dead-letter event %s: %w", ev.ID, err)
	}
	return nil
}

// settle runs write on a pending event whose claim is this instance's (or free, or
// expired), in one transaction with the lock that checks it.
func (s *DB) settle(seq uint64, write func(context.Context, pgx.Tx) error) error {
	ctx := context.Background()
	var claim settledClaim
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		if claim, err = lockClaim(ctx, tx, seq, s.instance); err != nil || !claim.found || !claim.mine {
			return err
		}
		return write(ctx, tx)
	})
	if err == nil && claim.found && claim.mine {
		s.released(claim.owner)
	}
	return err
}
