package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"payouts/internal/server"
	"payouts/store/postgres/pgtest"
)

// acmeArgs are the flags of a server whose certificates pebble issues: names on
// 127.0.0.1:httpsPort, the plain HTTP listener on httpPort (0: none).
func acmeArgs(p *pebbleServer, names string, httpsPort, httpPort int) []string {
	httpAddr := ""
	if httpPort != 0 {
		httpAddr = fmt.Sprintf("127.0.0.1:%d", httpPort)
	}
	return []string{"--https", names, "--addr", fmt.Sprintf("127.0.0.1:%d", httpsPort), "--http-addr=" + httpAddr,
		"--acme-ca", p.DirURL, "--acme-ca-root", p.CARootFile, "--acme-email", "ops@payouts.test"}
}

// HTTPS by ACME against pebble: the certificates issued for the names (the challenges on
// the server's own ports), verified against pebble's root; the plain HTTP port redirects,
// HSTS, TLS 1.2 at least, every URL in https; a restart reuses the stored ones without
// asking pebble; and the restarted server renews them before they expire (pebble issues
// them for 24 s here, and the renewal check runs every second: the real path of a renewal,
// in the background, sooner; at two thirds of their life). The restart comes first, while
// the certificates are seconds old: after the renewal, the renewed ones had to stay short of
// two thirds of their life through the restart, which took a longer life and a longer wait.
// On PostgreSQL (PAYOUTS_TEST_ENGINE=postgres) they are stored in the database, else in the
// data directory.
func TestHTTPSByACMEIssuesRenewsAndReusesCertificates(t *testing.T) {
	t.Parallel()
	const name, www = "payouts.test", "www.payouts.test"
	httpsPort, httpPort := freePort(t), freePort(t)
	p := startPebble(t, httpPort, httpsPort, 24*time.Second)
	roots := p.Roots(t)
	dir := t.TempDir()
	args := append(acmeArgs(p, name+","+www, httpsPort, httpPort), "--acme-renew-interval", "1s")
	args = append(args, engineArgs(t, dir, nil)...)
	cmd, base := startHTTPSProcess(t, dir, args...)
	if want := fmt.Sprintf("https://%s:%d", name, httpsPort); base != want {
		t.Fatalf("the start-up text gives %q, want %q", base, want)
	}
	first := map[string]string{}
	for _, n := range []string{name, www} {
		first[n] = waitSerial(t, httpsPort, n, roots, 60*time.Second)
	}
	issuedAt := time.Now()
	if p.Issued() != 2 {
		t.Fatalf("pebble issued %d certificates, want 2 (one a name)", p.Issued())
	}
	client := httpsClient(roots)
	top := t

	t.Run("served over TLS 1.2 or later, with HSTS, and every URL in https", func(t *testing.T) {
		checkServedOverTLS(t, client, base, httpsPort, name, roots)
	})

	t.Run("the plain HTTP port redirects to https, keeping path and query", func(t *testing.T) {
		port := strconv.Itoa(httpsPort)
		checkRedirects(t, client, httpPort, []redirectCase{
			{name, "/api/v1/1/payouts?limit=2&stage=SUCCESS", base + "/api/v1/1/payouts?limit=2&stage=SUCCESS"},
			{www + ":80", "/dashboard", "https://" + www + ":" + port + "/dashboard"},
			{"other.example", "/docs", base + "/docs"},
		})
	})

	t.Run("a restart serves the stored certificates without asking the CA", func(t *testing.T) {
		served := map[string]string{}
		for _, n := range []string{name, www} {
			var err error
			if served[n], err = servedSerial(httpsPort, n, roots); err != nil {
				t.Fatal(err)
			}
		}
		stopProcess(cmd)
		issued, orders := p.Issued(), p.Orders()
		cmd2, base2 := startProcess(t, dir, args...)
		top.Cleanup(func() { stopProcess(cmd2) }) // it renews the certificates below
		if base2 != base {
			t.Fatalf("after the restart: %q, want %q", base2, base)
		}
		for _, n := range []string{name, www} {
			if got := waitSerial(t, httpsPort, n, roots, 10*time.Second); got != served[n] {
				t.Errorf("%s after the restart: serial %s, want the stored %s", n, got, served[n])
			}
		}
		time.Sleep(time.Second) // stays: the window in which the binary would order anew; nothing marks that it chose not to
		if p.Issued() != issued || p.Orders() != orders {
			t.Errorf("pebble was asked again: %d orders and %d certificates, were %d and %d", p.Orders(), p.Issued(), orders, issued)
		}
		if !onPostgresTests() {
			if _, err := os.Stat(filepath.Join(dir, server.CertificatesDir)); err != nil {
				t.Errorf("the data directory's certificates: %v", err)
			}
		}
	})

	t.Run("renewed before they expire", func(t *testing.T) {
		for _, n := range []string{name, www} {
			got := waitSerial(t, httpsPort, n, roots, 40*time.Second, first[n])
			t.Logf("%s renewed %v after it was issued: serial %s, then %s", n, time.Since(issuedAt).Round(time.Second), first[n], got)
		}
		if p.Issued() < 4 {
			t.Fatalf("pebble issued %d certificates, want 4", p.Issued())
		}
	})
}

