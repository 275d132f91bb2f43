package server

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"payouts/api"
	"payouts/rules"
)

// version is set at build time with -ldflags "-X payouts/internal/server.version=…";
// otherwise the module's.
var version = ""

// Version is the binary's version.
func Version() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// Run serves until ctx ends, then drains within cfg.HTTP.DrainTimeout. It prints what an operator
// needs on stdout (the address, the admin token on first start, the demo merchant) and logs
// on stderr. getenv reads the environment (GOGC, the OTEL_ variables of tracing.go).
func Run(ctx context.Context, cfg Config, opts Options, getenv func(string) string, stdout, stderr io.Writer) error {
	if err := cfg.Check(); err != nil {
		return err
	}
	run := running{getenv: getenv}
	logger := newLogger(cfg.Log.Format, cfg.Log.Level, stderr)
	run.memory = setMemory(getenv, logger, processHeapFloor) // the collector's target and the soft limit within the machine (memory.go)
	// The key files are only looked at: a FIFO or a device refused here, before the port.
	if err := checkKeyFiles(cfg, logger); err != nil {
		return err
	}
	// What Run opens goes onto one stack, closed in reverse on the way out: at once on a
	// failure, within the drain timeout on shutdown.
	var opened closers
	defer opened.unwind(context.Background())
	// The address first: when it is taken, nothing is created (no data directory, no admin
	// token, no demo merchant) and nothing is printed as shown once.
	ln, err := net.Listen("tcp", cfg.HTTP.Addr)
	if err != nil {
		return listenError("--addr", err)
	}
	opened.push("", func(context.Context) error { return ln.Close() }) // the server's shutdown closes it first
	// With --https or --tls-cert: the plain HTTP listener and the certificate files (https.go).
	https, err := listenHTTPS(cfg, logger)
	if err != nil {
		return err
	}
	opened.push("", func(context.Context) error { https.stop(); return nil })
	if cfg.Storage.BenchSeedFrom != "" {
		if err := seedDataDir(cfg.Storage.Data, cfg.Storage.BenchSeedFrom); err != nil {
			return err
		}
	}
	if run.tracing, err = startTracing(cfg, getenv, logger); err != nil {
		return err
	}
	opened.push("", func(ctx context.Context) error {
		by, _ := ctx.Deadline() // the last spans are exported within the drain
		run.tracing.stop(by, logger)
		return nil
	})
	if cfg.HTTP.SlowTraceDir != "" {
		if run.slow, err = startSlowTraces(cfg.HTTP.SlowTraceDir, cfg.HTTP.SlowTraceOver,
			[]string{http.MethodGet + " " + api.EventStreamPath}, time.Now, logger); err != nil {
			return err
		}
		opened.push("", func(context.Context) error { run.slow.stop(); return nil })
	}
	db, sealer, err := open(ctx, cfg, opts, run.tracing, mappedBudget(run.memory))
	if err != nil {
		return err
	}
	opened.push("the database, not closed", func(ctx context.Context) error { db.Close(ctx); return nil })
	token, err := adminToken(cfg, stdout)
	if err != nil {
		return err
	}
	base := https.reachableBase(ln.Addr())
	run.publicURL = cfg.HTTP.PublicURL
	if run.publicURL == "" {
		run.publicURL, run.publicURLFromProxy = base, true
	}
	app, err := newApp(ctx, cfg, run, opts, db, sealer, logger, token)
	if err != nil {
		return err
	}
	opened.push("the workers (lifecycle, deliveries) in the middle of a step", func(context.Context) error { app.stop(); return nil })
	if err := https.start(app, db, sealer, ln.Addr(), stdout); err != nil {
		return err
	}
	if !cfg.Sandbox.NoDemo && !cfg.OnPostgres() { // on PostgreSQL, instances starting together would each seed one
		if err := seedDemo(ctx, db, app, base, adminTokenSource(cfg), stdout); err != nil {
			return err
		}
	}
	if cfg.HTTP.PprofAddr != "" {
		stopPprof, err := servePprof(cfg.HTTP.PprofAddr, logger)
		if err != nil {
			return err
		}
		opened.push("", func(context.Context) error { stopPprof(); return nil })
	}
	errorLog := slog.NewLogLogger(logger.Handler(), slog.LevelWarn)
	ready := Listening{URL: base}
	if cfg.HTTP.MetricsAddr != "" {
		stopMetrics, metricsAddr, err := serveMetrics(cfg.HTTP.MetricsAddr, app.metrics, errorLog, stdout)
		if err != nil {
			return err
		}
		opened.push("", func(context.Context) error { stopMetrics(); return nil })
		ready.Metrics = metricsAddr
	}
	srv := newHTTPServer(app, errorLog)
	errc := make(chan error, 1)
	go func() { errc <- https.serve(srv, ln) }()
	// First on the way out: the requests end (the drain waits for them) before the workers
	// and the store close under them.
	opened.push("requests still running (their connections closed)", func(ctx context.Context) error {
		if _, ok := ctx.Deadline(); !ok {
			return srv.Close()
		}
		if err := srv.Shutdown(ctx); err != nil {
			srv.Close()
			return err
		}
		return nil
	})
	announce(cfg, base, logger, stdout)
	if opts.Ready != nil {
		opts.Ready(ready)
	}

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down: draining requests", "drain_timeout", cfg.HTTP.DrainTimeout.String())
	return drain(cfg.HTTP.DrainTimeout, logger, &opened, db)
}

