package e2e

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"payouts/internal/server"
)

// A data directory whose database went with its marker still holds the files a server
// writes only once its database is there (the keys, the admin token): the start is refused,
// whichever of them is left, and no new database, demo merchant or admin token is made.
// An empty directory is a first start, and a server given the keys of `payouts keys` by
// flag starts on a new directory of its own.
func TestLostDatabaseWithoutItsMarkerIsRefused(t *testing.T) {
	t.Parallel()
	boltOnly(t, "the data directory's files")
	dir := t.TempDir()
	first := startDemo(t, dir) // as `go run .` does: the demo merchant and an admin-token file
	first.stop()
	dbPath := filepath.Join(dir, server.DatabaseFile)
	saved := map[string][]byte{}
	for _, name := range []string{server.MasterKeyFile, server.CardKeyFile, server.NotificationKeyFile, server.AdminTokenFile} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("a first start wrote no %s: %v", name, err)
		}
		saved[name] = b
	}
	os.Remove(dbPath)
	os.Remove(filepath.Join(dir, server.InitialisedMarker))

	for left := range saved {
		t.Run("only "+left+" left", func(t *testing.T) {
			for name, b := range saved {
				os.Remove(filepath.Join(dir, name))
				if name == left {
					os.WriteFile(filepath.Join(dir, name), b, 0o600)
				}
			}
			msg := refusedStart(t, "--data", dir)
			for _, want := range []string{dbPath, "is missing", left, "was lost", "payouts backup", "move " + dir + " aside"} {
				if !strings.Contains(msg, want) {
					t.Errorf("%q does not say %q", msg, want)
				}
			}
			if _, err := os.Stat(dbPath); err == nil {
				t.Errorf("a new %s was written", dbPath)
			}
		})
	}

	// With all of them back it is refused too; restored, the database starts as it was.
	for name, b := range saved {
		os.WriteFile(filepath.Join(dir, name), b, 0o600)
	}
	if msg := refusedStart(t, "--data", dir); !strings.Contains(msg, "is missing") {
		t.Errorf("all the files but the database: %q", msg)
	}

	// A new directory still starts, and so does one given the keys of `payouts keys` by flag.
	keys := t.TempDir()
	if err := runMain(t.Context(), []string{"keys", "--out", keys}, io.Discard, io.Discard); err != nil {
		t.Fatalf("payouts keys: %v", err)
	}
	s := startServer(t, t.TempDir(), "--master-key-file", filepath.Join(keys, server.MasterKeyFile),
		"--card-key-file", filepath.Join(keys, server.CardKeyFile), "--notification-key-file", filepath.Join(keys, server.NotificationKeyFile))
	s.newMerchant(t, nil)
	startDemo(t, t.TempDir()).stop()
}
