package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"payouts/rules"
)

// SessionStore keeps the card-form and dashboard sessions (github.com/alexedwards/scs/v2,
// its Store and IterableStore interfaces) in the sessions table, and which session is a
// card payout's current one in card_sessions. Expiry is judged by its injected clock, never
// by the database's: the sandbox clock moves it, and tests move it without sleeping.
type SessionStore struct {
	db  *DB
	now func() time.Time
}

// Sessions returns the session store of the database; now is its clock (nil: time.Now).
func (s *DB) Sessions(ctx context.Context, now func() time.Time) rules.SessionStore {
	if now == nil {
		now = time.Now
	}
	return &SessionStore{db: s, now: now}
}

// Find returns the data of an unexpired session; an unknown or expired token is not found
// (scs: err only for system failures).
func (s *SessionStore) Find(token string) ([]byte, bool, error) {
	var data []byte
	err := s.db.pool.QueryRow(context.Background(), `SELECT data FROM sessions WHERE token = $1 AND expiry > $2`,
		token, s.now().UTC()).Scan(&data)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("find session: %w", err)
	}
	return data, true, nil
}

// Commit writes a session with its expiry, replacing any earlier data of the token.
func (s *SessionStore) Commit(token string, b []byte, expiry time.Time) error {
	if b == nil {
		b = []byte{}
	}
	_, err := s.db.pool.Exec(context.Background(), `INSERT INTO sessions (token, data, expiry) VALUES ($1, $2, $3)
		ON CONFLICT (token) DO UPDATE SET data = excluded.data, expiry = excluded.expiry`, token, b, expiry.UTC())
	if err != nil {
		return fmt.Errorf("commit session: %w", err)
	}
	return nil
}

// Delete removes a session; an unknown token is not an error.
func (s *SessionStore) Delete(token string) error {
	if _, err := s.db.pool.Exec(context.Background(), `DELETE FROM sessions WHERE token = $1`, token); err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	return nil
}

// All returns every unexpired session (scs.IterableStore).
func (s *SessionStore) All() (map[string][]byte, error) {
	rows, err := s.db.pool.Query(context.Background(), `SELECT token, data FROM sessions WHERE expiry > $1`, s.now().UTC())
	if err != nil {
		return nil, fmt.Errorf("all sessions: %w", err)
	}
	defer rows.Close()
	out := map[string][]byte{}
	for rows.Next() {
		var token string
		var data []byte
		if err := rows.Scan(&token, &data); err != nil {
			return nil, fmt.Errorf("all sessions: %w", err)
		}
		out[token] = data
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("all sessions: %w", err)
	}
	return out, nil
}

// Cleanup deletes the sessions and card-session bindings that expired, and says how many
// records went. It runs in the background; a request never waits for it.
func (s *SessionStore) Cleanup() (int, error) {
	ctx := context.Background()
	now := s.now().UTC()
	n := 0
	err := pgx.BeginFunc(ctx, s.db.pool, func(tx pgx.Tx) error {
		sessions, err := tx.Exec(ctx, `DELETE FROM sessions WHERE expiry <= $1`, now)
		if err != nil {
			return err
		}
		bindings, err := tx.Exec(ctx, `DELETE FROM card_sessions WHERE expiry <= $1`, now)
		if err != nil {
			return err
		}
		n = int(sessions.RowsAffected() + bindings.RowsAffected())
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("clean up sessions: %w", err)
	}
	return n, nil
}

// BindCardSession makes sid the current form session of a card payout until expiry. A
// merchant re-sending the orderId starts a new session and so kills the old link.
func (s *SessionStore) BindCardSession(payoutID int64, sid string, expiry time.Time) error {
	_, err := s.db.pool.Exec(context.Background(), `INSERT INTO card_sessions (payout_id, session_id, expiry)
		VALUES ($1, $2, $3)
		ON CONFLICT (payout_id) DO UPDATE SET session_id = excluded.session_id, expiry = excluded.expiry`,
		payoutID, sid, expiry.UTC())
	if err != nil {
		return fmt.Errorf("bind card session of payout %d: %w", payoutID, err)
	}
	return nil
}

// CardSession returns the current form session id of a card payout ("" when none). As in
// store/bolt, a binding counts until Cleanup removes it: the session it names expires on
// its own.
func (s *SessionStore) CardSession(payoutID int64) (string, error) {
	var sid string
	err := s.db.pool.QueryRow(context.Background(), `SELECT session_id FROM card_sessions WHERE payout_id = $1`,
		payoutID).Scan(&sid)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("card session of payout %d: %w", payoutID, err)
	}
	return sid, nil
}
