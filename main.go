// Command payouts is the whole payout service in one binary: the signed JSON API, the card
// form, the lifecycle worker and the outbox dispatcher, over one bbolt file.
// main.go is wiring only: flags, the store, the router, the workers, graceful shutdown.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/go-chi/chi/v5"

	"payouts/api"
	"payouts/rules"
	"payouts/store"
	"payouts/store/bolt"
	"payouts/store/postgres"
	"payouts/web"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	if code := exitCode(err); code != 0 { // -h printed the flags and exits 0
		fmt.Fprintln(os.Stderr, "payouts:", err)
		os.Exit(code)
	}
}

// version is set at build time with -ldflags "-X main.version=…"; otherwise the module's.
var version = ""

func versionString() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		fmt.Fprintln(stdout, usage)
		fmt.Fprintln(stdout, "\nThe flags of serve (payouts help <command> for the others):")
		return help(ctx, "serve", getenv, stdout)
	}
	if len(args) > 0 && (args[0] == "--version" || args[0] == "-version") {
		args = []string{"version"}
	}
	cmd := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		cfg, err := parseServeFlags(args, getenv, stderr)
		if err != nil {
			return err
		}
		return serve(ctx, cfg, stdout, stderr)
	case "merchant":
		switch {
		case len(args) > 0 && args[0] == "create":
			return merchantCreate(args[1:], getenv, stdout, stderr)
		case len(args) > 0 && args[0] == "keys":
			return merchantKeys(args[1:], getenv, stdout, stderr)
		}
		return usageErrorf("merchant: say create or keys (payouts help merchant)")
	case "user":
		if len(args) > 0 && args[0] == "add" {
			return userAdd(args[1:], getenv, stdout, stderr)
		}
		return usageErrorf("user: say add (payouts help user)")
	case "backup":
		return backup(ctx, args, getenv, stdout, stderr)
	case "seed":
		return seedCommand(args, getenv, stdout, stderr)
	case "migrate":
		return migrateCommand(ctx, args, getenv, stdout, stderr)
	case "keys":
		return keysCommand(args, getenv, stdout, stderr)
	case "check":
		return checkCommand(ctx, args, getenv, stdout, stderr)
	case "reconcile":
		return reconcileCommand(ctx, args, getenv, stdout, stderr)
	case "version":
		if len(args) > 0 {
			return usageErrorf("version takes no arguments")
		}
		fmt.Fprintln(stdout, "payouts", versionString())
		return nil
	case "sign":
		return sign(args, getenv, stdout, stderr)
	case "listen":
		return listen(ctx, args, getenv, stdout, stderr)
	case "help":
		if len(args) == 0 {
			fmt.Fprintln(stdout, usage)
			return nil
		}
		if len(args) > 1 {
			return usageErrorf("help takes one command (payouts help lists them)")
		}
		return help(ctx, args[0], getenv, stdout)
	}
	return usageErrorf("unknown command %q (payouts help lists the commands)", cmd)
}

const usage = `payouts: payouts to beneficiaries in Colombia and Peru, in one binary.

usage:
  payouts [serve] [flags]                   run the server (default 127.0.0.1:8080; --addr to change)
  payouts merchant create --name N [flags]  create a merchant offline; prints its credentials as JSON
  payouts merchant keys --id ID [--new]     list a merchant's API keys offline, or issue a new key and secret
  payouts user add --email E --role R       create a dashboard user offline; prints its one-time set-up link
  payouts sign --secret S [flags] PATH      print a signed URL (or curl command) for a merchant request
  payouts listen --forward-to URL [flags]   forward a merchant's notifications from a sandbox server to a local URL
  payouts backup --out FILE                 consistent copy of the database (from a running server or offline)
  payouts seed --data DIR [--payouts N]     benchmarks: store N settled payouts straight into DIR (README, Performance)
  payouts migrate --from SRC --to DST       copy a store into an empty one: a data directory or a postgres:// URL, either way
  payouts keys --out DIR                    write the keys several instances on PostgreSQL share (README, Scaling out)
  payouts check --data DIR                  full consistency check of a stopped server's database and its ledger (exit 1 on a finding)
  payouts reconcile --merchant M --currency C [--from D --to D]  prove a balance's days add up from its ledger entries (exit 1 on a difference)
  payouts version (or --version)            print the version
  payouts help [command]                    this text, or the flags of a command

Every flag may be set as PAYOUTS_<FLAG> (upper case, - as _); flags win.`

