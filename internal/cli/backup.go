package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"payouts/store/bolt"
)

var backupCommand = &Command{
	Name:       "backup",
	Usage:      "--out FILE",
	Short:      "consistent copy of the database (from a running server or offline)",
	Required:   []string{"out"},
	ReadsStore: true,
	Flags:      backupFlags,
}

func backupFlags(fs *flag.FlagSet) Runner {
	data := fs.String("data", "./data", "data directory")
	out := fs.String("out", "", "file to write (required)")
	addr := fs.String("addr", "127.0.0.1:8080", "address of a running server")
	token := fs.String("admin-token", "", "admin token (default: the one in the data dir)")
	return func(ctx context.Context, env Env, _ []string) error {
		tmp := *out + ".partial"
		f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
		if err != nil {
			return err
		}
		defer os.Remove(tmp)
		began := time.Now()
		n, err := backupTo(ctx, f, *data, *addr, *token)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			// As a scheduled backup, the copy says when it was taken: restore and retention
			// go by that, never by a file's name.
			err = bolt.StampSnapshot(tmp, began)
		}
		if err != nil {
			return err
		}
		if err := os.Rename(tmp, *out); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "backup: %d bytes written to %s\n", n, *out)
		return nil
	}
}

// backupTo copies the database offline when no server holds it, else through the admin API.
func backupTo(ctx context.Context, w io.Writer, data, addr, token string) (int64, error) {
	db, err := bolt.Open(filepath.Join(data, "payouts.db"), bolt.Options{})
	if err == nil {
		defer db.Close(ctx)
		return db.Backup(ctx, w)
	}
	if !strings.Contains(err.Error(), "in use by another process") {
		return 0, err
	}
	if token == "" {
		b, err := os.ReadFile(filepath.Join(data, "admin-token"))
		if err != nil {
			return 0, fmt.Errorf("the database is in use and no admin token was given: %w", err)
		}
		token = strings.TrimSpace(string(b))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/admin/v1/backup", nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("backup from the running server: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("backup from the running server: %s", resp.Status)
	}
	return io.Copy(w, resp.Body)
}
