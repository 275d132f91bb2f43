package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"time"

	"payouts/rules"

	bbolt "go.etcd.io/bbolt"
)

// SessionStore keeps the card-form sessions (github.com/alexedwards/scs/v2, its Store and
// IterableStore interfaces) in the sessions bucket: token → be64(expiry unix nanos) ‖ data.
// The tokens it sees are those scs hands it (hashed, with HashTokenInStore). Its clock is
// injected so that expiry is tested without sleeping.
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

// Find returns the data of an unexpired session; an unknown, malformed or expired token is
// not found (scs: err only for system failures).
func (s *SessionStore) Find(token string) ([]byte, bool, error) {
	var data []byte
	found := false
	now := s.now()
	err := s.db.bdb.View(func(tx *bbolt.Tx) error {
		v := tx.Bucket(bSessions).Get([]byte(token))
		if len(v) < 8 {
			return nil
		}
		if !now.Before(expiryOf(v)) {
			return nil
		}
		data = bytes.Clone(v[8:]) // v points into the mmap, valid only in this transaction
		found = true
		return nil
	})
	return data, found, err
}

// Commit writes a session with its expiry, replacing any earlier data of the token.
func (s *SessionStore) Commit(token string, b []byte, expiry time.Time) error {
	v := expiringValue(expiry, b)
	return s.db.bdb.Update(func(tx *bbolt.Tx) error { return tx.Bucket(bSessions).Put([]byte(token), v) })
}

// expiringValue is a session's or a card-session binding's record: be64(expiry unix
// nanos) ‖ data.
func expiringValue(expiry time.Time, data []byte) []byte {
	v := make([]byte, 8, 8+len(data))
	binary.BigEndian.PutUint64(v, uint64(expiry.UnixNano()))
	return append(v, data...)
}

// Delete removes a session; an unknown token is not an error.
func (s *SessionStore) Delete(token string) error {
	return s.db.bdb.Update(func(tx *bbolt.Tx) error { return tx.Bucket(bSessions).Delete([]byte(token)) })
}

// All returns every unexpired session (scs.IterableStore).
func (s *SessionStore) All() (map[string][]byte, error) {
	out := map[string][]byte{}
	now := s.now()
	err := s.db.bdb.View(func(tx *bbolt.Tx) error {
		return tx.Bucket(bSessions).ForEach(func(k, v []byte) error {
			if len(v) >= 8 && now.Before(expiryOf(v)) {
				out[string(k)] = bytes.Clone(v[8:])
			}
			return nil
		})
	})
	return out, err
}

// Cleanup deletes the sessions and card-session bindings that expired, and says how many
// records went. It runs in the background; a request never waits for it.
func (s *SessionStore) Cleanup() (int, error) {
	now := s.now()
	n := 0
	err := s.db.bdb.Update(func(tx *bbolt.Tx) error {
		var dead [][]byte
		if err := tx.Bucket(bSessions).ForEach(func(k, v []byte) error {
			if len(v) < 8 || !now.Before(expiryOf(v)) {
				dead = append(dead, bytes.Clone(k))
			}
			return nil
		}); err != nil {
			return err
		}
		for _, k := range dead {
			if err := tx.Bucket(bSessions).Delete(k); err != nil {
				return err
			}
		}
		n += len(dead)
		dead = dead[:0]
		c := tx.Bucket(bMisc).Cursor()
		for k, v := c.Seek(cardSessionPrefix); k != nil && bytes.HasPrefix(k, cardSessionPrefix); k, v = c.Next() {
			if len(v) < 8 || !now.Before(expiryOf(v)) {
				dead = append(dead, bytes.Clone(k))
			}
		}
		for _, k := range dead {
			if err := tx.Bucket(bMisc).Delete(k); err != nil {
				return err
			}
		}
		n += len(dead)
		return nil
	})
	return n, err
}

func expiryOf(v []byte) time.Time {
	return time.Unix(0, int64(binary.BigEndian.Uint64(v[:8])))
}

// cardSessionPrefix keys, in the misc bucket, which form session is the current one of a
// card payout: "card-session" 0 be64(payoutId) → be64(expiry) ‖ session id. A merchant
// re-sending the orderId starts a new session and so kills the old link.
var cardSessionPrefix = []byte("card-session\x00")

func cardSessionKey(payoutID int64) []byte {
	return binary.BigEndian.AppendUint64(bytes.Clone(cardSessionPrefix), uint64(payoutID))
}

// BindCardSession makes sid the current form session of a card payout until expiry.
func (s *SessionStore) BindCardSession(payoutID int64, sid string, expiry time.Time) error {
	v := expiringValue(expiry, []byte(sid))
	return s.db.bdb.Update(func(tx *bbolt.Tx) error { return tx.Bucket(bMisc).Put(cardSessionKey(payoutID), v) })
}

// CardSession returns the current form session id of a card payout ("" when none).
func (s *SessionStore) CardSession(payoutID int64) (string, error) {
	var sid string
	err := s.db.bdb.View(func(tx *bbolt.Tx) error {
		if v := tx.Bucket(bMisc).Get(cardSessionKey(payoutID)); len(v) > 8 {
			sid = string(v[8:]) // string() copies out of the mmap
		}
		return nil
	})
	return sid, err
}
