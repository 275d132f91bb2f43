package store

import (
	"bytes"

	bolt "go.etcd.io/bbolt"

	"payouts/rules"
)

// migratePayouts moves payouts stored whole (bPayoutsV1, the format before record.go) into
// their core, state and history, a chunk per transaction: a crash in the middle leaves every
// payout in exactly one of the two formats, and the next Open carries on.
func migratePayouts(db *bolt.DB) error {
	const chunk = 10_000
	for {
		done := false
		err := db.Update(func(tx *bolt.Tx) error {
			old := tx.Bucket(bPayoutsV1)
			if old == nil {
				done = true
				return nil
			}
			pb := payoutBucketsOf(tx)
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
				if err := pb.insert(&p); err != nil {
					return err
				}
				keys = append(keys, bytes.Clone(k))
			}
			if len(keys) == 0 {
				done = true
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
