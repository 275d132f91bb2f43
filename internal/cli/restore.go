package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"payouts/internal/server"
	"payouts/store"
	"payouts/store/bolt"
	"payouts/web/notify"
)

// restoreCommand is `payouts restore`: a backup (a file, the newest of a backup directory, or
// an object in S3) verified as `payouts check` verifies a file, then installed as the
// payouts.db of a data directory that holds no database. The keys are not in a backup: it
// says which must be copied beside it, and refuses a key that is not the backup's.
var restoreCommand = &Command{
	Name:  "restore",
	Usage: "[--data DIR] FILE|BACKUPDIR|s3://bucket/prefix/NAME",
	Short: "verify a backup and install it into an empty data directory (never over a database)",
	Long: "The backup is a file written by `payouts backup` or by --backup-every; a directory stands for its newest backup, " +
		"and s3://bucket/prefix/ (ending with /) for the newest under the prefix. It is copied into --data, checked " +
		"(bbolt's consistency check, then the ledger of every balance) and only then installed as payouts.db. --data must " +
		"be new, or hold no database (a lost one: missing or 0 bytes) beside the keys. A backup holds no key: master.key, " +
		"card.key, notification-key.pem and admin-token are copied into --data from where they are kept; restore says which " +
		"are missing and refuses a key that did not seal the backup's secrets. Run it with the server stopped.",
	Args:  "BACKUP",
	Flags: restoreFlags,
}

// restoring is the file a restore writes before the backup is verified; a restore cut short
// leaves it, and the next one writes over it.
const restoring = ".payouts.db.restoring"

func restoreFlags(fs *flag.FlagSet) Runner {
	data := fs.String("data", "./data", "data directory to restore into: new, or holding no database")
	var access server.S3Access
	fs.StringVar(&access.Endpoint, "backup-s3-endpoint", "", "URL of the S3-compatible service of an s3:// backup, e.g. http://127.0.0.1:9000 (default: AWS S3)")
	fs.StringVar(&access.CredentialsFile, "backup-s3-credentials-file", "", "AWS shared credentials file for an s3:// backup (default: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)")
	return func(ctx context.Context, env Env, args []string) error {
		if len(args) != 1 {
			return usageErrorf("restore: give one backup: a file, a backup directory or s3://bucket/prefix/NAME (payouts help restore)")
		}
		if strings.HasPrefix(args[0], "s3://") {
			if _, _, err := server.ParseS3URL(args[0]); err != nil {
				return usageErrorf("restore: %v", err) // before --data is made
			}
		}
		if err := restorable(*data); err != nil {
			return fmt.Errorf("restore: %w", err)
		}
		if err := os.MkdirAll(*data, 0o700); err != nil {
			return fmt.Errorf("restore: %w", err)
		}
		tmp := filepath.Join(*data, restoring)
		f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
		if err != nil {
			return fmt.Errorf("restore: %w", err)
		}
		defer os.Remove(tmp) // nothing once installed
		from, n, err := fetchBackup(ctx, args[0], access, env.Getenv, f)
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("restore: %w", err)
		}
		if err := server.VerifyBackup(ctx, tmp); err != nil {
			return fmt.Errorf("restore: %s was not installed: %w", from, err)
		}
		fmt.Fprintf(env.Stdout, "restore: %s (%d bytes) verified: bbolt's consistency check and the ledger check passed\n", from, n)
		keys, err := backupKeys(ctx, tmp, *data)
		if err != nil {
			return fmt.Errorf("restore: %s was not installed: %w", from, err)
		}
		dbPath := filepath.Join(*data, server.DatabaseFile)
		if err := install(tmp, dbPath); err != nil {
			return fmt.Errorf("restore: %w", err)
		}
		fmt.Fprintf(env.Stdout, "restore: installed as %s\n", dbPath)
		fmt.Fprintf(env.Stdout, "restore: a backup holds no keys; those of %s:\n", *data)
		missing := false
		for _, k := range keys {
			fmt.Fprintf(env.Stdout, "  %-21s %s\n", k[0], k[1])
			missing = missing || strings.HasPrefix(k[1], "missing")
		}
		if missing {
			fmt.Fprintf(env.Stdout, "restore: copy the missing ones into %s (0600) from where you keep them, before `payouts serve --data %s`\n", *data, *data)
		}
		return nil
	}
}

// dataDirFiles are the files a data directory may hold beside its database: a restore puts
// a database among them (a lost one's keys and marker stay), never among anything else.
var dataDirFiles = map[string]bool{server.MasterKeyFile: true, server.CardKeyFile: true, server.NotificationKeyFile: true,
	server.AdminTokenFile: true, server.InitialisedMarker: true, restoring: true}

// restorable refuses a data directory that holds a database, or files that are not of a
// data directory (the wrong --data).
func restorable(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		if name == server.DatabaseFile {
			info, err := e.Info()
			if err != nil {
				return err
			}
			if info.Size() == 0 && info.Mode().IsRegular() {
				continue // a lost database, to restore
			}
			return fmt.Errorf("%s holds a database (%d bytes): restore never overwrites one. Restore into a new directory, "+
				"or move %s aside first (with the server stopped)", dir, info.Size(), dir)
		}
		if !dataDirFiles[name] {
			return fmt.Errorf("%s holds %s, which is not a file of a data directory: restore into a new or empty directory", dir, name)
		}
	}
	return nil
}

