package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"payouts/rules"
)

// The sandbox's records, as store/bolt's sandbox.go keeps them: the test clock's
// offset in meta, the per-merchant scripted outcomes, the simulated directory's entries,
// the integration users and the lookups' request ids in tables of their own.

// metaClockOffset is the meta key of the sandbox clock's offset (decimal nanoseconds),
// metaClockGen of its generation (decimal, raised by each change of the offset).
const (
	metaClockOffset = "sandbox-clock-offset"
	metaClockGen    = "sandbox-clock-gen"
)

// SandboxClockOffset is the stored offset of the sandbox clock, zero when none.
func (s *DB) SandboxClockOffset(ctx context.Context) (time.Duration, error) {
	st, err := s.SandboxClock(ctx)
	return st.Offset, err
}

// SandboxClock is the stored offset of the sandbox clock and its generation, zero when none.
func (s *DB) SandboxClock(ctx context.Context) (rules.ClockState, error) {
	rows, err := s.pool.Query(context.Background(), `SELECT key, value FROM meta WHERE key IN ($1, $2)`, metaClockOffset, metaClockGen)
	if err != nil {
		return rules.ClockState{}, fmt.Errorf("sandbox clock: %w", err)
	}
	return scanClock(rows)
}

// scanClock reads the clock's rows of meta (none, either or both).
func scanClock(rows pgx.Rows) (rules.ClockState, error) {
	var st rules.ClockState
	var key string
	var v []byte
	_, err := pgx.ForEachRow(rows, []any{&key, &v}, func() error {
		n, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil {
			return fmt.Errorf("sandbox clock %s %q: %w", key, v, err)
		}
		if key == metaClockGen {
			st.Gen = n
		} else {
			st.Offset = time.Duration(n)
		}
		return nil
	})
	if err != nil {
		return rules.ClockState{}, fmt.Errorf("sandbox clock: %w", err)
	}
	return st, nil
}

// upsertClockOffsetSQL writes the sandbox clock's offset ($1, decimal nanoseconds): a
// restore's, into a new store.
const upsertClockOffsetSQL = `INSERT INTO meta (key, value) VALUES ('` + metaClockOffset + `', $1)
	ON CONFLICT (key) DO UPDATE SET value = excluded.value`

// PutSandboxClockOffset stores the offset of the sandbox clock.
func (s *DB) PutSandboxClockOffset(ctx context.Context, off time.Duration) error {
	_, err := s.ChangeSandboxClock(ctx, func(time.Duration) (time.Duration, error) { return off, nil })
	return err
}

