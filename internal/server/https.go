package server

// HTTPS served by the binary itself, with nothing in front: certificates obtained and
// renewed by ACME (--https, https_acme.go) or a certificate's own files, reread when they
// change (--tls-cert, https_files.go); a plain HTTP listener (--http-addr) that answers
// ACME's HTTP-01 challenges and redirects everything else to https; TLS 1.2 at least, and
// Strict-Transport-Security on every https answer.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mholt/acmez/v3"

	"payouts/rules"
	"payouts/store"
)

// strictTransportSecurity tells browsers to come back over https only, for a year (the
// usual value; no includeSubDomains: the merchant's other hosts are not this server's).
const strictTransportSecurity = "max-age=31536000"

// ServesHTTPS reports whether the server serves TLS itself.
func (c Config) ServesHTTPS() bool {
	return len(c.TLS.Names) > 0 || c.TLS.Cert != "" || c.TLS.Key != ""
}

// checkHTTPS refuses the HTTPS flags given in a way the server cannot serve.
func (c Config) checkHTTPS() error {
	acme := len(c.TLS.Names) > 0
	switch {
	case acme && (c.TLS.Cert != "" || c.TLS.Key != ""):
		return errors.New("--https obtains certificates by ACME and --tls-cert serves your own: give one of them")
	case (c.TLS.Cert == "") != (c.TLS.Key == ""):
		return errors.New("--tls-cert and --tls-key go together: the certificate chain and its private key, PEM files")
	case !acme && (c.TLS.ACMEEmail != "" || c.TLS.ACMECA != "" || c.TLS.ACMECARoot != ""):
		return errors.New("--acme-email, --acme-ca and --acme-ca-root go with --https NAME")
	case !c.ServesHTTPS() && c.TLS.HTTPAddr != "":
		return errors.New("--http-addr redirects to https: it goes with --https or --tls-cert")
	case c.ServesHTTPS() && c.HTTP.PublicURL != "" && !strings.HasPrefix(c.HTTP.PublicURL, "https://"):
		return fmt.Errorf("--public-url %q: the server serves HTTPS itself, so its public URL is an https:// one", c.HTTP.PublicURL)
	}
	for _, name := range c.TLS.Names {
		if err := checkHTTPSName(name); err != nil {
			return err
		}
	}
	if acme {
		if u, err := url.Parse(c.TLS.ACMECA); c.TLS.ACMECA != "" && (err != nil || u.Scheme != "https" || u.Host == "") {
			return fmt.Errorf("--acme-ca %q: the URL of an ACME directory, https://…", c.TLS.ACMECA)
		}
		if c.TLS.ACMERenewInterval < 0 {
			return errors.New("--acme-renew-interval must be positive")
		}
	}
	return nil
}

// checkHTTPSName refuses what a CA cannot validate through HTTP-01 or TLS-ALPN-01: a name
// is a public DNS host name.
func checkHTTPSName(name string) error {
	switch {
	case name == "":
		return errors.New("--https: an empty name in the list (example.com,www.example.com)")
	case strings.Contains(name, "://") || strings.ContainsAny(name, "/:@ "):
		return fmt.Errorf("--https %q: give host names (example.com,www.example.com), without scheme, port or path", name)
	case strings.HasPrefix(name, "*."):
		return fmt.Errorf("--https %q: a wildcard needs the DNS-01 challenge, which this server does not answer; name each host, or give your own certificate with --tls-cert", name)
	case net.ParseIP(name) != nil:
		return fmt.Errorf("--https %q: a certificate for an IP address is not obtained here; give a host name, or your own certificate with --tls-cert", name)
	case !isHostName(name):
		return fmt.Errorf("--https %q is not a host name (letters, digits and hyphens, in labels separated by dots; an international name in its ASCII form, xn--…)", name)
	case !strings.Contains(name, "."):
		return fmt.Errorf("--https %q: a CA issues for public names (example.com); for a local name, give your own certificate with --tls-cert", name)
	}
	return nil
}

