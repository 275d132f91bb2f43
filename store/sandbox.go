package store

import (
	"errors"
	"strconv"
	"time"

	bolt "go.etcd.io/bbolt"

	"payouts/rules"
)

// The sandbox's records (issue 15): the test clock's offset in the meta bucket, and the
// per-merchant scripted outcomes, the simulated directory's entries, the integration users
// and the lookups' request ids in the misc bucket under their own prefixes.

var metaClockOffset = []byte("sandbox-clock-offset") // decimal nanoseconds

// SandboxClockOffset is the stored offset of the sandbox clock, zero when none.
func (s *DB) SandboxClockOffset() (time.Duration, error) {
	var off time.Duration
	err := s.bolt.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bMeta).Get(metaClockOffset)
		if v == nil {
			return nil
		}
		n, err := strconv.ParseInt(string(v), 10, 64)
		off = time.Duration(n)
		return err
	})
	return off, err
}

// PutSandboxClockOffset stores the offset of the sandbox clock.
func (s *DB) PutSandboxClockOffset(off time.Duration) error {
	return s.bolt.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bMeta).Put(metaClockOffset, []byte(strconv.FormatInt(int64(off), 10)))
	})
}

func sandboxRulesKey(merchantID string) []byte { return key("sandbox-rules", merchantID) }

// SandboxRules are a merchant's scripted outcomes, in order; none when never set.
func (s *DB) SandboxRules(merchantID string) ([]rules.ScriptRule, error) {
	rs := []rules.ScriptRule{}
	err := s.bolt.View(func(tx *bolt.Tx) error {
		err := getJSON(tx.Bucket(bMisc), sandboxRulesKey(merchantID), &rs)
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		return err
	})
	return rs, err
}

// PutSandboxRules replaces a merchant's scripted outcomes.
func (s *DB) PutSandboxRules(merchantID string, rs []rules.ScriptRule) error {
	return s.bolt.Update(func(tx *bolt.Tx) error {
		return putJSON(tx.Bucket(bMisc), sandboxRulesKey(merchantID), rs)
	})
}
