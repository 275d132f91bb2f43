package bolt

import (
	"bytes"
	"encoding/binary"
	"errors"
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

// listsUpgradeKey, in the meta bucket while upgradeLists is under way, is the last key of
// the old index by status whose payout it entered in the list index.
var listsUpgradeKey = []byte("lists-upgrade-after")

// upgradeLists builds the list index (lists.go) of a file of the layout before it, from its
// index by status (merchantId 0 status 0 be64(id)) and the stage in each payout's state, at
// most chunk payouts a transaction, and deletes the three old indexes in the transaction
// after the last chunk. Until then the old indexes stay whole and serve the listings of a
// file opened read-only, and each chunk records the last key it entered: a crash in the
// middle leaves a file that reads as before and whose next Open carries on from there.
// most, when not negative, stops after that many chunks, as a crash would; done says whether
// the upgrade ended (or there was none).
func upgradeLists(db *bbolt.DB, chunk, most int) (done bool, err error) {
	for n := 0; most < 0 || n < most; n++ {
		err = db.Update(func(tx *bbolt.Tx) error {
			meta := tx.Bucket(bMeta)
			old := tx.Bucket(bByStatus)
			if old == nil {
				done = true
				return nil
			}
			lists, err := tx.CreateBucketIfNotExists(bLists)
			if err != nil {
				return err
			}
			lists.FillPercent = 1.0 // each run's keys come in id order, at its end
			pb := payoutBucketsOf(tx)
			c := old.Cursor()
			k, _ := c.First()
			if after := meta.Get(listsUpgradeKey); after != nil {
				if k, _ = c.Seek(after); bytes.Equal(k, after) {
					k, _ = c.Next()
				}
			}
			var last []byte
			for moved := 0; k != nil && moved < chunk; k, _ = c.Next() {
				last = k
				merchantID, rest, ok := bytes.Cut(k, []byte{0})
				if !ok || len(rest) < 9 {
					continue // not a key the old layout wrote
				}
				moved++
				id := int64(binary.BigEndian.Uint64(rest[len(rest)-8:]))
				status := rules.Status(rest[:len(rest)-9])
				stage := rules.StageOf(status)
				p, err := pb.readState(id)
				switch {
				case errors.Is(err, ErrNotFound):
					continue // an entry of no payout, which the old listings failed on
				case err == nil:
					stage, status = p.Stage, p.Status // the payout's own, should the index differ
				}
				if err := lists.Put(listKey(id, string(merchantID), stage, status), nil); err != nil {
					return err
				}
			}
			if last != nil {
				return meta.Put(listsUpgradeKey, bytes.Clone(last))
			}
			done = true
			for _, b := range [][]byte{bByStatus, bByStage, bByMerch} {
				if tx.Bucket(b) == nil {
					continue
				}
				if err := tx.DeleteBucket(b); err != nil {
					return err
				}
			}
			return meta.Delete(listsUpgradeKey)
		})
		if err != nil || done {
			return done, err
		}
	}
	return false, nil
}
