package e2e

// Scheduled backups (--backup-every): made on a short schedule, each verified before the
// oldest is removed, copied to an S3 fake; then the restore drill an operator runs after
// losing the data directory, from the backup directory and from S3; a failed backup in the
// log, the metrics and the dashboard; and the flags refused where they cannot work.

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"payouts/internal/cli"
	"payouts/internal/server"
	"payouts/rules"
	"payouts/store/bolt"
)

// fakeS3 is an in-memory S3 service with one bucket, for the life of the test.
func fakeS3(t *testing.T, bucket string) string {
	t.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket(bucket); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(gofakes3.New(backend).Server())
	t.Cleanup(ts.Close)
	return ts.URL
}

// s3Env is an environment with the S3 fake's credentials (it takes any).
func s3Env(name string) string {
	return map[string]string{"AWS_ACCESS_KEY_ID": "drill-key-id", "AWS_SECRET_ACCESS_KEY": "drill-secret-key"}[name]
}

// s3Backups lists the backups under prefix of the S3 fake, oldest first.
func s3Backups(t *testing.T, endpoint, prefix string) []string {
	t.Helper()
	s3, key, err := server.OpenS3(prefix, server.S3Access{Endpoint: endpoint}, s3Env)
	if err != nil {
		t.Fatal(err)
	}
	list, err := s3.Backups(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, b := range list {
		names = append(names, b.Name)
	}
	return names
}

// backupsIn lists the backups of a backup directory, oldest first.
func backupsIn(t *testing.T, dir string) []string {
	t.Helper()
	names, err := server.BackupsIn(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return names
}

// storeContents is what a stopped server's store holds that a restore must give back:
// every merchant, payout, balance and ledger entry, as JSON.
func storeContents(t *testing.T, dir string) string {
	t.Helper()
	db, err := openTestStore(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	ms, err := db.Merchants(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var all []any
	for _, m := range ms {
		var payouts []*rules.Payout
		for f := (rules.ListFilter{Limit: 500}); ; {
			page, err := db.ListPayouts(context.Background(), m.ID, f)
			if err != nil {
				t.Fatal(err)
			}
			payouts = append(payouts, page.Items...)
			if page.NextCursor == 0 {
				break
			}
			f.Cursor = page.NextCursor
		}
		bs, err := db.Balances(context.Background(), m.ID)
		if err != nil {
			t.Fatal(err)
		}
		var entries [][]rules.Entry
		for _, b := range bs {
			es, err := rules.AllEntries(context.Background(), db, m.ID, b.Country, b.Currency)
			if err != nil {
				t.Fatal(err)
			}
			entries = append(entries, es)
		}
		all = append(all, m, payouts, bs, entries)
	}
	raw, err := json.MarshalIndent(all, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// keyFiles are what a backup does not hold: the operator keeps them apart and copies them
// beside a restored database.
var keyFiles = []string{server.MasterKeyFile, server.CardKeyFile, server.NotificationKeyFile, server.AdminTokenFile}

func copyKeys(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(to, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, k := range keyFiles {
		raw, err := os.ReadFile(filepath.Join(from, k))
		if os.IsNotExist(err) && k == server.AdminTokenFile {
			continue // the test servers are given --admin-token
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, k), raw, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// apiView is what the API answers for a merchant's payouts and balances.
func apiView(t *testing.T, c *merchantClient, ids []int64) []string {
	t.Helper()
	var out []string
	for _, id := range ids {
		code, _, raw := c.do(t, "GET", "payouts/"+itoa(id), nil, "")
		if code != 200 {
			t.Fatalf("GET payout %d: %d %s", id, code, raw)
		}
		out = append(out, string(raw))
	}
	code, _, raw := c.do(t, "GET", "balance", nil, "")
	if code != 200 {
		t.Fatalf("GET balance: %d %s", code, raw)
	}
	return append(out, string(raw))
}

func TestScheduledBackupsAreVerifiedRotatedCopiedToS3AndRestoredInADrill(t *testing.T) {
	t.Parallel()
	boltOnly(t, "the scheduled backups copy the bbolt file (PostgreSQL: pg_dump, PITR)")
	endpoint := fakeS3(t, "payouts-backups")
	creds := filepath.Join(t.TempDir(), "s3-credentials")
	if err := os.WriteFile(creds, []byte("[default]\naws_access_key_id = drill-key-id\naws_secret_access_key = drill-secret-key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	backupDir := filepath.Join(t.TempDir(), "backups")
	const keep = 3
	s := startServerWith(t, dir, server.Options{BackupEvery: 300 * time.Millisecond},
		"--backup-every", "6h", "--backup-keep", strconv.Itoa(keep), "--backup-dir", backupDir,
		"--backup-s3", "s3://payouts-backups/nightly", "--backup-s3-endpoint", endpoint, "--backup-s3-credentials-file", creds)

	// The first backup is made at start.
	var first string
	eventually(t, 20*time.Second, "no backup in "+backupDir, func() bool {
		if names := backupsIn(t, backupDir); len(names) > 0 {
			first = names[0]
		}
		return first != ""
	})
	if st, err := os.Stat(backupDir); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("backup dir: %v %v, want 0700", st.Mode(), err)
	}

	// Payouts paid and rejected, in both countries: balances and ledger entries move. All are
	// created, then awaited: the sandbox's rail takes them side by side.
	c := s.newMerchant(t, map[string]any{})
	var ids []int64
	for _, req := range []map[string]any{perAccountRequest("DRILL-OK", "1231234567801"), perAccountRequest("DRILL-REJECTED", "1231234569999"),
		colBankRequest("DRILL-COL"), perBankRequest("DRILL-PER")} {
		ids = append(ids, c.create(t, req).Payout.ID)
	}
	for i, id := range ids {
		stage := "SUCCESS"
		if i == 1 {
			stage = "REJECTED"
		}
		c.waitStage(t, id, stage, 20*time.Second)
	}
	eventually(t, 20*time.Second, "the outbox did not empty", func() bool {
		v, ok := s.metricValue(t, "payouts_outbox_depth")
		return ok && v == 0
	})
	before := apiView(t, c, ids)

	// Backups keep being made; the oldest are removed, here and in S3, and a backup newer
	// than the payouts' last change reaches both.
	settled := time.Now().UTC()
	newer := func(names []string) bool {
		return len(names) > 0 && names[len(names)-1] > server.BackupName(settled)
	}
	eventually(t, 30*time.Second, "no backup after the payouts settled, in the directory and in S3, with the first removed", func() bool {
		local, remote := backupsIn(t, backupDir), s3Backups(t, endpoint, "s3://payouts-backups/nightly/")
		if len(local) > keep+1 || len(remote) > keep+1 { // +1: a new one is kept before the oldest goes
			t.Fatalf("more backups than --backup-keep %d: %v in the directory, %v in S3", keep, local, remote)
		}
		return newer(local) && newer(remote) && !slices.Contains(local, first) && !slices.Contains(remote, first)
	})
	for _, target := range []string{"dir", "s3"} {
		if v, ok := s.metricValue(t, `payouts_backup_failures_total{target="`+target+`"}`); !ok || v != 0 {
			t.Errorf("%s failures: %v (%v), want 0", target, v, ok)
		}
		if v, ok := s.metricValue(t, `payouts_backup_last_success_timestamp_seconds{target="`+target+`"}`); !ok || v < float64(settled.Unix()) {
			t.Errorf("%s last success %v (%v), want after %v", target, v, ok, settled.Unix())
		}
	}
	s.Stop(t)
	want := storeContents(t, dir)
	local := backupsIn(t, backupDir)
	if len(local) != keep {
		t.Errorf("after the server stopped: %v, want the %d newest", local, keep)
	}
	for _, name := range local {
		if st, err := os.Stat(filepath.Join(backupDir, name)); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v, want 0600", name, st.Mode(), err)
		}
	}
	if entries, _ := os.ReadDir(backupDir); len(entries) != len(local) {
		t.Errorf("the backup directory holds more than the backups: %v", entries)
	}
	remote := s3Backups(t, endpoint, "s3://payouts-backups/nightly/")

	// The drill: the data directory is lost; its keys were kept apart.
	keys := t.TempDir()
	copyKeys(t, dir, keys)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	restored := func(t *testing.T, dir string) {
		t.Helper()
		r := startServer(t, dir)
		c := *c
		c.Base = r.URL
		if got := apiView(t, &c, ids); !slices.Equal(got, before) {
			t.Errorf("after the restore the API answers\n%s\nbefore it answered\n%s", strings.Join(got, "\n"), strings.Join(before, "\n"))
		}
		r.Stop(t)
		if got := storeContents(t, dir); got != want {
			t.Errorf("the restored store differs:\n%s\nwant\n%s", got, want)
		}
		for _, cur := range []string{"PEN", "COP", "USD"} {
			if out, err := runCLI(t, nil, "reconcile", "--data", dir, "--merchant", c.MerchantID, "--currency", cur); err != nil {
				t.Errorf("reconcile %s: %v\n%s", cur, err, out)
			}
		}
	}

	t.Run("from the backup directory (its newest)", func(t *testing.T) {
		out, err := runCLI(t, nil, "restore", "--data", dir, backupDir)
		if err != nil {
			t.Fatalf("restore: %v\n%s", err, out)
		}
		for _, says := range []string{local[len(local)-1], "verified", "installed as " + filepath.Join(dir, "payouts.db"),
			"master.key", "missing: required", "card.key", "notification-key.pem", "admin-token"} {
			if !strings.Contains(out, says) {
				t.Errorf("restore does not say %q:\n%s", says, out)
			}
		}
		if out, err := runCLI(t, nil, "restore", "--data", dir, backupDir); err == nil || !strings.Contains(out+err.Error(), "never overwrites") {
			t.Errorf("a second restore over the database: %v\n%s", err, out)
		}
		copyKeys(t, keys, dir)
		restored(t, dir)
	})

	t.Run("from S3, its keys copied first", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "data")
		copyKeys(t, keys, dir)
		url := "s3://payouts-backups/nightly/" + remote[len(remote)-1]
		out, err := runCLI(t, s3Env, "restore", "--data", dir, "--backup-s3-endpoint", endpoint, url)
		if err != nil {
			t.Fatalf("restore: %v\n%s", err, out)
		}
		if !strings.Contains(out, url) || !strings.Contains(out, "present, the backup's") {
			t.Errorf("restore from S3 says:\n%s", out)
		}
		restored(t, dir)
	})

	t.Run("a damaged backup is refused", func(t *testing.T) {
		raw, err := os.ReadFile(filepath.Join(backupDir, local[len(local)-1]))
		if err != nil {
			t.Fatal(err)
		}
		damaged := filepath.Join(t.TempDir(), "damaged.db")
		if err := os.WriteFile(damaged, raw[:len(raw)/2], 0o600); err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(t.TempDir(), "data")
		out, err := runCLI(t, nil, "restore", "--data", dir, damaged)
		if err == nil || !strings.Contains(err.Error(), "was not installed") {
			t.Fatalf("restore of a truncated backup: %v\n%s", err, out)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("a refused restore left %v", entries)
		}
	})

	t.Run("a notification key that is not the backup's is refused", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "data")
		copyKeys(t, keys, dir)
		another := t.TempDir()
		if err := writeKeys(another); err != nil {
			t.Fatal(err)
		}
		copyFile(t, filepath.Join(another, server.NotificationKeyFile), filepath.Join(dir, server.NotificationKeyFile))
		out, err := runCLI(t, nil, "restore", "--data", dir, filepath.Join(backupDir, local[len(local)-1]))
		if err == nil || !strings.Contains(err.Error(), server.NotificationKeyFile) || !strings.Contains(err.Error(), "is not the key of this backup") {
			t.Fatalf("restore with another install's notification key: %v\n%s", err, out)
		}
		if _, err := os.Stat(filepath.Join(dir, "payouts.db")); !os.IsNotExist(err) {
			t.Errorf("a database was installed beside a foreign notification key: %v", err)
		}
	})

	t.Run("a key that is not the backup's is refused", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "data")
		if err := writeKeys(dir); err != nil { // another set
			t.Fatal(err)
		}
		out, err := runCLI(t, nil, "restore", "--data", dir, filepath.Join(backupDir, local[len(local)-1]))
		if err == nil || !strings.Contains(err.Error(), "is not the key of this backup") {
			t.Fatalf("restore with a foreign master.key: %v\n%s", err, out)
		}
		if _, err := os.Stat(filepath.Join(dir, "payouts.db")); !os.IsNotExist(err) {
			t.Errorf("a database was installed beside a foreign key: %v", err)
		}
	})
}

func TestFailedBackupShowsInTheLogTheMetricsAndTheDashboard(t *testing.T) {
	t.Parallel()
	boltOnly(t, "the scheduled backups copy the bbolt file")

	// Without the flags nothing changes: no backup metric, no warning, no backup logged.
	plain := startServer(t, "")
	if _, ok := plain.metricValue(t, `payouts_backup_failures_total{target="dir"}`); ok {
		t.Error("a server without --backup-every has backup metrics")
	}
	if body := overviewPage(t, plain); strings.Contains(body, "backup-failed") {
		t.Error("a server without --backup-every warns of backups")
	}
	plain.Stop(t)
	if strings.Contains(plain.Stderr.String(), "backup") {
		t.Errorf("a server without --backup-every logs backups:\n%s", plain.Stderr.String())
	}

	backupDir := filepath.Join(t.TempDir(), "backups")
	s := startServerWith(t, "", server.Options{BackupEvery: 200 * time.Millisecond}, "--backup-every", "1h", "--backup-dir", backupDir)
	eventually(t, 20*time.Second, "no first backup", func() bool { return len(backupsIn(t, backupDir)) > 0 })
	good := backupsIn(t, backupDir)

	// The directory becomes unwritable (a file where it was: root writes anywhere else).
	aside := backupDir + ".aside"
	if err := os.Rename(backupDir, aside); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(backupDir, []byte("not a directory"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Backups run one after another, every 200 ms: one that began before the rename may still
	// succeed, so the last success is read once the first failure is counted, and must not move
	// through the failures after it.
	failures := func() float64 {
		v, _ := s.metricValue(t, `payouts_backup_failures_total{target="dir"}`)
		return v
	}
	eventually(t, 20*time.Second, "no failure in the metrics", func() bool { return failures() >= 1 })
	first := failures()
	lastGood, _ := s.metricValue(t, `payouts_backup_last_success_timestamp_seconds{target="dir"}`)
	eventually(t, 20*time.Second, "no second failure in the metrics", func() bool { return failures() > first })
	if !strings.Contains(s.Stderr.String(), `"level":"ERROR","msg":"backup failed"`) {
		t.Errorf("the log has no error of the failed backup:\n%s", s.Stderr.String())
	}
	if v, _ := s.metricValue(t, `payouts_backup_last_success_timestamp_seconds{target="dir"}`); v != lastGood {
		t.Errorf("last success moved to %v after failures, was %v", v, lastGood)
	}
	// The latest failure is the one shown (one may have come while the directory was gone).
	var body string
	eventually(t, 20*time.Second, "the overview does not warn of the failed backup", func() bool {
		body = overviewPage(t, s)
		return strings.Contains(body, "not a directory")
	})
	for _, says := range []string{`class="flash flash-error backup-failed"`, backupDir} {
		if !strings.Contains(body, says) {
			t.Errorf("the overview does not say %q", says)
		}
	}
	if stillThere := backupsIn(t, aside); len(stillThere) < len(good) || !slices.Equal(stillThere[:len(good)], good) {
		t.Errorf("failed backups removed good ones: %v, were %v", stillThere, good)
	}

	// The directory is back: the next backup succeeds and the warning goes.
	if err := os.Remove(backupDir); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(aside, backupDir); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "the warning stayed after a good backup", func() bool {
		return !strings.Contains(overviewPage(t, s), "backup-failed")
	})
}

// overviewPage is the dashboard's overview as the operator sees it.
func overviewPage(t *testing.T, s *testServer) string {
	t.Helper()
	resp, err := dashboardSignIn(t, s).Get(s.URL + "/dashboard")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /dashboard: %d", resp.StatusCode)
	}
	return string(raw)
}

func TestBackupFlagsRefusedOnPostgresAndWhereTheyCannotWork(t *testing.T) {
	t.Parallel()
	keys := t.TempDir()
	if err := writeKeys(keys); err != nil {
		t.Fatal(err)
	}
	database := "postgres://payouts@127.0.0.1:1/none?sslmode=disable" // refused before any connection
	if onPostgresTests() {
		database = databaseFor(t, t.TempDir())
	}
	onPostgres := []string{"--database", database, "--master-key-file", filepath.Join(keys, "master.key"),
		"--card-key-file", filepath.Join(keys, "card.key"), "--notification-key-file", filepath.Join(keys, server.NotificationKeyFile)}
	data := t.TempDir()
	backups := filepath.Join(t.TempDir(), "backups")
	// Backup directories that are symbolic links into the data directory.
	links := t.TempDir()
	if err := os.Mkdir(filepath.Join(data, "kept"), 0o700); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"to-data": data, "to-sub": filepath.Join(data, "kept")} {
		if err := os.Symlink(target, filepath.Join(links, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		args []string
		says []string
	}{
		{"on PostgreSQL", append(slices.Clone(onPostgres), "--backup-every", "6h", "--backup-dir", backups),
			[]string{"PostgreSQL", "pg_dump", "point-in-time", "managed backups"}},
		{"on PostgreSQL, S3 alone", append(slices.Clone(onPostgres), "--backup-s3", "s3://bucket/prefix"), []string{"pg_dump"}},
		{"more often than a minute", []string{"--data", data, "--backup-every", "1s", "--backup-dir", backups}, []string{"--backup-every 1s", "at least 1m"}},
		{"no backup directory", []string{"--data", data, "--backup-every", "6h"}, []string{"needs --backup-dir"}},
		{"a directory without a schedule", []string{"--data", data, "--backup-dir", backups}, []string{"need --backup-every"}},
		{"inside the data directory", []string{"--data", data, "--backup-every", "6h", "--backup-dir", filepath.Join(data, "backups")},
			[]string{"inside --data"}},
		{"a link to the data directory", []string{"--data", data, "--backup-every", "6h", "--backup-dir", filepath.Join(links, "to-data")},
			[]string{"inside --data"}},
		{"below a link into the data directory", []string{"--data", data, "--backup-every", "6h", "--backup-dir", filepath.Join(links, "to-sub", "nightly")},
			[]string{"inside --data"}},
		{"keep none", []string{"--data", data, "--backup-every", "6h", "--backup-dir", backups, "--backup-keep", "0"}, []string{"keep at least 1"}},
		{"not an S3 URL", []string{"--data", data, "--backup-every", "6h", "--backup-dir", backups, "--backup-s3", "https://bucket/x"},
			[]string{"--backup-s3", "s3://bucket/prefix"}},
		{"an endpoint with a password", []string{"--data", data, "--backup-every", "6h", "--backup-dir", backups, "--backup-s3", "s3://b/p",
			"--backup-s3-endpoint", "http://minio:hunter2@127.0.0.1:9000"}, []string{"no credentials in the URL"}},
		{"no S3 credentials", []string{"--data", data, "--backup-every", "6h", "--backup-dir", backups, "--backup-s3", "s3://b/p"},
			[]string{"no S3 credentials", "AWS_ACCESS_KEY_ID"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg := refusedStart(t, tc.args...)
			for _, s := range tc.says {
				if !strings.Contains(msg, s) {
					t.Errorf("%q does not say %q", msg, s)
				}
			}
			if strings.Contains(msg, "hunter2") {
				t.Errorf("%q shows the password", msg)
			}
		})
	}
	if _, err := os.Stat(backups); !os.IsNotExist(err) {
		t.Errorf("a refused start created %s: %v", backups, err)
	}
}

// copyFile copies a file as an operator (or anyone who can write the directory) would.
func copyFile(t *testing.T, from, to string) {
	t.Helper()
	raw, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, raw, 0o600); err != nil {
		t.Fatal(err)
	}
}

// Backups go by the time recorded in them, never by their names: a backup dated in 2099 (a
// clock that was once ahead) and a file named in 2099 neither stop the schedule, nor show in
// the metric, nor are restored for the newest, nor cost a real backup its place; a
// world-writable backup directory is tightened to 0700.
func TestBackupsGoByTheirRecordedTimeNeverTheirName(t *testing.T) {
	t.Parallel()
	boltOnly(t, "the scheduled backups copy the bbolt file")
	// Another store's backups, which must not be taken for this server's newest.
	other := t.TempDir()
	if out, err := runCLI(t, nil, "merchant", "create", "--data", other, "--name", "Otra"); err != nil {
		t.Fatalf("merchant create: %v\n%s", err, out)
	}
	backupDir := filepath.Join(t.TempDir(), "backups")
	if err := os.Mkdir(backupDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(backupDir, 0o777); err != nil {
		t.Fatal(err)
	}
	ahead := filepath.Join(backupDir, "payouts-20991231T000000.000Z.db") // made by a clock once ahead
	if out, err := runCLI(t, nil, "backup", "--data", other, "--out", ahead); err != nil {
		t.Fatalf("backup: %v\n%s", err, out)
	}
	if err := bolt.StampSnapshot(ahead, time.Date(2099, 12, 31, 0, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	named := filepath.Join(backupDir, "payouts-20990101T000000.000Z.db") // a name only, dated by its file
	copyFile(t, filepath.Join(other, "payouts.db"), named)
	future := time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := os.Chtimes(named, future, future); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	began := time.Now()
	s := startServer(t, dir, "--backup-every", "1h", "--backup-keep", "1", "--backup-dir", backupDir)
	var made string
	eventually(t, 20*time.Second, "no backup at start: the schedule waits for a backup dated 2099", func() bool {
		for _, name := range backupsIn(t, backupDir) {
			if !strings.HasPrefix(name, "payouts-2099") {
				made = name
			}
		}
		return made != ""
	})
	// The file is named before the success is recorded: wait for the metric too.
	var v float64
	var ok bool
	eventually(t, 20*time.Second, "no success in the metric", func() bool {
		v, ok = s.metricValue(t, `payouts_backup_last_success_timestamp_seconds{target="dir"}`)
		return ok && v > 0
	})
	if v < float64(began.Unix()) || v > float64(time.Now().Unix()+1) {
		t.Errorf("last success %v (%v), want the backup made now (%d), never in the future", v, ok, began.Unix())
	}
	if st, err := os.Stat(backupDir); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("the world-writable backup directory: %v %v, want it tightened to 0700", st.Mode(), err)
	}
	if !strings.Contains(s.Stderr.String(), "dated after now") {
		t.Errorf("the log does not warn of the backups dated after now:\n%s", s.Stderr.String())
	}
	s.Stop(t)
	for _, f := range []string{ahead, named, filepath.Join(backupDir, made)} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("--backup-keep 1 removed %s, or the new backup went: %v", filepath.Base(f), err)
		}
	}

	// The restore drill takes the server's own newest backup, not a name of 2099.
	restored := filepath.Join(t.TempDir(), "data")
	out, err := runCLI(t, nil, "restore", "--data", restored, backupDir)
	if err != nil {
		t.Fatalf("restore: %v\n%s", err, out)
	}
	if !strings.Contains(out, made) || strings.Contains(out, "payouts-2099") { // a temporary directory's name may hold 2099
		t.Errorf("restore of %s took another backup than %s:\n%s", backupDir, made, out)
	}
}

// A server that answers an S3 listing with a small object, and then sends without end.
func lyingS3(t *testing.T, sent *atomic.Int64) string {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		const key = "nightly/payouts-20261101T000000.000Z.db"
		switch {
		case r.URL.Query().Has("list-type"):
			w.Header().Set("Content-Type", "application/xml")
			io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">`+
				`<Name>bkt</Name><Prefix>nightly/</Prefix><KeyCount>1</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated>`+
				`<Contents><Key>`+key+`</Key><LastModified>2026-11-01T00:00:00.000Z</LastModified><ETag>"0123"</ETag>`+
				`<Size>100</Size><StorageClass>STANDARD</StorageClass></Contents></ListBucketResult>`)
		case r.Method == http.MethodHead:
			w.Header().Set("Content-Length", "100")
			w.Header().Set("Last-Modified", "Sun, 01 Nov 2026 00:00:00 GMT")
			w.Header().Set("ETag", `"0123"`)
		default:
			w.Header().Set("Last-Modified", "Sun, 01 Nov 2026 00:00:00 GMT")
			w.Header().Set("ETag", `"0123"`)
			chunk := make([]byte, 64<<10)
			for sent.Load() < 256<<20 { // a bound of the test's own, far past any fix's
				n, err := w.Write(chunk)
				sent.Add(int64(n))
				if err != nil {
					return
				}
				w.(http.Flusher).Flush()
			}
		}
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

// S3 and restore: credentials in the s3:// URL are refused and never shown; a download stops
// at the size the service lists; an error quotes a short, escaped part of what the service
// said, and never the request's credentials a service echoes.
func TestS3URLCredentialsDownloadBoundAndErrorsQuoteNoSecret(t *testing.T) {
	t.Parallel()
	t.Run("credentials in the URL", func(t *testing.T) {
		boltOnly(t, "the scheduled backups copy the bbolt file")
		msg := refusedStart(t, "--data", t.TempDir(), "--backup-every", "6h", "--backup-dir", filepath.Join(t.TempDir(), "b"),
			"--backup-s3", "s3://AKIDEXAMPLE:hunter2@bucket/nightly")
		if !strings.Contains(msg, "no credentials in the s3:// URL") || strings.Contains(msg, "hunter2") || strings.Contains(msg, "AKIDEXAMPLE") {
			t.Errorf("serve: %q", msg)
		}
		dir := filepath.Join(t.TempDir(), "data")
		out, err := runCLI(t, s3Env, "restore", "--data", dir, "s3://AKIDEXAMPLE:hunter2@bucket/nightly/")
		if cli.ExitCode(err) != 2 || strings.Contains(out+err.Error(), "hunter2") || !strings.Contains(err.Error(), "no credentials") {
			t.Errorf("restore: %v\n%s", err, out)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("a refused restore made %s: %v", dir, err)
		}
	})

	t.Run("a service that keeps sending", func(t *testing.T) {
		var sent atomic.Int64
		endpoint := lyingS3(t, &sent)
		dir := filepath.Join(t.TempDir(), "data")
		for _, src := range []string{"s3://bkt/nightly/", "s3://bkt/nightly/payouts-20261101T000000.000Z.db"} {
			out, err := runCLI(t, s3Env, "restore", "--data", dir, "--backup-s3-endpoint", endpoint, src)
			if err == nil || !strings.Contains(err.Error(), "more than 100") {
				t.Errorf("restore %s: %v\n%s", src, err, out)
			}
		}
		if n := sent.Load(); n > 32<<20 {
			t.Errorf("the service sent %d bytes before the restore stopped, for an object of 100", n)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("a refused restore left %v", entries)
		}
	})

	t.Run("a service that echoes the request", func(t *testing.T) {
		for _, answer := range []func(w http.ResponseWriter, r *http.Request){
			func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/xml")
				w.WriteHeader(http.StatusForbidden)
				io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>bad request: `+
					r.Header.Get("Authorization")+`</Message></Error>`)
			},
			func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusBadGateway)
				io.WriteString(w, "\x1b[31mupstream\nfailed\x1b[0m "+strings.Repeat("x", 10_000)+" "+r.Header.Get("X-Amz-Date"))
			},
		} {
			ts := httptest.NewServer(http.HandlerFunc(answer))
			out, err := runCLI(t, s3Env, "restore", "--data", filepath.Join(t.TempDir(), "data"), "--backup-s3-endpoint", ts.URL, "s3://bkt/nightly/")
			ts.Close()
			if err == nil {
				t.Fatalf("restore succeeded:\n%s", out)
			}
			msg := err.Error()
			t.Logf("restore says: %s", msg)
			for _, secret := range []string{"drill-key-id", "Signature=", "Credential=", "\x1b", "\n", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"} {
				if strings.Contains(msg, secret) || strings.Contains(out, secret) {
					t.Errorf("restore's error shows %q: %q", secret, msg)
				}
			}
			if len(msg) > 500 {
				t.Errorf("restore's error is %d bytes: %q", len(msg), msg)
			}
		}
	})
}
