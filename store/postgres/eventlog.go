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

// The event log, the sandbox inbox and the delivery chaos (rules.EventLog), as
// store/bolt's eventlog.go keeps them, in the tables of migration 00003.

// logAttemptSQL creates an event's row with its first attempt, or appends the attempt to the
// row; the first delivered attempt sets delivered_at.
// The attempt goes to the merchant's feed in the same statement (one round trip).
const logAttemptSQL = `WITH up AS (INSERT INTO event_log (merchant_id, event_id, payout_id, type, body, created_at, delivered_at, attempts)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
	ON CONFLICT (merchant_id, event_id) DO UPDATE SET attempts = event_log.attempts || excluded.attempts,
		delivered_at = COALESCE(event_log.delivered_at, excluded.delivered_at)
	RETURNING merchant_id, event_id, jsonb_array_length(attempts) - 1 AS n)
	INSERT INTO event_feed (merchant_id, event_id, n) SELECT merchant_id, event_id, n FROM up`

// feedLocks is the first key of the advisory locks that order a merchant's feed (the second
// is a hash of the merchant id).
const feedLocks = 0x666565 // "fee"

// LogAttempt appends an attempt to an event's record, creating it on the first, in one round
// trip.
func (s *DB) LogAttempt(ctx context.Context, ev rules.LoggedEvent, a rules.DeliveryAttempt) error {
	if !storable(ev.MerchantID, ev.ID, ev.Type, a.Error, a.Cause) {
		return fmt.Errorf("log attempt of %q: not storable text", ev.ID)
	}
	attempts, err := json.Marshal([]rules.DeliveryAttempt{a})
	if err != nil {
		return err
	}
	var delivered *time.Time
	if a.Delivered() {
		delivered = &a.At
	}
	body := ev.Body
	if body == nil {
		body = []byte{}
	}
	// The merchant's feed lock, held until the batch's implicit transaction commits, makes the
	// feed's cursors commit in their order for each merchant: a stream reading after a cursor
	// never skips an attempt that commits later with a lower one (on any instance).
	batch := &pgx.Batch{}
	batch.Queue(`SELECT pg_advisory_xact_lock($1, hashtext($2))`, feedLocks, ev.MerchantID)
	batch.Queue(logAttemptSQL, ev.MerchantID, ev.ID, ev.PayoutID, ev.Type, body, ev.CreatedAt, delivered, attempts)
	if err = s.pool.SendBatch(context.Background(), batch).Close(); err != nil {
		return fmt.Errorf("log attempt of %s: %w", ev.ID, err)
	}
	return nil
}

const eventColumns = `seq, event_id, merchant_id, payout_id, type, body, created_at, delivered_at, attempts`

func scanLoggedEvent(row pgx.Row) (rules.LoggedEvent, error) {
	var e rules.LoggedEvent
	var delivered *time.Time
	var attempts []byte
	if err := row.Scan(&e.Seq, &e.ID, &e.MerchantID, &e.PayoutID, &e.Type, &e.Body, &e.CreatedAt, &delivered, &attempts); err != nil {
		return e, err
	}
	e.CreatedAt = e.CreatedAt.UTC()
	if delivered != nil {
		e.DeliveredAt = delivered.UTC()
	}
	if err := json.Unmarshal(attempts, &e.Attempts); err != nil {
		return e, err
	}
	for i := range e.Attempts {
		e.Attempts[i].At = e.Attempts[i].At.UTC()
	}
	return e, nil
}

