package server

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"payouts/api"
	"payouts/rules"
	"payouts/rules/workers"
	"payouts/store"
	"payouts/web/notify"
)

// wireNotifications adds the outbox dispatcher, beneficiary emails, the cash OTP and the
// signed merchant notifications.
func (w *wiring) wireNotifications(ctx context.Context) error {
	n, err := w.newNotifications(ctx)
	if err != nil {
		return err
	}
	n.install(w)
	return nil
}

// notifications are the parts wireNotifications assembles; tests drive the dispatcher and
// the claims with their own clock.
type notifications struct {
	dispatcher  *workers.Dispatcher // the mail lane: beneficiary emails and cash codes
	notifier    *workers.Dispatcher // the notify lane: merchant notifications
	claims      *rules.CashClaims
	mailer      *notify.Mailer // its LinkURL is the links' (wireLinks)
	mailbox     notify.MailboxHandlers
	publicKey   []byte
	certificate []byte
	sealer      *store.Sealer
	webhook     *notify.Notifier // the notify lane's deliverer: also resends and signs the event stream
	now         func() time.Time
	// withEvents are the outcomes that wrote events, until they commit (kickLanes).
	withEvents eventfulOutcomes
}

func (w *wiring) newNotifications(ctx context.Context) (*notifications, error) {
	key, err := w.notificationKey(ctx)
	if err != nil {
		return nil, err
	}
	src := notifySource{db: w.db, merchants: w.lc.Merchants}
	var sender notify.Sender = &notify.SandboxSender{Box: w.db, Now: w.now}
	if w.cfg.Notify.SMTPURL != "" {
		s, err := notify.NewSMTP(w.cfg.Notify.SMTPURL, w.cfg.Notify.MailFrom)
		if err != nil {
			return nil, err
		}
		sender = s
		w.logger.Info("mail goes out over SMTP", "server", s.Addr(), "from", w.cfg.Notify.MailFrom)
	} else if !w.cfg.Sandbox.On {
		w.logger.Warn("no --smtp-url and --sandbox=false: mail is kept in the sandbox mailbox, which is not served")
	}
	cert, err := notify.CertificatePEM(key)
	if err != nil {
		return nil, fmt.Errorf("notification certificate: %w", err)
	}
	n := &notifications{publicKey: notify.PublicKeyPEM(key), certificate: cert, sealer: w.sealer, now: w.now,
		mailbox: notify.MailboxHandlers{Box: w.db, Sandbox: w.cfg.Sandbox.On}}
	mailer := &notify.Mailer{Source: src, Sender: sender, OpenCode: n.openCode, Now: w.now}
	n.mailer = mailer
	// One dispatcher per lane: a merchant endpoint that hangs until its timeout never holds
	// up a beneficiary's email or cash code.
	lane := func(l rules.Lane, deliverers map[string]rules.Deliverer) *workers.Dispatcher {
		return &workers.Dispatcher{
			Store:      w.db,
			Lane:       l,
			Deliverers: w.traceDeliveries(deliverers),
			Now:        w.now,
			BaseDelay:  w.opts.DeliveryRetryDelay, // zero: the dispatcher's 2 s
			Log:        w.logger,
			Delivered:  func(kind string) { w.metrics.OutboxSent.WithLabelValues(kind).Inc() },
			Failed:     func(kind string) { w.metrics.OutboxFailures.WithLabelValues(kind).Inc() },
		}
	}
	n.dispatcher = lane(rules.LaneMail, map[string]rules.Deliverer{rules.EventBeneficiaryMail: mailer, rules.EventCashOTP: mailer,
		rules.EventLinkMail: mailer})
	n.webhook = &notify.Notifier{Source: src, Body: api.NotificationJSON, Key: key, Client: notify.NewHTTPClient(w.cfg.Notify.AllowPrivateURLs),
		Log: w.db, Sandbox: w.cfg.Sandbox.On, Now: w.now, Logger: w.logger}
	w.traceNotifier(n.webhook)
	n.notifier = lane(rules.LaneNotify, map[string]rules.Deliverer{rules.EventMerchantNotification: n.webhook,
		rules.EventBatchNotification: n.webhook, rules.EventLinkNotification: n.webhook})
	n.claims = &rules.CashClaims{Store: w.db, Settle: w.lc.Settle, Now: w.now}
	return n, nil
}

// createNotificationKey writes the installation's RSA key on a first start, durably and
// never over an existing key (store.WriteFileOnce): a power cut right after the first start
// leaves either no key or the whole key, never one that merchants cannot verify.
func createNotificationKey(path string, newKey func() ([]byte, error)) error {
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if newKey == nil {
		newKey = NewNotificationKeyPEM
	}
	raw, err := newKey()
	if err != nil {
		return err
	}
	err = store.WriteFileOnce(path, raw, 0o600)
	if errors.Is(err, os.ErrExist) {
		return nil // another first start wrote it
	}
	return err
}

// eventfulOutcomes are the payouts whose outcome wrote events, until the outcome is
// committed (kickLanes). An outcome whose transaction failed and that is never retried here
// (another instance took it over) stays until the set reaches maxEventfulOutcomes and starts
// again: at worst a lane then finds an event on its next look, a second later.
type eventfulOutcomes struct {
	mu  sync.Mutex
	ids map[int64]struct{}
}