// help prints the flags of one command.
func help(ctx context.Context, cmd string, getenv func(string) string, stdout io.Writer) error {
	args := []string{"-h"}
	switch cmd {
	case "serve", "backup", "sign", "migrate", "keys", "seed", "check", "listen", "reconcile":
		args = append([]string{cmd}, args...)
	case "merchant":
		fmt.Fprintln(stdout, "payouts merchant create: create a merchant offline (server stopped); prints its credentials as JSON")
		if err := run(ctx, []string{"merchant", "create", "-h"}, getenv, stdout, stdout); !errors.Is(err, flag.ErrHelp) {
			return err
		}
		fmt.Fprintln(stdout, "\npayouts merchant keys: list a merchant's API keys offline, or with --new issue a new key and secret (the old pair works for --grace)")
		args = []string{"merchant", "keys", "-h"}
	case "user":
		fmt.Fprintln(stdout, "payouts user add: create a dashboard user offline (server stopped, or on PostgreSQL beside it); prints it with its one-time set-up link as JSON")
		args = []string{"user", "add", "-h"}
	case "version":
		fmt.Fprintln(stdout, "usage: payouts version (or payouts --version)")
		return nil
	case "help":
		fmt.Fprintln(stdout, "usage: payouts help [command]: the commands, or the flags of one")
		return nil
	default:
		return usageErrorf("no command %q (payouts help lists the commands)", cmd)
	}
	err := run(ctx, args, getenv, stdout, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return err
}

// reachableBase is the URL a local client uses for the listener: an unspecified address
// (--addr :8080 or 0.0.0.0:8080) is reached at 127.0.0.1.
func reachableBase(addr net.Addr) string {
	if tcp, ok := addr.(*net.TCPAddr); ok && (tcp.IP == nil || tcp.IP.IsUnspecified()) {
		return fmt.Sprintf("http://127.0.0.1:%d", tcp.Port)
	}
	return "http://" + addr.String()
}

type serveConfig struct {
	Addr                 string
	Data                 string
	PublicURL            string
	AdminToken           string
	NoDemo               bool
	SMTPURL              string
	MailFrom             string
	Sandbox              bool
	SandboxDelay         time.Duration
	SandboxBatchDelay    time.Duration
	RateLimit            float64
	LogFormat            string
	LogLevel             string
	CardKey              string
	AllowPrivateNotifURL bool
	NoSync               bool
	TrustedProxies       []netip.Prefix
	MetricsAddr          string
	PprofAddr            string
	BenchSeedFrom        string

	// Database is empty for the bbolt file in Data, or a postgres:// URL (issue 13).
	Database  string
	MasterKey string
	// publicURLFromProxy: no --public-url was given, so a trusted proxy's forwarded scheme
	// and host give the card iframe's URL (issue 25).
	publicURLFromProxy  bool
	NotificationKeyFile string
	Instance            string
	DBMaxConns          int
	// DrainTimeout bounds a shutdown: requests, workers and the store get this long, then
	// what is still running is abandoned, and logged (issue 21).
	DrainTimeout time.Duration
	ClaimLease   time.Duration
}

// onPostgres reports whether the service runs on PostgreSQL rather than its bbolt file.
func (c serveConfig) onPostgres() bool { return isPostgresURL(c.Database) }

func isPostgresURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

func parseServeFlags(args []string, getenv func(string) string, stderr io.Writer) (serveConfig, error) {
	var c serveConfig
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.Addr, "addr", "127.0.0.1:8080", "listen address")
	fs.StringVar(&c.Data, "data", "./data", "data directory (database, keys); created 0700")
	fs.StringVar(&c.PublicURL, "public-url", "", "absolute base URL used in iframe links (default http://<addr>)")
	fs.StringVar(&c.AdminToken, "admin-token", "", "bearer token of the admin API (default: generated on first start, stored in the data dir)")
	fs.BoolVar(&c.NoDemo, "no-demo", false, "do not seed the demo merchant")
	fs.StringVar(&c.SMTPURL, "smtp-url", "", "smtp://user:pass@host:port or smtps://… (default: the sandbox mailbox)")
	fs.StringVar(&c.MailFrom, "mail-from", "payouts@localhost", "sender address of emails")
	fs.BoolVar(&c.Sandbox, "sandbox", true, "simulated rails and the sandbox endpoints")
	fs.DurationVar(&c.SandboxDelay, "sandbox-delay", 2*time.Second, "how long a simulated real-time payout takes")
	fs.DurationVar(&c.SandboxBatchDelay, "sandbox-batch-delay", 30*time.Second, "how long a simulated non-real-time payout takes")
	fs.Float64Var(&c.RateLimit, "rate-limit", 0, "requests per second per merchant (0: off); past it 429 with Retry-After")
	fs.StringVar(&c.LogFormat, "log-format", "", "text or json (default: text on a terminal, else json)")
	fs.StringVar(&c.LogLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&c.CardKey, "card-key", "", "64 hex characters: the AES-256 key of stored cards (default: card.key in the data dir)")
	fs.BoolVar(&c.AllowPrivateNotifURL, "allow-private-notification-urls", false, "let merchant notifications go to private and loopback addresses (development)")
	fs.BoolVar(&c.NoSync, "unsafe-no-fsync", false, "do not fsync the database (tests only: a crash may lose acknowledged payouts)")
	adminTokenFile := fs.String("admin-token-file", "", "file holding the admin token (keeps it out of the command line)")
	cardKeyFile := fs.String("card-key-file", "", "file holding --card-key (keeps it out of the command line)")
	smtpURLFile := fs.String("smtp-url-file", "", "file holding --smtp-url with its password (keeps it out of the command line)")
	fs.StringVar(&c.MetricsAddr, "metrics-addr", "", "serve /metrics without a token on this address of its own (default: only on --addr, with the admin token)")
	proxies := fs.String("trusted-proxies", "", "comma-separated CIDRs of proxies whose X-Forwarded-For/Forwarded give the client address")
	fs.StringVar(&c.BenchSeedFrom, "bench-seed-from", "", "benchmarks: start an empty data directory as a copy of this seeded one (payouts seed)")
	fs.StringVar(&c.PprofAddr, "pprof", "", "serve net/http/pprof on this loopback address, e.g. 127.0.0.1:6060 (profiling; off by default)")
	fs.StringVar(&c.Database, "database", "", "postgres://user:pass@host:5432/db to run on PostgreSQL, several instances at once (default: the bbolt file in --data)")
	databaseFile := fs.String("database-file", "", "file holding --database with its password (keeps it out of the command line)")
	fs.StringVar(&c.MasterKey, "master-key", "", "64 hex characters: the AES-256 key that seals merchant secrets (default: master.key in the data dir; required on PostgreSQL)")
	masterKeyFile := fs.String("master-key-file", "", "file holding --master-key (keeps it out of the command line)")
	fs.StringVar(&c.NotificationKeyFile, "notification-key-file", "", "PEM file of the RSA key that signs merchant notifications (default: notification-key.pem in the data dir, created on first start; required on PostgreSQL)")
	fs.StringVar(&c.Instance, "instance", "", "this instance's name in the claims it takes on PostgreSQL (default: host, process id and a random suffix)")
	fs.IntVar(&c.DBMaxConns, "db-max-conns", 16, "PostgreSQL connections of this instance's pool")
	fs.DurationVar(&c.DrainTimeout, "drain-timeout", 20*time.Second, "on SIGTERM: how long requests, workers and database writes get to finish before the process exits anyway, logging what it abandoned")
	fs.DurationVar(&c.ClaimLease, "claim-lease", rules.ClaimLease, "on PostgreSQL: how long a claimed step or event stays this instance's, and a step it queued past its due time; a crashed instance's claims and steps are taken over after it")
	if err := envFlags(fs, args, getenv); err != nil {
		return c, err
	}
	var err error
	if c.TrustedProxies, err = api.ParseTrustedProxies(*proxies); err != nil {
		return c, err
	}
	for _, f := range []struct {
		name, file string
		dst        *string
	}{{"admin-token", *adminTokenFile, &c.AdminToken}, {"card-key", *cardKeyFile, &c.CardKey}, {"smtp-url", *smtpURLFile, &c.SMTPURL},
		{"database", *databaseFile, &c.Database}, {"master-key", *masterKeyFile, &c.MasterKey}} {
		if f.file == "" {
			continue
		}
		if *f.dst != "" {
			return c, fmt.Errorf("--%s and --%s-file are both set: give one", f.name, f.name)
		}
		if *f.dst, err = store.ReadSecretFile(f.file); err != nil {
			return c, fmt.Errorf("--%s-file: %w", f.name, err)
		}
	}
	if c.LogFormat != "" && c.LogFormat != "text" && c.LogFormat != "json" {
		return c, fmt.Errorf("--log-format must be text or json")
	}
	if c.Database != "" && !c.onPostgres() {
		return c, errors.New("--database must be a postgres:// (or postgresql://) URL; leave it empty for the bbolt file in --data")
	}
	if c.onPostgres() {
		if err := sharedSecretsGiven(c); err != nil {
			return c, err
		}
	}
	return c, nil
}

