package server

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// seedDataDir copies the files of a seeded data directory (`payouts seed`) into dir when dir
// holds no database yet (serve --bench-seed-from): the benchmarks, which make their own data
// directory, then run against a loaded store.
func seedDataDir(dir, from string) error {
	if _, err := os.Stat(filepath.Join(dir, DatabaseFile)); err == nil {
		return nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if _, err := os.Stat(filepath.Join(from, DatabaseFile)); err != nil {
		return fmt.Errorf("--bench-seed-from: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	entries, err := os.ReadDir(from)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		if err := copyFile(filepath.Join(from, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	// Written back before the server serves: a gigabyte of the copy left dirty would be
	// written back during the benchmark's first rate, under the commits' own syncs.
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