// Each challenge alone obtains a certificate: TLS-ALPN-01 on the https port (with no plain
// HTTP listener, pebble's HTTP-01 port closed), and HTTP-01 on the plain HTTP port (pebble's
// TLS-ALPN-01 port closed, so that the client falls back to HTTP-01 if it tries the other
// first).
// Once it is served, TLS 1.2 offers AEAD suites only, and handshakes that anyone can make
// fail (TLS-ALPN-01 for a name not in --https, or for one with no challenge under way)
// are logged at most once a minute, never at ERROR.
func TestHTTPSByACMEAnswersEachChallenge(t *testing.T) {
	t.Parallel()
	const name = "pay.payouts.test"
	for _, c := range []struct{ challenge string }{{"tls-alpn-01"}, {"http-01"}} {
		t.Run(c.challenge, func(t *testing.T) {
			t.Parallel() // each its own pebble, binary and ports
			httpsPort, httpPort, closed := freePort(t), freePort(t), freePort(t)
			pebbleHTTP, pebbleTLS, serverHTTP := closed, httpsPort, 0
			if c.challenge == "http-01" {
				pebbleHTTP, pebbleTLS, serverHTTP = httpPort, closed, httpPort
			}
			p := startPebble(t, pebbleHTTP, pebbleTLS, time.Hour)
			dir := t.TempDir()
			_, base, logs := startLoggedProcess(t, dir, acmeArgs(p, name, httpsPort, serverHTTP)...)
			waitSerial(t, httpsPort, name, p.Roots(t), 60*time.Second)
			checkAEADSuitesOnly(t, httpsPort, name, p.Roots(t))
			checkFailedHandshakesLogSparingly(t, httpsPort, name, p.Roots(t), logs, true)
			resp, err := httpsClient(p.Roots(t)).Get(base + "/readyz")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("GET /readyz: %d", resp.StatusCode)
			}
		})
	}
}

// On PostgreSQL the instances share the certificates: the second instance serves the one
// the first obtained, and pebble is asked once. A challenge one instance asked for is
// answered by another (pebble validates at the first instance's ports only, as a load
// balancer may send it there). What is stored is sealed: no private key in the clear in the
// database, and nothing in the data directories.
func TestHTTPSCertificateSharedByInstancesOnPostgreSQL(t *testing.T) {
	t.Parallel()
	const name = "payouts.test"
	requirePebble(t)
	dbURL := pgtest.Database(t)
	keys := t.TempDir()
	if err := writeKeys(keys); err != nil {
		t.Fatal(err)
	}
	aHTTPS, aHTTP := freePort(t), freePort(t)
	p := startPebble(t, aHTTP, aHTTPS, time.Hour)
	roots := p.Roots(t)
	shared := []string{"--database", dbURL, "--master-key-file", filepath.Join(keys, "master.key"),
		"--card-key-file", filepath.Join(keys, server.CardKeyFile), "--notification-key-file", filepath.Join(keys, server.NotificationKeyFile)}
	aDir, bDir := t.TempDir(), t.TempDir()
	startHTTPSProcess(t, aDir, append(append(acmeArgs(p, name, aHTTPS, aHTTP), "--instance", "a"), shared...)...)
	serial := waitSerial(t, aHTTPS, name, roots, 60*time.Second)

	bHTTPS, bHTTP := freePort(t), freePort(t)
	_, bBase := startHTTPSProcess(t, bDir, append(append(acmeArgs(p, name, bHTTPS, bHTTP), "--instance", "b"), shared...)...)
	if got := waitSerial(t, bHTTPS, name, roots, 15*time.Second); got != serial {
		t.Fatalf("instance b serves serial %s, a %s", got, serial)
	}
	resp, err := httpsClient(roots).Get(bBase + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	time.Sleep(time.Second) // stays: the window in which b would order; nothing marks that it chose not to
	if p.Orders() != 1 || p.Issued() != 1 {
		t.Fatalf("pebble had %d orders and issued %d certificates, want 1 and 1", p.Orders(), p.Issued())
	}

	// c asks for a name of its own; pebble's validations reach a only.
	cHTTPS, cHTTP, cDir := freePort(t), freePort(t), t.TempDir()
	startHTTPSProcess(t, cDir, append(append(acmeArgs(p, "c."+name, cHTTPS, cHTTP), "--instance", "c"), shared...)...)
	waitSerial(t, cHTTPS, "c."+name, roots, 60*time.Second)
	if p.Issued() != 2 {
		t.Fatalf("pebble issued %d certificates, want 2", p.Issued())
	}

	for _, d := range []string{aDir, bDir, cDir} {
		if _, err := os.Stat(filepath.Join(d, server.CertificatesDir)); !os.IsNotExist(err) {
			t.Errorf("%s: certificates in the data directory (%v); on PostgreSQL they are in the database", d, err)
		}
	}
	conn, err := pgx.Connect(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, _ := conn.Query(context.Background(), `SELECT key, value FROM tls_certificates`)
	n := 0
	for rows.Next() {
		var key string
		var value []byte
		rows.Scan(&key, &value)
		n++
		if strings.Contains(string(value), "PRIVATE KEY") || strings.Contains(string(value), "CERTIFICATE") {
			t.Errorf("%s is stored in the clear", key)
		}
	}
	if rows.Err() != nil || n == 0 {
		t.Fatalf("tls_certificates: %d rows, %v", n, rows.Err())
	}
}
