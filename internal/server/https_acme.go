package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"path/filepath"
	"slices"

	"github.com/caddyserver/certmagic"
	"github.com/mholt/acmez/v3"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"payouts/rules"
	"payouts/store"
	"payouts/store/postgres"
)

// CertificatesDir is where the data directory keeps what ACME gave (--https): the account,
// and each name's certificate, private key and metadata, so that a restart asks for
// nothing new. On PostgreSQL they are in the database instead, shared by the instances.
const CertificatesDir = "certificates"

// acmeCertificates are the certificates of the --https names, obtained and renewed by
// github.com/caddyserver/certmagic: loaded from storage at start, asked of the CA when
// missing, renewed in the background, and the challenges answered on the https port
// (TLS-ALPN-01) and the plain HTTP one (HTTP-01).
type acmeCertificates struct {
	magic  *certmagic.Config
	issuer *certmagic.ACMEIssuer
	// ca and where say, for the start-up text, which CA and which storage.
	ca, where string
	stop      func()
}

// startACME loads or obtains the certificates of cfg.TLS.Names, without waiting for the
// CA: the listeners must be serving for its challenges. httpPort is the plain HTTP
// listener's port, 0 without one (then only TLS-ALPN-01 is answered); roots verify the CA's
// own certificate (nil: the system's).
func startACME(cfg Config, db rules.Storage, sealer *store.Sealer, roots *x509.CertPool, addr *net.TCPAddr, httpPort int, logger *slog.Logger,
	handshakes *handshakeErrors) (*acmeCertificates, error) {
	zl := zap.New(slogCore{h: logger.With("component", "https").Handler(), handshakes: handshakes})
	a := &acmeCertificates{ca: cfg.TLS.ACMECA}
	if a.ca == "" {
		a.ca = certmagic.LetsEncryptProductionCA
	}
	var storage certmagic.Storage
	if pg, ok := db.(*postgres.DB); ok {
		// Every instance finds there what one obtained; the private keys are sealed with
		// the master key, as the merchants' secrets are.
		storage, a.where = sealedCertificates{pg.CertificateStorage(), sealer}, "the database (shared by the instances)"
	} else {
		dir := filepath.Join(cfg.Storage.Data, CertificatesDir)
		storage, a.where = &certmagic.FileStorage{Path: dir}, dir
	}
	var magic *certmagic.Config
	cache := certmagic.NewCache(certmagic.CacheOptions{
		GetConfigForCert:   func(certmagic.Certificate) (*certmagic.Config, error) { return magic, nil },
		RenewCheckInterval: cfg.TLS.ACMERenewInterval,
		Logger:             zl,
	})
	magic = certmagic.New(cache, certmagic.Config{
		Storage: storage,
		Logger:  zl,
		// A client that sends no server name (one that dials the IP address) gets the
		// first name's certificate.
		DefaultServerName: cfg.TLS.Names[0],
	})
	listenHost := ""
	if addr.IP != nil && !addr.IP.IsUnspecified() {
		listenHost = addr.IP.String()
	}
	a.issuer = certmagic.NewACMEIssuer(magic, certmagic.ACMEIssuer{
		CA:           a.ca,
		Email:        cfg.TLS.ACMEEmail,
		Agreed:       true,
		TrustedRoots: roots,
		Logger:       zl,
		// The challenges come to this server's own listeners: certmagic finds the ports
		// taken and leaves them to the handlers below, instead of listening itself.
		ListenHost:           listenHost,
		AltTLSALPNPort:       addr.Port,
		AltHTTPPort:          httpPort,
		DisableHTTPChallenge: httpPort == 0,
	})
	magic.Issuers = []certmagic.Issuer{a.issuer}
	a.magic = magic
	ctx, cancel := context.WithCancel(context.Background())
	if err := magic.ManageAsync(ctx, cfg.TLS.Names); err != nil {
		cancel()
		cache.Stop()
		return nil, fmt.Errorf("--https: %w", err)
	}
	a.stop = func() { cancel(); cache.Stop() }
	return a, nil
}

