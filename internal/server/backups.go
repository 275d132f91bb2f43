package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"payouts/api"
	"payouts/store"
	"payouts/store/bolt"
	"payouts/web/dashboard"
)

// Scheduled backups (--backup-every): a consistent snapshot of the bbolt file, written to a
// temporary file, fsynced, checked as `payouts check` checks a file (bbolt's structure, then
// the ledger), and only then named payouts-<UTC time>.db; only after that are the oldest
// removed beyond --backup-keep, so that a failed backup never costs a good one. Each one is
// then copied to S3 (--backup-s3), where the same retention applies.

// MinBackupEvery is the shortest --backup-every: each backup copies and checks the whole file.
const MinBackupEvery = time.Minute

// retryAfterFailure bounds the wait before another try after a failed backup or copy.
const retryAfterFailure = 10 * time.Minute

// backupTimeLayout names a backup by the UTC time of its snapshot, to the millisecond, so
// that names sort as times do. The name is for people: what orders backups is the time
// recorded inside each (ListBackups).
const backupTimeLayout = "20060102T150405.000"

var backupNameRE = regexp.MustCompile(`^payouts-[0-9]{8}T[0-9]{6}\.[0-9]{3}Z\.db$`)

// BackupName is the name of a backup whose snapshot was taken at t.
func BackupName(t time.Time) string {
	return "payouts-" + t.UTC().Format(backupTimeLayout) + "Z.db"
}

func isBackupName(name string) bool { return backupNameRE.MatchString(name) }

// Backup is one backup: its name, and the time of its snapshot.
type Backup struct {
	Name string
	At   time.Time
}

// ListBackups lists the backups of dir (payouts-<time>.db) by the time of their snapshot,
// oldest first: the time recorded inside each (bolt.StampSnapshot), or, in one from before
// that record, the file's modification time (it was renamed into place once verified);
// never the time its name says, which anyone who can write the directory chooses. A backup
// whose time is after now goes to ahead instead (a clock that was once ahead, or a file put
// there): it is not taken as the newest, so that it neither stops the schedule nor is
// restored for the latest, and retention neither counts nor removes it.
func ListBackups(dir string, now time.Time) (backups, ahead []Backup, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || !isBackupName(e.Name()) {
			continue
		}
		path := filepath.Join(dir, e.Name())
		at, err := bolt.SnapshotTime(path)
		if err != nil || at.IsZero() {
			info, err := e.Info()
			if err != nil {
				continue // removed meanwhile
			}
			at = info.ModTime()
		}
		if at.After(now) {
			ahead = append(ahead, Backup{e.Name(), at})
		} else {
			backups = append(backups, Backup{e.Name(), at})
		}
	}
	sortBackups(backups)
	sortBackups(ahead)
	return backups, ahead, nil
}

