package store_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"payouts/store"
)

// A key is written whole or not at all, never over an existing one, 0600, with no temporary
// file left behind; a temporary file left by a crash is ignored.
func TestKeyFilesWrittenOnceDurably(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, ".master.key.tmp-123"), []byte("half a ke"), 0o600) // a crash mid-write
	path := filepath.Join(dir, "master.key")
	k1, err := store.LoadOrCreateKey(path)
	if err != nil {
		t.Fatal(err)
	}
	k2, err := store.LoadOrCreateKey(path)
	if err != nil || !bytes.Equal(k1, k2) {
		t.Fatalf("second load: %x, %v; want the first key %x", k2, err, k1)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v, want 0600", st.Mode().Perm())
	}
	if err := store.WriteFileOnce(path, []byte("other"), 0o600); !errors.Is(err, os.ErrExist) {
		t.Errorf("WriteFileOnce over an existing key: %v, want ErrExist", err)
	}
	if k3, _ := store.LoadOrCreateKey(path); !bytes.Equal(k1, k3) {
		t.Errorf("the key changed")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 { // the key and the crash's leftover
		names := []string{}
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("files in the directory: %v, want master.key and the old leftover only", names)
	}
}

func TestReadSecretFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "token")
	os.WriteFile(p, []byte("s3cr3t-token\n"), 0o600)
	if s, err := store.ReadSecretFile(p); err != nil || s != "s3cr3t-token" {
		t.Errorf("ReadSecretFile = %q, %v", s, err)
	}
	os.WriteFile(p, []byte("\n"), 0o600)
	if _, err := store.ReadSecretFile(p); err == nil {
		t.Errorf("an empty secret file was accepted")
	}
}

// Keys are read from regular files only (a link to one is fine), at most what a key can be:
// a FIFO is refused at once instead of waiting for a writer, /dev/zero instead of read
// without end, and a file larger than the limit, or one that grows past it, too.
func TestReadKeyFileOnlyRegularAndBounded(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, "key")
	os.WriteFile(key, []byte("0123456789abcdef\n"), 0o600)
	link := filepath.Join(dir, "link")
	os.Symlink(key, link)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero")
	os.Symlink("/dev/zero", zero)
	big := filepath.Join(dir, "big")
	os.WriteFile(big, make([]byte, 100), 0o600)

	for _, p := range []string{key, link} {
		if b, mode, err := store.ReadKeyFile(p, 64); err != nil || string(b) != "0123456789abcdef\n" || mode.Perm() != 0o600 {
			t.Errorf("ReadKeyFile(%s) = %q, %v, %v", p, b, mode, err)
		}
	}
	for _, tc := range []struct{ path, want string }{
		{fifo, "is a FIFO"}, {zero, "is a device"}, {dir, "is a directory"}, {big, "more than a key file holds"},
	} {
		if _, _, err := store.ReadKeyFile(tc.path, 64); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ReadKeyFile(%s): %v, want an error saying %q", tc.path, err, tc.want)
		}
		if _, err := store.CheckKeyFile(tc.path, 64); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CheckKeyFile(%s): %v, want an error saying %q", tc.path, err, tc.want)
		}
	}
	if _, err := store.ReadSecretFile(fifo); err == nil {
		t.Errorf("ReadSecretFile read a FIFO")
	}
	if _, err := store.LoadOrCreateKey(zero); err == nil {
		t.Errorf("LoadOrCreateKey read /dev/zero")
	}
	for mode, want := range map[os.FileMode]bool{0o600: false, 0o400: false, 0o640: true, 0o644: true, 0o602: true} {
		if got := store.TooOpen(mode); got != want {
			t.Errorf("TooOpen(%04o) = %v, want %v", mode, got, want)
		}
	}
}
