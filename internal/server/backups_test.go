package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
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
	defer db.Close(context.Background())
	start := time.Date(2026, 11, 25, 6, 0, 0, 0, time.UTC)
	var good []string
	for i := range 3 {
		name := BackupName(start.Add(time.Duration(i) * 6 * time.Hour))
		f, err := os.OpenFile(filepath.Join(dir, name), os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Backup(context.Background(), f); err != nil {
			t.Fatal(err)
		}
		f.Close()
		if err := bolt.StampSnapshot(filepath.Join(dir, name), start.Add(time.Duration(i)*6*time.Hour)); err != nil {
			t.Fatal(err)
		}
		good = append(good, name)
	}
	b := &backups{dir: dir, keep: 3, every: 6 * time.Hour, log: slog.New(slog.DiscardHandler),
		metrics: api.NewMetrics(nil).Backups("dir"), targets: []*backupTarget{{label: "dir", where: dir}}}

	clock := start.Add(18 * time.Hour)
	b.now = func() time.Time { return clock }
	b.snapshot = func(_ context.Context, w io.Writer) (int64, error) {
		n, err := io.WriteString(w, strings.Repeat("not a bbolt file ", 512))
		return int64(n), err
	}
	if _, kept := b.once(context.Background(), clock); kept {
		t.Fatal("a backup that is not a database was taken as good")
	}
	if got := names(t, dir, clock); !slices.Equal(got, good) {
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
	if _, kept := b.once(context.Background(), at); !kept {
		t.Fatalf("a good backup failed: %+v", b.problems())
	}
	want := append(slices.Clone(good[1:]), BackupName(at))
	if got := names(t, dir, clock); !slices.Equal(got, want) {
		t.Errorf("after a good backup the directory holds %v, want %v", got, want)
	}
	if p := b.problems(); len(p) != 0 {
		t.Errorf("problems %+v after a good backup", p)
	}
}

// names lists the backups of dir as the scheduler does at now.
func names(t *testing.T, dir string, now time.Time) []string {
	t.Helper()
	list, _, err := ListBackups(dir, now)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, b := range list {
		out = append(out, b.Name)
	}
	return out
}

// memOffSite is an S3 in memory, which refuses every upload while down.
type memOffSite struct {
	mu      sync.Mutex
	down    bool
	objects []string
	tried   []string
}

func (o *memOffSite) Upload(_ context.Context, _, key string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.tried = append(o.tried, key)
	if o.down {
		return errors.New("503 Service Unavailable")
	}
	o.objects = append(o.objects, key)
	return nil
}

func (o *memOffSite) Backups(_ context.Context, prefix string) ([]Backup, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var list []Backup
	for i, k := range o.objects { // uploaded in order, a second apart
		list = append(list, Backup{strings.TrimPrefix(k, prefix), time.Now().Add(time.Duration(i-len(o.objects)) * time.Second)})
	}
	return list, nil
}

func (o *memOffSite) Remove(context.Context, string) error { return nil }

func (o *memOffSite) uploads() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.tried)
}

// While S3 is down, the same backup's copy is tried again, and no new backup is made before
// its time: new ones would push the older ones out of the directory.
func TestOffSiteFailureRetriesTheCopyNotTheBackup(t *testing.T) {
	dir := t.TempDir()
	db, err := bolt.Open(filepath.Join(t.TempDir(), DatabaseFile), bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	off := &memOffSite{down: true}
	b := &backups{dir: dir, keep: 3, every: time.Hour, retry: 20 * time.Millisecond, snapshot: db.Backup, now: time.Now,
		off: off, offPrefix: "nightly/", log: slog.New(slog.DiscardHandler), metrics: api.NewMetrics(nil).Backups("dir", "s3"),
		targets: []*backupTarget{{label: "dir", where: dir}, {label: "s3", where: "s3://bucket/nightly/"}}}
	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	b.run(ctx)

	names, _ := BackupsIn(dir)
	if len(names) != 1 {
		t.Fatalf("backups %v, want the one made at start", names)
	}
	keys := off.uploads()
	if len(keys) < 2 || slices.ContainsFunc(keys, func(k string) bool { return k != "nightly/"+names[0] }) {
		t.Errorf("uploads tried: %v, want %s again and again", keys, names[0])
	}
	if p := b.problems(); len(p) != 1 || p[0].Where != "s3://bucket/nightly/" || !strings.Contains(p[0].Error, "503") {
		t.Errorf("problems %+v, want the S3 copy's", p)
	}
}

// At start the newest backup off site gives the metric its time, and a backup of the
// directory whose copy a stop cut short is copied without waiting for the next one.
func TestStartCopiesTheNewestBackupMissingOffSite(t *testing.T) {
	dir := t.TempDir()
	olderAt, newestAt := time.Now().Add(-2*time.Hour), time.Now().Add(-time.Hour)
	older, newest := BackupName(olderAt), BackupName(newestAt)
	for _, b := range []Backup{{older, olderAt}, {newest, newestAt}} {
		if err := os.WriteFile(filepath.Join(dir, b.Name), []byte("a verified backup from before the recorded time"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(filepath.Join(dir, b.Name), b.At, b.At); err != nil {
			t.Fatal(err)
		}
	}
	off := &memOffSite{objects: []string{"nightly/" + older}}
	b := &backups{dir: dir, keep: 3, every: 6 * time.Hour, retry: time.Hour, now: time.Now,
		off: off, offPrefix: "nightly/", log: slog.New(slog.DiscardHandler), metrics: api.NewMetrics(nil).Backups("dir", "s3"),
		targets: []*backupTarget{{label: "dir", where: dir, lastGood: newestAt}, {label: "s3", where: "s3://bucket/nightly/"}}}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	b.run(ctx)
	if got := off.uploads(); !slices.Equal(got, []string{"nightly/" + newest}) {
		t.Errorf("uploads %v, want the newest backup only", got)
	}
	if names, _ := BackupsIn(dir); len(names) != 2 {
		t.Errorf("backups %v: a new one was made before its time", names)
	}
	b.mu.Lock()
	last := b.targets[1].lastGood
	b.mu.Unlock()
	if !last.Equal(newestAt) {
		t.Errorf("off site, the newest good backup is of %v, want %v", last, newestAt)
	}
}

func TestBackupNamesSortAsTimes(t *testing.T) {
	a, b := time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.UTC), time.Date(2026, 1, 2, 3, 4, 5, 7e6, time.UTC)
	if !isBackupName(BackupName(a)) || BackupName(a) >= BackupName(b) {
		t.Errorf("%s, %s: names that do not sort or parse as their times", BackupName(a), BackupName(b))
	}
	for _, name := range []string{"payouts.db", "payouts-20260102T030405Z.db", ".payouts-20260102T030405.006Z.db.partial"} {
		if isBackupName(name) {
			t.Errorf("%s taken for a backup", name)
		}
	}
}

// A good backup's time is never after now in what the metric and the dashboard are given,
// whatever time it was recorded with.
func TestBackupSuccessIsNeverInTheFuture(t *testing.T) {
	now := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	b := &backups{now: func() time.Time { return now }, log: slog.New(slog.DiscardHandler),
		metrics: api.NewMetrics(nil).Backups("dir"), targets: []*backupTarget{{label: "dir"}}}
	b.succeeded(b.targets[0], time.Date(2099, 12, 31, 0, 0, 0, 0, time.UTC))
	if got := b.lastGood(); !got.Equal(now) {
		t.Errorf("last good backup at %v, want at most now (%v)", got, now)
	}
}
