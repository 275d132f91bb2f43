package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"payouts/api"
	"payouts/rules"
	"payouts/store"
	"payouts/web"
)

// cardHousekeeping is how often expired sessions and the cards of finished payouts are swept.
const cardHousekeeping = time.Minute

// wireCards adds the Peru card push payment endpoint and its card form.
func (w *wiring) wireCards(ctx context.Context) error {
	key, err := w.cardKey(ctx)
	if err != nil {
		return fmt.Errorf("card key: %w", err)
	}
	sealer, err := store.NewSealer(key)
	if err != nil {
		return fmt.Errorf("card key: %w", err)
	}
	sessions := w.db.Sessions(ctx, w.now)
	length := w.opts.CardSessionLength
	if length > 0 {
		w.logger.Warn("card form sessions shortened by a test's option", "length", length)
	}
	cards := web.NewCards(web.Config{
		BaseURL:       w.run.publicURL,
		BaseFromProxy: w.run.publicURLFromProxy,
		Payouts:       w.db,
		Merchants:     w.keys.Merchant,
		Lifecycle:     w.lc,
		Vault:         w.db,
		Sessions:      sessions,
		Sealer:        sealer,
		Now:           w.now,
		Log:           w.logger,
		SessionLength: length,
	})
	w.cards = cards
	open := func(ctx context.Context, m *rules.Merchant, res rules.CreateResult, lang string) (api.CardForm, error) {
		f, err := cards.Open(ctx, m, res, lang)
		return api.CardForm{URL: f.URL, ExpiresAt: f.ExpiresAt, Payout: f.Payout, Page: f.Page}, err
	}
	w.deps.Card = open
	w.deps.Pages = append(w.deps.Pages, cards)

	w.workers = append(w.workers,
		w.housekeeping(cardHousekeeping, "card session cleanup", slog.LevelDebug, func(context.Context) (int, error) { return sessions.Cleanup() }),
		// What a crash between an outcome and dropPayoutCard left behind.
		w.housekeeping(cardHousekeeping, "card sweep", slog.LevelDebug, w.db.DropFinishedPayoutCards))
	return nil
}

// dropPayoutCard drops a card payout's own copy of its card at its outcome: a card
// registered for one transaction (card on file off) is then gone; a card on file stays with
// the beneficiary.
func (w *wiring) dropPayoutCard(ctx context.Context, p *rules.Payout) {
	if p.Channel != rules.ChannelCard {
		return
	}
	if err := w.db.DropPayoutCard(ctx, p.ID); err != nil {
		w.logger.Error("drop the card of a finished payout", "payout", p.ID, "err", err)
	}
}

// cardKey is --card-key (64 hex characters), else the card.key file of the data directory
// (0600, hex), created on first start, but never for a store whose cards a lost one sealed;
// either way the key the store recorded. It is not the master key: a card key can be kept
// and rotated apart from the API secrets.
func (w *wiring) cardKey(ctx context.Context) ([]byte, error) {
	k := sealedKey{name: "card", source: "--card-key", flag: "--card-key-file"}
	var key []byte
	var err error
	if w.cfg.Keys.Card != "" {
		key, err = store.ParseKey(w.cfg.Keys.Card)
	} else {
		k.source = filepath.Join(w.cfg.Storage.Data, CardKeyFile)
		if _, statErr := os.Stat(k.source); errors.Is(statErr, os.ErrNotExist) {
			if err := missingKeyError(ctx, w.db, k, storeWhere(w.cfg), false); err != nil {
				return nil, err
			}
		}
		key, err = store.LoadOrCreateKey(k.source)
	}
	if err != nil {
		return nil, err
	}
	return key, checkSealedKey(ctx, w.db, k, key, storeWhere(w.cfg))
}
