package e2e

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"payouts/internal/server"
)

// A key file is read only from a regular file, at most what a key can be, and looked at
// before the port is bound: a FIFO (whose read waits for a writer: a start that hung after
// binding, deaf to SIGTERM), a link to /dev/zero (read until memory ran out), or a file far
// larger than a key is refused with its name. Each case runs the binary, with its port held
// by another listener: the refusal must come first, in bounded time.
func TestKeyFilesReadOnlyFromRegularFilesBeforeThePort(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the binary")
	}
	bin, err := payoutsBinary()
	if err != nil {
		t.Fatal(err)
	}
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { held.Close() }) // after the subtests, which run in parallel
	addr := held.Addr().String()

	ca := newTestCA(t)
	certPEM, keyPEM := ca.issue(t, 1, "payouts.test")
	files := t.TempDir()
	certFile := filepath.Join(files, "cert.pem")
	os.WriteFile(certFile, certPEM, 0o600)
	os.WriteFile(filepath.Join(files, "key.pem"), keyPEM, 0o600)
	fifo := func(t *testing.T, path string) {
		t.Helper()
		os.Remove(path)
		if err := syscall.Mkfifo(path, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	devZero := func(t *testing.T, path string) {
		t.Helper()
		os.Remove(path)
		if err := os.Symlink("/dev/zero", path); err != nil {
			t.Fatal(err)
		}
	}
	huge := func(t *testing.T, path string) {
		t.Helper()
		os.Remove(path)
		if err := os.WriteFile(path, bytes.Repeat([]byte("0"), 10<<20), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// store is a data directory with a database and its keys, as a server left it.
	store := func(t *testing.T) string {
		t.Helper()
		dir := filepath.Join(t.TempDir(), "data")
		if out, err := runCLI(t, nil, "merchant", "create", "--data", dir, "--name", "Tienda"); err != nil {
			t.Fatalf("merchant create: %v\n%s", err, out)
		}
		return dir
	}

	for _, tc := range []struct {
		name string
		// make prepares the files and returns serve's arguments after --addr, or a whole
		// command line of another command.
		make func(t *testing.T) []string
		want []string
	}{
		{"master.key a FIFO", func(t *testing.T) []string {
			dir := store(t)
			fifo(t, filepath.Join(dir, server.MasterKeyFile))
			return []string{"--data", dir, "--admin-token", "test-admin-token-0123456789"}
		}, []string{"the master key", server.MasterKeyFile, "is a FIFO", "regular files only"}},
		{"notification-key.pem a link to /dev/zero", func(t *testing.T) []string {
			dir := store(t)
			devZero(t, filepath.Join(dir, server.NotificationKeyFile))
			return []string{"--data", dir, "--admin-token", "test-admin-token-0123456789"}
		}, []string{"the notification key", "is a device"}},
		{"card.key far larger than a key", func(t *testing.T) []string {
			dir := store(t)
			huge(t, filepath.Join(dir, server.CardKeyFile))
			return []string{"--data", dir, "--admin-token", "test-admin-token-0123456789"}
		}, []string{"the card key", "more than a key file holds"}},
		{"--tls-key a FIFO", func(t *testing.T) []string {
			key := filepath.Join(t.TempDir(), "key.pem")
			fifo(t, key)
			return []string{"--data", filepath.Join(t.TempDir(), "data"), "--admin-token", "test-admin-token-0123456789",
				"--tls-cert", certFile, "--tls-key", key}
		}, []string{"--tls-key", "is a FIFO"}},
		{"--tls-cert a link to /dev/zero", func(t *testing.T) []string {
			cert := filepath.Join(t.TempDir(), "cert.pem")
			devZero(t, cert)
			return []string{"--data", filepath.Join(t.TempDir(), "data"), "--admin-token", "test-admin-token-0123456789",
				"--tls-cert", cert, "--tls-key", filepath.Join(files, "key.pem")}
		}, []string{"--tls-cert", "is a device"}},
		{"--admin-token-file a FIFO", func(t *testing.T) []string {
			tok := filepath.Join(t.TempDir(), "token")
			fifo(t, tok)
			return []string{"--data", filepath.Join(t.TempDir(), "data"), "--admin-token-file", tok}
		}, []string{"--admin-token-file", "is a FIFO"}},
		{"--master-key-file a link to /dev/zero, on PostgreSQL", func(t *testing.T) []string {
			key := filepath.Join(t.TempDir(), "master.key")
			devZero(t, key)
			return []string{"--database", "postgres://nobody@127.0.0.1:1/none", "--master-key-file", key,
				"--admin-token", "test-admin-token-0123456789"}
		}, []string{"--master-key-file", "is a device"}},
		{"notification-key rotate --from a FIFO", func(t *testing.T) []string {
			from := filepath.Join(t.TempDir(), "new.pem")
			fifo(t, from)
			return []string{"notification-key", "rotate", "--data", store(t), "--from", from}
		}, []string{"new.pem", "is a FIFO"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each its own files and process; the held port is only tried
			args := tc.make(t)
			if args[0] != "notification-key" {
				args = append([]string{"serve", "--addr", addr, "--no-demo", "--log-format", "json"}, args...)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, args...)
			cmd.WaitDelay = time.Second
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			if ctx.Err() != nil {
				t.Fatalf("the server did not exit within 30 s (a key file read that waits for ever):\n%s", stderr.String())
			}
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() == 0 {
				t.Fatalf("serve %v: %v, want a refusal\n%s\n%s", args, err, stdout.String(), stderr.String())
			}
			msg := stderr.String()
			for _, want := range tc.want {
				if !strings.Contains(msg, want) {
					t.Errorf("the refusal does not say %q:\n%s", want, msg)
				}
			}
			if strings.Contains(msg, "address already in use") {
				t.Errorf("the port was tried before the key files were looked at:\n%s", msg)
			}
		})
	}
}

// A key or secret file that others than its owner may read is served, as before (a key
// mounted 0644, Kubernetes' default, must not stop a running installation at its next
// start), but warned of in the log at start and on the dashboard's overview, until it is
// chmod 600.
func TestKeyFileReadableByOthersIsWarnedOf(t *testing.T) {
	t.Parallel()
	keys := t.TempDir()
	cardKey := filepath.Join(keys, "card.key")
	if err := os.WriteFile(cardKey, []byte(strings.Repeat("ab", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Chmod(cardKey, 0o644) // whatever the umask
	s := startServer(t, "", "--card-key-file", cardKey)
	found := false
	for _, line := range strings.Split(s.Stderr.String(), "\n") {
		if strings.Contains(line, `"level":"WARN"`) && strings.Contains(line, "readable by others") &&
			strings.Contains(line, `"file":"`+cardKey+`"`) && strings.Contains(line, `"mode":"0644"`) {
			found = true
		}
	}
	if !found {
		t.Errorf("no WARN in the log names %s, mode 0644:\n%s", cardKey, s.Stderr.String())
	}
	c := dashboardSignIn(t, s)
	page := dashText(t, c, s.URL+"/dashboard?lang=en")
	if !strings.Contains(page, "key-file-open") || !strings.Contains(page, cardKey) || !strings.Contains(page, "0644") || !strings.Contains(page, "chmod 600") {
		t.Errorf("the overview does not warn of %s (mode 0644):\n%.3000s", cardKey, page)
	}
	if err := os.Chmod(cardKey, 0o600); err != nil {
		t.Fatal(err)
	}
	if page := dashText(t, c, s.URL+"/dashboard?lang=en"); strings.Contains(page, "key-file-open") {
		t.Errorf("the overview still warns once the key is 0600")
	}
}

// `notification-key rotate --from` installs an RSA key of 2048 bits or more only: a shorter
// one (which anyone with a few core-months can factor) or a key of another type is refused,
// saying what is taken, and nothing is written or recorded.
func TestNotificationKeyRotateRefusesAShortOrForeignKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keyFile := filepath.Join(dir, server.NotificationKeyFile)
	rotate := []string{"notification-key", "rotate", "--data", dir}
	if onPostgresTests() {
		keyFile = filepath.Join(databaseDirKeys(t, dir), server.NotificationKeyFile)
		rotate = []string{"notification-key", "rotate", "--database", databaseFor(t, dir), "--notification-key-file", keyFile}
	}
	s := startServer(t, dir)
	s.Stop(t)
	before, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}

	short, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		key  any
		want []string
	}{
		{"RSA 1024", short, []string{"an RSA key of 1024 bits", "at least 2048", "openssl genpkey"}},
		{"ECDSA P-256", ec, []string{"not an RSA key", "RSA private key of at least 2048 bits"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			der, err := x509.MarshalPKCS8PrivateKey(tc.key)
			if err != nil {
				t.Fatal(err)
			}
			from := filepath.Join(t.TempDir(), "new.pem")
			os.WriteFile(from, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600)
			out, err := runCLI(t, nil, append(rotate, "--from", from)...)
			if err == nil {
				t.Fatalf("rotate --from a %s key: accepted\n%s", tc.name, out)
			}
			for _, want := range append(tc.want, from) {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the refusal %q does not say %q", err, want)
				}
			}
			if after, _ := os.ReadFile(keyFile); !bytes.Equal(after, before) {
				t.Errorf("%s changed", keyFile)
			}
			if retired, _ := filepath.Glob(keyFile + ".retired-*"); len(retired) != 0 {
				t.Errorf("the old key was retired: %v", retired)
			}
		})
	}
	// The store still has the key it had: a server starts with it.
	startServer(t, dir)
}
