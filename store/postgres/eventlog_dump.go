package postgres

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"payouts/rules"
)

// Dump and Restore of the event log, the sandbox inbox and the delivery chaos,
// in store/bolt's order: events by seq, inbox items by merchant then arrival, chaos by
// merchant.

func scanDumpedLoggedEvent(r pgx.CollectableRow) (any, error) { return scanLoggedEvent(r) }

func scanDumpedInboxItem(r pgx.CollectableRow) (any, error) {
	var d rules.DumpedInboxItem
	var headers []byte
	if err := r.Scan(&d.MerchantID, &d.Item.EventID, &d.Item.ReceivedAt, &headers, &d.Item.Body, &d.Item.SignatureValid); err != nil {
		return nil, err
	}
	d.Item.ReceivedAt = d.Item.ReceivedAt.UTC()
	return d, json.Unmarshal(headers, &d.Item.Headers)
}

func scanDumpedDeliveryChaos(r pgx.CollectableRow) (any, error) {
	var d rules.DumpedDeliveryChaos
	var doc []byte
	if err := r.Scan(&d.MerchantID, &doc); err != nil {
		return nil, err
	}
	return d, json.Unmarshal(doc, &d.Chaos)
}

// restoreLoggedEvent writes an event under its own seq, so that the cursors merchants hold
// still point where they did, and moves the log's numbering past it.
func restoreLoggedEvent(raw json.RawMessage) (string, []any, error) {
	var e rules.LoggedEvent
	if err := json.Unmarshal(raw, &e); err != nil {
		return "", nil, err
	}
	if e.Seq <= 0 || e.ID == "" || e.MerchantID == "" {
		return "", nil, errors.New("a logged event without its seq, id or merchant")
	}
	attempts, err := json.Marshal(e.Attempts)
	if e.Attempts == nil {
		attempts = []byte("[]")
	}
	var delivered *time.Time
	if !e.DeliveredAt.IsZero() {
		delivered = &e.DeliveredAt
	}
	body := e.Body
	if body == nil {
		body = []byte{}
	}
	// The attempt feed is not dumped: it is rebuilt from the attempts (stream cursors start anew).
	return `WITH ins AS (INSERT INTO event_log (seq, merchant_id, event_id, payout_id, type, body, created_at, delivered_at, attempts)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING seq, merchant_id, event_id, jsonb_array_length(attempts) AS k),
		feed AS (INSERT INTO event_feed (merchant_id, event_id, n)
			SELECT merchant_id, event_id, n FROM ins, generate_series(0, k - 1) AS n ORDER BY n)
		SELECT setval(pg_get_serial_sequence('event_log', 'seq'), GREATEST((SELECT seq FROM ins),
			(SELECT last_value FROM event_log_seq_seq)))`,
		[]any{e.Seq, e.MerchantID, e.ID, e.PayoutID, e.Type, body, e.CreatedAt.UTC(), delivered, attempts}, err
}

func restoreInboxItem(raw json.RawMessage) (string, []any, error) {
	var d rules.DumpedInboxItem
	if err := json.Unmarshal(raw, &d); err != nil {
		return "", nil, err
	}
	headers, err := json.Marshal(d.Item.Headers)
	if d.Item.Headers == nil {
		headers = []byte("{}")
	}
	body := d.Item.Body
	if body == nil {
		body = []byte{}
	}
	return `INSERT INTO sandbox_inbox (merchant_id, event_id, received_at, headers, body, signature_valid)
		VALUES ($1, $2, $3, $4, $5, $6)`,
		[]any{d.MerchantID, d.Item.EventID, d.Item.ReceivedAt.UTC(), headers, body, d.Item.SignatureValid}, err
}

func restoreDeliveryChaos(raw json.RawMessage) (string, []any, error) {
	var d rules.DumpedDeliveryChaos
	if err := json.Unmarshal(raw, &d); err != nil {
		return "", nil, err
	}
	doc, err := json.Marshal(d.Chaos)
	return `INSERT INTO delivery_chaos (merchant_id, chaos) VALUES ($1, $2)`, []any{d.MerchantID, doc}, err
}
