package server

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"fmt"

	"payouts/rules"
	"payouts/store"
	"payouts/web"
)

// wireLinks adds the payout link endpoint and the links' pages. A link's token is derived
// from its payout under a key of its own, itself derived from the card key: the store keeps
// only the token's hash, and a replayed create answers the same link.
func (w *wiring) wireLinks(ctx context.Context) error {
	cardKey, err := w.cardKey(ctx)
	if err != nil {
		return fmt.Errorf("payout link key: %w", err)
	}
	// The directory is simulated: with --sandbox=false there is none to name a holder.
	var dir rules.Directory
	if w.cfg.Sandbox.On {
		dir = w.directory
	}
	// A card typed on a link is sealed as the card form's are, under the same key.
	sealer, err := store.NewSealer(cardKey)
	if err != nil {
		return fmt.Errorf("payout link card key: %w", err)
	}
	mac := hmac.New(sha256.New, cardKey)
	mac.Write([]byte("payouts: payout link tokens"))
	links := web.NewLinks(web.LinkConfig{
		BaseURL:       w.run.publicURL,
		BaseFromProxy: w.run.publicURLFromProxy,
		Payouts:       w.db,
		Merchants:     w.keys.Merchant,
		Lifecycle:     linkLifecycle{w.lc.Lifecycle, w.notifications.notifier.Kick},
		Directory:     dir,
		Vault:         w.db,
		Sealer:        sealer,
		Sessions:      w.db.Sessions(ctx, w.now),
		Key:           mac.Sum(nil),
		Now:           w.now,
		Log:           w.logger,
	})
	w.deps.Link = func(ctx context.Context, m *rules.Merchant, p *rules.Payout) (string, error) {
		return links.Open(ctx, m, p)
	}
	w.notifications.mailer.LinkURL = links.Open // the links' emails carry them
	w.deps.Pages = append(w.deps.Pages, links)
	return nil
}

// linkLifecycle wakes the notify lane once a link took its destination: the merchant's
// link.SUBMITTED event, written with it, waits there.
type linkLifecycle struct {
	*rules.Lifecycle
	kick func()
}

func (l linkLifecycle) LinkCard(ctx context.Context, m *rules.Merchant, id int64, req *rules.PayoutRequest, route rules.Route, card rules.CardRef) (*rules.Payout, error) {
	p, err := l.Lifecycle.LinkCard(ctx, m, id, req, route, card)
	if err == nil {
		l.kick()
	}
	return p, err
}

func (l linkLifecycle) LinkDestination(ctx context.Context, m *rules.Merchant, id int64, req *rules.PayoutRequest, route rules.Route) (*rules.Payout, error) {
	p, err := l.Lifecycle.LinkDestination(ctx, m, id, req, route)
	if err == nil {
		l.kick()
	}
	return p, err
}
