package store

import (
	"errors"
	"os"
	"path/filepath"
)

// WriteFileOnce writes a new file durably, or not at all: the data goes to a temporary file
// in the same directory, which is fsynced and then linked into place, and the directory is
// fsynced. A power cut leaves either no file or the whole file, never an empty or partial
// key next to a database sealed with it; and a file that already exists is never replaced
// (os.ErrExist), so two first starts cannot each write a different key.
func WriteFileOnce(path string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		return err // os.ErrExist when another start won
	}
	return SyncDir(dir)
}

// SyncDir fsyncs a directory, so that a file just created or renamed in it survives a power cut.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return err
	}
	return nil
}

// ReadSecretFile reads a secret given as a file (--admin-token-file and the like), so that
// it stays out of the process's command line: the file's content without surrounding white
// space, which must not be empty.
func ReadSecretFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	s := string(b)
	for len(s) > 0 && (s[len(s)-1] == '\n' || s[len(s)-1] == '\r' || s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	if s == "" {
		return "", errors.New(path + " is empty")
	}
	return s, nil
}
