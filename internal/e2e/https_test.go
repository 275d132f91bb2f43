package e2e

// HTTPS served by the binary itself: certificates of one's own, reread on SIGHUP and when
// the files change without dropping a connection; certificates obtained and renewed by ACME
// from pebble (https_acme_test.go); the plain HTTP port's redirect, HSTS, TLS 1.2 at least,
// and every URL the server builds in https.

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"payouts/internal/cli"
)

// testCA signs the certificates of a test: Ed25519 throughout, so that two certificates of
// the same names and serial length are the same size, byte for byte.
type testCA struct {
	cert    *x509.Certificate
	key     ed25519.PrivateKey
	certPEM []byte
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "payouts test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{cert: cert, key: key, certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

func (ca *testCA) pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

// issue signs a server certificate for names (host names or IP addresses); serials of the
// same size make certificates of the same size.
func (ca *testCA) issue(t *testing.T, serial int64, names ...string) (certPEM, keyPEM []byte) {
	t.Helper()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: new(big.Int).Add(new(big.Int).Lsh(big.NewInt(1), 62), big.NewInt(serial)),
		Subject:      pkix.Name{CommonName: names[0]},
		NotBefore:    time.Now().Add(-time.Hour).Truncate(time.Hour), NotAfter: time.Now().Add(24 * time.Hour).Truncate(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, key.Public(), ca.key)
	if err != nil {
		t.Fatal(err)
	}
	pkcs8, _ := x509.MarshalPKCS8PrivateKey(key)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8})
}

func serialOf(n int64) string {
	return new(big.Int).Add(new(big.Int).Lsh(big.NewInt(1), 62), big.NewInt(n)).Text(16)
}

func tlsTrusting(roots *x509.CertPool) *tls.Config { return &tls.Config{RootCAs: roots} }

// httpsClient trusts roots and reaches every name at 127.0.0.1 (the port of the URL), as
// if the test's names resolved there; it shows redirects instead of following them.
func httpsClient(roots *x509.CertPool) *http.Client {
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	return &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				_, port, _ := net.SplitHostPort(addr)
				return dialer.DialContext(ctx, network, net.JoinHostPort("127.0.0.1", port))
			},
			TLSClientConfig:   tlsTrusting(roots),
			ForceAttemptHTTP2: true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// dialTLS opens a connection to 127.0.0.1:port as a client of name that trusts roots.
func dialTLS(port int, name string, roots *x509.CertPool, maxVersion uint16) (*tls.Conn, error) {
	return tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		&tls.Config{ServerName: name, RootCAs: roots, MaxVersion: maxVersion, NextProtos: []string{"http/1.1"}})
}

// servedSerial is the serial of the certificate a new connection to port gets for name,
// verified against roots.
func servedSerial(port int, name string, roots *x509.CertPool) (string, error) {
	c, err := dialTLS(port, name, roots, 0)
	if err != nil {
		return "", err
	}
	defer c.Close()
	return c.ConnectionState().PeerCertificates[0].SerialNumber.Text(16), nil
}

// waitSerial waits until new connections get a certificate for name that is not one of
// not (the ones served before), and returns its serial.
func waitSerial(t *testing.T, port int, name string, roots *x509.CertPool, within time.Duration, not ...string) string {
	t.Helper()
	var last string
	var err error
	if poll(within, func() bool {
		last, err = servedSerial(port, name, roots)
		return err == nil && !slices.Contains(not, last)
	}) {
		return last
	}
	t.Fatalf("%s on port %d: no new certificate within %v (last %q, %v)", name, port, within, last, err)
	return ""
}

// getOn sends a GET over an open connection and reads the answer, so that the test knows
// which connection it uses.
func getOn(t *testing.T, c *tls.Conn, host, path string) *http.Response {
	t.Helper()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", path, host)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("GET %s on the open connection: %v", path, err)
	}
	resp.Body.Close()
	return resp
}

// startHTTPSProcess runs the binary with args and stops it when the test ends.
func startHTTPSProcess(t *testing.T, dir string, args ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd, base := startProcess(t, dir, args...)
	t.Cleanup(func() { stopProcess(cmd) })
	return cmd, base
}

func stopProcess(cmd *exec.Cmd) {
	if cmd.ProcessState == nil {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	}
}