const maxEventfulOutcomes = 10_000

func (o *eventfulOutcomes) wrote(id int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.ids == nil || len(o.ids) >= maxEventfulOutcomes {
		o.ids = map[int64]struct{}{}
	}
	o.ids[id] = struct{}{}
}

// committed forgets id and says whether its outcome wrote events.
func (o *eventfulOutcomes) committed(id int64) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	_, ok := o.ids[id]
	delete(o.ids, id)
	return ok
}

// The one-time code of a cash payout is sealed with the installation's key and bound to
// its event id: a copy in another event does not open.
func (n *notifications) sealCode(code []byte, eventID string) []byte {
	return n.sealer.Seal(code, []byte("cash-otp:"+eventID))
}

func (n *notifications) openCode(sealed []byte, eventID string) ([]byte, error) {
	return n.sealer.Open(sealed, []byte("cash-otp:"+eventID))
}

// install adds the notifications' routes and the dispatcher; their hooks on the lifecycle
// and the service are bound with the others, in bindHooks.
func (n *notifications) install(w *wiring) {
	w.notifications = n
	w.kicks = append(w.kicks, n.dispatcher.Kick, n.notifier.Kick)
	w.wireEvents(n)
	w.wireCertifications(n)
	w.deps.NotificationKeys = &api.NotificationKeys{PublicKey: n.publicKey, Certificate: n.certificate}
	w.deps.Claim = n.claims.Claim
	w.deps.Pages = append(w.deps.Pages, n.mailbox)
	w.workers = append(w.workers, n.dispatcher.Run, n.notifier.Run, w.housekeeping(time.Hour, "outbox housekeeping", slog.LevelInfo, func(ctx context.Context) (int, error) {
		// Old delivered ids and old sandbox mail are forgotten: the outbox stays bounded.
		return w.db.PruneOutbox(ctx, w.now())
	}))
}

// snapshotOutcome fills in the events of an outcome with a snapshot of it: the notification
// body as it was then (so retries send the same bytes), and the outcome a beneficiary email
// announces.
func (n *notifications) snapshotOutcome(p *rules.Payout, m *rules.Merchant, evs []rules.Event) []rules.Event {
	for i := range evs {
		switch evs[i].Kind {
		case rules.EventBeneficiaryMail:
			evs[i].Data = notify.OutcomeData(p)
		case rules.EventMerchantNotification:
			if body, err := api.NotificationJSON(p); err == nil {
				evs[i].Data = body
			}
		}
	}
	return evs
}

// The lanes are woken for an outcome that wrote events, not for every payout that ends: a
// round settling hundreds of payouts of a merchant without a notification URL would have
// them look at the outbox for nothing, twice a round (they look once a second anyway, for
// what other instances wrote). noteEventful, the last outcome hook, notes the outcomes
// that wrote events; kickLanes wakes the lanes once such an outcome committed.
func (n *notifications) noteEventful(p *rules.Payout, m *rules.Merchant, evs []rules.Event) []rules.Event {
	if len(evs) > 0 {
		n.withEvents.wrote(p.ID)
	}
	return evs
}

func (n *notifications) kickLanes(_ context.Context, p *rules.Payout) {
	if n.withEvents.committed(p.ID) {
		n.dispatcher.Kick()
		n.notifier.Kick()
	}
}

// cashCode gives a Colombia cash payout its one-time code as it is created: only the hash
// on the payout, the code sealed in the event that emails it.
func (n *notifications) cashCode(p *rules.Payout, m *rules.Merchant, evs []rules.Event) ([]rules.Event, error) {
	if p.Channel != rules.ChannelCash {
		return evs, nil
	}
	ev, err := rules.CashOTPEvent(p, rand.Reader, n.sealCode, n.now().UTC())
	if err != nil {
		return nil, err
	}
	return append(evs, ev), nil
}

// linkMail writes a new payout link's emails to its beneficiary (rules.LinkMailEvents):
// the link now, the reminder when it is due.
func (n *notifications) linkMail(p *rules.Payout, m *rules.Merchant, evs []rules.Event) ([]rules.Event, error) {
	more, err := rules.LinkMailEvents(p, m, rand.Reader, n.now().UTC())
	if err != nil {
		return nil, err
	}
	return append(evs, more...), nil
}

// kickCashMail wakes the mail lane for a new cash payout or payout link, whose mail is
// waiting.
func (n *notifications) kickCashMail(_ context.Context, p *rules.Payout) {
	if p.Channel == rules.ChannelCash || p.Channel == rules.ChannelLink {
		n.dispatcher.Kick()
	}
}

// notifySource gives the deliverers the payouts and (cached) merchants.
type notifySource struct {
	db        rules.Storage
	merchants func(id string) (*rules.Merchant, error)
}

func (s notifySource) Payout(ctx context.Context, merchantID string, id int64) (*rules.Payout, error) {
	return s.db.Payout(ctx, merchantID, id)
}

// Merchant is the cached merchant: the cache's read is not the caller's to cancel.
func (s notifySource) Merchant(_ context.Context, id string) (*rules.Merchant, error) {
	return s.merchants(id)
}
