package bolt

import (
	"bytes"
	"encoding/binary"
	"time"

	bbolt "go.etcd.io/bbolt"

	"payouts/rules"
)

// migrationChunk is how many payouts one transaction of migratePayouts moves (a variable:
// a test crosses chunks with fewer payouts).
var migrationChunk = 10_000

// migratePayouts moves payouts stored whole (bPayoutsV1, the format before record.go) into
// their core and state, with the queue time their bDueByID entry held, a chunk per
// transaction: a crash in the middle leaves every payout in exactly one of the two formats,
// and the next Open carries on.
func migratePayouts(db *bbolt.DB) error {
	chunk := migrationChunk
	for {
		done := false
		err := db.Update(func(tx *bbolt.Tx) error {
			old := tx.Bucket(bPayoutsV1)
			if old == nil {
				done = true
				return nil
			}
			pb := payoutBucketsOf(tx)
			dueByID := tx.Bucket(bDueByID)
			if pb.core.Sequence() < old.Sequence() {
				if err := pb.core.SetSequence(old.Sequence()); err != nil {
					return err
				}
			}
			var keys [][]byte
			c := old.Cursor()
			for k, v := c.First(); k != nil && len(keys) < chunk; k, v = c.Next() {
				var p rules.Payout
				if err := unmarshal(v, &p); err != nil {
					return err
				}
				var due time.Time
				if dueByID != nil {
					if dk := dueByID.Get(k); len(dk) == 16 {
						due = time.Unix(0, int64(binary.BigEndian.Uint64(dk[:8])))
					}
				}
				if err := pb.insert(&p, due); err != nil {
					return err
				}
				keys = append(keys, bytes.Clone(k))
			}
			if len(keys) == 0 {
				done = true
				if dueByID != nil {
					if err := tx.DeleteBucket(bDueByID); err != nil {
						return err
					}
				}
				return tx.DeleteBucket(bPayoutsV1)
			}
			for _, k := range keys {
				if err := old.Delete(k); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil || done {
			return err
		}
	}
}