// LoggedEvents lists a merchant's events after q.After, oldest first.
func (s *DB) LoggedEvents(ctx context.Context, merchantID string, q rules.EventQuery) ([]rules.LoggedEvent, error) {
	if !storable(merchantID, q.Type) {
		return nil, nil
	}
	rows, err := s.pool.Query(context.Background(), `SELECT `+eventColumns+` FROM event_log
		WHERE merchant_id = $1 AND seq > $2 AND ($3 = '' OR type = $3) AND ($4 = 0 OR payout_id = $4)
		ORDER BY seq LIMIT $5`, merchantID, q.After, q.Type, q.PayoutID, q.Limit)
	if err != nil {
		return nil, fmt.Errorf("logged events of merchant %s: %w", merchantID, err)
	}
	defer rows.Close()
	var out []rules.LoggedEvent
	for rows.Next() {
		e, err := scanLoggedEvent(rows)
		if err != nil {
			return nil, fmt.Errorf("logged events of merchant %s: %w", merchantID, err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// AttemptsAfter lists a merchant's delivery attempts after a feed cursor, oldest first.
func (s *DB) AttemptsAfter(ctx context.Context, merchantID string, after int64, limit int) ([]rules.FedAttempt, error) {
	if !storable(merchantID) {
		return nil, nil
	}
	rows, err := s.pool.Query(context.Background(), `SELECT f.cursor, f.n, e.seq, e.event_id, e.merchant_id, e.payout_id,
			e.type, e.body, e.created_at, e.delivered_at, e.attempts -> f.n
		FROM event_feed f JOIN event_log e ON e.merchant_id = f.merchant_id AND e.event_id = f.event_id
		WHERE f.merchant_id = $1 AND f.cursor > $2 ORDER BY f.cursor LIMIT $3`, merchantID, after, limit)
	if err != nil {
		return nil, fmt.Errorf("attempts of merchant %s: %w", merchantID, err)
	}
	defer rows.Close()
	var out []rules.FedAttempt
	for rows.Next() {
		var f rules.FedAttempt
		var n int
		var delivered *time.Time
		var attempt []byte
		e := &f.Event
		if err := rows.Scan(&f.Cursor, &n, &e.Seq, &e.ID, &e.MerchantID, &e.PayoutID, &e.Type, &e.Body, &e.CreatedAt, &delivered, &attempt); err != nil {
			return nil, fmt.Errorf("attempts of merchant %s: %w", merchantID, err)
		}
		if attempt == nil {
			return nil, fmt.Errorf("event feed names attempt %d of %s, which it does not have", n, e.ID)
		}
		e.CreatedAt = e.CreatedAt.UTC()
		if delivered != nil {
			e.DeliveredAt = delivered.UTC()
		}
		if err := json.Unmarshal(attempt, &f.Attempt); err != nil {
			return nil, err
		}
		f.Attempt.At = f.Attempt.At.UTC()
		out = append(out, f)
	}
	return out, rows.Err()
}

// LoggedEvent reads one of a merchant's events.
func (s *DB) LoggedEvent(ctx context.Context, merchantID, id string) (rules.LoggedEvent, error) {
	if !storable(merchantID, id) {
		return rules.LoggedEvent{}, rules.ErrNotFound
	}
	e, err := scanLoggedEvent(s.pool.QueryRow(context.Background(), `SELECT `+eventColumns+` FROM event_log
		WHERE merchant_id = $1 AND event_id = $2`, merchantID, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return e, rules.ErrNotFound
	}
	if err != nil {
		return e, fmt.Errorf("logged event %s: %w", id, err)
	}
	return e, nil
}

// PruneEventLog forgets the events first tried, and the inbox items received, before cutoff.
func (s *DB) PruneEventLog(ctx context.Context, cutoff time.Time) (int, error) {
	ctx = context.WithoutCancel(ctx) // the work ends even when its caller has gone
	a, err := s.pool.Exec(ctx, `DELETE FROM event_log WHERE created_at < $1`, cutoff)
	if err != nil {
		return 0, fmt.Errorf("prune event log: %w", err)
	}
	b, err := s.pool.Exec(ctx, `DELETE FROM sandbox_inbox WHERE received_at < $1`, cutoff)
	if err != nil {
		return 0, fmt.Errorf("prune sandbox inbox: %w", err)
	}
	return int(a.RowsAffected() + b.RowsAffected()), nil
}

// PutInboxItem keeps a notification the sandbox inbox received.
func (s *DB) PutInboxItem(ctx context.Context, merchantID string, it rules.InboxItem) error {
	if !storable(merchantID, it.EventID) {
		return fmt.Errorf("inbox item %q: not storable text", it.EventID)
	}
	headers, err := json.Marshal(it.Headers)
	if err != nil {
		return err
	}
	body := it.Body
	if body == nil {
		body = []byte{}
	}
	_, err = s.pool.Exec(context.Background(), `INSERT INTO sandbox_inbox
		(merchant_id, event_id, received_at, headers, body, signature_valid) VALUES ($1, $2, $3, $4, $5, $6)`,
		merchantID, it.EventID, it.ReceivedAt, headers, body, it.SignatureValid)
	if err != nil {
		return fmt.Errorf("put inbox item %s: %w", it.EventID, err)
	}
	return nil
}

// InboxItems lists a merchant's inbox, newest first by receivedAt (deliveries at once are
// stamped as they arrive and stored as they commit, which may be the other order).
func (s *DB) InboxItems(ctx context.Context, merchantID string, limit int) ([]rules.InboxItem, error) {
	out := []rules.InboxItem{}
	if !storable(merchantID) {
		return out, nil
	}
	rows, err := s.pool.Query(context.Background(), `SELECT event_id, received_at, headers, body, signature_valid
		FROM sandbox_inbox WHERE merchant_id = $1 ORDER BY received_at DESC, seq DESC LIMIT $2`, merchantID, limit)
	if err != nil {
		return nil, fmt.Errorf("inbox of merchant %s: %w", merchantID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var it rules.InboxItem
		var headers []byte
		if err := rows.Scan(&it.EventID, &it.ReceivedAt, &headers, &it.Body, &it.SignatureValid); err != nil {
			return nil, fmt.Errorf("inbox of merchant %s: %w", merchantID, err)
		}
		it.ReceivedAt = it.ReceivedAt.UTC()
		if err := json.Unmarshal(headers, &it.Headers); err != nil {
			return nil, err
		}
		out = append(out, it)
	}
	return out, rows.Err()
}

// DeliveryChaos is a merchant's delivery chaos (rules.ErrNotFound when off).
func (s *DB) DeliveryChaos(ctx context.Context, merchantID string) (rules.DeliveryChaos, error) {
	var c rules.DeliveryChaos
	if !storable(merchantID) {
		return c, rules.ErrNotFound
	}
	var doc []byte
	err := s.pool.QueryRow(context.Background(), `SELECT chaos FROM delivery_chaos WHERE merchant_id = $1`, merchantID).Scan(&doc)
	if errors.Is(err, pgx.ErrNoRows) {
		return c, rules.ErrNotFound
	}
	if err == nil {
		err = json.Unmarshal(doc, &c)
	}
	if err != nil {
		return c, fmt.Errorf("delivery chaos of merchant %s: %w", merchantID, err)
	}
	return c, nil
}

// PutDeliveryChaos sets a merchant's delivery chaos.
func (s *DB) PutDeliveryChaos(ctx context.Context, merchantID string, c rules.DeliveryChaos) error {
	doc, err := json.Marshal(c)
	if err == nil {
		_, err = s.pool.Exec(context.Background(), `INSERT INTO delivery_chaos (merchant_id, chaos) VALUES ($1, $2)
			ON CONFLICT (merchant_id) DO UPDATE SET chaos = excluded.chaos`, merchantID, doc)
	}
	if err != nil {
		return fmt.Errorf("put delivery chaos of merchant %s: %w", merchantID, err)
	}
	return nil
}

// DeleteDeliveryChaos ends a merchant's delivery chaos (none is no error).
func (s *DB) DeleteDeliveryChaos(ctx context.Context, merchantID string) error {
	if _, err := s.pool.Exec(context.Background(), `DELETE FROM delivery_chaos WHERE merchant_id = $1`, merchantID); err != nil {
		return fmt.Errorf("delete delivery chaos of merchant %s: %w", merchantID, err)
	}
	return nil
}