func newLogger(format, level string, w io.Writer) *slog.Logger {
	if format == "" {
		format = "json"
		if f, ok := w.(*os.File); ok {
			if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
				format = "text"
			}
		}
	}
	var lv slog.Level
	lv.UnmarshalText([]byte(level))
	opts := &slog.HandlerOptions{Level: lv}
	if format == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

// openData opens the data directory: the database and the key that seals secrets.
func openData(dir string, noSync bool) (rules.Storage, *store.Sealer, error) {
	return openStorage(context.Background(), serveConfig{Data: dir, NoSync: noSync})
}

// openStorage opens the engine the configuration names, and the sealer of its secrets: the
// bbolt file in the data directory (the default), or PostgreSQL (--database). Only this
// function knows the engines; everything else sees rules.Storage.
func openStorage(ctx context.Context, cfg serveConfig) (rules.Storage, *store.Sealer, error) {
	if cfg.onPostgres() {
		if cfg.MasterKey == "" {
			return nil, nil, errors.New("on PostgreSQL the master key must be given (--master-key or --master-key-file): every instance needs the same one")
		}
		key, err := store.ParseKey(cfg.MasterKey)
		if err != nil {
			return nil, nil, fmt.Errorf("--master-key: %w", err)
		}
		sealer, err := store.NewSealer(key)
		if err != nil {
			return nil, nil, err
		}
		db, err := postgres.Open(ctx, cfg.Database, postgres.Options{Instance: cfg.Instance, MaxConns: int32(cfg.DBMaxConns), Lease: cfg.ClaimLease})
		if err != nil {
			return nil, nil, err
		}
		k := sealedKey{name: "master", source: "--master-key", flag: "--master-key-file", opensSecret: firstMerchantOpens(db, sealer)}
		if err := checkSealedKey(db, k, key, storeWhere(cfg)); err != nil {
			db.Close()
			return nil, nil, err
		}
		return db, sealer, nil
	}
	dir := cfg.Data
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, err
	}
	os.Chmod(dir, 0o700)
	if err := checkDataDir(dir); err != nil {
		return nil, nil, err
	}
	fault, _ := writeFaults.Load(dir)
	faultFn, _ := fault.(func() error)
	db, err := bolt.Open(filepath.Join(dir, "payouts.db"), bolt.Options{NoSync: cfg.NoSync, Fault: faultFn})
	if err != nil {
		return nil, nil, err
	}
	sealer, err := openMasterKey(cfg, db)
	if err == nil {
		// Versions before signatures became reusable saved a replay guard here; it means nothing now.
		_, err = db.TakeMeta("replay-guard")
	}
	if err == nil {
		err = markInitialised(dir)
	}
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return db, sealer, nil
}

