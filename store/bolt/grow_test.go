package bolt

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	bbolt "go.etcd.io/bbolt"
)

// The file is extended past the data before a commit needs it, and the store stays whole:
// the writes after it use the room, and a full check of the file passes.
func TestGrowAhead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "payouts.db")
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	size := func() int64 {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	var used int64
	db.bdb.View(func(tx *bbolt.Tx) error { used = tx.Size(); return nil })
	before := size()

	if grew, err := growAhead(db.bdb, path, before+1, 1<<20, 4<<20); err != nil || grew {
		t.Fatalf("a file under the threshold: grew %v, %v; want left as it is", grew, err)
	}
	if grew, err := growAhead(db.bdb, path, 0, before-used, 4<<20); err != nil || grew {
		t.Fatalf("a file with the margin's room left: grew %v, %v; want left as it is", grew, err)
	}
	grew, err := growAhead(db.bdb, path, 0, 1<<20+before-used, 4<<20)
	if err != nil || !grew {
		t.Fatalf("a file short of room: grew %v, %v; want it grown", grew, err)
	}
	if got, want := size(), used+4<<20; got != want {
		t.Fatalf("file %d bytes after growing, want the data's %d + 4 MiB = %d", got, used, want)
	}
	// it never shrinks a file: asked for less than there is, nothing changes
	if _, err := growAhead(db.bdb, path, 0, 8<<20, 1<<20); err != nil || size() != used+4<<20 {
		t.Fatalf("growing to less than the file's size changed it: %d bytes, %v", size(), err)
	}

	// writes fill the room (1,000 records of 2 KiB: 2 MiB), the size does not move
	err = db.bdb.Update(func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte("grow-test"))
		if err != nil {
			return err
		}
		for i := range 1000 {
			if err := b.Put(be64(uint64(i)), make([]byte, 2048)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := size(); got != used+4<<20 {
		t.Errorf("file %d bytes after writes into the room, want %d", got, used+4<<20)
	}
	db.Close(context.Background())
	db, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = db.bdb.View(func(tx *bbolt.Tx) error {
		for err := range tx.Check() {
			return err
		}
		if n := tx.Bucket([]byte("grow-test")).Stats().KeyN; n != 1000 {
			t.Errorf("%d records after reopening, want 1000", n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
