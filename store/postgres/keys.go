package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// The fingerprints of the keys that sealed this database's secrets (rules.KeyFingerprints),
// in meta: every instance checks its shared keys against them.

func keyFingerprintKey(name string) string { return "key-fingerprint/" + name }

// KeyFingerprint is the fingerprint recorded for the key named; "" when none is.
func (s *DB) KeyFingerprint(name string) (string, error) {
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
func (s *DB) RecordKeyFingerprint(name, fp string) (string, error) {
	var v []byte
	err := s.pool.QueryRow(context.Background(), `WITH ins AS (
		INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING RETURNING value)
		SELECT value FROM ins UNION ALL SELECT value FROM meta WHERE key = $1 LIMIT 1`,
		keyFingerprintKey(name), []byte(fp)).Scan(&v)
	if err != nil {
		return "", fmt.Errorf("record key fingerprint %s: %w", name, err)
	}
	return string(v), nil
}