// openMasterKey reads the master key of a data directory (or --master-key), generating it
// only for a store that holds nothing it sealed, and checks it against the store.
func openMasterKey(cfg serveConfig, db rules.Storage) (*store.Sealer, error) {
	path := filepath.Join(cfg.Data, "master.key")
	k := sealedKey{name: "master", source: path, flag: "--master-key-file"}
	var key []byte
	var err error
	if cfg.MasterKey != "" {
		k.source = "--master-key"
		key, err = store.ParseKey(cfg.MasterKey)
	} else {
		if _, statErr := os.Stat(path); errors.Is(statErr, os.ErrNotExist) {
			ms, err := db.Merchants()
			if err != nil {
				return nil, err
			}
			if err := missingKeyError(db, k, storeWhere(cfg), len(ms) > 0); err != nil {
				return nil, err
			}
		}
		key, err = store.LoadOrCreateKey(path)
	}
	if err != nil {
		return nil, fmt.Errorf("master key: %w", err)
	}
	sealer, err := store.NewSealer(key)
	if err != nil {
		return nil, err
	}
	k.opensSecret = firstMerchantOpens(db, sealer)
	if err := checkSealedKey(db, k, key, storeWhere(cfg)); err != nil {
		return nil, err
	}
	return sealer, nil
}

// storeWhere names the store of cfg in messages: its file, or its database without the
// password.
func storeWhere(cfg serveConfig) string {
	if cfg.onPostgres() {
		return "the PostgreSQL database " + redactURL(cfg.Database)
	}
	return filepath.Join(cfg.Data, "payouts.db")
}

// writeFaults are the tests' faults of the database writer (a full disk, a stalled disk), by
// data directory: bolt.Options.Fault.
var writeFaults sync.Map // data dir → func() error

// redactURL is a database URL without its password, for logs.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

// openEngine opens the store at where, a data directory or a postgres:// URL, without a
// sealer: `payouts migrate` copies sealed secrets as they are.
func openEngine(ctx context.Context, where string) (rules.Storage, error) {
	if isPostgresURL(where) {
		return postgres.Open(ctx, where, postgres.Options{})
	}
	return bolt.Open(filepath.Join(where, "payouts.db"), bolt.Options{})
}

