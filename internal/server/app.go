package server

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"payouts/api"
	"payouts/rules"
	"payouts/rules/merchants"
	"payouts/rules/sandbox"
	"payouts/rules/workers"
	"payouts/store"
	"payouts/web"
)

// app is the running service: its handler and the workers behind it.
type app struct {
	metrics http.Handler
	handler http.Handler
	fund    func(ctx context.Context, merchantID, country, currency string, amount int64) (rules.Balance, error)
	stops   []func()
	// onShutdown end the long-lived requests when the server shuts down (http.Server.RegisterOnShutdown).
	onShutdown []func()
	// merchants creates merchants (the demo seed) as the admin API does.
	merchants *merchants.Service
}

func (a *app) stop() {
	for i := len(a.stops) - 1; i >= 0; i-- {
		a.stops[i]()
	}
}

// wiring holds the parts of a running service while newApp assembles them; each feature's
// wire function (one file each) fills its part of the API's dependencies and adds its hooks
// and workers.
type wiring struct {
	cfg     Config
	run     running
	opts    Options
	db      rules.Storage
	sealer  *store.Sealer
	logger  *slog.Logger
	now     func() time.Time
	keys    *api.Keyring
	metrics *api.Metrics
	lc      *workers.Lifecycle
	svc     *rules.Service
	deps    *api.Deps
	// workers run until shutdown, in the background.
	workers []func(ctx context.Context)

	// realNow is real time (signatures, tokens); now is the service's clock, which in the
	// sandbox is the test clock over it. kicks wake the workers that sleep until a due time,
	// when the test clock moves.
	realNow   func() time.Time
	clock     *sandbox.Clock
	kicks     []func()
	scripts   *sandbox.ScriptBook
	directory *sandbox.Directory
	// onShutdown run when the server starts shutting down, before it waits for the open
	// requests: long-lived ones (the event streams) end there.
	onShutdown []func()
	// notifications are the outbox lanes and the cash claims (wireNotifications), whose
	// hooks bindHooks binds.
	notifications *notifications
	// cards is the card form (wireCards), which the dashboard reopens.
	cards *web.Cards
	// batches are the merchants' batches (wireBatches), which the dashboard uploads too.
	batches *rules.Batches

	// backups is the backup scheduler (wireBackups; nil when off), whose failures the
	// dashboard shows.
	backups *backups
	// refusals count the dashboard's refused sign-ins into the audit log (wireUsers).
	refusals *rules.SignInRefusals
	// merchants creates merchants and manages their keys, for the admin API and the dashboard.
	merchants *merchants.Service
}