func isHostName(s string) bool {
	if len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
				return false
			}
		}
	}
	return true
}

// httpsServing is the TLS side of a server: its certificates, the plain HTTP listener and
// what stops them. A nil one serves plain HTTP, as without the flags.
type httpsServing struct {
	cfg    Config
	logger *slog.Logger
	// plain is the --http-addr listener, nil without one.
	plain net.Listener
	// files are --tls-cert and --tls-key; nil with ACME.
	files *certFiles
	// caRoots are the roots the ACME server's own certificate is verified against (nil:
	// the system's).
	caRoots *x509.CertPool
	// acme is set by start with --https.
	acme *acmeCertificates
	// handshakes logs the failed handshakes, at most once a minute.
	handshakes *handshakeErrors

	stopOnce sync.Once
	stops    []func()
}

// listenHTTPS prepares the TLS side before anything is created: it binds --http-addr and
// reads the certificate files, so that a port taken or a bad file stops the start there.
func listenHTTPS(cfg Config, logger *slog.Logger) (*httpsServing, error) {
	if !cfg.ServesHTTPS() {
		return nil, nil
	}
	h := &httpsServing{cfg: cfg, logger: logger, handshakes: &handshakeErrors{logger: logger}}
	if cfg.TLS.Cert != "" {
		files, err := loadCertFiles(cfg.TLS.Cert, cfg.TLS.Key, logger)
		if err != nil {
			return nil, err
		}
		h.files = files
	}
	if cfg.TLS.ACMECARoot != "" {
		roots, err := caRoots(cfg.TLS.ACMECARoot)
		if err != nil {
			return nil, err
		}
		h.caRoots = roots
	}
	if cfg.TLS.HTTPAddr != "" {
		ln, err := net.Listen("tcp", cfg.TLS.HTTPAddr)
		if err != nil {
			return nil, listenError("--http-addr", err)
		}
		h.plain = ln
		h.stops = append(h.stops, func() { ln.Close() })
	}
	return h, nil
}

// listenError says what to do about an address the server could not listen on.
func listenError(flag string, err error) error {
	if errors.Is(err, os.ErrPermission) {
		return fmt.Errorf("%s: %w (ports below 1024 need the CAP_NET_BIND_SERVICE capability: "+
			"AmbientCapabilities=CAP_NET_BIND_SERVICE in a systemd unit, or setcap cap_net_bind_service=+ep on the binary)", flag, err)
	}
	return fmt.Errorf("%s: %w (another payouts running? %s 127.0.0.1:9090 picks another port)", flag, err, flag)
}

// reachableBase is the URL clients reach the server at: the certificate's name over https
// (with the port unless it is 443), or the listener's plain http address.
func (h *httpsServing) reachableBase(addr net.Addr) string {
	if h == nil {
		return reachableBase(addr)
	}
	host, port := h.host(addr), strconv.Itoa(addr.(*net.TCPAddr).Port)
	if port == "443" {
		if strings.Contains(host, ":") {
			return "https://[" + host + "]"
		}
		return "https://" + host
	}
	return "https://" + net.JoinHostPort(host, port)
}

// host is the name a client verifies the certificate against: the first --https name, the
// first name of the certificate's own (not a wildcard), else the listener's address.
func (h *httpsServing) host(addr net.Addr) string {
	if len(h.cfg.TLS.Names) > 0 {
		return h.cfg.TLS.Names[0]
	}
	if name := h.files.firstName(); name != "" {
		return name
	}
	tcp := addr.(*net.TCPAddr)
	if tcp.IP == nil || tcp.IP.IsUnspecified() {
		return "127.0.0.1"
	}
	return tcp.IP.String()
}

