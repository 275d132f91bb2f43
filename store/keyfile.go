package store

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// The most a file of each kind can hold: a key or a secret is a few kilobytes at most (an
// RSA key of 8192 bits is 6.5 KB in PEM), a certificate chain a few certificates. A file
// larger than that is not one, and is refused rather than read.
const (
	MaxKeyFileSize         = 64 << 10
	MaxCertificateFileSize = 1 << 20
)

// ReadKeyFile reads a key, a secret or a certificate from path, at most max bytes: only from
// a regular file (a symbolic link to one is fine, as Kubernetes mounts its secrets). A FIFO
// would block the read until a writer came (a start that hangs, deaf to SIGTERM), and a
// device such as /dev/zero would never end, so the file is opened without blocking and
// looked at once open, and anything but a regular file is refused; a file that grows past
// max while read is refused too. The mode returned says who may read it (see TooOpen).
func ReadKeyFile(path string, max int64) ([]byte, os.FileMode, error) {
	// O_NONBLOCK: opening a FIFO for reading otherwise waits for a writer.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	if err := regularKeyFile(path, st, max); err != nil {
		return nil, 0, err
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, 0, err
	}
	if int64(len(b)) > max {
		return nil, 0, fmt.Errorf("%s is larger than %d bytes: not a key file", path, max)
	}
	return b, st.Mode(), nil
}

// CheckKeyFile looks at a key file without reading it, as ReadKeyFile would refuse it: so
// that a server refuses a FIFO or a device before it binds its port. A missing file is
// fs.ErrNotExist (the caller decides whether it may be created).
func CheckKeyFile(path string, max int64) (os.FileMode, error) {
	st, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return st.Mode(), regularKeyFile(path, st, max)
}

func regularKeyFile(path string, st os.FileInfo, max int64) error {
	if !st.Mode().IsRegular() {
		kind := "not a regular file"
		switch t := st.Mode().Type(); {
		case t&os.ModeNamedPipe != 0:
			kind = "a FIFO"
		case t&os.ModeDevice != 0:
			kind = "a device"
		case t&os.ModeDir != 0:
			kind = "a directory"
		case t&os.ModeSocket != 0:
			kind = "a socket"
		}
		return fmt.Errorf("%s is %s, not a regular file: keys are read from regular files only", path, kind)
	}
	if st.Size() > max {
		return fmt.Errorf("%s is %d bytes, more than a key file holds (%d): not a key file", path, st.Size(), max)
	}
	return nil
}

// TooOpen reports whether a key file of this mode may be read or written by others than its
// owner (its group or everyone), which ssh refuses for a private key. The server warns
// rather than refuses: a key mounted 0644 (Kubernetes' default) would otherwise stop a
// running installation at its next start.
func TooOpen(mode os.FileMode) bool { return mode.Perm()&0o077 != 0 }

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
	b, _, err := ReadKeyFile(path, MaxKeyFileSize)
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
