package bolt

import (
	"errors"
	"fmt"
	"os"
	"time"

	bbolt "go.etcd.io/bbolt"
)

// A backup records when its snapshot was taken, inside the copy, so that whoever sorts
// backups by age reads the time from what the server wrote rather than from a file name,
// which anyone who can write the directory chooses.

var snapshotKey = []byte("backup-snapshot-at")

// StampSnapshot records at in the copy of a database at path as the time its snapshot was
// taken. The copy must not be open elsewhere.
func StampSnapshot(path string, at time.Time) error {
	if err := existingCopy(path); err != nil {
		return err
	}
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: time.Second})
	if err != nil {
		return openError(path, err)
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bMeta)
		if b == nil {
			return errors.New("not a database of payouts (no meta bucket)")
		}
		return b.Put(snapshotKey, []byte(at.UTC().Format(time.RFC3339Nano)))
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: record the snapshot's time: %w", path, err)
	}
	return nil
}

// SnapshotTime is the time StampSnapshot recorded in the backup at path; zero when it holds
// none (a backup from before the record).
func SnapshotTime(path string) (time.Time, error) {
	if err := existingCopy(path); err != nil {
		return time.Time{}, err
	}
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		return time.Time{}, openError(path, err)
	}
	defer db.Close()
	var at time.Time
	err = db.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bMeta)
		if b == nil {
			return nil
		}
		if v := b.Get(snapshotKey); v != nil {
			var err error
			at, err = time.Parse(time.RFC3339Nano, string(v))
			return err
		}
		return nil
	})
	return at, err
}

// existingCopy refuses what is not a database file that exists: bbolt would make one.
func existingCopy(path string) error {
	st, err := os.Stat(path)
	switch {
	case err != nil:
		return err
	case !st.Mode().IsRegular() || st.Size() == 0:
		return fmt.Errorf("%s is not a database file", path)
	}
	return QuickCheck(path)
}