// sortBackups orders backups by their time, oldest first.
func sortBackups(bs []Backup) {
	slices.SortFunc(bs, func(a, b Backup) int {
		if c := a.At.Compare(b.At); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
}

// notAhead splits backups listed elsewhere (S3) as ListBackups does: those whose time is
// not after now, and the others.
func notAhead(bs []Backup, now time.Time) (backups, ahead []Backup) {
	for _, b := range bs {
		if b.At.After(now) {
			ahead = append(ahead, b)
		} else {
			backups = append(backups, b)
		}
	}
	sortBackups(backups)
	sortBackups(ahead)
	return backups, ahead
}

// BackupsIn lists the names of the backups of dir, oldest first, as ListBackups orders them
// now (those dated after now left out).
func BackupsIn(dir string) ([]string, error) {
	bs, _, err := ListBackups(dir, time.Now())
	names := make([]string, len(bs))
	for i, b := range bs {
		names[i] = b.Name
	}
	return names, err
}

// VerifyBackup checks a copy of the database as `payouts check` does: bbolt's full
// consistency check, then the ledger of every balance from scratch. The copy must not be
// open elsewhere.
func VerifyBackup(ctx context.Context, path string) error {
	if st, err := os.Stat(path); err != nil {
		return err
	} else if st.Size() == 0 {
		return fmt.Errorf("%s is empty", path)
	}
	findings, err := bolt.Check(path)
	if err != nil {
		return fmt.Errorf("check %s: %w", path, err)
	}
	if len(findings) > 0 {
		return fmt.Errorf("%s is damaged (bbolt's consistency check): %s", path, strings.Join(findings, "; "))
	}
	db, err := bolt.Open(path, bolt.Options{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("check %s: %w", path, err)
	}
	defer db.Close(ctx)
	if err := db.CheckAllLedgers(ctx); err != nil {
		return fmt.Errorf("%s: the ledger check failed: %w", path, err)
	}
	return nil
}

// backupsOn reports whether any flag of the scheduled backups is set.
func (c Config) backupsOn() bool {
	return c.Backups.Every != 0 || c.Backups.Dir != "" || c.Backups.S3 != "" || c.Backups.S3Endpoint != "" || c.Backups.S3CredentialsFile != ""
}

// checkBackups refuses backup flags that cannot work together.
func (c Config) checkBackups() error {
	if !c.backupsOn() {
		return nil
	}
	if c.OnPostgres() {
		return errors.New("--backup-every and the other --backup- flags copy the bbolt file; on PostgreSQL back the database up " +
			"with its own tools: pg_dump, continuous archiving with point-in-time recovery (pgBackRest, WAL-G, Barman) " +
			"or your provider's managed backups (docs/guides/operations.md, Backups on PostgreSQL)")
	}
	switch {
	case c.Backups.Every == 0:
		return errors.New("--backup-dir and --backup-s3 need --backup-every (e.g. --backup-every 6h)")
	case c.Backups.Every < MinBackupEvery:
		return fmt.Errorf("--backup-every %s: at least %s (each backup copies and checks the whole database)", c.Backups.Every, MinBackupEvery)
	case c.Backups.Dir == "":
		return errors.New("--backup-every needs --backup-dir: the directory that keeps the verified backups")
	case c.Backups.Keep < 1:
		return fmt.Errorf("--backup-keep %d: keep at least 1 backup", c.Backups.Keep)
	case c.Backups.S3 == "" && (c.Backups.S3Endpoint != "" || c.Backups.S3CredentialsFile != ""):
		return errors.New("--backup-s3-endpoint and --backup-s3-credentials-file need --backup-s3 s3://bucket/prefix")
	}
	// Where they are, symbolic links followed: a backup directory that is a link into the
	// data directory is inside it.
	data, err1 := resolvedPath(c.Storage.Data)
	dir, err2 := resolvedPath(c.Backups.Dir)
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	if rel, err := filepath.Rel(data, dir); err == nil && (rel == "." || filepath.IsLocal(rel)) {
		return fmt.Errorf("--backup-dir %s is inside --data %s: keep backups apart, so that losing the data directory "+
			"does not lose them too (and `payouts restore` goes into an empty data directory)", c.Backups.Dir, c.Storage.Data)
	}
	if c.Backups.S3 != "" {
		if _, _, err := ParseS3URL(c.Backups.S3); err != nil {
			return fmt.Errorf("--backup-s3: %w", err)
		}
		if _, _, err := s3Endpoint(c.Backups.S3Endpoint); err != nil {
			return err
		}
	}
	return nil
}

// resolvedPath is path made absolute with its symbolic links followed as far as it exists;
// the rest, not made yet, is joined as it is.
func resolvedPath(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	rest := ""
	for dir := abs; ; {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(r, rest), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return abs, nil
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
}

// backupTarget is where backups go: the directory, or S3.
type backupTarget struct {
	label string // the metrics' target label: dir or s3
	where string // for people: the directory, or s3://bucket/prefix

	// What is known of it, under the scheduler's mutex.
	lastGood, failedAt time.Time
	failure            string
}

// backups is the scheduler: one goroutine makes a backup at a time.
type backups struct {
	dir   string
	keep  int
	every time.Duration
	retry time.Duration
	// off is where backups are copied off site (S3), nil without --backup-s3; offPrefix is ""
	// or ends with "/".
	off       offSite
	offPrefix string
	snapshot  func(context.Context, io.Writer) (int64, error)
	now       func() time.Time
	log       *slog.Logger
	metrics   *api.BackupMetrics

	mu      sync.Mutex // guards the targets' state, never held across I/O
	targets []*backupTarget
}

// wireBackups starts the scheduled backups when --backup-every is set.
func (w *wiring) wireBackups() error {
	c := w.cfg
	if c.Backups.Every == 0 {
		return nil
	}
	b := &backups{dir: c.Backups.Dir, keep: c.Backups.Keep, every: c.Backups.Every, retry: retryAfterFailure, snapshot: w.db.Backup,
		now: w.realNow, log: w.logger.With("component", "backups")}
	if w.opts.BackupEvery > 0 {
		b.every = w.opts.BackupEvery
	}
	b.targets = []*backupTarget{{label: "dir", where: c.Backups.Dir}}
	if c.Backups.S3 != "" {
		getenv := w.run.getenv
		if getenv == nil {
			getenv = func(string) string { return "" }
		}
		s3, key, err := OpenS3(c.Backups.S3, S3Access{Endpoint: c.Backups.S3Endpoint, CredentialsFile: c.Backups.S3CredentialsFile}, getenv)
		if err != nil {
			return err
		}
		if key != "" && !strings.HasSuffix(key, "/") {
			key += "/"
		}
		b.off, b.offPrefix = s3, key
		b.targets = append(b.targets, &backupTarget{label: "s3", where: s3.Where() + "/" + key})
	}
	if err := backupDirOnlyOurs(c.Backups.Dir); err != nil {
		return err
	}
	labels := make([]string, len(b.targets))
	for i, t := range b.targets {
		labels[i] = t.label
	}
	b.metrics = w.metrics.Backups(labels...)
	removeStalePartials(b.dir, b.log)
	if list, ahead, err := ListBackups(b.dir, b.now()); err == nil {
		if len(list) > 0 {
			b.succeeded(b.targets[0], list[len(list)-1].At)
		}
		b.warnAhead(b.targets[0], ahead)
	}
	where := []string{}
	for _, t := range b.targets {
		where = append(where, t.where)
	}
	b.log.Info("scheduled backups", "every", b.every.String(), "keep", b.keep, "to", where)
	w.backups = b
	w.workers = append(w.workers, b.run)
	return nil
}

// backupDirOnlyOurs makes the backup directory, or tightens an existing one to 0700 as the
// data directory is: whoever may write into it may replace a backup or add one, and
// whoever may read it reads every record. One that stays writable by others is refused.
func backupDirOnlyOurs(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("--backup-dir: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		if st, serr := os.Stat(dir); serr != nil || st.Mode().Perm()&0o022 != 0 {
			return fmt.Errorf("--backup-dir %s is writable by others and could not be made 0700 (%v): give a directory of "+
				"the server's user alone", dir, err)
		}
	}
	return nil
}

// warnAhead logs the backups dated after now, which the schedule and retention leave aside.
func (b *backups) warnAhead(t *backupTarget, ahead []Backup) {
	for _, a := range ahead {
		b.log.Warn("a backup is dated after now: it is not taken as the newest and retention never removes it; "+
			"remove it once you know where it came from", "target", t.label, "where", t.where, "backup", a.Name,
			"snapshot", a.At.UTC().Format(time.RFC3339))
	}
}

// removeStalePartials removes what a backup cut short by a crash left.
func removeStalePartials(dir string, log *slog.Logger) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if name := e.Name(); strings.HasPrefix(name, ".payouts-") && strings.HasSuffix(name, ".partial") {
			if err := os.Remove(filepath.Join(dir, name)); err == nil {
				log.Info("removed the partial file of an interrupted backup", "file", name)
			}
		}
	}
}

// run makes a backup every b.every until ctx ends. The first is due one interval after the
// newest backup of the directory, so that restarts do not each make one. After a failure the
// next try comes sooner (b.retry); when only the off-site copy failed, that try copies the
// same backup again rather than making new ones, which would push the older ones out of the
// directory.
func (b *backups) run(ctx context.Context) {
	next := b.now()
	if last := b.lastGood(); !last.IsZero() {
		next = last.Add(b.every)
	}
	var uncopied Backup // the newest backup, while its off-site copy failed
	if b.off != nil {
		if uncopied = b.resumeOffSite(ctx); uncopied.Name != "" {
			next = b.now()
		}
	}
	for {
		t := time.NewTimer(next.Sub(b.now()))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		start := b.now()
		due := b.lastGood().Add(b.every)
		retry := start.Add(min(b.every, b.retry))
		if uncopied.Name != "" && start.Before(due) {
			if b.copyOffSite(ctx, uncopied) {
				uncopied, next = Backup{}, due
			} else if next = retry; due.Before(retry) {
				next = due
			}
			continue
		}
		made, kept := b.once(ctx, start)
		switch {
		case !kept:
			next = retry
		case b.off != nil && !b.copyOffSite(ctx, made):
			uncopied, next = made, retry
		default:
			uncopied, next = Backup{}, start.Add(b.every)
		}
	}
}

// resumeOffSite reads at start the newest backup off site, for the metrics and the warning,
// and returns the newest of the directory when it is not there (its copy was cut short).
func (b *backups) resumeOffSite(ctx context.Context) Backup {
	lctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	target := b.targets[1]
	all, err := b.off.Backups(lctx, b.offPrefix)
	if err != nil {
		b.failedUnlessStopping(ctx, target, fmt.Errorf("listing the backups: %w", err))
		return Backup{}
	}
	remote, ahead := notAhead(all, b.now())
	if len(remote) > 0 {
		b.succeeded(target, remote[len(remote)-1].At)
	}
	b.warnAhead(target, ahead)
	local, _, err := ListBackups(b.dir, b.now())
	if err != nil || len(local) == 0 {
		return Backup{}
	}
	newest := local[len(local)-1]
	if slices.ContainsFunc(all, func(r Backup) bool { return r.Name == newest.Name }) {
		return Backup{}
	}
	return newest
}

func (b *backups) lastGood() time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.targets[0].lastGood
}