// writeFileKeepingStat writes b over path in place (the same file) and gives it back its
// modification time: a change only a reread, not a look at the file, can see.
func writeFileKeepingStat(t *testing.T, path string, b []byte) {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(b)) != st.Size() {
		t.Fatalf("%s: the new content is %d bytes, the old %d: the test needs them alike", path, len(b), st.Size())
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(b, 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Chtimes(path, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
}

// replaceFile writes b beside path and renames it over path, as renewal tools do.
func replaceFile(t *testing.T, path string, b []byte) {
	t.Helper()
	tmp := path + ".new"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// A certificate of one's own (--tls-cert, --tls-key): served over TLS 1.2 or later with
// HSTS, reread on SIGHUP (even when the files look unchanged) and when the files change
// (replaced by a rename), a pair that does not load leaves the previous one served, and a
// connection open across the changes keeps working. The plain HTTP port redirects.
func TestHTTPSOwnCertificateRereadOnSIGHUPAndFileChange(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the binary")
	}
	const name = "payouts.test"
	ca := newTestCA(t)
	roots := ca.pool()
	files := t.TempDir()
	certFile, keyFile := filepath.Join(files, "cert.pem"), filepath.Join(files, "key.pem")
	c1, k1 := ca.issue(t, 1, name, "www."+name, "127.0.0.1")
	replaceFile(t, certFile, c1)
	replaceFile(t, keyFile, k1)
	httpPort := freePort(t)
	dir := t.TempDir()
	cmd, base := startHTTPSProcess(t, dir, append([]string{"--tls-cert", certFile, "--tls-key", keyFile,
		"--http-addr", fmt.Sprintf("127.0.0.1:%d", httpPort)}, engineArgs(t, dir, nil)...)...)
	u, err := url.Parse(base)
	if err != nil || u.Scheme != "https" || u.Hostname() != name {
		t.Fatalf("the start-up text gives %q, want https://%s:port", base, name)
	}
	port, _ := strconv.Atoi(u.Port())
	client := httpsClient(roots)

	t.Run("served over TLS 1.2 or later, with HSTS, and every URL in https", func(t *testing.T) {
		checkServedOverTLS(t, client, base, port, name, roots)
	})

	t.Run("the plain HTTP port redirects to https, keeping path and query", func(t *testing.T) {
		checkRedirects(t, client, httpPort, []redirectCase{
			{"www." + name, "/docs?lang=en&x=1", "https://www." + name + ":" + u.Port() + "/docs?lang=en&x=1"},
			{name + ":" + strconv.Itoa(httpPort), "/card?s=abc", base + "/card?s=abc"},
			{"elsewhere.example", "/", base + "/"}, // not a name of the certificate: the public one
		})
	})

	open, err := dialTLS(port, name, roots, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()
	if resp := getOn(t, open, name, "/readyz"); resp.StatusCode != 200 {
		t.Fatalf("GET /readyz on the open connection: %d", resp.StatusCode)
	}
	openSerial := open.ConnectionState().PeerCertificates[0].SerialNumber.Text(16)
	if openSerial != serialOf(1) {
		t.Fatalf("served serial %s, want %s", openSerial, serialOf(1))
	}
	stillOpen := func(t *testing.T) {
		t.Helper()
		if resp := getOn(t, open, name, "/readyz"); resp.StatusCode != 200 {
			t.Fatalf("GET on the connection opened before: %d", resp.StatusCode)
		}
		if got := open.ConnectionState().PeerCertificates[0].SerialNumber.Text(16); got != openSerial {
			t.Fatalf("the open connection's certificate changed: %s", got)
		}
	}

	t.Run("SIGHUP rereads the files, even when they look unchanged; the open connection stays", func(t *testing.T) {
		c2, k2 := ca.issue(t, 2, name, "www."+name, "127.0.0.1")
		writeFileKeepingStat(t, certFile, c2)
		writeFileKeepingStat(t, keyFile, k2)
		time.Sleep(2500 * time.Millisecond) // stays: two of the binary's looks at the files pass, which must not see this change
		if got, err := servedSerial(port, name, roots); err != nil || got != serialOf(1) {
			t.Fatalf("before SIGHUP: serial %s %v, want still %s (the look at the files must not see this change)", got, err, serialOf(1))
		}
		if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		if got := waitSerial(t, port, name, roots, 5*time.Second, serialOf(1)); got != serialOf(2) {
			t.Fatalf("after SIGHUP: serial %s, want %s", got, serialOf(2))
		}
		stillOpen(t)
	})

	t.Run("files replaced are reread without a signal", func(t *testing.T) {
		c3, k3 := ca.issue(t, 3, name, "www."+name, "127.0.0.1")
		replaceFile(t, keyFile, k3)
		replaceFile(t, certFile, c3)
		if got := waitSerial(t, port, name, roots, 10*time.Second, serialOf(1), serialOf(2)); got != serialOf(3) {
			t.Fatalf("after the files changed: serial %s, want %s", got, serialOf(3))
		}
		stillOpen(t)
	})

	t.Run("a pair that does not load leaves the previous one served", func(t *testing.T) {
		replaceFile(t, certFile, []byte("-----BEGIN CERTIFICATE-----\nbroken\n-----END CERTIFICATE-----\n"))
		refused := func(why string) func() bool {
			return func() bool {
				for _, line := range strings.Split(stderrOf(cmd), "\n") {
					if strings.Contains(line, "the certificate files do not load") && strings.Contains(line, `"why":"`+why+`"`) {
						return true
					}
				}
				return false
			}
		}
		eventually(t, 10*time.Second, "the binary refuses the broken pair it sees", refused("the files changed"))
		cmd.Process.Signal(syscall.SIGHUP)
		eventually(t, 10*time.Second, "the binary refuses the broken pair on SIGHUP", refused("SIGHUP"))
		if got, err := servedSerial(port, name, roots); err != nil || got != serialOf(3) {
			t.Fatalf("with a broken file: serial %s %v, want still %s", got, err, serialOf(3))
		}
		stillOpen(t)
	})
}

type redirectCase struct{ host, path, want string }

// checkRedirects asks the plain HTTP port for each case's host and path and expects a
// permanent redirect to want.
func checkRedirects(t *testing.T, client *http.Client, httpPort int, cases []redirectCase) {
	t.Helper()
	for _, c := range cases {
		req, _ := http.NewRequest("GET", fmt.Sprintf("http://127.0.0.1:%d%s", httpPort, c.path), nil)
		req.Host = c.host
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("GET http://%s%s: %v", c.host, c.path, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusPermanentRedirect || resp.Header.Get("Location") != c.want {
			t.Errorf("GET http://%s%s: %d to %q, want 308 to %q", c.host, c.path, resp.StatusCode, resp.Header.Get("Location"), c.want)
		}
	}
}

// checkURLsFollowHTTPS checks what the server builds from its base URL: the card form's
// iframe, the OpenAPI document's server, the dashboard's cookie.
// checkServedOverTLS checks the server at base (port, for the name): TLS 1.2 or later with
// HSTS, a TLS 1.1 client refused, and every URL it builds in https.
func checkServedOverTLS(t *testing.T, client *http.Client, base string, port int, name string, roots *x509.CertPool) {
	t.Helper()
	resp, err := client.Get(base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.TLS == nil || resp.TLS.Version < tls.VersionTLS12 {
		t.Fatalf("GET /readyz: %d over %v", resp.StatusCode, resp.TLS)
	}
	if got := resp.Header.Get("Strict-Transport-Security"); !strings.HasPrefix(got, "max-age=") {
		t.Errorf("Strict-Transport-Security = %q", got)
	}
	if c, err := dialTLS(port, name, roots, tls.VersionTLS11); err == nil {
		c.Close()
		t.Errorf("a TLS 1.1 client was served")
	}
	checkAEADSuitesOnly(t, port, name, roots)
	checkURLsFollowHTTPS(t, &testServer{URL: base, AdminToken: "test-admin-token-0123456789", HTTP: client})
}

func checkURLsFollowHTTPS(t *testing.T, s *testServer) {
	t.Helper()
	m := s.newMerchant(t, map[string]any{"cardPayouts": true})
	card := m.openCard(t, cardRequest("HTTPS-1"), 200)
	if !strings.HasPrefix(card.Iframe, s.URL+"/card?") {
		t.Errorf("iframe = %q, want %s/card?…", card.Iframe, s.URL)
	}
	resp, err := s.HTTP.Get(card.Iframe)
	if err != nil {
		t.Fatalf("GET the iframe: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("GET the iframe: %d", resp.StatusCode)
	}

	resp, err = s.HTTP.Get(s.URL + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Servers []struct{ URL string } `json:"servers"`
	}
	json.NewDecoder(resp.Body).Decode(&doc)
	resp.Body.Close()
	if len(doc.Servers) == 0 || !strings.HasPrefix(doc.Servers[0].URL, s.URL) {
		t.Errorf("the OpenAPI document's servers: %+v, want %s", doc.Servers, s.URL)
	}

	resp, err = s.HTTP.PostForm(s.URL+"/dashboard/login", url.Values{"token": {s.AdminToken}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var secure, found bool
	for _, c := range resp.Cookies() {
		if c.Name == "payouts_dashboard" {
			found, secure = true, c.Secure
		}
	}
	if !found || !secure {
		t.Errorf("dashboard sign-in: %d, session cookie found %v, Secure %v (Set-Cookie %q)", resp.StatusCode, found, secure, resp.Header.Values("Set-Cookie"))
	}
}

// The HTTPS flags given in a way the server cannot serve are refused, each with what to do,
// before anything is created; --https moves the default addresses to :443 and :80.
func TestHTTPSFlagsRefusedWithAClearError(t *testing.T) {
	t.Parallel()
	ca := newTestCA(t)
	files := t.TempDir()
	certFile, keyFile := filepath.Join(files, "cert.pem"), filepath.Join(files, "key.pem")
	c, k := ca.issue(t, 1, "payouts.test")
	replaceFile(t, certFile, c)
	replaceFile(t, keyFile, k)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--https", "payouts.test", "--tls-cert", certFile, "--tls-key", keyFile}, "give one of them"},
		{[]string{"--tls-cert", certFile}, "--tls-cert and --tls-key go together"},
		{[]string{"--acme-email", "ops@payouts.test"}, "go with --https"},
		{[]string{"--http-addr", "127.0.0.1:0"}, "goes with --https or --tls-cert"},
		{[]string{"--https", "https://payouts.test/"}, "without scheme, port or path"},
		{[]string{"--https", "payouts.test:8443"}, "without scheme, port or path"},
		{[]string{"--https", "*.payouts.test"}, "DNS-01"},
		{[]string{"--https", "192.0.2.1"}, "IP address"},
		{[]string{"--https", "localhost"}, "public names"},
		{[]string{"--https", "pay_outs.test"}, "is not a host name"},
		{[]string{"--https", "payouts.test,"}, "an empty name"},
		{[]string{"--https", "payouts.test", "--acme-ca", "http://acme.test/dir"}, "https://"},
		{[]string{"--https", "payouts.test", "--public-url", "http://payouts.test"}, "https:// one"},
		{[]string{"--tls-cert", keyFile, "--tls-key", certFile}, "--tls-cert " + keyFile},
		{[]string{"--tls-cert", certFile, "--tls-key", filepath.Join(files, "missing.pem")}, "no such file"},
		{[]string{"--https", "payouts.test", "--acme-ca-root", filepath.Join(files, "missing.pem")}, "--acme-ca-root"},
	} {
		dir := filepath.Join(t.TempDir(), "data")
		args := append([]string{"serve", "--data", dir, "--addr", "127.0.0.1:0", "--no-demo"}, tc.args...)
		if slices.Contains(tc.args, "--https") && !slices.Contains(tc.args, "--http-addr") {
			args = append(args, "--http-addr", "127.0.0.1:0")
		}
		out, err := runCLI(t, nil, args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v (%s), want an error saying %q", tc.args, err, out, tc.want)
		}
		if _, statErr := os.Stat(dir); !os.IsNotExist(statErr) {
			t.Errorf("%v: the data directory was created (%v)", tc.args, statErr)
		}
	}

	none := func(string) string { return "" }
	cfg, err := cli.ServeConfig([]string{"--https", " Payouts.Test. ,www.payouts.test"}, none)
	if err != nil || cfg.HTTP.Addr != ":443" || cfg.TLS.HTTPAddr != ":80" || !slices.Equal(cfg.TLS.Names, []string{"payouts.test", "www.payouts.test"}) {
		t.Errorf("--https: addr %q, http-addr %q, names %q, %v", cfg.HTTP.Addr, cfg.TLS.HTTPAddr, cfg.TLS.Names, err)
	}
	cfg, err = cli.ServeConfig([]string{"--https", "payouts.test", "--addr", ":8443", "--http-addr="}, none)
	if err != nil || cfg.HTTP.Addr != ":8443" || cfg.TLS.HTTPAddr != "" {
		t.Errorf("--https with --addr and an empty --http-addr: addr %q, http-addr %q, %v", cfg.HTTP.Addr, cfg.TLS.HTTPAddr, err)
	}
	cfg, err = cli.ServeConfig([]string{"--tls-cert", certFile, "--tls-key", keyFile}, none)
	if err != nil || cfg.HTTP.Addr != "127.0.0.1:8080" || cfg.TLS.HTTPAddr != "" {
		t.Errorf("--tls-cert: addr %q, http-addr %q, %v", cfg.HTTP.Addr, cfg.TLS.HTTPAddr, err)
	}
	cfg, err = cli.ServeConfig(nil, none)
	if err != nil || cfg.ServesHTTPS() || cfg.HTTP.Addr != "127.0.0.1:8080" || cfg.TLS.HTTPAddr != "" {
		t.Errorf("without the flags: addr %q, http-addr %q, HTTPS %v, %v", cfg.HTTP.Addr, cfg.TLS.HTTPAddr, cfg.ServesHTTPS(), err)
	}
}

// cbcSuites are the TLS 1.2 suites with CBC and an HMAC, which the server no longer offers.
var cbcSuites = []uint16{
	tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA, tls.TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA, tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256,
	tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA, tls.TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA, tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256,
	tls.TLS_RSA_WITH_AES_128_CBC_SHA, tls.TLS_RSA_WITH_AES_256_CBC_SHA,
}

// checkAEADSuitesOnly checks that TLS 1.2 at port offers AEAD suites only: a client offering
// only the CBC suites is refused, and one offering everything Go has gets an AEAD suite.
func checkAEADSuitesOnly(t *testing.T, port int, name string, roots *x509.CertPool) {
	t.Helper()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	d := &net.Dialer{Timeout: 5 * time.Second}
	if c, err := tls.DialWithDialer(d, "tcp", addr, &tls.Config{ServerName: name, RootCAs: roots, MaxVersion: tls.VersionTLS12,
		CipherSuites: cbcSuites}); err == nil {
		c.Close()
		t.Errorf("a TLS 1.2 client offering only CBC suites was served, with %s", tls.CipherSuiteName(c.ConnectionState().CipherSuite))
	}
	var all []uint16
	for _, cs := range append(tls.CipherSuites(), tls.InsecureCipherSuites()...) {
		if slices.Contains(cs.SupportedVersions, tls.VersionTLS12) {
			all = append(all, cs.ID)
		}
	}
	c, err := tls.DialWithDialer(d, "tcp", addr, &tls.Config{ServerName: name, RootCAs: roots, MaxVersion: tls.VersionTLS12, CipherSuites: all})
	if err != nil {
		t.Fatalf("a TLS 1.2 client offering every suite: %v", err)
	}
	defer c.Close()
	if got := tls.CipherSuiteName(c.ConnectionState().CipherSuite); !strings.Contains(got, "_GCM_") && !strings.Contains(got, "CHACHA20_POLY1305") {
		t.Errorf("TLS 1.2 negotiated %s, want an AEAD suite (AES-GCM or ChaCha20-Poly1305)", got)
	}
}

// startLoggedProcess is startHTTPSProcess keeping the server's log (JSON, from INFO).
func startLoggedProcess(t *testing.T, dir string, args ...string) (*exec.Cmd, string, *syncBuffer) {
	t.Helper()
	bin, err := payoutsBinary()
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0", "--data", dir, "--admin-token", "test-admin-token-0123456789",
		"--no-demo", "--log-format", "json", "--log-level", "info"}, args...)...)
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopProcess(cmd) })
	found := make(chan string, 1)
	go func() {
		lines := bufio.NewScanner(stdout)
		for lines.Scan() {
			if m := listenLine.FindStringSubmatch(lines.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	select {
	case u := <-found:
		return cmd, u, logs
	case <-time.After(90 * time.Second):
		t.Fatalf("the binary did not start:\n%s", logs.String())
	}
	return nil, "", nil
}

// failHandshake makes a TLS handshake with port that must fail, and waits until the server
// has closed the connection: net/http logs a failed handshake before it closes it.
func failHandshake(t *testing.T, port int, cfg *tls.Config) {
	t.Helper()
	raw, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	raw.SetDeadline(time.Now().Add(10 * time.Second))
	if err := tls.Client(raw, cfg).Handshake(); err == nil {
		t.Fatalf("a handshake for %q (protocols %v) succeeded", cfg.ServerName, cfg.NextProtos)
	}
	// The end of the connection: EOF, or a reset when the server closed with data unread.
	if _, err := io.Copy(io.Discard, raw); err != nil && os.IsTimeout(err) {
		t.Fatalf("the server did not close the connection of a failed handshake: %v", err)
	}
}

// checkFailedHandshakesLogSparingly makes handshakes fail, many times over: for a name the
// server does not serve (and with alpn, asking for ACME's TLS-ALPN-01 challenge, for that
// name and for the server's own with no challenge under way), and with the CBC suites only.
// Anyone can make them, so the log says so at most once a minute, at WARN or lower (the
// operations guide has operators alert on ERROR); at most one line here.
func checkFailedHandshakesLogSparingly(t *testing.T, port int, name string, roots *x509.CertPool, logs *syncBuffer, alpn bool) int {
	t.Helper()
	lines := func() []string { return strings.Split(logs.String(), "\n") }
	from := len(lines()) - 1
	const rounds = 10
	for i := 0; i < rounds; i++ {
		failHandshake(t, port, &tls.Config{ServerName: "foreign.example", RootCAs: roots})
		failHandshake(t, port, &tls.Config{ServerName: name, RootCAs: roots, MaxVersion: tls.VersionTLS12, CipherSuites: cbcSuites})
		if alpn {
			failHandshake(t, port, &tls.Config{ServerName: "foreign.example", RootCAs: roots, NextProtos: []string{"acme-tls/1"}})
			failHandshake(t, port, &tls.Config{ServerName: name, RootCAs: roots, NextProtos: []string{"acme-tls/1"}, InsecureSkipVerify: true})
		}
	}
	// A request after them: once its line is in the log, so are theirs.
	requests := func() int { return strings.Count(logs.String(), `"msg":"request"`) }
	before := requests()
	client := httpsClient(roots)
	resp, err := client.Get(fmt.Sprintf("https://%s:%d/readyz", name, port))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	eventually(t, 10*time.Second, "the request after the handshakes is logged", func() bool { return requests() > before })
	logged := 0
	for _, line := range lines()[from:] {
		if !strings.Contains(line, "TLS handshake") && !strings.Contains(line, "tls-alpn") && !strings.Contains(line, "TLS-ALPN") {
			continue
		}
		logged++
		if strings.Contains(line, `"level":"ERROR"`) {
			t.Errorf("a failed handshake logged at ERROR: %s", line)
		}
	}
	if logged > 1 {
		failed := rounds * 2
		if alpn {
			failed = rounds * 4
		}
		t.Errorf("%d failed handshakes in a few seconds logged %d lines, want at most one:\n%s", failed, logged, strings.Join(lines()[from:], "\n"))
	}
	return logged
}

// TLS 1.2 offers AEAD suites only; handshakes that fail (a name the certificate does not
// cover, the CBC suites only) are logged at most once a minute, at WARN, with how many were
// left out since the last line.
func TestHTTPSOwnCertificateAEADOnlyAndFailedHandshakesLoggedSparingly(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the binary")
	}
	const name = "payouts.test"
	ca := newTestCA(t)
	roots := ca.pool()
	files := t.TempDir()
	certFile, keyFile := filepath.Join(files, "cert.pem"), filepath.Join(files, "key.pem")
	c, k := ca.issue(t, 1, name)
	replaceFile(t, certFile, c)
	replaceFile(t, keyFile, k)
	dir := t.TempDir()
	_, base, logs := startLoggedProcess(t, dir, append([]string{"--tls-cert", certFile, "--tls-key", keyFile}, engineArgs(t, dir, nil)...)...)
	u, _ := url.Parse(base)
	port, _ := strconv.Atoi(u.Port())
	if n := checkFailedHandshakesLogSparingly(t, port, name, roots, logs, false); n != 1 {
		t.Errorf("the first failed handshakes logged %d lines, want one", n)
	}
	checkAEADSuitesOnly(t, port, name, roots)
	if !strings.Contains(logs.String(), `"level":"WARN","msg":"https: TLS handshake failed"`) {
		t.Errorf("no WARN line of the failed handshakes:\n%s", logs.String())
	}
}