func newApp(ctx context.Context, cfg Config, run running, opts Options, db rules.Storage, sealer *store.Sealer, logger *slog.Logger, token string) (*app, error) {
	realNow := opts.now()
	w := &wiring{cfg: cfg, run: run, opts: opts, db: db, sealer: sealer, logger: logger, now: realNow, realNow: realNow}
	if cfg.Sandbox.On { // --sandbox=false ignores any offset a sandbox run left
		clock, err := sandbox.NewClock(ctx, realNow, db)
		if err != nil {
			return nil, err
		}
		w.clock, w.now = clock, clock.Now
	}
	w.merchants = merchants.New(db, sealer)
	w.keys = api.NewKeyring(merchantSource{db, w.merchants})
	w.metrics = api.NewMetrics(func() float64 { return float64(db.OutboxDepth(ctx)) })
	w.scripts, w.directory = &sandbox.ScriptBook{Store: db}, &sandbox.Directory{Store: db}
	if g, ok := db.(rules.GaugeSource); ok {
		w.metrics.AddGauges(g)
	}
	if cfg.OnPostgres() {
		w.shareWithOtherInstances()
	}
	var rail rules.Rail = &sandbox.Rail{Delay: cfg.Sandbox.Delay, BatchDelay: cfg.Sandbox.BatchDelay, Now: w.now,
		Scripts: w.scripts.Rules, Directory: w.directory}
	if !cfg.Sandbox.On {
		rail = rules.UnconnectedRail{}
	}
	w.lc = &workers.Lifecycle{
		Lifecycle: &rules.Lifecycle{Store: db, Merchants: w.keys.Merchant, Now: w.now, Log: logger},
		Rail:      func(rules.Channel) rules.Rail { return rail },
	}
	if cfg.OnPostgres() {
		w.lc.Workers = 2 // its rounds wait on round trips (workers.Lifecycle.Workers); bbolt's on its one writer
	}
	w.svc = &rules.Service{Store: db, Now: w.now, Admit: w.lc.Admit}
	adminFailures := api.NewFailureLimiter(api.AuthFailuresPerMinute)
	adminFailures.Now = w.realNow
	w.deps = &api.Deps{
		Service:                  w.svc,
		Store:                    db,
		Keys:                     w.keys,
		Auth:                     api.NewAuthenticator(w.keys, w.realNow, cfg.HTTP.RateLimit),
		Merchants:                w.merchants,
		AdminToken:               token,
		AdminFailures:            adminFailures, // the dashboard's sign-in counts here too
		TrustedProxies:           cfg.HTTP.TrustedProxies,
		AllowHTTPNotificationURL: cfg.Notify.AllowPrivateURLs,
		Sandbox:                  cfg.Sandbox.On,
		PublicURL:                w.run.publicURL,
		Now:                      w.now,
		Logger:                   logger,
		Observe:                  w.observe(),
		Fund:                     w.lc.Fund,
		Simulate: func(ctx context.Context, merchantID string, id int64, stage rules.Stage, status rules.Status) (*rules.Payout, error) {
			return w.lc.Settle(ctx, merchantID, id, status, "", "")
		},
		Metrics: w.metrics.Handler(),
	}
	w.workers = append(w.workers, w.lc.Run)
	if err := w.wireNotifications(ctx); err != nil {
		return nil, err
	}
	w.wireBatches()
	if err := w.wireCards(ctx); err != nil {
		return nil, err
	}
	if err := w.wireLinks(ctx); err != nil {
		return nil, err
	}
	if err := w.wireSandbox(); err != nil {
		return nil, err
	}
	w.wireUsers()
	if err := w.wireBackups(); err != nil {
		return nil, err
	}
	w.wireDashboard(ctx)
	w.wireLedger()
	w.wireTracing()
	w.bindHooks()
	a := &app{fund: w.lc.Fund, merchants: w.merchants, metrics: w.metrics.Handler(), onShutdown: w.onShutdown}
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

// bindHooks binds what reacts to a payout's create and to its outcome: this is the one
// place, and each list runs in the order written here. A feature that reacts to a new
// payout or to an outcome (a payout link, a certification run) adds its hook to these lists.
func (w *wiring) bindHooks() {
	n := w.notifications
	// In the transaction that creates a payout: the events written with it.
	w.svc.OnCreate().Bind(
		n.cashCode, // a Colombia cash payout's one-time code, sealed in the event that mails it
		n.linkMail, // a payout link's email to its beneficiary, and its reminder
	)
	// Once the create committed.
	w.svc.OnCreated().Bind(
		w.metrics.Created,
		w.finishedAsCreated,
		func(context.Context, *rules.Payout) { w.lc.Kick() },
		n.kickCashMail,
	)
	// In the transaction that records an outcome: its events.
	w.lc.OnFinal().Bind(
		rules.OutcomeEventsHook(w.now), // the beneficiary's mail, the merchant's notification
		rules.LinkEventsHook(w.now),    // a payout link that expired unused: the merchant's link event
		n.snapshotOutcome,              // their bodies as of the outcome
		n.noteEventful,                 // last: it sees every event of the outcome
	)
	// Once the outcome committed.
	w.lc.OnFinished().Bind(
		w.metrics.Finished,
		n.kickLanes,
		w.dropPayoutCard,
	)
}

// finishedAsCreated tells the lifecycle's OnFinished hooks of a payout rejected as it was
// admitted (NO_BALANCE): its outcome committed with its create.
func (w *wiring) finishedAsCreated(ctx context.Context, p *rules.Payout) {
	if p.Status.Final() {
		w.lc.OnFinished().Trigger(ctx, p)
	}
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
				if err := w.clock.Sync(ctx); err != nil && ctx.Err() == nil {
					w.logger.Warn("sandbox clock: reading the shared offset failed", "err", err)
				}
			}
		}
	})
}

// observe is what every finished request is told to: the metrics, and the slow requests'
// traces when they are on.
func (w *wiring) observe() api.Observer {
	slow := w.run.slow
	if slow == nil {
		return w.metrics.Observe
	}
	return func(route string, status int, d time.Duration) {
		w.metrics.Observe(route, status, d)
		slow.observe(route, status, d)
	}
}