// fetchBackup copies the backup src names into w and says where it came from.
func fetchBackup(ctx context.Context, src string, access server.S3Access, getenv func(string) string, w io.Writer) (string, int64, error) {
	if strings.HasPrefix(src, "s3://") {
		s3, key, err := server.OpenS3(src, access, getenv)
		if err != nil {
			return "", 0, err
		}
		size := int64(-1) // asked of the service
		if key == "" || strings.HasSuffix(key, "/") {
			name, listed, err := s3.Newest(ctx, key, time.Now())
			if err != nil {
				return "", 0, err
			}
			if name == "" {
				return "", 0, fmt.Errorf("no backup under %s (none, or only some dated after now: name one to restore it)", src)
			}
			key, size = key+name, listed
		}
		n, err := s3.Download(ctx, key, size, w)
		return s3.Where() + "/" + key, n, err
	}
	if access.Endpoint != "" || access.CredentialsFile != "" {
		return "", 0, usageErrorf("restore: --backup-s3-endpoint and --backup-s3-credentials-file are for an s3:// backup")
	}
	if st, err := os.Stat(src); err == nil && st.IsDir() {
		// The newest by the time recorded in each, not by its name.
		list, ahead, err := server.ListBackups(src, time.Now())
		if err != nil {
			return "", 0, err
		}
		if len(list) == 0 {
			return "", 0, fmt.Errorf("no backup in %s (payouts-<time>.db; %d dated after now, which restore does not take "+
				"for the newest: name one to restore it)", src, len(ahead))
		}
		src = filepath.Join(src, list[len(list)-1].Name)
	}
	f, err := os.Open(src)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	n, err := io.Copy(w, f)
	return src, n, err
}

// backupKeys says, for each key file of a data directory, whether dir holds it and what it
// is for. A key there that did not seal the backup's secrets is an error: the server would
// refuse it.
func backupKeys(ctx context.Context, backup, dir string) ([][2]string, error) {
	db, err := bolt.Open(backup, bolt.Options{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer db.Close(ctx)
	var out [][2]string
	for _, k := range []struct{ file, name, what string }{
		{server.MasterKeyFile, "master", "it sealed the merchants' API secrets and the users' second factors"},
		{server.CardKeyFile, "card", "it sealed the stored cards"},
	} {
		fp, err := db.KeyFingerprint(ctx, k.name)
		if err != nil {
			return nil, err
		}
		raw, err := os.ReadFile(filepath.Join(dir, k.file))
		switch {
		case errors.Is(err, os.ErrNotExist) && fp == "":
			out = append(out, [2]string{k.file, "missing: copy the one kept with this data directory (the backup names none)"})
		case errors.Is(err, os.ErrNotExist):
			out = append(out, [2]string{k.file, fmt.Sprintf("missing: required, %s (fingerprint %s)", k.what, fp)})
		case err != nil:
			return nil, err
		default:
			key, err := store.ParseKey(string(raw))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", filepath.Join(dir, k.file), err)
			}
			if got := store.Fingerprint(key); fp != "" && got != fp {
				return nil, fmt.Errorf("%s (fingerprint %s) is not the key of this backup (fingerprint %s): put the key kept "+
					"with the backup's data directory there, or remove it", filepath.Join(dir, k.file), got, fp)
			}
			out = append(out, [2]string{k.file, "present, the backup's"})
		}
	}
	nk, err := notificationKeyOf(ctx, db, dir)
	if err != nil {
		return nil, err
	}
	out = append(out, [2]string{server.NotificationKeyFile, nk})
	for _, k := range [][2]string{
		{server.AdminTokenFile, "missing: without it a new admin token is made at start (or give --admin-token)"},
	} {
		if _, err := os.Stat(filepath.Join(dir, k[0])); err == nil {
			k[1] = "present"
		}
		out = append(out, k)
	}
	return out, nil
}

// notificationKeyOf says whether dir holds the notification key of the backup: a key there
// whose fingerprint is not the one the backup recorded is an error, as for the sealing keys
// (the server would refuse it: merchants verify with the recorded key's certificate).
func notificationKeyOf(ctx context.Context, db *bolt.DB, dir string) (string, error) {
	fp, err := db.KeyFingerprint(ctx, "notification")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, server.NotificationKeyFile)
	raw, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist) && fp == "":
		return "missing: it signs merchant notifications; without it a new one is made and merchants must fetch its public key again", nil
	case errors.Is(err, os.ErrNotExist):
		return fmt.Sprintf("missing: required, it signs merchant notifications, whose certificate merchants verify with (fingerprint %s)", fp), nil
	case err != nil:
		return "", err
	}
	key, err := notify.ParseKey(raw)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	if got := server.NotificationKeyFingerprint(key); fp != "" && got != fp {
		return "", fmt.Errorf("%s (fingerprint %s) is not the key of this backup (fingerprint %s): put the key kept "+
			"with the backup's data directory there, or remove it", path, got, fp)
	}
	if fp == "" {
		return "present (the backup names none)", nil
	}
	return "present, the backup's", nil
}

// install puts the verified copy in place: over a lost (empty) database, or where there is
// none; never over another one that appeared meanwhile.
func install(tmp, dbPath string) error {
	if st, err := os.Stat(dbPath); err == nil && st.Size() == 0 {
		if err := os.Rename(tmp, dbPath); err != nil {
			return err
		}
	} else {
		if err := os.Link(tmp, dbPath); err != nil {
			return err
		}
		os.Remove(tmp)
	}
	return store.SyncDir(filepath.Dir(dbPath))
}
