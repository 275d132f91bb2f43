package bolt

import (
	"bytes"
	"context"

	bbolt "go.etcd.io/bbolt"
)

// The fingerprints of the keys that sealed this store's secrets (rules.KeyFingerprints), in
// the meta bucket.

func keyFingerprintKey(name string) []byte { return []byte("key-fingerprint/" + name) }

// KeyFingerprint is the fingerprint recorded for the key named; "" when none is.
func (s *DB) KeyFingerprint(ctx context.Context, name string) (string, error) {
	var fp string
	err := s.bdb.View(func(tx *bbolt.Tx) error {
		fp = string(tx.Bucket(bMeta).Get(keyFingerprintKey(name)))
		return nil
	})
	return fp, err
}

// RecordKeyFingerprint records fp when none is recorded, and returns the one recorded.
func (s *DB) RecordKeyFingerprint(ctx context.Context, name, fp string) (string, error) {
	recorded := fp
	err := s.bdb.Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bMeta)
		if v := b.Get(keyFingerprintKey(name)); v != nil {
			recorded = string(bytes.Clone(v))
			return nil
		}
		return b.Put(keyFingerprintKey(name), []byte(fp))
	})
	return recorded, err
}

// ReplaceKeyFingerprint records fp in place of old, when old is still the one recorded.
func (s *DB) ReplaceKeyFingerprint(ctx context.Context, name, old, fp string) (bool, error) {
	replaced := false
	err := s.bdb.Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bMeta)
		if string(b.Get(keyFingerprintKey(name))) != old {
			return nil
		}
		replaced = true
		return b.Put(keyFingerprintKey(name), []byte(fp))
	})
	return replaced && err == nil, err
}