// once makes one backup, verifies it, keeps it and removes the oldest; it returns the new
// backup and whether it was kept.
func (b *backups) once(ctx context.Context, at time.Time) (Backup, bool) {
	name := BackupName(at)
	started := time.Now()
	removeStalePartials(b.dir, b.log) // one backup at a time: any left is of one cut short
	size, err := b.writeVerified(ctx, name, at)
	if err != nil {
		b.failedUnlessStopping(ctx, b.targets[0], err)
		return Backup{name, at}, false
	}
	b.succeeded(b.targets[0], at)
	b.log.Info("backup made and verified", "file", filepath.Join(b.dir, name), "bytes", size,
		"duration", time.Since(started).Round(time.Millisecond).String())
	if err := b.pruneDir(); err != nil {
		b.failed(b.targets[0], fmt.Errorf("removing the oldest backups: %w", err))
	}
	return Backup{name, at}, true
}

// copyOffSite copies the backup name to S3 and removes the oldest there; it reports whether
// both succeeded.
func (b *backups) copyOffSite(ctx context.Context, made Backup) bool {
	if ctx.Err() != nil {
		return false
	}
	// An upload gets at least one interval: the next backup waits for it anyway.
	uctx, cancel := context.WithTimeout(ctx, max(b.every, 5*time.Minute))
	defer cancel()
	target := b.targets[1]
	if err := b.off.Upload(uctx, filepath.Join(b.dir, made.Name), b.offPrefix+made.Name); err != nil {
		b.failedUnlessStopping(ctx, target, err)
		return false
	}
	b.succeeded(target, made.At)
	b.log.Info("backup copied", "to", target.where+made.Name)
	if err := b.pruneOffSite(uctx); err != nil {
		b.failedUnlessStopping(ctx, target, fmt.Errorf("removing the oldest backups: %w", err))
		return false
	}
	return true
}

