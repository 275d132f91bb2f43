package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"strings"
	"time"

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

// Run serves until ctx ends, then drains within cfg.DrainTimeout. It prints what an operator
// needs on stdout (the address, the admin token on first start, the demo merchant) and logs
// on stderr. getenv reads the environment (GOGC, the OTEL_ variables of tracing.go).
func Run(ctx context.Context, cfg Config, opts Options, getenv func(string) string, stdout, stderr io.Writer) error {
	if err := cfg.Check(); err != nil {
		return err
	}
	cfg.getenv = getenv
	logger := newLogger(cfg.LogFormat, cfg.LogLevel, stderr)
	if getenv("GOGC") == "" && getenv("GOMEMLIMIT") == "" {
		// The live heap is a few tens of MiB (records live in the mapped file), so the
		// default target would collect dozens of times a second under load: trade memory for
		// CPU. At 1600 % the creates benchmark ran 7–10 % faster than at 400 % with 10 %
		// less CPU a create (and p99 1–2 ms lower), for about 130 MiB more resident memory
		// (264 against 136 MiB at the end of a run); the soft limit makes the collector run
		// sooner rather than let the heap pass 1 GiB. GOGC or GOMEMLIMIT set by the operator
		// decide instead.
		debug.SetGCPercent(1600)
		debug.SetMemoryLimit(1 << 30)
	}
	// The key files are only looked at: a FIFO or a device refused here, before the port.
	if err := checkKeyFiles(cfg, logger); err != nil {
		return err
	}
	// The address first: when it is taken, nothing is created (no data directory, no admin
	// token, no demo merchant) and nothing is printed as shown once.
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return listenError("--addr", err)
	}
	// With --https or --tls-cert: the plain HTTP listener and the certificate files (https.go).
	https, err := listenHTTPS(cfg, logger)
	if err != nil {
		ln.Close()
		return err
	}
	defer https.stop()
	if cfg.BenchSeedFrom != "" {
		if err := seedDataDir(cfg.Data, cfg.BenchSeedFrom); err != nil {
			ln.Close()
			return err
		}
	}
	if cfg.tracing, err = startTracing(cfg, getenv, logger); err != nil {
		ln.Close()
		return err
	}
	var tracingBy time.Time // the drain's deadline once it started; zero before
	defer func() { cfg.tracing.stop(tracingBy, logger) }()
	db, sealer, err := open(ctx, cfg, opts)
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
	base := https.reachableBase(ln.Addr())
	if cfg.PublicURL == "" {
		cfg.PublicURL, cfg.publicURLFromProxy = base, true
	}
	app, err := newApp(cfg, opts, db, sealer, logger, token)
	if err != nil {
		ln.Close()
		return err
	}
	if err := https.start(app, db, sealer, ln.Addr(), stdout); err != nil {
		ln.Close()
		app.stop()
		return err
	}
	if !cfg.NoDemo && !cfg.OnPostgres() { // on PostgreSQL, instances starting together would each seed one
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
	go func() { errc <- https.serve(srv, ln) }()
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
	if cfg.OnPostgres() {
		where = "PostgreSQL " + RedactURL(cfg.Database)
	}
	fmt.Fprintf(stdout, "dashboard %s/dashboard (sign in with the admin token), API reference %s/docs\n", base, base)
	fmt.Fprintf(stdout, "payouts %s listening on %s (%s, sandbox %v)\n", Version(), base, where, cfg.Sandbox)
	logger.Info("listening", "addr", base, "version", Version())

	select {
	case err := <-errc:
		app.stop()
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down: draining requests", "drain_timeout", cfg.DrainTimeout.String())
	draining = true
	tracingBy = time.Now().Add(cfg.DrainTimeout) // the last spans are exported within the drain
	return drain(cfg.DrainTimeout, logger, srv, app, db)
}

// drain stops the server within timeout: requests, then the workers, then the store each
// get what is left of it; whatever has not finished by then is abandoned and logged, and the
// process exits anyway. A stalled disk must not keep a SIGTERM waiting for ever: what was
// not committed was never acknowledged.
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
