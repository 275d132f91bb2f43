package postgres

import (
	"context"
	"errors"
	"io/fs"
	"slices"
	"testing"
	"time"

	"payouts/store/postgres/pgtest"
)

// The certificates' keys behave as certmagic's file storage's paths: values at keys,
// directories as the prefixes of others.
func TestCertificateStorageKeysAndDirectories(t *testing.T) {
	ctx := context.Background()
	s := openRest(t).CertificateStorage()
	for _, k := range []string{"certs/ca/a.test/a.test.crt", "certs/ca/a.test/a.test.key", "certs/ca/b.test/b.test.crt", "users/me/key"} {
		if err := s.Store(ctx, k, []byte("v:"+k)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Store(ctx, "users/me/key", []byte("replaced")); err != nil {
		t.Fatal(err)
	}
	if v, err := s.Load(ctx, "users/me/key"); err != nil || string(v) != "replaced" {
		t.Fatalf("load after store over: %q %v", v, err)
	}
	if _, err := s.Load(ctx, "users/you/key"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("load of a missing key: %v, want fs.ErrNotExist", err)
	}
	for key, want := range map[string]bool{"certs": true, "certs/ca/a.test": true, "certs/ca/a.test/a.test.key": true,
		"certs/c": false, "certs/ca/a": false, "nothing": false} {
		if got := s.Exists(ctx, key); got != want {
			t.Errorf("Exists(%q) = %v, want %v", key, got, want)
		}
	}
	lists := []struct {
		prefix    string
		recursive bool
		want      []string
	}{
		{"certs/ca", false, []string{"certs/ca/a.test", "certs/ca/b.test"}},
		{"certs/ca/a.test", false, []string{"certs/ca/a.test/a.test.crt", "certs/ca/a.test/a.test.key"}},
		{"certs", true, []string{"certs/ca", "certs/ca/a.test", "certs/ca/a.test/a.test.crt", "certs/ca/a.test/a.test.key",
			"certs/ca/b.test", "certs/ca/b.test/b.test.crt"}},
		{"", false, []string{"certs", "users"}},
	}
	for _, l := range lists {
		got, err := s.List(ctx, l.prefix, l.recursive)
		if err != nil || !slices.Equal(got, l.want) {
			t.Errorf("List(%q, %v) = %q %v, want %q", l.prefix, l.recursive, got, err, l.want)
		}
	}
	if _, err := s.List(ctx, "certs/other", false); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("List of an empty prefix: %v, want fs.ErrNotExist", err)
	}
	info, err := s.Stat(ctx, "certs/ca/b.test/b.test.crt")
	if err != nil || !info.IsTerminal || info.Size != int64(len("v:certs/ca/b.test/b.test.crt")) || time.Since(info.Modified) > time.Minute {
		t.Errorf("Stat of a value: %+v %v", info, err)
	}
	if info, err := s.Stat(ctx, "certs/ca"); err != nil || info.IsTerminal {
		t.Errorf("Stat of a directory: %+v %v", info, err)
	}
	if _, err := s.Stat(ctx, "certs/none"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Stat of a missing key: %v, want fs.ErrNotExist", err)
	}
	if err := s.Delete(ctx, "certs/ca/a.test"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "certs/ca/a.test"); err != nil {
		t.Fatalf("deleting again: %v", err)
	}
	if got, _ := s.List(ctx, "certs", true); !slices.Equal(got, []string{"certs/ca", "certs/ca/b.test", "certs/ca/b.test/b.test.crt"}) {
		t.Errorf("after deleting a directory: %q", got)
	}
}

// A lock is one instance's at a time: the other waits for it, gives up with its context,
// and a wait given up leaves no lock behind.
func TestCertificateStorageLockAcrossInstances(t *testing.T) {
	url := pgtest.Database(t)
	a := openRestURL(t, url, Options{}).CertificateStorage()
	b := openRestURL(t, url, Options{}).CertificateStorage()
	ctx := context.Background()
	if err := a.Lock(ctx, "issue_cert_a.test"); err != nil {
		t.Fatal(err)
	}
	if err := b.Lock(ctx, "issue_cert_b.test"); err != nil {
		t.Fatalf("another name's lock: %v", err)
	}
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if err := b.Lock(short, "issue_cert_a.test"); err == nil {
		t.Fatal("b took the lock a holds")
	}
	got := make(chan error, 1)
	go func() { got <- b.Lock(ctx, "issue_cert_a.test") }()
	select {
	case err := <-got:
		t.Fatalf("b took the lock a holds: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	if err := a.Unlock(ctx, "issue_cert_a.test"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("b did not get the lock a released")
	}
	for _, name := range []string{"issue_cert_a.test", "issue_cert_b.test"} {
		if err := b.Unlock(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Unlock(ctx, "issue_cert_a.test"); err == nil {
		t.Fatal("unlocking a lock not held: no error")
	}
}
