//go:build linux

package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"path/filepath"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"
)

// The pages read through the map leave the resident set when trimmed, and what they hold is
// read back unchanged; the trimmer does it by itself once the mapped pages pass its budget.
func TestTrimGivesBackMappedPages(t *testing.T) {
	const budget = 16 << 20
	db, err := Open(filepath.Join(t.TempDir(), "payouts.db"), Options{NoSync: true, MappedBudget: budget})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	db.trimmer.stop() // trimmed by hand first; started again below
	bucket, value := []byte("trim-test"), bytes.Repeat([]byte{0xab}, 4000)
	const records = 12000 // about 48 MiB of pages
	for i := 0; i < records; i += 1000 {
		if err := db.bdb.Update(func(tx *bbolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists(bucket)
			if err != nil {
				return err
			}
			for j := i; j < i+1000; j++ {
				if err := b.Put(binary.BigEndian.AppendUint64(nil, uint64(j)), value); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	readAll := func() {
		t.Helper()
		n := 0
		db.bdb.View(func(tx *bbolt.Tx) error {
			return tx.Bucket(bucket).ForEach(func(k, v []byte) error {
				if !bytes.Equal(v, value) {
					t.Fatalf("record %x reads %d bytes unlike what was written", k, len(v))
				}
				n++
				return nil
			})
		})
		if n != records {
			t.Fatalf("%d records read back, want %d", n, records)
		}
	}
	resident := func() int64 {
		t.Helper()
		r, ok := residentFileBytes()
		if !ok {
			t.Fatal("no /proc/self/statm")
		}
		return r
	}

	readAll()
	before := resident()
	if err := trimMapped(db.bdb); err != nil {
		t.Fatal(err)
	}
	after := resident()
	if before-after < 32<<20 {
		t.Fatalf("resident file pages %d MiB before the trim, %d MiB after: want at least 32 MiB given back", before>>20, after>>20)
	}
	readAll()

	db.trimmer = startTrimmer(db.bdb, budget)
	readAll()
	deadline := time.Now().Add(10 * trimEvery)
	for resident() > budget+8<<20 { // the test binary's own pages are file-backed too
		if time.Now().After(deadline) {
			t.Fatalf("resident file pages %d MiB after %s, want the trimmer to bring them under %d MiB", resident()>>20, 10*trimEvery, budget>>20)
		}
		time.Sleep(trimEvery / 10) // a poll: the trimmer works on its own ticker
	}
}
