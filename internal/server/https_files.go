package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"payouts/store"
)

// certFilesPoll is how often the certificate files are looked at for a change. Polling,
// rather than inotify: a renewal tool replaces the files by a rename, a symbolic link
// swapped (Kubernetes secrets) or a copy, which a stat sees alike, on any file system.
const certFilesPoll = time.Second

// certFiles serves a certificate of one's own (--tls-cert, --tls-key): the pair read last,
// reread on SIGHUP and when the files change. Each TLS handshake takes the current pair, so
// a change reaches new connections while the open ones go on with the pair they began with.
type certFiles struct {
	certPath, keyPath string
	logger            *slog.Logger
	current           atomic.Pointer[tls.Certificate]
	// seen are the files as they were when last read; only the watching goroutine uses
	// them once it runs.
	seen [2]os.FileInfo
}

func loadCertFiles(certPath, keyPath string, logger *slog.Logger) (*certFiles, error) {
	c := &certFiles{certPath: certPath, keyPath: keyPath, logger: logger}
	if err := c.reload("start"); err != nil {
		return nil, err
	}
	return c, nil
}

// reload reads the pair, for the reason why; on failure the pair served so far stays.
func (c *certFiles) reload(why string) error {
	stats := c.stat()
	certPEM, _, err := store.ReadKeyFile(c.certPath, store.MaxCertificateFileSize)
	if err != nil {
		return fmt.Errorf("--tls-cert %s: %w", c.certPath, err)
	}
	keyPEM, keyMode, err := store.ReadKeyFile(c.keyPath, store.MaxKeyFileSize)
	if err != nil {
		return fmt.Errorf("--tls-key %s: %w", c.keyPath, err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return fmt.Errorf("--tls-cert %s, --tls-key %s: %w", c.certPath, c.keyPath, err)
	}
	if why != "start" && store.TooOpen(keyMode) { // at start, checkKeyFiles said it
		warnTooOpen(c.logger, "--tls-key", c.keyPath, keyMode)
	}
	leaf := pair.Leaf
	if leaf == nil { // filled in by LoadX509KeyPair since Go 1.23
		if leaf, err = x509.ParseCertificate(pair.Certificate[0]); err != nil {
			return fmt.Errorf("--tls-cert %s: %w", c.certPath, err)
		}
		pair.Leaf = leaf
	}
	c.current.Store(&pair)
	c.seen = stats
	attrs := []any{"why", why, "cert", c.certPath, "names", leaf.DNSNames, "serial", leaf.SerialNumber.Text(16), "not_after", leaf.NotAfter}
	if time.Now().After(leaf.NotAfter) {
		c.logger.Warn("https: the certificate has expired; clients will refuse it", attrs...)
	} else {
		c.logger.Info("https: certificate loaded", attrs...)
	}
	return nil
}

func (c *certFiles) stat() [2]os.FileInfo {
	var out [2]os.FileInfo
	for i, p := range []string{c.certPath, c.keyPath} {
		out[i], _ = os.Stat(p)
	}
	return out
}

// changed reports whether either file is not the one read last: another file (a rename, a
// link swapped), another size or another modification time.
func (c *certFiles) changed() bool {
	now := c.stat()
	for i := range now {
		was, is := c.seen[i], now[i]
		if is == nil {
			continue // removed for a moment while it is replaced: wait for the new one
		}
		if was == nil || !os.SameFile(was, is) || was.Size() != is.Size() || !was.ModTime().Equal(is.ModTime()) {
			return true
		}
	}
	return false
}

// watch rereads the pair on SIGHUP and when the files change, until ctx ends. A pair that
// does not load (the key written before its certificate, say) is logged, once, and the
// last good one stays.
func (c *certFiles) watch(ctx context.Context) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	tick := time.NewTicker(certFilesPoll)
	defer tick.Stop()
	failed := ""
	for {
		why := ""
		select {
		case <-ctx.Done():
			return
		case <-hup:
			why = "SIGHUP"
		case <-tick.C:
			if !c.changed() {
				continue
			}
			why = "the files changed"
		}
		if err := c.reload(why); err != nil {
			if why == "SIGHUP" || err.Error() != failed {
				c.logger.Error("https: the certificate files do not load; serving the previous certificate", "why", why, "err", err)
			}
			failed = err.Error()
			c.seen = c.stat() // the next change is looked at, not this one again
			continue
		}
		failed = ""
	}
}

func (c *certFiles) get(*tls.ClientHelloInfo) (*tls.Certificate, error) { return c.current.Load(), nil }

// firstName is the certificate's first DNS name that is not a wildcard, or "".
func (c *certFiles) firstName() string {
	if c == nil {
		return ""
	}
	for _, n := range c.current.Load().Leaf.DNSNames {
		if !strings.HasPrefix(n, "*") {
			return strings.ToLower(n)
		}
	}
	return ""
}

func (c *certFiles) covers(host string) bool {
	return c.current.Load().Leaf.VerifyHostname(host) == nil
}