// writeVerified writes a snapshot to a temporary file beside the backups, fsyncs it, records
// in it the time of the snapshot, verifies it, then gives it its name.
func (b *backups) writeVerified(ctx context.Context, name string, at time.Time) (int64, error) {
	tmp := filepath.Join(b.dir, "."+name+".partial")
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return 0, err
	}
	defer os.Remove(tmp) // nothing once renamed
	// The snapshot is a read transaction of the live database, which a closing store waits
	// for: a shutdown cuts it short instead.
	n, err := b.snapshot(ctx, ctxWriter{ctx, f})
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, fmt.Errorf("snapshot: %w", err)
	}
	if err := bolt.StampSnapshot(tmp, at); err != nil {
		return 0, fmt.Errorf("the new backup did not verify, so it was not kept: %w", err)
	}
	if err := VerifyBackup(ctx, tmp); err != nil {
		return 0, fmt.Errorf("the new backup did not verify, so it was not kept: %w", err)
	}
	final := filepath.Join(b.dir, name)
	if err := os.Rename(tmp, final); err != nil {
		return 0, err
	}
	return n, store.SyncDir(b.dir)
}

// ctxWriter stops a long copy when its context ends.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}

// pruneDir removes the oldest backups of the directory beyond keep.
func (b *backups) pruneDir() error {
	list, _, err := ListBackups(b.dir, b.now())
	if err != nil {
		return err
	}
	var errs []error
	for _, old := range list[:max(len(list)-b.keep, 0)] {
		name := old.Name
		if err := os.Remove(filepath.Join(b.dir, name)); err != nil {
			errs = append(errs, err)
			continue
		}
		b.log.Info("backup removed: more than --backup-keep", "file", filepath.Join(b.dir, name))
	}
	if err := store.SyncDir(b.dir); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// offSite is where backups are copied off site: S3 (S3Source).
type offSite interface {
	Upload(ctx context.Context, path, key string) error
	Backups(ctx context.Context, prefix string) ([]Backup, error)
	Remove(ctx context.Context, key string) error
}

// pruneOffSite removes the oldest backups off site beyond keep.
func (b *backups) pruneOffSite(ctx context.Context) error {
	all, err := b.off.Backups(ctx, b.offPrefix)
	if err != nil {
		return err
	}
	list, _ := notAhead(all, b.now())
	var errs []error
	for _, old := range list[:max(len(list)-b.keep, 0)] {
		name := old.Name
		if err := b.off.Remove(ctx, b.offPrefix+name); err != nil {
			errs = append(errs, err)
			continue
		}
		b.log.Info("backup removed: more than --backup-keep", "object", b.targets[1].where+name)
	}
	return errors.Join(errs...)
}

// succeeded records a good backup of t whose snapshot was taken at; never after now, so that
// the metric an alert watches is never in the future.
func (b *backups) succeeded(t *backupTarget, at time.Time) {
	if now := b.now(); at.After(now) {
		at = now
	}
	b.mu.Lock()
	t.lastGood = at
	b.mu.Unlock()
	b.metrics.Succeeded(t.label, at)
}

// failedUnlessStopping is failed, but for a backup the server's shutdown cut short: that is
// no failure to warn of, and the next start makes one.
func (b *backups) failedUnlessStopping(ctx context.Context, t *backupTarget, err error) {
	if ctx.Err() != nil {
		b.log.Info("backup interrupted by the shutdown", "target", t.label, "where", t.where)
		return
	}
	b.failed(t, err)
}

func (b *backups) failed(t *backupTarget, err error) {
	b.mu.Lock()
	t.failedAt, t.failure = b.now(), err.Error()
	b.mu.Unlock()
	b.metrics.Failed(t.label)
	b.log.Error("backup failed", "target", t.label, "where", t.where, "err", err.Error())
}

// problems are the targets whose last backup failed, for the dashboard's overview.
func (b *backups) problems() []dashboard.BackupProblem {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []dashboard.BackupProblem
	for _, t := range b.targets {
		if !t.failedAt.IsZero() && !t.failedAt.Before(t.lastGood) {
			out = append(out, dashboard.BackupProblem{Where: t.where, FailedAt: t.failedAt, Error: t.failure, LastGood: t.lastGood})
		}
	}
	return out
}

// backupProblems is what the dashboard asks; nil when backups are off.
func (w *wiring) backupProblems() func() []dashboard.BackupProblem {
	if w.backups == nil {
		return nil
	}
	return w.backups.problems
}
