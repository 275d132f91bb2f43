// Package server is the composition root: it opens the store and its keys, wires every
// feature (the API, the card form, the dashboard, the lifecycle, the outbox), serves, and
// drains on shutdown. Config is what the flags set; Options what tests inject.
package server

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/alexedwards/argon2id"
)

// Config is the server's configuration: what `payouts serve`'s flags and PAYOUTS_ variables
// set (docs/reference/cli.md lists them), grouped by concern. Run reads it and does not
// write it: what it starts from it is its own (running).
type Config struct {
	HTTP    HTTPConfig
	TLS     TLSConfig
	Storage StorageConfig
	Keys    KeysConfig
	Notify  NotifyConfig
	Sandbox SandboxConfig
	Backups BackupsConfig
	Tracing TracingConfig
	Log     LogConfig
}

// HTTPConfig is what is served, where, and to whom.
type HTTPConfig struct {
	Addr           string
	PublicURL      string
	RateLimit      float64
	TrustedProxies []netip.Prefix
	MetricsAddr    string
	PprofAddr      string
	// SlowTraceDir, when set, receives the execution trace of the second before each
	// request slower than SlowTraceOver (slowtrace.go).
	SlowTraceDir  string
	SlowTraceOver time.Duration
	// DrainTimeout bounds a shutdown: requests, workers and the store get this long, then
	// what is still running is abandoned, and logged.
	DrainTimeout time.Duration
}

// TLSConfig is HTTPS served by the binary itself (https.go): the names whose certificates
// ACME obtains and renews, or a certificate's own files; the plain HTTP address that
// answers HTTP-01 challenges and redirects to https.
type TLSConfig struct {
	Names             []string
	ACMEEmail         string
	ACMECA            string
	ACMECARoot        string
	ACMERenewInterval time.Duration
	Cert, Key         string
	HTTPAddr          string
}

// StorageConfig is the store: the bbolt file in the data directory, or PostgreSQL.
type StorageConfig struct {
	Data string
	// Database is empty for the bbolt file in Data, or a postgres:// URL.
	Database      string
	NoSync        bool
	Instance      string
	MaxConns      int
	ClaimLease    time.Duration
	BenchSeedFrom string
}

// KeysConfig are the secrets given by flag rather than kept in the data directory.
type KeysConfig struct {
	Master           string
	Card             string
	NotificationFile string
	AdminToken       string
	// SecretFiles are the --X-file flags given (X → its file), already read into their
	// values: the server looks at them as at its own key files (keyfiles.go).
	SecretFiles map[string]string
}

// NotifyConfig is how mail goes out, and where merchant notifications may go.
type NotifyConfig struct {
	SMTPURL          string
	MailFrom         string
	AllowPrivateURLs bool
}

// SandboxConfig is the simulated rails, and the demo merchant seeded on a first start.
type SandboxConfig struct {
	On         bool
	Delay      time.Duration
	BatchDelay time.Duration
	NoDemo     bool
}

// BackupsConfig is the scheduled backups of the bbolt file (backups.go): how often, how
// many to keep, where, and the S3 copy.
type BackupsConfig struct {
	Every             time.Duration
	Keep              int
	Dir               string
	S3                string
	S3Endpoint        string
	S3CredentialsFile string
}

// TracingConfig is the traces (tracing.go): the base URL of the OTLP/HTTP receiver spans
// are exported to; empty: the OTEL_EXPORTER_OTLP_ variables decide, and without them
// tracing is off.
type TracingConfig struct {
	OTLPEndpoint string
}

// LogConfig is the log's format and level.
type LogConfig struct {
	Format string
	Level  string
}

