package e2e

// Debian's pebble, the ACME test server of Let's Encrypt, run by the HTTPS tests: its own
// HTTPS certificate from a test CA (the server under test trusts it through --acme-ca-root),
// a DNS server of the test's that resolves every name to 127.0.0.1, and its challenge ports
// pointed at the server's listeners.

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"

	"payouts/internal/freeport"
)

// pebbleServer is a pebble process of one test.
type pebbleServer struct {
	// DirURL is the ACME directory (--acme-ca), CARootFile the root of pebble's own HTTPS
	// certificate (--acme-ca-root).
	DirURL, CARootFile string
	mgmt               string
	client             *http.Client
	log                *syncBuffer
}

// requirePebble skips a test when pebble is not installed, or fails it when
// PAYOUTS_REQUIRE_PEBBLE=1 (CI installs it and sets that).
func requirePebble(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("runs pebble and the binary")
	}
	path, err := exec.LookPath("pebble")
	if err != nil {
		if os.Getenv("PAYOUTS_REQUIRE_PEBBLE") == "1" {
			t.Fatalf("pebble is required (PAYOUTS_REQUIRE_PEBBLE=1) but not installed: apt-get install pebble")
		}
		t.Skip("pebble is not installed (apt-get install pebble; PAYOUTS_REQUIRE_PEBBLE=1 makes this a failure)")
	}
	return path
}

// freePort is a TCP port of 127.0.0.1 free a moment ago and not given to another of this
// run's servers: pebble's configuration names the server's ports before the server starts.
func freePort(t *testing.T) int {
	t.Helper()
	port, err := freeport.Port()
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// startPebble runs pebble with its validations going to httpPort (HTTP-01) and tlsPort
// (TLS-ALPN-01) of 127.0.0.1, issuing certificates valid for validity.
func startPebble(t *testing.T, httpPort, tlsPort int, validity time.Duration) *pebbleServer {
	t.Helper()
	bin := requirePebble(t)
	dir := t.TempDir()
	ca := newTestCA(t)
	certPEM, keyPEM := ca.issue(t, 1, "localhost", "127.0.0.1")
	p := &pebbleServer{CARootFile: filepath.Join(dir, "pebble-tls-root.pem"), log: &syncBuffer{}}
	for name, b := range map[string][]byte{"cert.pem": certPEM, "key.pem": keyPEM, "pebble-tls-root.pem": ca.certPEM} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	listen, mgmt := fmt.Sprintf("127.0.0.1:%d", freePort(t)), fmt.Sprintf("127.0.0.1:%d", freePort(t))
	cfg, _ := json.Marshal(map[string]any{"pebble": map[string]any{
		"listenAddress": listen, "managementListenAddress": mgmt,
		"certificate": filepath.Join(dir, "cert.pem"), "privateKey": filepath.Join(dir, "key.pem"),
		"httpPort": httpPort, "tlsPort": tlsPort, "ocspResponderURL": "", "externalAccountBindingRequired": false,
		"certificateValidityPeriod": int(validity.Seconds()),
	}})
	if err := os.WriteFile(filepath.Join(dir, "pebble.json"), cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-config", filepath.Join(dir, "pebble.json"), "-dnsserver", startDNS(t), "-strict=false")
	// No random waits before validations, no nonce refused at random, and every order
	// validated anew (no authorization reused), so that each issuance runs the challenges.
	cmd.Env = append(os.Environ(), "PEBBLE_VA_NOSLEEP=1", "PEBBLE_WFE_NONCEREJECT=0", "PEBBLE_AUTHZREUSE=0")
	cmd.Stdout, cmd.Stderr = p.log, p.log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var waitErr error // how pebble ended, read once exited is closed
	go func() { waitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("pebble's log:\n%s", p.log.String())
		}
	})
	p.DirURL, p.mgmt = "https://"+listen+"/dir", "https://"+mgmt
	p.client = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsTrusting(ca.pool())}}
	var err error
	if !poll(20*time.Second, func() bool {
		select {
		case <-exited:
			t.Fatalf("pebble exited (%v):\n%s", waitErr, p.log.String())
		default:
		}
		// Both listeners: pebble starts its management interface beside the directory, and
		// the directory has answered first (a test's Roots found the other refused).
		for _, u := range []string{p.DirURL, p.mgmt + "/roots/0"} {
			var resp *http.Response
			if resp, err = p.client.Get(u); err != nil {
				return false
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				err = fmt.Errorf("%s: %s", u, resp.Status)
				return false
			}
		}
		return true
	}) {
		t.Fatalf("pebble did not answer at %s and %s: %v\n%s", p.DirURL, p.mgmt, err, p.log.String())
	}
	return p
}

// Roots is the pool of the root pebble signs certificates under (its management
// interface gives it; it is new at each start).
func (p *pebbleServer) Roots(t *testing.T) *x509.CertPool {
	t.Helper()
	resp, err := p.client.Get(p.mgmt + "/roots/0")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	pool := x509.NewCertPool()
	if resp.StatusCode != 200 || !pool.AppendCertsFromPEM(raw) {
		t.Fatalf("pebble's root: %d %s", resp.StatusCode, raw)
	}
	return pool
}

// Issued is how many certificates pebble issued, and Orders how many orders it was given.
func (p *pebbleServer) Issued() int {
	return strings.Count(p.log.String(), "Issued certificate serial")
}
func (p *pebbleServer) Orders() int { return strings.Count(p.log.String(), "Added order") }

// startDNS serves DNS on a UDP port of 127.0.0.1 for pebble's validations: every name is
// 127.0.0.1 (A), and has no other record.
func startDNS(t *testing.T) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		for _, q := range r.Question {
			if q.Qtype == dns.TypeA {
				m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET}, A: net.IPv4(127, 0, 0, 1)})
			}
		}
		w.WriteMsg(m)
	})}
	started := make(chan struct{})
	srv.NotifyStartedFunc = func() { close(started) }
	go srv.ActivateAndServe()
	<-started
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.ShutdownContext(ctx)
	})
	return pc.LocalAddr().String()
}