// covers reports whether the certificates served cover host.
func (h *httpsServing) covers(host string) bool {
	if h.files != nil {
		return h.files.covers(host)
	}
	for _, name := range h.cfg.TLS.Names {
		if name == host {
			return true
		}
	}
	return false
}

// start begins managing the certificates (ACME: loading them from the cache, else asking
// the CA, in the background) once the store is open, and serves the plain HTTP listener; its
// stop runs with the app's workers, before the store closes.
func (h *httpsServing) start(a *app, db rules.Storage, sealer *store.Sealer, addr net.Addr, stdout io.Writer) error {
	if h == nil {
		return nil
	}
	a.stops = append(a.stops, h.stop)
	if h.files != nil {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); h.files.watch(ctx) }()
		h.stops = append(h.stops, func() { cancel(); <-done })
		fmt.Fprintf(stdout, "https: certificate %s (reread on SIGHUP and when it changes)%s\n", h.cfg.TLS.Cert, h.servePlain(addr))
		return nil
	}
	httpPort := 0
	if h.plain != nil {
		httpPort = h.plain.Addr().(*net.TCPAddr).Port
	}
	acme, err := startACME(h.cfg, db, sealer, h.caRoots, addr.(*net.TCPAddr), httpPort, h.logger, h.handshakes)
	if err != nil {
		return err
	}
	h.acme = acme
	h.stops = append(h.stops, acme.stop)
	fmt.Fprintf(stdout, "https: certificates of %s by ACME from %s, kept in %s%s\n",
		strings.Join(h.cfg.TLS.Names, ", "), acme.ca, acme.where, h.servePlain(addr))
	return nil
}

// servePlain serves the plain HTTP listener, if there is one: ACME's HTTP-01 challenges,
// and a redirect to https for everything else. It says so for the start-up text.
func (h *httpsServing) servePlain(addr net.Addr) string {
	if h.plain == nil {
		return ""
	}
	var handler http.Handler = h.redirect(addr)
	if h.acme != nil {
		handler = h.acme.httpChallenges(handler)
	}
	plain := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      10 * time.Second,
		IdleTimeout:       30 * time.Second,
		ErrorLog:          slog.NewLogLogger(h.logger.Handler(), slog.LevelWarn),
	}
	h.stops = append(h.stops, func() { plain.Close() })
	go plain.Serve(h.plain)
	return fmt.Sprintf("; http://%s redirects to https", h.plain.Addr())
}

// stop ends the certificate management and the plain HTTP server; it may be called again.
func (h *httpsServing) stop() {
	if h == nil {
		return
	}
	h.stopOnce.Do(func() {
		for i := len(h.stops) - 1; i >= 0; i-- {
			h.stops[i]()
		}
	})
}

// serve serves srv on ln: over TLS with the certificates, and HSTS on every answer; or
// plain HTTP, as without the flags.
func (h *httpsServing) serve(srv *http.Server, ln net.Listener) error {
	if h == nil {
		return srv.Serve(ln)
	}
	srv.TLSConfig = h.tlsConfig()
	srv.ErrorLog = h.handshakeErrorLog(srv.ErrorLog)
	next := srv.Handler
	srv.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Strict-Transport-Security", strictTransportSecurity)
		next.ServeHTTP(w, r)
	})
	return srv.ServeTLS(ln, "", "")
}

// aeadSuites are the TLS 1.2 cipher suites offered: ECDHE with AES-GCM or ChaCha20-Poly1305,
// Mozilla's intermediate profile as far as Go implements it. Go's defaults still offer the
// CBC suites with SHA-1 (ECDHE-RSA-AES128-SHA and the like), whose MAC-then-encrypt
// construction padding-oracle attacks go after. TLS 1.3's suites are all AEAD already.
var aeadSuites = []uint16{
	tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
	tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
}