// ChangeSandboxClock changes the offset of the sandbox clock in one transaction that holds
// the clock's rows of meta locked (made first if missing, so that there is a row to lock):
// a change on another instance waits for it and reads what it wrote.
func (s *DB) ChangeSandboxClock(ctx context.Context, change func(time.Duration) (time.Duration, error)) (rules.ClockState, error) {
	var st rules.ClockState
	var changeErr error
	err := pgx.BeginFunc(context.Background(), s.pool, func(tx pgx.Tx) error {
		ctx := context.Background()
		if _, err := tx.Exec(ctx, `INSERT INTO meta (key, value) VALUES ($1, '0'), ($2, '0') ON CONFLICT (key) DO NOTHING`,
			metaClockOffset, metaClockGen); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT key, value FROM meta WHERE key IN ($1, $2) ORDER BY key FOR UPDATE`, metaClockOffset, metaClockGen)
		if err != nil {
			return err
		}
		cur, err := scanClock(rows)
		if err != nil {
			return err
		}
		off, err := change(cur.Offset)
		if err != nil {
			changeErr = err
			return err
		}
		st = rules.ClockState{Offset: off, Gen: cur.Gen + 1}
		_, err = tx.Exec(ctx, `UPDATE meta SET value = CASE key WHEN $1 THEN $3::bytea ELSE $4::bytea END WHERE key IN ($1, $2)`,
			metaClockOffset, metaClockGen, []byte(strconv.FormatInt(int64(off), 10)), []byte(strconv.FormatInt(st.Gen, 10)))
		return err
	})
	if changeErr != nil {
		return rules.ClockState{}, changeErr
	}
	if err != nil {
		return rules.ClockState{}, fmt.Errorf("change sandbox clock: %w", err)
	}
	return st, nil
}

// SandboxRules are a merchant's scripted outcomes, in order; none when never set.
func (s *DB) SandboxRules(ctx context.Context, merchantID string) ([]rules.ScriptRule, error) {
	var doc []byte
	err := s.pool.QueryRow(context.Background(), `SELECT rules FROM sandbox_rules WHERE merchant_id = $1`,
		merchantID).Scan(&doc)
	rs := []rules.ScriptRule{}
	if errors.Is(err, pgx.ErrNoRows) {
		return rs, nil
	}
	if err == nil {
		err = json.Unmarshal(doc, &rs)
	}
	if err != nil {
		return nil, fmt.Errorf("sandbox rules of merchant %s: %w", merchantID, err)
	}
	return rs, nil
}

// upsertSandboxRulesSQL writes a merchant's ($1) scripted outcomes ($2, JSON).
const upsertSandboxRulesSQL = `INSERT INTO sandbox_rules (merchant_id, rules) VALUES ($1, $2)
	ON CONFLICT (merchant_id) DO UPDATE SET rules = excluded.rules`

// PutSandboxRules replaces a merchant's scripted outcomes.
func (s *DB) PutSandboxRules(ctx context.Context, merchantID string, rs []rules.ScriptRule) error {
	doc, err := json.Marshal(rs)
	if err == nil {
		_, err = s.pool.Exec(context.Background(), upsertSandboxRulesSQL, merchantID, doc)
	}
	if err != nil {
		return fmt.Errorf("put sandbox rules of merchant %s: %w", merchantID, err)
	}
	return nil
}

// DirectoryEntry is an admin's entry of the simulated directory (rules.ErrNotFound when
// none).
func (s *DB) DirectoryEntry(ctx context.Context, country, id string) (*rules.DirectoryEntry, error) {
	if !storable(country, id) {
		return nil, rules.ErrNotFound
	}
	var doc []byte
	err := s.pool.QueryRow(context.Background(), `SELECT entry FROM directory WHERE country = $1 AND id = $2`,
		country, id).Scan(&doc)
	if errors.Is(err, pgx.ErrNoRows) {
		err = rules.ErrNotFound
	}
	e := new(rules.DirectoryEntry)
	if err == nil {
		err = json.Unmarshal(doc, e)
	}
	if err != nil {
		return nil, fmt.Errorf("directory entry %s %s: %w", country, id, err)
	}
	return e, nil
}

// upsertDirectorySQL writes an entry ($3, JSON) of the simulated directory.
const upsertDirectorySQL = `INSERT INTO directory (country, id, entry) VALUES ($1, $2, $3)
	ON CONFLICT (country, id) DO UPDATE SET entry = excluded.entry`

// PutDirectoryEntry writes an entry of the simulated directory.
func (s *DB) PutDirectoryEntry(ctx context.Context, country, id string, e rules.DirectoryEntry) error {
	doc, err := json.Marshal(e)
	if err == nil {
		_, err = s.pool.Exec(context.Background(), upsertDirectorySQL, country, id, doc)
	}
	if err != nil {
		return fmt.Errorf("put directory entry %s %s: %w", country, id, err)
	}
	return nil
}

// DeleteDirectoryEntry removes an entry of the simulated directory (none is no error).
func (s *DB) DeleteDirectoryEntry(ctx context.Context, country, id string) error {
	_, err := s.pool.Exec(context.Background(), `DELETE FROM directory WHERE country = $1 AND id = $2`, country, id)
	if err != nil {
		return fmt.Errorf("delete directory entry %s %s: %w", country, id, err)
	}
	return nil
}

// IntegrationUser reads a user by name (rules.ErrNotFound when none).
func (s *DB) IntegrationUser(ctx context.Context, user string) (*rules.IntegrationUser, error) {
	if !storable(user) {
		return nil, rules.ErrNotFound
	}
	u, err := s.integrationUserWhere(`user_name = $1`, user)
	if err != nil {
		return nil, fmt.Errorf("integration user %s: %w", user, err)
	}
	return u, nil
}

// IntegrationUserOf reads a merchant's user (rules.ErrNotFound when none).
func (s *DB) IntegrationUserOf(ctx context.Context, merchantID string) (*rules.IntegrationUser, error) {
	u, err := s.integrationUserWhere(`merchant_id = $1`, merchantID)
	if err != nil {
		return nil, fmt.Errorf("integration user of merchant %s: %w", merchantID, err)
	}
	return u, nil
}

func (s *DB) integrationUserWhere(cond string, arg string) (*rules.IntegrationUser, error) {
	var doc []byte
	err := s.pool.QueryRow(context.Background(), `SELECT doc FROM integration_users WHERE `+cond, arg).Scan(&doc)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, rules.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	u := new(rules.IntegrationUser)
	if err := json.Unmarshal(doc, u); err != nil {
		return nil, err
	}
	return u, nil
}

// PutIntegrationUser makes u its merchant's only user, replacing the one it had; a name
// another merchant uses is rules.ErrExists.
func (s *DB) PutIntegrationUser(ctx context.Context, u *rules.IntegrationUser) error {
	ctx = context.WithoutCancel(ctx) // the work ends even when its caller has gone
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var other string
		err := tx.QueryRow(ctx, `SELECT merchant_id FROM integration_users WHERE user_name = $1 FOR UPDATE`,
			u.User).Scan(&other)
		if err == nil && other != u.MerchantID {
			return rules.ErrExists
		}
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM integration_users WHERE merchant_id = $1`, u.MerchantID); err != nil {
			return err
		}
		doc, err := json.Marshal(u)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, insertIntegrationUserSQL, u.User, u.MerchantID, doc)
		return err
	})
	if violatesUnique(err) {
		err = rules.ErrExists // another merchant took the name meanwhile
	}
	if err != nil {
		return fmt.Errorf("put integration user %s: %w", u.User, err)
	}
	return nil
}

