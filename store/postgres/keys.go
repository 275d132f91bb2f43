package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// The fingerprints of the keys that sealed this database's secrets (rules.KeyFingerprints),
// in meta: every instance checks its shared keys against them.

func keyFingerprintKey(name string) string { return "key-fingerprint/" + name }

// KeyFingerprint is the fingerprint recorded for the key named; "" when none is.
func (s *DB) KeyFingerprint(ctx context.Context, name string) (string, error) {
	var v []byte
	err := s.pool.QueryRow(context.Background(), `SELECT value FROM meta WHERE key = $1`, keyFingerprintKey(name)).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("key fingerprint %s: %w", name, err)
	}
	return string(v), nil
}

// RecordKeyFingerprint records fp when none is recorded, and returns the one recorded: two
// instances starting at once record one, and the other reads it.
func (s *DB) RecordKeyFingerprint(ctx context.Context, name, fp string) (string, error) {
	var v []byte
	var err error
	// Twice at most: when another instance's first start inserts the row while this
	// statement runs, the insert meets its conflict but the statement's snapshot does not see
	// the row; the second statement does.
	for range 2 {
		err = s.pool.QueryRow(context.Background(), `WITH ins AS (
			INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING RETURNING value)
			SELECT value FROM ins UNION ALL SELECT value FROM meta WHERE key = $1 LIMIT 1`,
			keyFingerprintKey(name), []byte(fp)).Scan(&v)
		if !errors.Is(err, pgx.ErrNoRows) {
			break
		}
	}
	if err != nil {
		return "", fmt.Errorf("record key fingerprint %s: %w", name, err)
	}
	return string(v), nil
}

// ReplaceKeyFingerprint records fp in place of old, when old is still the one recorded: one
// statement, so that of two rotations at once one replaces and the other is told.
func (s *DB) ReplaceKeyFingerprint(ctx context.Context, name, old, fp string) (bool, error) {
	var tag pgconn.CommandTag
	var err error
	if old == "" {
		tag, err = s.pool.Exec(context.Background(), `INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING`,
			keyFingerprintKey(name), []byte(fp))
	} else {
		tag, err = s.pool.Exec(context.Background(), `UPDATE meta SET value = $3 WHERE key = $1 AND value = $2`,
			keyFingerprintKey(name), []byte(old), []byte(fp))
	}
	if err != nil {
		return false, fmt.Errorf("replace key fingerprint %s: %w", name, err)
	}
	return tag.RowsAffected() == 1, nil
}