// sharedSecretsGiven refuses to run on PostgreSQL without the secrets every instance must
// share: generated per data directory, two instances would each seal, tokenize and sign
// with their own. None of them is ever stored in the database.
func sharedSecretsGiven(c serveConfig) error {
	var missing []string
	for _, k := range []struct{ flag, value string }{
		{"--master-key(-file)", c.MasterKey}, {"--card-key(-file)", c.CardKey},
		{"--notification-key-file", c.NotificationKeyFile}, {"--admin-token(-file)", c.AdminToken},
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

// sealFor seals a merchant's API secret, bound to its id.
func sealFor(s *store.Sealer) func([]byte, string) []byte {
	return func(plain []byte, id string) []byte { return s.Seal(plain, []byte("merchant-secret:"+id)) }
}

// merchantSource lets the API open sealed secrets without knowing the key.
type merchantSource struct {
	db     rules.Storage
	sealer *store.Sealer
}

func (m merchantSource) Merchant(id string) (*rules.Merchant, error) { return m.db.Merchant(id) }
func (m merchantSource) OpenSecret(x *rules.Merchant, sealed []byte) (string, error) {
	b, err := m.sealer.Open(sealed, []byte("merchant-secret:"+x.ID))
	return string(b), err
}

// MinAdminTokenLength is the shortest admin token the server starts with: the admin API
// can create merchants and move balances, so its token must not be guessable.
const MinAdminTokenLength = 24

func adminToken(cfg serveConfig, stdout io.Writer) (string, error) {
	if cfg.AdminToken != "" {
		if len(cfg.AdminToken) < MinAdminTokenLength {
			return "", fmt.Errorf("--admin-token must be at least %d characters", MinAdminTokenLength)
		}
		return cfg.AdminToken, nil
	}
	path := filepath.Join(cfg.Data, "admin-token")
	b, err := os.ReadFile(path)
	if err == nil {
		tok := strings.TrimSpace(string(b))
		if len(tok) < MinAdminTokenLength {
			return "", fmt.Errorf("the admin token in %s must be at least %d characters", path, MinAdminTokenLength)
		}
		return tok, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	tok := "adm_" + api.NewCredentials().APIKey[3:]
	if err := store.WriteFileOnce(path, []byte(tok+"\n"), 0o600); errors.Is(err, os.ErrExist) {
		return adminToken(cfg, stdout) // another first start wrote it
	} else if err != nil {
		return "", err
	}
	fmt.Fprintf(stdout, "admin token (stored in %s, shown once): %s\n", path, tok)
	return tok, nil
}

func serve(ctx context.Context, cfg serveConfig, stdout, stderr io.Writer) error {
	logger := newLogger(cfg.LogFormat, cfg.LogLevel, stderr)
	if os.Getenv("GOGC") == "" {
		// The live heap is a few MiB (records live in the mmap'd file), so the default
		// target would collect dozens of times a second under load: trade some memory for
		// CPU (+15% created payouts per second in BenchmarkCreatePayouts).
		debug.SetGCPercent(400)
	}
	// The address first: when it is taken, nothing is created (no data directory, no admin
	// token, no demo merchant) and nothing is printed as shown once.
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("%w (another payouts running? --addr 127.0.0.1:9090 picks another port)", err)
	}
	if cfg.BenchSeedFrom != "" {
		if err := seedDataDir(cfg.Data, cfg.BenchSeedFrom); err != nil {
			ln.Close()
			return err
		}
	}
	db, sealer, err := openStorage(ctx, cfg)
	if err != nil {
		ln.Close()
		return err
	}
	draining := false // the drain closes the store itself, within its timeout
	defer func() {
		if !draining {
			db.Close()
		}
	}()
	token, err := adminToken(cfg, stdout)
	if err != nil {
		ln.Close()
		return err
	}
	base := reachableBase(ln.Addr())
	if cfg.PublicURL == "" {
		cfg.PublicURL, cfg.publicURLFromProxy = base, true
	}
	app, err := newApp(ctx, cfg, db, sealer, logger, token)
	if err != nil {
		ln.Close()
		return err
	}
	if !cfg.NoDemo && !cfg.onPostgres() { // on PostgreSQL, instances starting together would each seed one
		if err := seedDemo(db, sealer, app, base, adminTokenSource(cfg), stdout); err != nil {
			ln.Close()
			app.stop()
			return err
		}
	}
	srv := &http.Server{
		Handler:           app.handler,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	for _, f := range app.onShutdown {
		srv.RegisterOnShutdown(f)
	}
	if cfg.PprofAddr != "" {
		stopPprof, err := servePprof(cfg.PprofAddr, logger)
		if err != nil {
			ln.Close()
			app.stop()
			return err
		}
		defer stopPprof()
	}
	errc := make(chan error, 2)
	go func() { errc <- srv.Serve(ln) }()
	if cfg.MetricsAddr != "" {
		// Metrics on a listener of their own (a private interface, for the scraper), without
		// the admin token; it closes with the server.
		mln, err := net.Listen("tcp", cfg.MetricsAddr)
		if err != nil {
			srv.Close()
			app.stop()
			return fmt.Errorf("--metrics-addr: %w", err)
		}
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", app.metrics)
		msrv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ErrorLog: srv.ErrorLog}
		go msrv.Serve(mln)
		defer msrv.Close()
		fmt.Fprintf(stdout, "metrics served on http://%s/metrics\n", mln.Addr())
	}
	where := "data " + cfg.Data
	if cfg.onPostgres() {
		where = "PostgreSQL " + redactURL(cfg.Database)
	}
	fmt.Fprintf(stdout, "dashboard %s/dashboard (sign in with the admin token), API reference %s/docs\n", base, base)
	fmt.Fprintf(stdout, "payouts %s listening on %s (%s, sandbox %v)\n", versionString(), base, where, cfg.Sandbox)
	logger.Info("listening", "addr", base, "version", versionString())

	select {
	case err := <-errc:
		app.stop()
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down: draining requests", "drain_timeout", cfg.DrainTimeout.String())
	draining = true
	return drain(cfg.DrainTimeout, logger, srv, app, db)
}

// drain stops the server within timeout (issue 21): requests, then the workers, then the
// store each get what is left of it; whatever has not finished by then is abandoned and
// logged, and the process exits anyway. A stalled disk must not keep a SIGTERM waiting for
// ever: what was not committed was never acknowledged.
func drain(timeout time.Duration, logger *slog.Logger, srv *http.Server, a *app, db rules.Storage) error {
	deadline := time.Now().Add(timeout)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	var abandoned []string
	if err := srv.Shutdown(ctx); err != nil {
		srv.Close()
		abandoned = append(abandoned, "requests still running (their connections closed)")
	}
	if !finishBy(deadline, a.stop) {
		abandoned = append(abandoned, "the workers (lifecycle, deliveries) in the middle of a step")
	}
	if !finishBy(deadline, func() { db.Close() }) {
		abandoned = append(abandoned, "the database, not closed")
	}
	if len(abandoned) == 0 {
		logger.Info("stopped cleanly")
		return nil
	}
	why := ""
	if h, ok := db.(rules.WriterHealth); ok {
		why = h.WriterStalled()
	}
	logger.Error("shutdown: drain timeout reached; abandoned what had not finished (nothing of it was acknowledged)",
		"abandoned", abandoned, "writer", why, "drain_timeout", timeout.String())
	return fmt.Errorf("shutdown: after %s abandoned %s", timeout, strings.Join(abandoned, "; "))
}

// finishBy runs fn and reports whether it returned before deadline; if not, it is left
// running.
func finishBy(deadline time.Time, fn func()) bool {
	done := make(chan struct{})
	go func() { fn(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(time.Until(deadline)):
		return false
	}
}

// app is the running service: its handler and the workers behind it.
type app struct {
	auth    *api.Authenticator
	metrics http.Handler
	handler http.Handler
	service *rules.Service
	fund    func(ctx context.Context, merchantID, country, currency string, amount int64) (rules.Balance, error)
	stops   []func()
	// onShutdown end the long-lived requests when the server shuts down (http.Server.RegisterOnShutdown).
	onShutdown []func()
}

func (a *app) stop() {
	for i := len(a.stops) - 1; i >= 0; i-- {
		a.stops[i]()
	}
}

// wiring holds the parts of a running service while newApp assembles them; each feature's
// wire function (main_*.go) adds its routes, hooks and workers.
type wiring struct {
	cfg     serveConfig
	db      rules.Storage
	sealer  *store.Sealer
	logger  *slog.Logger
	now     func() time.Time
	keys    *api.Keyring
	metrics *api.Metrics
	lc      *rules.Lifecycle
	svc     *rules.Service
	deps    *api.Deps
	// routes register more handlers on the router once it exists.
	routes []func(r chi.Router, a huma.API)
	// workers run until shutdown, in the background.
	workers []func(ctx context.Context)

	// realNow is real time (signatures, tokens); now is the service's clock, which in the
	// sandbox is the test clock over it (issue 15). kicks wake the workers that sleep until
	// a due time, when the test clock moves.
	realNow   func() time.Time
	clock     *rules.SandboxClock
	kicks     []func()
	scripts   *rules.ScriptBook
	directory *rules.SimulatedDirectory
	// onShutdown run when the server starts shutting down, before it waits for the open
	// requests: long-lived ones (the event streams) end there.
	onShutdown []func()
	// cards is the card form (wireCards), which the dashboard reopens (issue 25).
	cards *web.Cards
	// batches are the merchants' batches (wireBatches), which the dashboard uploads too.
	batches *rules.Batches
}

// serverClock is the service's real clock; the tests of the published signing vectors (signed
// in 2023) set it back, and nothing else changes it. In the sandbox the test clock (issue 15)
// runs over it for everything but signatures and tokens.
var serverClock = time.Now

func newApp(ctx context.Context, cfg serveConfig, db rules.Storage, sealer *store.Sealer, logger *slog.Logger, token string) (*app, error) {
	w := &wiring{cfg: cfg, db: db, sealer: sealer, logger: logger, now: serverClock, realNow: serverClock}
	if cfg.Sandbox { // --sandbox=false ignores any offset a sandbox run left
		clock, err := rules.NewSandboxClock(serverClock, db)
		if err != nil {
			return nil, err
		}
		w.clock, w.now = clock, clock.Now
	}
	w.keys = api.NewKeyring(merchantSource{db, sealer})
	w.metrics = api.NewMetrics(func() float64 { return float64(db.OutboxDepth()) })
	w.scripts, w.directory = &rules.ScriptBook{Store: db}, &rules.SimulatedDirectory{Store: db}
	if g, ok := db.(rules.GaugeSource); ok {
		w.metrics.AddGauges(g)
	}
	if cfg.onPostgres() {
		w.shareWithOtherInstances()
	}
	var rail rules.Rail = &rules.SimulatedRail{Delay: cfg.SandboxDelay, BatchDelay: cfg.SandboxBatchDelay, Now: w.now,
		Scripts: w.scripts.Rules, Directory: w.directory}
	if !cfg.Sandbox {
		rail = rules.UnconnectedRail{}
	}
	w.lc = &rules.Lifecycle{
		Store:     db,
		Rail:      func(rules.Channel) rules.Rail { return rail },
		Merchants: w.keys.Merchant,
		Now:       w.now,
		Log:       logger,
		OnFinal:   func(p *rules.Payout, m *rules.Merchant) []rules.Event { return rules.OutcomeEvents(p, m, w.now()) },
		Finished:  w.metrics.Finished,
	}
	if cfg.onPostgres() {
		w.lc.Workers = 2 // its rounds wait on round trips (rules.Lifecycle.Workers); bbolt's on its one writer
	}
	w.svc = &rules.Service{Store: db, Now: w.now, Admit: w.lc.Admit, Created: func(p *rules.Payout) {
		w.metrics.Created(p)
		if p.Status.Final() && w.lc.Finished != nil { // rejected as it was admitted (NO_BALANCE)
			w.lc.Finished(p)
		}
		w.lc.Kick()
	}}
	w.deps = &api.Deps{
		Service:                  w.svc,
		Store:                    db,
		Keys:                     w.keys,
		Auth:                     api.NewAuthenticator(w.keys, w.realNow, cfg.RateLimit),
		Seal:                     sealFor(sealer),
		AdminToken:               token,
		AdminFailures:            api.NewFailureLimiter(api.AuthFailuresPerMinute), // the dashboard's sign-in counts here too
		TrustedProxies:           cfg.TrustedProxies,
		AllowHTTPNotificationURL: cfg.AllowPrivateNotifURL,
		Sandbox:                  cfg.Sandbox,
		PublicURL:                cfg.PublicURL,
		Logger:                   logger,
		Observe:                  w.metrics.Observe,
		Fund:                     w.lc.Fund,
		Simulate: func(ctx context.Context, merchantID string, id int64, stage rules.Stage, status rules.Status) (*rules.Payout, error) {
			return w.lc.Settle(ctx, merchantID, id, status, "", "")
		},
	}
	w.routes = append(w.routes, func(r chi.Router, _ huma.API) { r.Handle("/metrics", w.metrics.Handler()) })
	w.workers = append(w.workers, w.lc.Run)
	if err := w.wireNotifications(); err != nil {
		return nil, err
	}
	w.wireBatches()
	if err := w.wireCards(); err != nil {
		return nil, err
	}
	if err := w.wireSandbox(); err != nil {
		return nil, err
	}
	w.wireUsers()
	w.wireDashboard()
	w.wireLedger()
	w.deps.Extra = func(r chi.Router, a huma.API) {
		for _, add := range w.routes {
			add(r, a)
		}
	}
	a := &app{service: w.svc, fund: w.lc.Fund, auth: w.deps.Auth, metrics: w.metrics.Handler(), onShutdown: w.onShutdown}
	a.handler, _ = api.New(*w.deps)

	workCtx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, run := range w.workers {
		wg.Add(1)
		go func() { defer wg.Done(); run(workCtx) }()
	}
	a.stops = append(a.stops, func() { cancel(); wg.Wait() })
	return a, nil
}

// sharedCacheTTL is how long an instance on PostgreSQL trusts what it cached of a merchant
// (keys, settings, scripted sandbox rules): another instance may have changed it.
const sharedCacheTTL = 2 * time.Second

// shareWithOtherInstances makes this instance see, within seconds, what another instance on
// the same PostgreSQL changed in what it caches: merchants, scripted sandbox rules and the
// sandbox clock.
func (w *wiring) shareWithOtherInstances() {
	w.keys.TTL, w.scripts.TTL = sharedCacheTTL, sharedCacheTTL
	if w.clock == nil {
		return
	}
	w.workers = append(w.workers, func(ctx context.Context) {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if err := w.clock.Sync(); err != nil && ctx.Err() == nil {
					w.logger.Warn("sandbox clock: reading the shared offset failed", "err", err)
				}
			}
		}
	})
}

// seedDemo creates the demo merchant on a first start with an empty database: every product
// on (not PSP, which only adds a requirement), balances funded, and a signed request printed
// ready to paste.
func seedDemo(db rules.Storage, sealer *store.Sealer, a *app, base, tokenSource string, stdout io.Writer) error {
	ms, err := db.Merchants()
	if err != nil {
		return err
	}
	if len(ms) > 0 {
		id := ms[0].ID
		for _, m := range ms {
			if m.Name == demoName {
				id = m.ID
				break
			}
		}
		fmt.Fprintf(stdout, restartText, len(ms), base, id, tokenSource)
		return nil
	}
	m, c, err := api.CreateMerchant(db, sealFor(sealer), "", demoName, rules.AllSettings(), time.Now())
	if err != nil {
		return err
	}
	for _, f := range []struct {
		country, currency string
		amount            int64
	}{{"COL", "COP", 100_000_000_000}, {"PER", "PEN", 1_000_000_000}, {"PER", "USD", 100_000_000}} {
		if _, err := a.fund(context.Background(), m.ID, f.country, f.currency, f.amount); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, demoText, m.ID, c.APIKey, c.APISecret, base)
	return nil
}

// demoName is the demo merchant's name, by which a restart finds it.
const demoName = "Demo Merchant"

// restartText is what a start over a database with merchants says instead of credentials:
// how to get new ones (the key rotation of the admin API, or the CLI with the server stopped).
const restartText = `%d merchant(s) in the database; their secrets were shown once, when issued. New credentials for merchant %[3]s (the old ones keep working 24 h):
  while it runs:           curl -sS -X POST %[2]s/admin/v1/merchants/%[3]s/keys -H "Authorization: Bearer %[4]s"
  with the server stopped: payouts merchant keys --id %[3]s --new
  (or the dashboard: Merchants, then the merchant's API keys)
`

// adminTokenSource is a shell expression that gives the admin token, for the printed commands.
func adminTokenSource(cfg serveConfig) string {
	if cfg.AdminToken != "" {
		return "$PAYOUTS_ADMIN_TOKEN" // given with --admin-token(-file): the operator has it
	}
	return "$(cat " + shellQuote(filepath.Join(cfg.Data, "admin-token")) + ")"
}

const demoText = `
Demo merchant created (credentials shown once; every product on; balances funded in COP, PEN and USD):
  merchantId %s
  apiKey     %s
  apiSecret  %s

Paste this to create a payout (any POSIX shell with openssl and curl; Linux or macOS):

MID=%[1]s KEY='%[2]s' SECRET='%[3]s' BASE='%[4]s'
BODY='{"country":"PER","amount":100000,"currency":"PEN","orderId":"DEMO-'$(date +%%s)'","beneficiary":{"name":"Ana","lastName":"Quispe","email":"ana.quispe@gmail.com","document":{"type":1,"number":"45678912"}},"destination":{"bankAccount":{"bankCode":"002","accountType":2,"accountNumber":"19312345678012"}}}'
P=/api/v1/$MID/payouts; TS=$(date +%%s)
HASH=$(printf '%%s' "$BODY" | openssl dgst -sha256 | sed 's/^.* //')
SIG=$(printf '%%s' "POST:$P?timestamp=$TS:$HASH" | openssl dgst -sha256 -hmac "$SECRET" | sed 's/^.* //')
curl -sS -X POST "$BASE$P?timestamp=$TS&signature=$SIG" -H "monnet-api-key: $KEY" -H 'Content-Type: application/json' -d "$BODY"

Then watch it settle on the dashboard, %[4]s/dashboard (sign in with the admin token), and read the
API at %[4]s/docs. Lost these credentials? payouts merchant keys --id %[1]s --new (server stopped).

`

func merchantCreate(args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("merchant create", flag.ContinueOnError)
	fs.SetOutput(stderr)
	data := fs.String("data", "./data", "data directory")
	id := fs.String("id", "", "merchant id (default: the next number)")
	name := fs.String("name", "", "merchant name (required)")
	s := rules.DefaultSettings()
	fs.BoolVar(&s.PSP, "psp", false, "payment service provider: subMerchantInfo required")
	fs.BoolVar(&s.EmailNotifications, "email-notifications", false, "email beneficiaries the outcome")
	fs.BoolVar(&s.CardPayouts, "card-payouts", false, "Peru card push payments")
	fs.BoolVar(&s.CardOnFile, "card-on-file", true, "keep cards for later payouts")
	fs.BoolVar(&s.CashPayouts, "cash-payouts", false, "Colombia cash")
	fs.BoolVar(&s.RealTimePhoneAccount, "real-time-phone-account", false, "Colombia real-time by phone/account")
	fs.BoolVar(&s.RealTimeKey, "real-time-key", false, "Colombia Bre-B keys")
	fs.BoolVar(&s.PendingOnNoBalance, "pending-on-no-balance", false, "hold short payouts as PENDING_BALANCE")
	fs.StringVar(&s.NotificationURL, "notification-url", "", "where outcomes are POSTed, signed")
	origins := fs.String("allowed-origins", "", "comma-separated origins that may embed the card iframe")
	allowHTTP := fs.Bool("allow-private-notification-urls", false, "let --notification-url be http (development), as the server flag")
	database := fs.String("database", "", "a postgres:// URL to create the merchant there (default: the bbolt file in --data)")
	masterKeyFile := fs.String("master-key-file", "", "with --database: the instances' master key file")
	if err := envFlags(fs, args, getenv); err != nil {
		return err
	}
	cfg := serveConfig{Data: *data, Database: *database}
	if *masterKeyFile != "" {
		k, err := store.ReadSecretFile(*masterKeyFile)
		if err != nil {
			return fmt.Errorf("--master-key-file: %w", err)
		}
		cfg.MasterKey = k
	}
	if cfg.Database != "" && !cfg.onPostgres() {
		return errors.New("--database must be a postgres:// URL")
	}
	if *origins != "" {
		s.AllowedOrigins = strings.Split(*origins, ",")
	}
	// The same checks as the admin API and the dashboard.
	if errs := rules.CheckSettings(s, *allowHTTP); len(errs) > 0 {
		return fmt.Errorf("merchant create: %s: %s", errs[0].Field, errs[0].Message)
	}
	db, sealer, err := openStorage(context.Background(), cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	m, c, err := api.CreateMerchant(db, sealFor(sealer), *id, *name, s, time.Now())
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(api.NewMerchantView{MerchantID: m.ID, APIKey: c.APIKey, APISecret: c.APISecret, Name: m.Name, Settings: m.Settings})
}

func backup(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("backup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	data := fs.String("data", "./data", "data directory")
	out := fs.String("out", "", "file to write (required)")
	addr := fs.String("addr", "127.0.0.1:8080", "address of a running server")
	token := fs.String("admin-token", "", "admin token (default: the one in the data dir)")
	if err := envFlags(fs, args, getenv); err != nil {
		return err
	}
	if *out == "" {
		return errors.New("backup: --out FILE is required")
	}
	tmp := *out + ".partial"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	n, err := backupTo(ctx, f, *data, *addr, *token)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, *out); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "backup: %d bytes written to %s\n", n, *out)
	return nil
}

// backupTo copies the database offline when no server holds it, else through the admin API.
func backupTo(ctx context.Context, w io.Writer, data, addr, token string) (int64, error) {
	db, err := bolt.Open(filepath.Join(data, "payouts.db"), bolt.Options{})
	if err == nil {
		defer db.Close()
		return db.Backup(w)
	}
	if !strings.Contains(err.Error(), "in use by another process") {
		return 0, err
	}
	if token == "" {
		b, err := os.ReadFile(filepath.Join(data, "admin-token"))
		if err != nil {
			return 0, fmt.Errorf("the database is in use and no admin token was given: %w", err)
		}
		token = strings.TrimSpace(string(b))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/admin/v1/backup", nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("backup from the running server: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("backup from the running server: %s", resp.Status)
	}
	return io.Copy(w, resp.Body)
}