// running is what Run found and started, beside the Config it was given (which it does
// not write): the wiring reads both.
type running struct {
	// getenv reads the environment: the S3 credentials of the backups may come from it.
	getenv func(string) string
	// tracing is what Run started from Config.Tracing and the OTEL_ variables, for the
	// store and the wiring (nil: off).
	tracing *tracing
	// publicURL is Config.HTTP.PublicURL, else the listener's; publicURLFromProxy: none was
	// given, so a trusted proxy's forwarded scheme and host give the card iframe's URL.
	publicURL          string
	publicURLFromProxy bool
	// memory is the memory budget setMemory found (0: none).
	memory int64
	// slow records the execution trace for slow requests (nil: --slow-trace off).
	slow *slowTraces
}

// newHTTPServer serves the app, with its timeouts; the long-lived requests (the event
// streams) end when it shuts down.
func newHTTPServer(app *app, errorLog *log.Logger) *http.Server {
	srv := &http.Server{
		Handler:           app.handler,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          errorLog,
	}
	for _, f := range app.onShutdown {
		srv.RegisterOnShutdown(f)
	}
	return srv
}

// serveMetrics serves the metrics on a listener of their own (a private interface, for the
// scraper), without the admin token, until stop.
func serveMetrics(addr string, metrics http.Handler, errorLog *log.Logger, stdout io.Writer) (stop func(), bound string, err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", fmt.Errorf("--metrics-addr: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metrics)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ErrorLog: errorLog}
	go srv.Serve(ln)
	fmt.Fprintf(stdout, "metrics served on http://%s/metrics\n", ln.Addr())
	return func() { srv.Close() }, ln.Addr().String(), nil
}

// announce tells the operator where the server listens.
func announce(cfg Config, base string, logger *slog.Logger, stdout io.Writer) {
	where := "data " + cfg.Storage.Data
	if cfg.OnPostgres() {
		where = "PostgreSQL " + RedactURL(cfg.Storage.Database)
	}
	fmt.Fprintf(stdout, "dashboard %s/dashboard (sign in with the admin token), API reference %s/docs\n", base, base)
	fmt.Fprintf(stdout, "payouts %s listening on %s (%s, sandbox %v)\n", Version(), base, where, cfg.Sandbox.On)
	logger.Info("listening", "addr", base, "version", Version())
}

// closers are what Run opened, closed in the reverse order, once. A closer with a name is
// bounded by the drain: one that has not finished by its deadline is left running and
// named; the others are quick, or bound themselves by the context's deadline.
type closers []closer

type closer struct {
	abandoned string // what is left behind when the drain gives up on it; "": not bounded
	close     func(ctx context.Context) error
}

func (cs *closers) push(abandoned string, close func(ctx context.Context) error) {
	*cs = append(*cs, closer{abandoned, close})
}

// unwind closes everything in reverse order and empties the stack. Under a deadline (the
// drain) a named closer gets what is left of it, and unwind returns those that did not
// finish in time or failed; without one each is waited for.
func (cs *closers) unwind(ctx context.Context) (abandoned []string) {
	all := *cs
	*cs = nil
	deadline, bounded := ctx.Deadline()
	for i := len(all) - 1; i >= 0; i-- {
		c := all[i]
		if !bounded || c.abandoned == "" {
			c.close(ctx)
			continue
		}
		var err error
		if !finishBy(deadline, func() { err = c.close(ctx) }) || err != nil {
			abandoned = append(abandoned, c.abandoned)
		}
	}
	return abandoned
}

// drain stops the server within timeout: requests, then the workers, then the store each
// get what is left of it; whatever has not finished by then is abandoned and logged, and the
// process exits anyway. A stalled disk must not keep a SIGTERM waiting for ever: what was
// not committed was never acknowledged.
func drain(timeout time.Duration, logger *slog.Logger, opened *closers, db rules.Storage) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	abandoned := opened.unwind(ctx)
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

// reachableBase is the URL a local client uses for the listener: an unspecified address
// (--addr :8080 or 0.0.0.0:8080) is reached at 127.0.0.1.
func reachableBase(addr net.Addr) string {
	if tcp, ok := addr.(*net.TCPAddr); ok && (tcp.IP == nil || tcp.IP.IsUnspecified()) {
		return fmt.Sprintf("http://127.0.0.1:%d", tcp.Port)
	}
	return "http://" + addr.String()
}

// newLogger writes to w in the format given, or, when none is given, in text on a terminal
// and JSON elsewhere.
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