// insertIntegrationUserSQL writes a user ($1 name, $2 merchant, $3 JSON).
const insertIntegrationUserSQL = `INSERT INTO integration_users (user_name, merchant_id, doc) VALUES ($1, $2, $3)`

// violatesUnique reports whether err is PostgreSQL's unique_violation.
func violatesUnique(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}

// SeenLookupRequest records a lookup's request_id for a merchant and reports whether it was
// already there (the original's VAL001). Ids older than a day are forgotten by
// PruneLookupRequests.
func (s *DB) SeenLookupRequest(ctx context.Context, merchantID, requestID string, at time.Time) (bool, error) {
	tag, err := s.pool.Exec(context.Background(), `INSERT INTO lookup_requests (merchant_id, request_id, at)
		VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, merchantID, requestID, at.UTC())
	if err != nil {
		return false, fmt.Errorf("lookup request %s: %w", requestID, err)
	}
	return tag.RowsAffected() == 0, nil
}

// PruneLookupRequests forgets the request ids recorded before cutoff.
func (s *DB) PruneLookupRequests(ctx context.Context, cutoff time.Time) (int, error) {
	tag, err := s.pool.Exec(context.Background(), `DELETE FROM lookup_requests WHERE at < $1`, cutoff.UTC())
	if err != nil {
		return 0, fmt.Errorf("prune lookup requests: %w", err)
	}
	return int(tag.RowsAffected()), nil
}
