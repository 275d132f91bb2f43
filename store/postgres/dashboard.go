package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"payouts/rules"
)

// What the dashboard, the mailbox and the operators read of the outbox and do to it
// (rules.OutboxAdmin), as store/bolt's dashboard.go and outbox.go do it.

// Outbox housekeeping bounds what the outbox keeps forever, as store/bolt does: a delivered
// id is needed only while a copy of its event could still arrive (retries end after 24
// hours), and the sandbox mailbox is for reading recent mail.
const (
	KeepDeliveredIDs = 7 * 24 * time.Hour
	KeepSandboxMails = 10_000
)

// maxDeliveredScan bounds how many delivered ids one listing reads (they are kept for
// KeepDeliveredIDs, then pruned).
const maxDeliveredScan = 100_000

// OutboxRecords lists the events held in the outbox and in the dead letters, newest first,
// up to limit, those keep(rec) accepts.
func (s *DB) OutboxRecords(ctx context.Context, limit int, keep func(rules.OutboxRecord) bool) ([]rules.OutboxRecord, error) {
	rows, err := s.pool.Query(context.Background(), `SELECT doc, dead FROM outbox ORDER BY dead, seq DESC`)
	if err != nil {
		return nil, fmt.Errorf("outbox records: %w", err)
	}
	defer rows.Close()
	var out []rules.OutboxRecord
	for rows.Next() {
		var doc []byte
		var dead bool
		if err := rows.Scan(&doc, &dead); err != nil {
			return nil, fmt.Errorf("outbox records: %w", err)
		}
		ev, err := eventOfDoc(doc)
		if err != nil {
			return nil, fmt.Errorf("outbox records: %w", err)
		}
		rec := rules.HeldRecord(ev, dead)
		if keep == nil || keep(rec) {
			out = append(out, rec)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("outbox records: %w", err)
	}
	slices.SortStableFunc(out, func(a, b rules.OutboxRecord) int { return b.CreatedAt.Compare(a.CreatedAt) })
	return out[:min(len(out), max(limit, 0))], nil
}

// DeliveredRecords lists the delivered event ids, newest delivery first, up to limit, those
// keep(rec) accepts. The kind and, for outcome events ("kind:payoutId:status"), the payout
// id are read from the id.
func (s *DB) DeliveredRecords(ctx context.Context, limit int, keep func(rules.OutboxRecord) bool) ([]rules.OutboxRecord, error) {
	rows, err := s.pool.Query(context.Background(),
		`SELECT event_id, at FROM delivered ORDER BY event_id COLLATE "C" LIMIT $1`, maxDeliveredScan)
	if err != nil {
		return nil, fmt.Errorf("delivered records: %w", err)
	}
	defer rows.Close()
	var out []rules.OutboxRecord
	for rows.Next() {
		var id string
		var at time.Time
		if err := rows.Scan(&id, &at); err != nil {
			return nil, fmt.Errorf("delivered records: %w", err)
		}
		rec := rules.DeliveredRecord(id, at.UTC())
		if keep == nil || keep(rec) {
			out = append(out, rec)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("delivered records: %w", err)
	}
	slices.SortStableFunc(out, func(a, b rules.OutboxRecord) int { return b.DeliveredAt.Compare(a.DeliveredAt) })
	return out[:min(len(out), max(limit, 0))], nil
}

// ResendEvent makes a new attempt of an event: a pending or retrying event becomes due at
// now; a dead letter goes back into the outbox, due at now, with its attempts and last error
// kept and a fresh CreatedAt (the dispatcher gives up on an event a day after it was
// written, so a revived letter gets its retries again). The event id stays the same, so it
// is still delivered at most once; the new attempt is unclaimed. found is false when no such
// event is held (unknown, or already delivered).
func (s *DB) ResendEvent(ctx context.Context, id string, now time.Time) (rules.Event, bool, error) {
	ctx = context.WithoutCancel(ctx) // the work ends even when its caller has gone
	var ev rules.Event
	var found bool
	var owner *string
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		var dead bool
		ev, found, dead, owner, err = takeHeldEvent(ctx, tx, id)
		if err != nil || !found {
			return err
		}
		if dead {
			ev.CreatedAt = now
		}
		ev.NextAt = now
		return enqueue(ctx, tx, ev)
	})
	if err != nil {
		return rules.Event{}, false, fmt.Errorf("resend event %s: %w", id, err)
	}
	s.released(owner)
	return ev, found, nil
}

