package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

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

// queueEvents queues the insert of events into the outbox, all in one statement, in their
// order (their seqs follow it), into b.
func queueEvents(b *pgx.Batch, events []rules.Event) error {
	if len(events) == 0 {
		return nil
	}
	n := len(events)
	ids, lanes, kinds, merchants := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	payouts, nextAt, docs := make([]int64, n), make([]time.Time, n), make([]string, n)
	for i, ev := range events {
		doc, err := json.Marshal(ev)
		if err != nil {
			return fmt.Errorf("store: enqueue event %s: %w", ev.ID, err)
		}
		ids[i], lanes[i], kinds[i], merchants[i] = ev.ID, string(rules.LaneOf(ev.Kind)), ev.Kind, ev.MerchantID
		payouts[i], nextAt[i], docs[i] = ev.PayoutID, ev.NextAt.UTC(), string(doc)
	}
	b.Queue(`INSERT INTO outbox (event_id, lane, kind, merchant_id, payout_id, next_at, doc)
		SELECT event_id, lane, kind, merchant_id, payout_id, next_at, doc::jsonb
		FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::timestamptz[], $7::text[])
			WITH ORDINALITY AS e(event_id, lane, kind, merchant_id, payout_id, next_at, doc, n)
		ORDER BY n`, ids, lanes, kinds, merchants, payouts, nextAt, docs)
	return nil
}
