package postgres

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/jackc/pgx/v5"

	"payouts/rules"
)

// enqueue writes ev into the outbox inside tx: the event is stored with the change that
// causes it, or not at all.
func enqueue(ctx context.Context, tx pgx.Tx, ev rules.Event) error {
	if ev.ID == "" {
		return errors.New("store: an event needs an id")
	}
	doc, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `INSERT INTO outbox (event_id, lane, kind, merchant_id, payout_id, next_at, doc)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		ev.ID, string(rules.LaneOf(ev.Kind)), ev.Kind, ev.MerchantID, ev.PayoutID, ev.NextAt.UTC(), doc)
	return err
}