// Options are what a test injects into a server; the binary leaves them zero.
type Options struct {
	// Now is the server's real clock (default time.Now): the tests of the published signing
	// vectors, signed in 2023, set it back. In the sandbox the test clock runs over it for
	// everything but signatures and tokens. The bbolt writer's watchdog reads it too, so that
	// a test moves past its 5 s instead of waiting them.
	Now func() time.Time
	// WriteFault, when set, is asked before every database write of the bbolt engine: a
	// full disk, a stalled disk (bolt.Options.Fault).
	WriteFault func() error
	// CardSessionLength, when set, is the length of every card form session, so that a
	// browser test watches a form expire in seconds instead of the 5-minute minimum of
	// expirationTime.
	CardSessionLength time.Duration

	// BackupEvery, when set, is the interval of the scheduled backups instead of
	// --backup-every (which still turns them on), so that a test sees several within
	// seconds; the flag takes no less than a minute.
	BackupEvery time.Duration

	// Ready, when set, is called once the server answers, with where it does: a test
	// starts a server on port 0 and learns its address here instead of reading stdout.
	Ready func(Listening)

	// NewNotificationKey, when set, makes the notification key (PKCS#8 PEM) that a first
	// start writes, instead of a new RSA key: finding a 2048-bit key's primes takes a tenth
	// of a second to a second of CPU, which a test process that starts a hundred servers
	// pays once. Everything else about the key (the file, the fingerprint recorded, the
	// checks at every start) is as without it.
	NewNotificationKey func() ([]byte, error)

	// PasswordHashing, when set, replaces the dashboard's argon2id parameters (46 MiB a
	// hash) for the passwords its users set and the comparison of an unknown email: the
	// end-to-end tests' servers set and check hundreds of passwords, a fifth of their CPU at
	// the production cost. Nil, as every server started from its flags has: the production
	// parameters.
	PasswordHashing *argon2id.Params

	// IntegrationPasswordCost, when set, is bcrypt's cost for the integration users'
	// passwords (and the comparison of an unknown user) instead of bcrypt.DefaultCost: the
	// tests' servers sign in hundreds of times, at 0.07 s of CPU a hash at the default cost
	// and 1.3 s under the race detector. Zero, as every server started from its flags has:
	// the default.
	IntegrationPasswordCost int

	// DeliveryRetryDelay, when set, is how long the outbox's lanes (merchant notifications,
	// mail) wait before an event's first retry, instead of 2 s, doubled at each failure as
	// without it: a test sees an event's third try within a second instead of six. Zero, as
	// for the binary: 2 s.
	DeliveryRetryDelay time.Duration

	// CertificationTimeout, when set, is the delivery timeout of receiver certification
	// runs instead of the deliveries' 15 s, so that a test's receiver that never answers
	// costs seconds. Zero, as for the binary: the deliveries' own.
	CertificationTimeout time.Duration

	// ClientSessionQuiet, when set, is how long a client certification session stays open
	// after its last step was seen, instead of 3 s (certify.DefaultQuiet): a test's client,
	// whose last request is its last step, has nothing more to be seen doing. Zero, as for
	// the binary: 3 s.
	ClientSessionQuiet time.Duration
}

// Listening is where a started server answers.
type Listening struct {
	// URL is the base URL clients reach the server at: http://127.0.0.1:port, or with HTTPS
	// https://name:port.
	URL string
	// Metrics is the address of the metrics' own listener (--metrics-addr); "": none.
	Metrics string
}

func (o Options) now() func() time.Time {
	if o.Now == nil {
		return time.Now
	}
	return o.Now
}

// OnPostgres reports whether the service runs on PostgreSQL rather than its bbolt file.
func (c Config) OnPostgres() bool { return IsPostgresURL(c.Storage.Database) }

// IsPostgresURL reports whether s names a PostgreSQL database rather than a data directory.
func IsPostgresURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// RedactURL is a database URL without its password, for logs and messages.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

// Check refuses a configuration the server cannot start with.
func (c Config) Check() error {
	if c.Log.Format != "" && c.Log.Format != "text" && c.Log.Format != "json" {
		return fmt.Errorf("--log-format must be text or json")
	}
	if c.Tracing.OTLPEndpoint != "" {
		if err := checkEndpoint(c.Tracing.OTLPEndpoint, "--otlp-endpoint"); err != nil {
			return err
		}
	}
	if c.Storage.Database != "" && !c.OnPostgres() {
		return errors.New("--database must be a postgres:// (or postgresql://) URL; leave it empty for the bbolt file in --data")
	}
	if err := c.checkHTTPS(); err != nil {
		return err
	}
	if err := c.checkBackups(); err != nil {
		return err
	}
	if c.OnPostgres() {
		return sharedSecretsGiven(c)
	}
	return nil
}

// sharedSecretsGiven refuses to run on PostgreSQL without the secrets every instance must
// share: generated per data directory, two instances would each seal, tokenize and sign
// with their own. None of them is ever stored in the database.
func sharedSecretsGiven(c Config) error {
	var missing []string
	for _, k := range []struct{ flag, value string }{
		{"--master-key(-file)", c.Keys.Master}, {"--card-key(-file)", c.Keys.Card},
		{"--notification-key-file", c.Keys.NotificationFile}, {"--admin-token(-file)", c.Keys.AdminToken},
	} {
		if k.value == "" {
			missing = append(missing, k.flag)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("on PostgreSQL every instance must share its keys; missing %s (`payouts keys --out DIR` writes a set)",
			strings.Join(missing, ", "))
	}
	return nil
}
