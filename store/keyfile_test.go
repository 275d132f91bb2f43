package store_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
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
