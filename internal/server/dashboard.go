package server

import (
	"context"
	"crypto/rand"
	"strings"
	"time"

	"payouts/api"
	"payouts/rules"
	"payouts/rules/merchants"
	"payouts/web/dashboard"
)

// wireDashboard adds the operators' dashboard under /dashboard and the offline API reference
// at /docs.
func (w *wiring) wireDashboard(ctx context.Context) {
	d := dashboard.New(dashboard.Config{
		Store:                    w.db,
		Outbox:                   dashOutbox{w.db},
		Sessions:                 w.db.Sessions(ctx, w.now),
		AdminToken:               w.deps.AdminToken,
		Secure:                   strings.HasPrefix(w.run.publicURL, "https://"),
		Limiter:                  api.NewSignInLimiter(w.deps.AdminFailures),
		Sandbox:                  w.cfg.Sandbox.On,
		AllowHTTPNotificationURL: w.cfg.Notify.AllowPrivateURLs,
		PasswordHashing:          w.opts.PasswordHashing,
		Settle: func(ctx context.Context, merchantID string, id int64, status rules.Status) (*rules.Payout, error) {
			return w.lc.Settle(ctx, merchantID, id, status, "", "")
		},
		Fund: w.lc.Fund,
		CreateMerchant: func(id, name string, s rules.Settings) (*rules.Merchant, string, string, error) {
			m, c, err := w.merchants.Create(ctx, id, name, s, w.now())
			return m, c.APIKey, c.APISecret, err
		},
		CreatePayout: func(ctx context.Context, m *rules.Merchant, body []byte, ep rules.Endpoint) (*rules.Payout, error) {
			res, err := w.svc.CreatePayout(ctx, m, body, ep)
			if err != nil {
				return nil, err
			}
			return res.Payout, nil
		},
		Scripts: w.scripts.Rules,
		Forget:  w.keys.Forget,
		Events:  w.db,
		Ledger:  w.db,
		RotateKey: func(id string, grace time.Duration) (string, string, string, error) {
			m, c, err := w.merchants.RotateKey(ctx, id, grace, w.realNow().UTC())
			if err != nil {
				return "", "", "", err
			}
			return rules.KeyID(m.APIKeyHash), c.APIKey, c.APISecret, nil
		},
		RevokeKey: func(id, keyID string) error { return w.merchants.RevokeKey(ctx, id, keyID, w.realNow().UTC()) },
		AddRoleKey: func(id string, role rules.KeyRole) (string, string, string, error) {
			_, c, err := w.merchants.AddRoleKey(ctx, id, role, w.realNow().UTC())
			return rules.KeyID(merchants.HashAPIKey(c.APIKey)), c.APIKey, c.APISecret, err
		},
		CertifyReceiver:     w.certifyReceiver(),
		CertificationReport: w.certificationReport(),
		Batches:             w.batches,
		BatchCSV:            api.BatchResultCSV,
		Cancel:              w.lc.Cancel,
		CardForm: func(ctx context.Context, p *rules.Payout, lang string) (string, error) {
			if w.cards == nil {
				return "", nil
			}
			m, err := w.keys.Merchant(p.MerchantID)
			if err != nil {
				return "", err
			}
			// The session's length is the request's own (expirationTime), as its create's was.
			route, err := rules.Check(&p.Request, m, w.now(), rules.EndpointCard)
			if err != nil {
				return "", err
			}
			f, err := w.cards.Open(ctx, m, rules.CreateResult{Payout: p, Route: route}, lang)
			return f.URL, err
		},
		CreateLink: func(ctx context.Context, m *rules.Merchant, body []byte) (*rules.Payout, string, bool, error) {
			res, err := w.svc.CreateLink(ctx, m, body)
			if err != nil {
				return nil, "", false, err
			}
			link, err := w.deps.Link(ctx, m, res.Payout)
			return res.Payout, link, res.Created, err
		},
		LinkURL: func(ctx context.Context, m *rules.Merchant, p *rules.Payout) (string, error) {
			return w.deps.Link(ctx, m, p)
		},
		ResendLinkMail: func(ctx context.Context, m *rules.Merchant, id int64) (*rules.Payout, error) {
			p, err := w.lc.ResendLinkMail(ctx, m, id, rand.Reader)
			if err == nil {
				w.notifications.dispatcher.Kick()
			}
			return p, err
		},
		Now: w.now,
		Log: w.logger,

		Users:     w.deps.Users,
		AuditLog:  w.deps.AuditLog,
		Auditor:   w.deps.Auditor,
		PublicURL: w.run.publicURL,
		Seal:      func(plain []byte, bound string) []byte { return w.sealer.Seal(plain, []byte("dashboard-totp:"+bound)) },
		Open: func(sealed []byte, bound string) ([]byte, error) {
			return w.sealer.Open(sealed, []byte("dashboard-totp:"+bound))
		},
		RealNow:    w.realNow,
		ClientAddr: api.ClientAddr,

		Backups:        w.backupProblems(),
		SignInRefusals: w.refusals,

		KeyFiles: func() []dashboard.KeyFileWarning { return openKeyFiles(w.cfg) },
	})
	w.deps.Pages = append(w.deps.Pages, d)
}

// dashOutbox shows the store's outbox to the dashboard.
type dashOutbox struct{ db rules.Storage }

func delivery(rec rules.OutboxRecord) dashboard.Delivery {
	return dashboard.Delivery{Event: rec.Event, State: string(rec.State), DeliveredAt: rec.DeliveredAt}
}

func (o dashOutbox) list(ctx context.Context, read func(context.Context, int, func(rules.OutboxRecord) bool) ([]rules.OutboxRecord, error),
	limit int, keep func(dashboard.Delivery) bool) ([]dashboard.Delivery, error) {
	recs, err := read(ctx, limit, func(rec rules.OutboxRecord) bool { return keep == nil || keep(delivery(rec)) })
	out := make([]dashboard.Delivery, len(recs))
	for i, rec := range recs {
		out[i] = delivery(rec)
	}
	return out, err
}

func (o dashOutbox) Held(ctx context.Context, limit int, keep func(dashboard.Delivery) bool) ([]dashboard.Delivery, error) {
	return o.list(ctx, o.db.OutboxRecords, limit, keep)
}

func (o dashOutbox) Delivered(ctx context.Context, limit int, keep func(dashboard.Delivery) bool) ([]dashboard.Delivery, error) {
	return o.list(ctx, o.db.DeliveredRecords, limit, keep)
}

func (o dashOutbox) Resend(ctx context.Context, id string, now time.Time) (rules.Event, bool, error) {
	return o.db.ResendEvent(ctx, id, now)
}

func (o dashOutbox) Depth(ctx context.Context) int { return o.db.OutboxDepth(ctx) }
