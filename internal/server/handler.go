package server

import (
	"context"
	"io"
	"log/slog"
	"net/http"
)

// NewServer is the HTTP server Run serves, with its handler, its timeouts and the workers
// behind it, over the store cfg names, but without Run's listeners, HTTPS, demo seed,
// tracing or metrics listener: what an in-process test serves (internal/servertest, on an
// httptest listener) to test requests and answers against the real application. base is
// the URL the server is reached at. stop ends the workers and closes the store; the caller
// shuts the server down (its Shutdown ends the event streams) before calling it.
func NewServer(ctx context.Context, cfg Config, opts Options, base string, logs io.Writer) (srv *http.Server, stop func(), err error) {
	if err := cfg.Check(); err != nil {
		return nil, nil, err
	}
	logger := newLogger(cfg.Log.Format, cfg.Log.Level, logs)
	db, sealer, err := open(ctx, cfg, opts, nil, 0)
	if err != nil {
		return nil, nil, err
	}
	token, err := adminToken(cfg, io.Discard)
	if err != nil {
		db.Close(ctx)
		return nil, nil, err
	}
	run := running{getenv: func(string) string { return "" }, publicURL: cfg.HTTP.PublicURL}
	if run.publicURL == "" {
		run.publicURL, run.publicURLFromProxy = base, true
	}
	app, err := newApp(ctx, cfg, run, opts, db, sealer, logger, token)
	if err != nil {
		db.Close(ctx)
		return nil, nil, err
	}
	stop = func() {
		app.stop()
		db.Close(context.Background())
	}
	return newHTTPServer(app, slog.NewLogLogger(logger.Handler(), slog.LevelWarn)), stop, nil
}