// caRoots is the system's roots and the --acme-ca-root file's: the ACME server's own
// certificate may come from a private or test CA.
func caRoots(file string) (*x509.CertPool, error) {
	pem, _, err := store.ReadKeyFile(file, store.MaxCertificateFileSize)
	if err != nil {
		return nil, fmt.Errorf("--acme-ca-root: %w", err)
	}
	roots, err := x509.SystemCertPool()
	if err != nil {
		roots = x509.NewCertPool()
	}
	if !roots.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("--acme-ca-root %s: no PEM certificate in it", file)
	}
	return roots, nil
}

// tlsConfig answers TLS-ALPN-01 challenges beside HTTP/2 and HTTP/1.1.
func (a *acmeCertificates) tlsConfig() *tls.Config {
	c := a.magic.TLSConfig()
	c.NextProtos = []string{"h2", "http/1.1", acmez.ACMETLS1Protocol}
	return c
}

// httpChallenges answers HTTP-01 challenges (this instance's, or on PostgreSQL another's,
// from the shared storage) and passes every other request to next.
func (a *acmeCertificates) httpChallenges(next http.Handler) http.Handler {
	return a.issuer.HTTPChallengeHandler(next)
}

// sealedCertificates seals what certmagic stores, the private keys among it, with the
// master key; each value is bound to its key.
type sealedCertificates struct {
	certmagic.Storage
	sealer *store.Sealer
}

func (s sealedCertificates) Store(ctx context.Context, key string, value []byte) error {
	return s.Storage.Store(ctx, key, s.sealer.Seal(value, []byte("tls-certificates:"+key)))
}

func (s sealedCertificates) Load(ctx context.Context, key string) ([]byte, error) {
	sealed, err := s.Storage.Load(ctx, key)
	if err != nil {
		return nil, err
	}
	plain, err := s.sealer.Open(sealed, []byte("tls-certificates:"+key))
	if err != nil {
		return nil, fmt.Errorf("certificate storage %s: %w", key, err)
	}
	return plain, nil
}

// slogCore writes certmagic's zap log entries to the server's slog logger.
type slogCore struct {
	h     slog.Handler
	attrs []slog.Attr
	// handshakes takes certmagic's failed TLS-ALPN-01 handshakes (a challenge asked for
	// that is not under way, which anyone can do) instead of an ERROR each.
	handshakes *handshakeErrors
}

// tlsALPNFailed is the message of certmagic's entry for a TLS-ALPN-01 handshake it found no
// challenge for.
const tlsALPNFailed = "tls-alpn challenge"

func slogLevel(l zapcore.Level) slog.Level {
	switch {
	case l <= zapcore.DebugLevel:
		return slog.LevelDebug
	case l == zapcore.InfoLevel:
		return slog.LevelInfo
	case l == zapcore.WarnLevel:
		return slog.LevelWarn
	}
	return slog.LevelError
}

func (c slogCore) Enabled(l zapcore.Level) bool {
	return c.h.Enabled(context.Background(), slogLevel(l))
}

func (c slogCore) With(fields []zapcore.Field) zapcore.Core {
	return slogCore{h: c.h, attrs: append(slices.Clip(c.attrs), slogAttrs(fields)...), handshakes: c.handshakes}
}

func (c slogCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}

func (c slogCore) Write(e zapcore.Entry, fields []zapcore.Field) error {
	if e.Message == tlsALPNFailed && c.handshakes != nil {
		attrs := []any{}
		for _, a := range slogAttrs(fields) {
			attrs = append(attrs, a)
		}
		c.handshakes.log("https: TLS-ALPN-01 handshake without a challenge under way", attrs...)
		return nil
	}
	r := slog.NewRecord(e.Time, slogLevel(e.Level), e.Message, 0)
	if e.LoggerName != "" {
		r.AddAttrs(slog.String("logger", e.LoggerName))
	}
	r.AddAttrs(c.attrs...)
	r.AddAttrs(slogAttrs(fields)...)
	return c.h.Handle(context.Background(), r)
}

func (c slogCore) Sync() error { return nil }

// slogAttrs are zap fields as slog attributes, in the order of their names.
func slogAttrs(fields []zapcore.Field) []slog.Attr {
	if len(fields) == 0 {
		return nil
	}
	enc := zapcore.NewMapObjectEncoder()
	for _, f := range fields {
		f.AddTo(enc)
	}
	out := make([]slog.Attr, 0, len(enc.Fields))
	for _, k := range slices.Sorted(maps.Keys(enc.Fields)) {
		out = append(out, slog.Any(k, enc.Fields[k]))
	}
	return out
}
