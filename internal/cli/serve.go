package cli

import (
	"context"
	"flag"
	"fmt"
	"time"

	"payouts/api"
	"payouts/internal/server"
	"payouts/rules"
	"payouts/store"
)

var serveCommand = &Command{
	Name:  "serve",
	Usage: "[flags]",
	Short: "run the server (default 127.0.0.1:8080; --addr to change)",
	Long: "The server: the signed API, the card form, the dashboard, the lifecycle and the notifications, " +
		"over the bbolt file in --data (created on first start with its keys, an admin token and a demo merchant) " +
		"or over PostgreSQL with --database. It drains on SIGTERM or Ctrl-C.",
	Flags: serveFlags,
}

func serveFlags(fs *flag.FlagSet) Runner {
	config := declareServeFlags(fs)
	return func(ctx context.Context, env Env, _ []string) error {
		cfg, err := config()
		if err != nil {
			return err
		}
		// Flags that cannot work together are a command line the binary cannot run: refused
		// before anything is listened on or created.
		if err := cfg.Check(); err != nil {
			return usageError{err.Error()}
		}
		return server.Run(ctx, cfg, env.Options, env.Getenv, env.Stdout, env.Stderr)
	}
}

// ServeConfig is the configuration `payouts serve args` runs with: its flags parsed and its
// secret files read, as the command does. Tests start servers from it.
func ServeConfig(args []string, getenv func(string) string) (server.Config, error) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	config := declareServeFlags(fs)
	rest, err := parseFlags(fs, args, getenv)
	if err != nil {
		return server.Config{}, err
	}
	if len(rest) > 0 {
		return server.Config{}, usageErrorf("serve: unexpected argument %q (payouts help serve lists the flags)", rest[0])
	}
	return config()
}

