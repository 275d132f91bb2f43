package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"time"

	bbolt "go.etcd.io/bbolt"

	"payouts/rules"
)

// The sandbox's records: the test clock's offset in the meta bucket, and the
// per-merchant scripted outcomes, the simulated directory's entries, the integration users
// and the lookups' request ids in the misc bucket under their own prefixes.

var (
	metaClockOffset = []byte("sandbox-clock-offset") // decimal nanoseconds
	metaClockGen    = []byte("sandbox-clock-gen")    // decimal: raised by each change of the offset
)

// SandboxClockOffset is the stored offset of the sandbox clock, zero when none.
func (s *DB) SandboxClockOffset(ctx context.Context) (time.Duration, error) {
	st, err := s.SandboxClock(ctx)
	return st.Offset, err
}

// SandboxClock is the stored offset of the sandbox clock and its generation, zero when none.
func (s *DB) SandboxClock(ctx context.Context) (rules.ClockState, error) {
	var st rules.ClockState
	err := s.bdb.View(func(tx *bbolt.Tx) error {
		var err error
		st, err = readClock(tx.Bucket(bMeta))
		return err
	})
	return st, err
}

func readClock(meta *bbolt.Bucket) (rules.ClockState, error) {
	var st rules.ClockState
	for _, f := range []struct {
		key []byte
		n   *int64
	}{{metaClockOffset, (*int64)(&st.Offset)}, {metaClockGen, &st.Gen}} {
		if v := meta.Get(f.key); v != nil {
			n, err := strconv.ParseInt(string(v), 10, 64)
			if err != nil {
				return rules.ClockState{}, fmt.Errorf("sandbox clock %s %q: %w", f.key, v, err)
			}
			*f.n = n
		}
	}
	return st, nil
}

// PutSandboxClockOffset stores the offset of the sandbox clock.
func (s *DB) PutSandboxClockOffset(ctx context.Context, off time.Duration) error {
	_, err := s.ChangeSandboxClock(ctx, func(time.Duration) (time.Duration, error) { return off, nil })
	return err
}

// ChangeSandboxClock changes the offset of the sandbox clock in one write transaction, which
// bbolt runs one at a time.
func (s *DB) ChangeSandboxClock(ctx context.Context, change func(time.Duration) (time.Duration, error)) (rules.ClockState, error) {
	var st rules.ClockState
	err := s.bdb.Update(func(tx *bbolt.Tx) error {
		meta := tx.Bucket(bMeta)
		cur, err := readClock(meta)
		if err != nil {
			return err
		}
		off, err := change(cur.Offset)
		if err != nil {
			return err
		}
		st = rules.ClockState{Offset: off, Gen: cur.Gen + 1}
		if err := meta.Put(metaClockOffset, []byte(strconv.FormatInt(int64(off), 10))); err != nil {
			return err
		}
		return meta.Put(metaClockGen, []byte(strconv.FormatInt(st.Gen, 10)))
	})
	if err != nil {
		return rules.ClockState{}, err
	}
	return st, nil
}

func sandboxRulesKey(merchantID string) []byte { return key("sandbox-rules", merchantID) }

// SandboxRules are a merchant's scripted outcomes, in order; none when never set.
func (s *DB) SandboxRules(ctx context.Context, merchantID string) ([]rules.ScriptRule, error) {
	rs := []rules.ScriptRule{}
	err := s.bdb.View(func(tx *bbolt.Tx) error {
		err := getJSON(tx.Bucket(bMisc), sandboxRulesKey(merchantID), &rs)
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		return err
	})
	return rs, err
}

// PutSandboxRules replaces a merchant's scripted outcomes.
func (s *DB) PutSandboxRules(ctx context.Context, merchantID string, rs []rules.ScriptRule) error {
	return s.bdb.Update(func(tx *bbolt.Tx) error {
		return putJSON(tx.Bucket(bMisc), sandboxRulesKey(merchantID), rs)
	})
}

func directoryKey(country, id string) []byte { return key("directory", country, id) }

// DirectoryEntry is an admin's entry of the simulated directory (ErrNotFound when none).
func (s *DB) DirectoryEntry(ctx context.Context, country, id string) (*rules.DirectoryEntry, error) {
	e := new(rules.DirectoryEntry)
	err := s.bdb.View(func(tx *bbolt.Tx) error { return getJSON(tx.Bucket(bMisc), directoryKey(country, id), e) })
	if err != nil {
		return nil, err
	}
	return e, nil
}