// takeHeldEvent removes an event held by id, pending before dead, the earliest written
// first, and says whether it was a dead letter and who had claimed it. Nothing is found
// for an id already delivered.
func takeHeldEvent(ctx context.Context, tx pgx.Tx, id string) (ev rules.Event, found, dead bool, owner *string, err error) {
	var delivered bool
	err = tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM delivered WHERE event_id = $1)`, id).Scan(&delivered)
	if err != nil || delivered {
		return ev, false, false, nil, err // delivered: a new attempt would be a second delivery
	}
	var doc []byte
	err = tx.QueryRow(ctx, `DELETE FROM outbox WHERE seq = (
			SELECT seq FROM outbox WHERE event_id = $1 ORDER BY dead, seq LIMIT 1 FOR UPDATE)
		RETURNING doc, dead, lease_owner`, id).Scan(&doc, &dead, &owner)
	if errors.Is(err, pgx.ErrNoRows) {
		return ev, false, false, nil, nil
	}
	if err != nil {
		return ev, false, false, nil, err
	}
	ev, err = eventOfDoc(doc)
	return ev, err == nil, dead, owner, err
}

// OutboxEvents lists the pending events in the order they were written, up to limit.
func (s *DB) OutboxEvents(ctx context.Context, limit int) ([]rules.Event, error) {
	evs, err := s.heldEvents(false, limit)
	if err != nil {
		return nil, fmt.Errorf("outbox events: %w", err)
	}
	return evs, nil
}

// DeadEvents lists the dead letters, oldest first, up to limit.
func (s *DB) DeadEvents(ctx context.Context, limit int) ([]rules.Event, error) {
	evs, err := s.heldEvents(true, limit)
	if err != nil {
		return nil, fmt.Errorf("dead events: %w", err)
	}
	return evs, nil
}

func (s *DB) heldEvents(dead bool, limit int) ([]rules.Event, error) {
	if limit <= 0 {
		return nil, nil
	}
	rows, err := s.pool.Query(context.Background(),
		`SELECT doc FROM outbox WHERE dead = $1 ORDER BY seq LIMIT $2`, dead, limit)
	if err != nil {
		return nil, err
	}
	docs, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		return nil, err
	}
	var out []rules.Event
	for _, doc := range docs {
		ev, err := eventOfDoc(doc)
		if err != nil {
			return nil, err
		}
		out = append(out, ev)
	}
	return out, nil
}

// WasDelivered reports whether the event id was delivered, and when.
func (s *DB) WasDelivered(ctx context.Context, id string) (time.Time, bool, error) {
	var at time.Time
	err := s.pool.QueryRow(context.Background(), `SELECT at FROM delivered WHERE event_id = $1`, id).Scan(&at)
	if errors.Is(err, pgx.ErrNoRows) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, fmt.Errorf("was event %s delivered: %w", id, err)
	}
	return at.UTC(), true, nil
}

// PutSandboxMail keeps one mail (JSON) in the sandbox mailbox. A mail of an outbox event
// is written with the event's delivered mark in the same transaction, and not at all when
// the event was already delivered: the mailbox is the one end we own, so a crash between
// the mail and the mark can never make a second copy. A mail without
// an event is simply kept.
func (s *DB) PutSandboxMail(ctx context.Context, eventID string, raw []byte, at time.Time) error {
	if !json.Valid(raw) {
		return errors.New("store: a sandbox mail is JSON")
	}
	ctx = context.WithoutCancel(ctx) // the work ends even when its caller has gone
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var event *string
		if eventID != "" {
			tag, err := tx.Exec(ctx, `INSERT INTO delivered (event_id, at) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
				eventID, at.UTC())
			if err != nil || tag.RowsAffected() == 0 {
				return err // delivered already
			}
			event = &eventID
		}
		_, err := tx.Exec(ctx, `INSERT INTO sandbox_mail (event_id, raw, at) VALUES ($1, $2, $3)`, event, raw, at.UTC())
		return err
	})
	if err != nil {
		return fmt.Errorf("keep sandbox mail: %w", err)
	}
	return nil
}

// SandboxMails lists the sandbox mailbox, newest first, up to limit.
func (s *DB) SandboxMails(ctx context.Context, limit int) ([][]byte, error) {
	if limit <= 0 {
		return nil, nil
	}
	rows, err := s.pool.Query(context.Background(), `SELECT raw FROM sandbox_mail ORDER BY seq DESC LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("sandbox mails: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		return nil, fmt.Errorf("sandbox mails: %w", err)
	}
	return out, nil
}

// PruneOutbox forgets delivered ids older than KeepDeliveredIDs and all but the newest
// KeepSandboxMails sandbox mails; it says how many records it removed.
func (s *DB) PruneOutbox(ctx context.Context, now time.Time) (int, error) {
	ctx = context.WithoutCancel(ctx) // the work ends even when its caller has gone
	removed := 0
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		ids, err := tx.Exec(ctx, `DELETE FROM delivered WHERE at < $1`, now.Add(-KeepDeliveredIDs).UTC())
		if err != nil {
			return err
		}
		mails, err := tx.Exec(ctx, `DELETE FROM sandbox_mail WHERE seq <= (
			SELECT seq FROM sandbox_mail ORDER BY seq DESC OFFSET $1 LIMIT 1)`, KeepSandboxMails)
		if err != nil {
			return err
		}
		removed = int(ids.RowsAffected() + mails.RowsAffected())
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("prune outbox: %w", err)
	}
	return removed, nil
}

// OutboxDepth counts the events waiting in the outbox (the dead letters are not waiting);
// 0 when the database does not answer (Ping reports that).
func (s *DB) OutboxDepth(ctx context.Context) int {
	var n int
	if err := s.pool.QueryRow(context.Background(), `SELECT count(*) FROM outbox WHERE NOT dead`).Scan(&n); err != nil {
		return 0
	}
	return n
}