// declareServeFlags declares the server's flags on fs; the function it returns gives the
// configuration they set once they are parsed.
func declareServeFlags(fs *flag.FlagSet) func() (server.Config, error) {
	c := &server.Config{}
	fs.StringVar(&c.HTTP.Addr, "addr", "127.0.0.1:8080", "listen address (default :443 with --https)")
	fs.StringVar(&c.Storage.Data, "data", "./data", "data directory (database, keys); created 0700")
	fs.StringVar(&c.HTTP.PublicURL, "public-url", "", "absolute base URL used in iframe links (default http://<addr>; with HTTPS https://<name>[:port])")
	fs.StringVar(&c.Keys.AdminToken, "admin-token", "", "bearer token of the admin API (default: generated on first start, stored in the data dir)")
	fs.BoolVar(&c.Sandbox.NoDemo, "no-demo", false, "do not seed the demo merchant")
	fs.StringVar(&c.Notify.SMTPURL, "smtp-url", "", "smtp://user:pass@host:port or smtps://… (default: the sandbox mailbox)")
	fs.StringVar(&c.Notify.MailFrom, "mail-from", "payouts@localhost", "sender address of emails")
	fs.BoolVar(&c.Sandbox.On, "sandbox", true, "simulated rails and the sandbox endpoints")
	fs.DurationVar(&c.Sandbox.Delay, "sandbox-delay", 2*time.Second, "how long a simulated real-time payout takes")
	fs.DurationVar(&c.Sandbox.BatchDelay, "sandbox-batch-delay", 30*time.Second, "how long a simulated non-real-time payout takes")
	fs.Float64Var(&c.HTTP.RateLimit, "rate-limit", 0, "requests per second per merchant (0: off); past it 429 with Retry-After")
	fs.StringVar(&c.Log.Format, "log-format", "", "text or json (default: text on a terminal, else json)")
	fs.StringVar(&c.Log.Level, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&c.Keys.Card, "card-key", "", "64 hex characters: the AES-256 key of stored cards (default: card.key in the data dir)")
	fs.BoolVar(&c.Notify.AllowPrivateURLs, "allow-private-notification-urls", false, "let merchant notifications go to private and loopback addresses (development)")
	fs.BoolVar(&c.Storage.NoSync, "unsafe-no-fsync", false, "do not fsync the database (tests only: a crash may lose acknowledged payouts)")
	adminTokenFile := fs.String("admin-token-file", "", "file holding the admin token (keeps it out of the command line)")
	cardKeyPath := fs.String("card-key-file", "", "file holding --card-key (keeps it out of the command line)")
	smtpURLFile := fs.String("smtp-url-file", "", "file holding --smtp-url with its password (keeps it out of the command line)")
	fs.StringVar(&c.HTTP.MetricsAddr, "metrics-addr", "", "serve /metrics without a token on this address of its own (default: only on --addr, with the admin token)")
	proxies := fs.String("trusted-proxies", "", "comma-separated CIDRs of proxies whose X-Forwarded-For/Forwarded give the client address")
	fs.StringVar(&c.Storage.BenchSeedFrom, "bench-seed-from", "", "benchmarks: start an empty data directory as a copy of this seeded one (payouts seed)")
	fs.StringVar(&c.HTTP.PprofAddr, "pprof", "", "serve net/http/pprof on this loopback address, e.g. 127.0.0.1:6060 (profiling; off by default)")
	fs.StringVar(&c.HTTP.SlowTraceDir, "slow-trace", "", "write the execution trace of the second before each request slower than --slow-trace-over into this directory (go tool trace reads it; off by default)")
	fs.DurationVar(&c.HTTP.SlowTraceOver, "slow-trace-over", 25*time.Millisecond, "what --slow-trace counts as a slow request")
	fs.StringVar(&c.Storage.Database, "database", "", "postgres://user:pass@host:5432/db to run on PostgreSQL, several instances at once (default: the bbolt file in --data)")
	databaseFile := fs.String("database-file", "", "file holding --database with its password (keeps it out of the command line)")
	fs.StringVar(&c.Keys.Master, "master-key", "", "64 hex characters: the AES-256 key that seals merchant secrets (default: master.key in the data dir; required on PostgreSQL)")
	masterKeyFile := fs.String("master-key-file", "", "file holding --master-key (keeps it out of the command line)")
	fs.StringVar(&c.Keys.NotificationFile, "notification-key-file", "", "PEM file of the RSA key that signs merchant notifications (default: notification-key.pem in the data dir, created on first start; required on PostgreSQL)")
	fs.StringVar(&c.Storage.Instance, "instance", "", "this instance's name in the claims it takes on PostgreSQL (default: host, process id and a random suffix)")
	fs.IntVar(&c.Storage.MaxConns, "db-max-conns", 16, "PostgreSQL connections of this instance's pool")
	fs.DurationVar(&c.HTTP.DrainTimeout, "drain-timeout", 20*time.Second, "on SIGTERM: how long requests, workers and database writes get to finish before the process exits anyway, logging what it abandoned")
	fs.DurationVar(&c.Storage.ClaimLease, "claim-lease", rules.ClaimLease, "on PostgreSQL: how long a claimed step or event stays this instance's, and a step it queued past its due time; a crashed instance's claims and steps are taken over after it")
	httpsFlags := declareHTTPSFlags(fs, c) // HTTPS: ACME or one's own certificate (serve_https.go)
	// Scheduled backups (internal/server/backups.go).
	fs.DurationVar(&c.Backups.Every, "backup-every", 0, "make a verified backup of the bbolt file this often, e.g. 6h (at least 1m; 0: none); needs --backup-dir")
	fs.IntVar(&c.Backups.Keep, "backup-keep", 14, "how many verified backups --backup-every keeps, in --backup-dir and in --backup-s3 (the oldest are removed once a new one is verified)")
	fs.StringVar(&c.Backups.Dir, "backup-dir", "", "directory of the scheduled backups, outside --data (created 0700)")
	fs.StringVar(&c.Backups.S3, "backup-s3", "", "also copy each verified backup to s3://bucket/prefix (credentials: --backup-s3-credentials-file, else AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY; region AWS_REGION)")
	fs.StringVar(&c.Backups.S3Endpoint, "backup-s3-endpoint", "", "URL of an S3-compatible service for --backup-s3, e.g. http://127.0.0.1:9000 for MinIO (default: AWS S3)")
	fs.StringVar(&c.Backups.S3CredentialsFile, "backup-s3-credentials-file", "", "AWS shared credentials file for --backup-s3 (its [default] section, or AWS_PROFILE's)")
	// Traces.
	fs.StringVar(&c.Tracing.OTLPEndpoint, "otlp-endpoint", "", "export OpenTelemetry traces over OTLP/HTTP to this receiver, e.g. http://127.0.0.1:4318 (default: OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT; neither: off)")
	return func() (server.Config, error) {
		var err error
		if c.HTTP.TrustedProxies, err = api.ParseTrustedProxies(*proxies); err != nil {
			return *c, usageError{err.Error()}
		}
		httpsFlags()
		err = readSecretFiles(c, []secretFile{{"admin-token", *adminTokenFile, &c.Keys.AdminToken}, {"card-key", *cardKeyPath, &c.Keys.Card},
			{"smtp-url", *smtpURLFile, &c.Notify.SMTPURL}, {"database", *databaseFile, &c.Storage.Database}, {"master-key", *masterKeyFile, &c.Keys.Master}})
		return *c, err
	}
}

// secretFile is a --X-file flag: the file holding the value of --X.
type secretFile struct {
	name, file string
	dst        *string
}

// readSecretFiles reads each given --X-file into its --X, refusing both at once.
func readSecretFiles(c *server.Config, files []secretFile) error {
	for _, f := range files {
		if f.file == "" {
			continue
		}
		if c.Keys.SecretFiles == nil {
			c.Keys.SecretFiles = map[string]string{}
		}
		c.Keys.SecretFiles[f.name] = f.file
		if *f.dst != "" {
			return fmt.Errorf("--%s and --%s-file are both set: give one", f.name, f.name)
		}
		var err error
		if *f.dst, err = store.ReadSecretFile(f.file); err != nil {
			return fmt.Errorf("--%s-file: %w", f.name, err)
		}
	}
	return nil
}
