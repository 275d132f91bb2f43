package server

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"payouts/api"
	"payouts/store/bolt"
)

// A new backup that does not verify is not kept and costs no good one; a good one then
// replaces the oldest.
func TestBackupThatFailsVerificationRemovesNoGoodOne(t *testing.T) {
	dir := t.TempDir()
	db, err := bolt.Open(filepath.Join(t.TempDir(), DatabaseFile), bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	start := time.Date(2026, 11, 25, 6, 0, 0, 0, time.UTC)
	var good []string
	for i := range 3 {
		name := BackupName(start.Add(time.Duration(i) * 6 * time.Hour))
		f, err := os.OpenFile(filepath.Join(dir, name), os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Backup(f); err != nil {
			t.Fatal(err)
		}
		f.Close()
		good = append(good, name)
	}
	b := &backups{dir: dir, keep: 3, every: 6 * time.Hour, log: slog.New(slog.DiscardHandler),
		metrics: api.NewMetrics(nil).Backups("dir"), targets: []*backupTarget{{label: "dir", where: dir}}}

	clock := start.Add(18 * time.Hour)
	b.now = func() time.Time { return clock }
	b.snapshot = func(w io.Writer) (int64, error) {
		n, err := io.WriteString(w, strings.Repeat("not a bbolt file ", 512))
		return int64(n), err
	}
	if b.once(context.Background(), clock) {
		t.Fatal("a backup that is not a database was taken as good")
	}
	if got, _ := BackupsIn(dir); !slices.Equal(got, good) {
		t.Errorf("after a failed backup the directory holds %v, want %v", got, good)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != len(good) {
		t.Errorf("the failed backup left a file: %v", entries)
	}
	if p := b.problems(); len(p) != 1 || !strings.Contains(p[0].Error, "did not verify") {
		t.Errorf("problems %+v, want the failed verification", p)
	}

	b.snapshot = db.Backup
	clock = start.Add(24 * time.Hour)
	at := clock
	if !b.once(context.Background(), at) {
		t.Fatalf("a good backup failed: %+v", b.problems())
	}
	want := append(slices.Clone(good[1:]), BackupName(at))
	if got, _ := BackupsIn(dir); !slices.Equal(got, want) {
		t.Errorf("after a good backup the directory holds %v, want %v", got, want)
	}
	if p := b.problems(); len(p) != 0 {
		t.Errorf("problems %+v after a good backup", p)
	}
}

func TestBackupNamesSortAsTimes(t *testing.T) {
	a, b := time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.UTC), time.Date(2026, 1, 2, 3, 4, 5, 7e6, time.UTC)
	if !isBackupName(BackupName(a)) || BackupName(a) >= BackupName(b) || !backupTime(BackupName(a)).Equal(a) {
		t.Errorf("%s, %s: names that do not sort or parse as their times", BackupName(a), BackupName(b))
	}
	for _, name := range []string{"payouts.db", "payouts-20260102T030405Z.db", ".payouts-20260102T030405.006Z.db.partial"} {
		if isBackupName(name) {
			t.Errorf("%s taken for a backup", name)
		}
	}
}
