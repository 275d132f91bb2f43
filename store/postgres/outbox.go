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
func (s *DB) DueEvents(ctx context.Context, lane rules.Lane, now time.Time, limit int) ([]rules.OutboxEntry, time.Time, error) {
	return s.DueEventsSkipping(ctx, lane, now, limit, nil)
}

// DueEventsSkipping is DueEvents leaving out the events skip refuses (rules.OutboxSkipper),
// asked in order with each event's merchant; an event skipped is not claimed. A limit of
// zero or less lists nothing.
func (s *DB) DueEventsSkipping(ctx context.Context, lane rules.Lane, now time.Time, limit int, skip func(seq uint64, merchantID string) bool) ([]rules.OutboxEntry, time.Time, error) {
	if limit <= 0 {
		return nil, time.Time{}, nil
	}
	ctx, cancel := callContext(ctx)
	defer cancel()
	look := &dueLook{}
	if err := look.run(ctx, s.pool, s.instance, lane, now, limit, skip, s.lease); err != nil {
		return nil, time.Time{}, fmt.Errorf("due events of lane %s: %w", lane, err)
	}
	s.claimedEvents.Add(int64(len(look.due)))
	s.takenOver.Add(int64(look.takenOver))
	return look.due, look.next, nil
}

// run is one look in three round trips: BEGIN with the first page of candidates; the drops,
// the claims and the next due time; COMMIT (a page more for each page that skip or stale
// copies emptied).
func (l *dueLook) run(ctx context.Context, pool pgxBatcher, instance string, lane rules.Lane, now time.Time, limit int,
	skip func(uint64, string) bool, lease time.Duration) error {
	page := max(minOutboxPage, 2*limit)
	b := &pgx.Batch{}
	b.BeginTx(pgx.TxOptions{})
	var cands []dueCandidate
	queueDueCandidates(b, lane, now, time.Time{}, 0, page, &cands)
	br := pool.SendBatch(ctx, b)
	tx := br.Tx()
	defer tx.Rollback(ctx) // after a commit, a no-op
	if err := br.Close(); err != nil {
		return err
	}
	if err := l.collect(ctx, tx, instance, lane, now, limit, page, cands, skip); err != nil {
		return err
	}
	wb := &pgx.Batch{}
	l.queueWrite(wb, instance, now, lease)
	if len(l.due) < limit {
		l.queueNextDue(wb, lane, now)
	}
	if err := tx.SendBatch(ctx, wb).Close(); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// collect goes through the lane's due, unclaimed events a page at a time, in order, from
// the first page cands, until limit events are due or none is left: skip first, then a
// delivered copy is stale, and the rest is due.
func (l *dueLook) collect(ctx context.Context, tx pgx.Tx, instance string, lane rules.Lane, now time.Time, limit, page int,
	cands []dueCandidate, skip func(uint64, string) bool) error {
	for {
		var afterAt time.Time
		var afterSeq int64
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
		b := &pgx.Batch{}
		queueDueCandidates(b, lane, now, afterAt, afterSeq, page, &cands)
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return err
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

// queueDueCandidates queues the lock of the next page of the lane's events due at now and
// free of claims, after (afterAt, afterSeq) in the order next_at, seq, read into cands. Rows
// another transaction holds are passed over: they are another look's (or being settled).
func queueDueCandidates(b *pgx.Batch, lane rules.Lane, now, afterAt time.Time, afterSeq int64, page int, cands *[]dueCandidate) {
	b.Queue(`
		SELECT seq, merchant_id, next_at, lease_owner, doc,
			EXISTS (SELECT 1 FROM delivered d WHERE d.event_id = o.event_id)
		FROM outbox o
		WHERE lane = $1 AND NOT dead AND next_at <= $2
			AND (lease_until IS NULL OR lease_until < $2)
			AND (next_at, seq) > ($3, $4)
		ORDER BY next_at, seq
		LIMIT $5
		FOR UPDATE OF o SKIP LOCKED`,
		string(lane), now.UTC(), afterAt.UTC(), afterSeq, page).Query(func(rows pgx.Rows) error {
		var err error
		*cands, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (dueCandidate, error) {
			var c dueCandidate
			err := r.Scan(&c.seq, &c.merchantID, &c.nextAt, &c.owner, &c.doc, &c.sent)
			return c, err
		})
		return err
	})
}

// queueWrite queues the drop of the stale copies and the claim of the due events for
// instance until lease after now. Leases run on the service's clock, the now of the look
// (rules.Storage): the instances' clocks are the same real time, and in the sandbox the same
// offset, shared through the database.
func (l *dueLook) queueWrite(b *pgx.Batch, instance string, now time.Time, lease time.Duration) {
	if len(l.stale) > 0 {
		b.Queue(`DELETE FROM outbox WHERE seq = ANY($1)`, l.stale)
	}
	if len(l.claim) > 0 {
		b.Queue(`UPDATE outbox SET lease_owner = $1, lease_until = $2 WHERE seq = ANY($3)`,
			instance, now.Add(lease).UTC(), l.claim)
	}
}

// queueNextDue queues the read of the NextAt of the lane's first event not yet due at now
// (zero: none).
func (l *dueLook) queueNextDue(b *pgx.Batch, lane rules.Lane, now time.Time) {
	b.Queue(`SELECT doc FROM outbox
		WHERE lane = $1 AND NOT dead AND next_at > $2
		ORDER BY next_at, seq LIMIT 1`, string(lane), now.UTC()).Query(func(rows pgx.Rows) error {
		docs, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
		if err != nil || len(docs) == 0 {
			return err
		}
		ev, err := eventOfDoc(docs[0])
		l.next = ev.NextAt
		return err
	})
}

// eventOfDoc decodes an outbox row's event.
func eventOfDoc(doc []byte) (rules.Event, error) {
	var ev rules.Event
	if err := json.Unmarshal(doc, &ev); err != nil {
		return rules.Event{}, fmt.Errorf("decode event: %w", err)
	}
	return ev, nil
}

// releaseEvents gives up the outbox events this instance still claims (Close, once the
// dispatchers have stopped: no try of them is in flight), so that another instance, or
// this one started again, delivers them as soon as they are due instead of after the
// lease: a try cut short by the shutdown left its claim unsettled. bbolt's claims end with
// its process likewise. A failure leaves them to their lease's end.
func (s *DB) releaseEvents() {
	ctx, cancel := callContext(context.Background()) // at close: no caller's context
	defer cancel()
	if tag, err := s.pool.Exec(ctx, `UPDATE outbox SET lease_owner = NULL, lease_until = NULL WHERE lease_owner = $1`, s.instance); err == nil {
		s.claimedEvents.Add(-tag.RowsAffected())
	}
}

// released counts a claim of this instance settled.
func (s *DB) released(owner *string) {
	if owner != nil && *owner == s.instance {
		s.claimedEvents.Add(-1)
	}
}

// EventDelivered removes a delivered event and records its id, in one statement (one round
// trip, one transaction), so that no later copy of the event is ever delivered.
func (s *DB) EventDelivered(ctx context.Context, seq uint64, id string, at time.Time) error {
	ctx, cancel := callContext(ctx)
	defer cancel()
	var owner *string
	err := s.pool.QueryRow(ctx, `WITH gone AS (DELETE FROM outbox WHERE seq = $1 RETURNING lease_owner),
			mark AS (INSERT INTO delivered (event_id, at) VALUES ($2, $3) ON CONFLICT DO NOTHING)
		SELECT (SELECT lease_owner FROM gone), EXISTS (SELECT 1 FROM gone)`, int64(seq), id, at.UTC()).
		Scan(&owner, new(bool))
	if err != nil {
		return fmt.Errorf("event %s delivered: %w", id, err)
	}
	s.released(owner)
	return nil
}

// RescheduleEvent writes a pending event back with its new attempts, NextAt and LastError,
// and releases its claim. An event no longer pending stays as it is, and so does one whose
// expired claim another instance took over (its write is the one that counts).
func (s *DB) RescheduleEvent(ctx context.Context, seq uint64, ev rules.Event) error {
	doc, err := json.Marshal(ev)
	if err == nil {
		err = s.settle(ctx, seq, `lane = $3, kind = $4, merchant_id = $5, payout_id = $6, next_at = $7, doc = $8`,
			string(rules.LaneOf(ev.Kind)), ev.Kind, ev.MerchantID, ev.PayoutID, ev.NextAt.UTC(), doc)
	}
	if err != nil {
		return fmt.Errorf("reschedule event %s: %w", ev.ID, err)
	}
	return nil
}

// DeadEvent moves a pending event to the dead letters (kept for inspection, never retried)
// and releases its claim; the same exceptions as RescheduleEvent.
func (s *DB) DeadEvent(ctx context.Context, seq uint64, ev rules.Event) error {
	doc, err := json.Marshal(ev)
	if err == nil {
		err = s.settle(ctx, seq, `dead = true, doc = $3`, doc)
	}
	if err != nil {
		return fmt.Errorf("dead-letter event %s: %w", ev.ID, err)
	}
	return nil
}

// settle writes set (with its arguments from $3) on a pending event whose claim is this
// instance's (or free, or expired) and releases the claim, in one statement: the row locked,
// its claim checked and written in one round trip.
func (s *DB) settle(ctx context.Context, seq uint64, set string, args ...any) error {
	ctx, cancel := callContext(ctx)
	defer cancel()
	var owner *string
	err := s.pool.QueryRow(ctx, `WITH c AS (SELECT seq, lease_owner FROM outbox WHERE seq = $1 AND NOT dead FOR UPDATE)
		UPDATE outbox o SET `+set+`, lease_owner = NULL, lease_until = NULL
		FROM c WHERE o.seq = c.seq AND (c.lease_owner IS NULL OR c.lease_owner = $2)
		RETURNING c.lease_owner`, append([]any{int64(seq), s.instance}, args...)...).Scan(&owner)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil // no longer pending, or another instance's now
	}
	if err != nil {
		return err
	}
	s.released(owner)
	return nil
}