// PutDirectoryEntry writes an entry of the simulated directory.
func (s *DB) PutDirectoryEntry(ctx context.Context, country, id string, e rules.DirectoryEntry) error {
	return s.bdb.Update(func(tx *bbolt.Tx) error { return putJSON(tx.Bucket(bMisc), directoryKey(country, id), e) })
}

// DeleteDirectoryEntry removes an entry of the simulated directory (none is no error).
func (s *DB) DeleteDirectoryEntry(ctx context.Context, country, id string) error {
	return s.bdb.Update(func(tx *bbolt.Tx) error { return tx.Bucket(bMisc).Delete(directoryKey(country, id)) })
}

// Integration users: "integration-user" 0 user → IntegrationUser JSON, and
// "integration-user-of" 0 merchantId → user, so that rotating replaces a merchant's user.
func integrationUserKey(user string) []byte       { return key("integration-user", user) }
func integrationUserOfKey(merchant string) []byte { return key("integration-user-of", merchant) }

// IntegrationUser reads a user by name (ErrNotFound when none).
func (s *DB) IntegrationUser(ctx context.Context, user string) (*rules.IntegrationUser, error) {
	u := new(rules.IntegrationUser)
	err := s.bdb.View(func(tx *bbolt.Tx) error { return getJSON(tx.Bucket(bMisc), integrationUserKey(user), u) })
	if err != nil {
		return nil, err
	}
	return u, nil
}

// IntegrationUserOf reads a merchant's user (ErrNotFound when none).
func (s *DB) IntegrationUserOf(ctx context.Context, merchantID string) (*rules.IntegrationUser, error) {
	var u *rules.IntegrationUser
	err := s.bdb.View(func(tx *bbolt.Tx) error {
		name := tx.Bucket(bMisc).Get(integrationUserOfKey(merchantID))
		if name == nil {
			return ErrNotFound
		}
		u = new(rules.IntegrationUser)
		return getJSON(tx.Bucket(bMisc), integrationUserKey(string(name)), u)
	})
	return u, err
}

// PutIntegrationUser makes u its merchant's only user, replacing the one it had; a name
// another merchant uses is ErrExists.
func (s *DB) PutIntegrationUser(ctx context.Context, u *rules.IntegrationUser) error {
	return s.bdb.Update(func(tx *bbolt.Tx) error { return putIntegrationUser(tx.Bucket(bMisc), u) })
}

func putIntegrationUser(b *bbolt.Bucket, u *rules.IntegrationUser) error {
	var other rules.IntegrationUser
	if err := getJSON(b, integrationUserKey(u.User), &other); err == nil && other.MerchantID != u.MerchantID {
		return rules.ErrExists
	}
	if old := b.Get(integrationUserOfKey(u.MerchantID)); old != nil {
		if err := b.Delete(integrationUserKey(string(old))); err != nil {
			return err
		}
	}
	if err := b.Put(integrationUserOfKey(u.MerchantID), []byte(u.User)); err != nil {
		return err
	}
	return putJSON(b, integrationUserKey(u.User), u)
}

// SeenLookupRequest records a lookup's request_id for a merchant and reports whether it was
// already there (the original's VAL001). Ids older than a day are forgotten by
// PruneLookupRequests.
func (s *DB) SeenLookupRequest(ctx context.Context, merchantID, requestID string, at time.Time) (bool, error) {
	var seen bool
	err := s.bdb.Update(func(tx *bbolt.Tx) error {
		k := key("lookup-request", merchantID, requestID)
		if tx.Bucket(bMisc).Get(k) != nil {
			seen = true
			return nil
		}
		return tx.Bucket(bMisc).Put(k, be64(uint64(at.UnixNano())))
	})
	return seen, err
}

// PruneLookupRequests forgets the request ids recorded before cutoff.
func (s *DB) PruneLookupRequests(ctx context.Context, cutoff time.Time) (int, error) {
	n := 0
	prefix := append([]byte("lookup-request"), 0)
	err := s.bdb.Update(func(tx *bbolt.Tx) error {
		var dead [][]byte
		c := tx.Bucket(bMisc).Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			if len(v) == 8 && int64(binary.BigEndian.Uint64(v)) < cutoff.UnixNano() {
				dead = append(dead, bytes.Clone(k))
			}
		}
		for _, k := range dead {
			if err := tx.Bucket(bMisc).Delete(k); err != nil {
				return err
			}
		}
		n = len(dead)
		return nil
	})
	return n, err
}