// tlsConfig serves the current certificates: TLS 1.2 at least with AEAD suites only,
// HTTP/2, and ACME's TLS-ALPN-01 challenge on the https port.
func (h *httpsServing) tlsConfig() *tls.Config {
	var c *tls.Config
	if h.acme != nil {
		c = h.acme.tlsConfig()
		c.GetCertificate = h.refuseForeignChallenges(c.GetCertificate)
	} else {
		c = &tls.Config{GetCertificate: h.files.get, NextProtos: []string{"h2", "http/1.1"}}
	}
	c.MinVersion = tls.VersionTLS12
	c.CipherSuites = aeadSuites
	return c
}

// refuseForeignChallenges refuses a TLS-ALPN-01 handshake for a name not in --https before
// certmagic looks for its challenge (which it would log as an ERROR and, on PostgreSQL, look
// for in the database): anyone can send one, for any name, as often as they like. The
// handshake fails, and says so in the rate-limited line of handshake errors.
func (h *httpsServing) refuseForeignChallenges(next func(*tls.ClientHelloInfo) (*tls.Certificate, error)) func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
		if slices.Contains(hello.SupportedProtos, acmez.ACMETLS1Protocol) && !slices.Contains(h.cfg.TLS.Names, strings.ToLower(hello.ServerName)) {
			return nil, fmt.Errorf("a TLS-ALPN-01 challenge for %q, which is not a name of --https", hello.ServerName)
		}
		return next(hello)
	}
}

// handshakeErrors logs the failed TLS handshakes at most once a minute, at WARN, saying how
// many it left out: every one is caused by a client (a scanner, a name this server does not
// serve, an old TLS version or suite), anyone on the internet can make them, and the
// operations guide has operators alert on ERROR.
type handshakeErrors struct {
	logger *slog.Logger
	// The mutex guards the two fields, never the log write.
	mu      sync.Mutex
	last    time.Time
	skipped int
}

// handshakeLogEvery is how often a failed handshake is logged at most.
const handshakeLogEvery = time.Minute

func (l *handshakeErrors) log(msg string, attrs ...any) {
	l.mu.Lock()
	now := time.Now()
	if !l.last.IsZero() && now.Sub(l.last) < handshakeLogEvery {
		l.skipped++
		l.mu.Unlock()
		return
	}
	skipped := l.skipped
	l.last, l.skipped = now, 0
	l.mu.Unlock()
	l.logger.Warn(msg, append(attrs, "not_logged_since_last", skipped, "logged_at_most_every", handshakeLogEvery.String())...)
}

// handshakeErrorLog is the https server's error log: its "TLS handshake error" lines go
// through handshakeErrors, every other line to next.
func (h *httpsServing) handshakeErrorLog(next *log.Logger) *log.Logger {
	return log.New(writerFunc(func(p []byte) (int, error) {
		line := strings.TrimSpace(string(p))
		if rest, ok := strings.CutPrefix(line, "http: TLS handshake error from "); ok {
			h.handshakes.log("https: TLS handshake failed", "err", rest)
			return len(p), nil
		}
		return next.Writer().Write(p)
	}), "", 0)
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// redirect sends a plain HTTP request to the same path and query over https: at the host
// it asked for when the certificates cover it, else at the public URL's host.
func (h *httpsServing) redirect(addr net.Addr) http.Handler {
	publicURL := h.cfg.HTTP.PublicURL
	if publicURL == "" {
		publicURL = h.reachableBase(addr)
	}
	public, _ := url.Parse(publicURL)
	port := addr.(*net.TCPAddr).Port
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		target := "https://" + public.Host
		host := strings.ToLower(r.Host)
		if hp, _, err := net.SplitHostPort(host); err == nil {
			host = hp
		}
		if host != "" && host != public.Hostname() && h.covers(host) {
			target = "https://" + host
			if port != 443 {
				target = "https://" + net.JoinHostPort(host, strconv.Itoa(port))
			}
		}
		http.Redirect(w, r, target+r.URL.RequestURI(), http.StatusPermanentRedirect)
	})
}
