package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"payouts/rules"
)

// Batches (migration 00005): a batch is a row with its JSON; its items are rows
// written and recorded set-based (unnest), so that a 10,000-item batch costs a constant
// number of round trips; their payouts' stage and status come with them by a join.

func batchRunnable(b *rules.Batch) bool {
	return b.Status == rules.BatchApproved || b.Status == rules.BatchProcessing ||
		b.Status == rules.BatchCompleted && b.NotifiedAt.IsZero()
}

// itemArrays are items as the arrays of an unnest.
func itemArrays(items []rules.BatchItem) (seqs []int32, payouts []*int64, docs []string, err error) {
	seqs, payouts, docs = make([]int32, len(items)), make([]*int64, len(items)), make([]string, len(items))
	for i := range items {
		doc, err := json.Marshal(&items[i])
		if err != nil {
			return nil, nil, nil, err
		}
		seqs[i], docs[i] = int32(items[i].Seq), string(doc)
		if items[i].PayoutID != 0 {
			id := items[i].PayoutID
			payouts[i] = &id
		}
	}
	return seqs, payouts, docs, nil
}

const insertItems = `INSERT INTO batch_items (batch_id, seq, payout_id, doc)
	SELECT $1, s, p, d::jsonb FROM unnest($2::int[], $3::bigint[], $4::text[]) AS x(s, p, d)`

// CreateBatch stores a new batch with its items, or returns the merchant's batch of that
// batchId (the unique key decides between concurrent creates).
func (s *DB) CreateBatch(ctx context.Context, b *rules.Batch, items []rules.BatchItem) (*rules.Batch, bool, error) {
	ctx, cancel := callContext(ctx)
	defer cancel()
	seqs, payouts, docs, err := itemArrays(items)
	if err != nil {
		return nil, false, err
	}
	var stored *rules.Batch
	created := false
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var id int64
		err := tx.QueryRow(ctx, `INSERT INTO batches (merchant_id, batch_id, runnable, doc) VALUES ($1, $2, false, '{}')
			ON CONFLICT (merchant_id, batch_id) DO NOTHING RETURNING id`, b.MerchantID, b.BatchID).Scan(&id)
		if errors.Is(err, pgx.ErrNoRows) {
			var doc []byte
			if err := tx.QueryRow(ctx, `SELECT doc FROM batches WHERE merchant_id = $1 AND batch_id = $2`, b.MerchantID, b.BatchID).Scan(&doc); err != nil {
				return err
			}
			stored = &rules.Batch{}
			return json.Unmarshal(doc, stored)
		}
		if err != nil {
			return err
		}
		nb := *b
		nb.ID = id
		doc, err := json.Marshal(&nb)
		if err != nil {
			return err
		}
		bt := &pgx.Batch{}
		bt.Queue(`UPDATE batches SET doc = $2, runnable = $3 WHERE id = $1`, id, doc, batchRunnable(&nb))
		bt.Queue(insertItems, id, seqs, payouts, docs)
		if err := tx.SendBatch(ctx, bt).Close(); err != nil {
			return err
		}
		stored, created = &nb, true
		return nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("store: create batch %s: %w", b.BatchID, err)
	}
	return stored, created, nil
}

// Batch reads one batch of the merchant.
func (s *DB) Batch(ctx context.Context, merchantID string, id int64) (*rules.Batch, error) {
	ctx, cancel := callContext(ctx)
	defer cancel()
	var doc []byte
	err := s.pool.QueryRow(ctx, `SELECT doc FROM batches WHERE id = $1 AND merchant_id = $2`, id, merchantID).Scan(&doc)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, rules.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	var b rules.Batch
	return &b, json.Unmarshal(doc, &b)
}

// Batches lists the merchant's batches after the id after, in id order.
func (s *DB) Batches(ctx context.Context, merchantID string, after int64, limit int) ([]*rules.Batch, error) {
	ctx, cancel := callContext(ctx)
	defer cancel()
	if limit <= 0 {
		limit = 1 << 30
	}
	return s.queryBatches(ctx, `SELECT doc FROM batches WHERE merchant_id = $1 AND id > $2 ORDER BY id LIMIT $3`, merchantID, after, limit)
}

func (s *DB) queryBatches(ctx context.Context, sql string, args ...any) ([]*rules.Batch, error) {
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*rules.Batch, error) {
		var doc []byte
		if err := r.Scan(&doc); err != nil {
			return nil, err
		}
		var b rules.Batch
		return &b, json.Unmarshal(doc, &b)
	})
	if out == nil {
		out = []*rules.Batch{}
	}
	return out, err
}

// BatchItems lists a batch's items after seq after, with their payouts' stage and status.
func (s *DB) BatchItems(ctx context.Context, merchantID string, id int64, after, limit int) ([]rules.BatchItem, error) {
	ctx, cancel := callContext(ctx)
	defer cancel()
	if limit <= 0 {
		limit = 1 << 30
	}
	rows, err := s.pool.Query(ctx, `SELECT i.doc, COALESCE(p.stage, ''), COALESCE(p.status, '')
		FROM batches b JOIN batch_items i ON i.batch_id = b.id LEFT JOIN payouts p ON p.id = i.payout_id
		WHERE b.id = $1 AND b.merchant_id = $2 AND i.seq > $3 ORDER BY i.seq LIMIT $4`, id, merchantID, after, limit)
	if err != nil {
		return nil, err
	}
	items, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (rules.BatchItem, error) {
		var doc []byte
		var it rules.BatchItem
		var stage, status string
		if err := r.Scan(&doc, &stage, &status); err != nil {
			return it, err
		}
		err := json.Unmarshal(doc, &it)
		it.Stage, it.Status = rules.Stage(stage), rules.Status(status)
		return it, err
	})
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		if _, err := s.Batch(ctx, merchantID, id); err != nil {
			return nil, err
		}
	}
	return items, nil
}

// UpdateBatch changes a batch in one transaction, with fn's events written to the outbox.
func (s *DB) UpdateBatch(ctx context.Context, merchantID string, id int64, fn func(*rules.Batch) ([]rules.Event, error)) (*rules.Batch, error) {
	ctx, cancel := callContext(ctx)
	defer cancel()
	var b *rules.Batch
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var doc []byte
		err := tx.QueryRow(ctx, `SELECT doc FROM batches WHERE id = $1 AND merchant_id = $2 FOR UPDATE`, id, merchantID).Scan(&doc)
		if errors.Is(err, pgx.ErrNoRows) {
			return rules.ErrNotFound
		}
		if err != nil {
			return err
		}
		b = &rules.Batch{}
		if err := json.Unmarshal(doc, b); err != nil {
			return err
		}
		evs, err := fn(b)
		if err != nil {
			return err
		}
		b.ID, b.MerchantID = id, merchantID
		for _, ev := range evs {
			if err := enqueue(ctx, tx, ev); err != nil {
				return err
			}
		}
		if doc, err = json.Marshal(b); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE batches SET doc = $2, runnable = $3 WHERE id = $1`, id, doc, batchRunnable(b))
		return err
	})
	if err != nil {
		return nil, err
	}
	return b, nil
}

// RecordBatchItems writes the payouts or refusals of items, in one statement.
func (s *DB) RecordBatchItems(ctx context.Context, merchantID string, id int64, items []rules.BatchItem) error {
	ctx, cancel := callContext(ctx)
	defer cancel()
	seqs, payouts, docs, err := itemArrays(items)
	if err != nil {
		return err
	}
	tag, err := s.pool.Exec(ctx, `UPDATE batch_items i SET payout_id = x.p, doc = x.d::jsonb
		FROM unnest($2::int[], $3::bigint[], $4::text[]) AS x(s, p, d), batches b
		WHERE b.id = $1 AND b.merchant_id = $5 AND i.batch_id = b.id AND i.seq = x.s`, id, seqs, payouts, docs, merchantID)
	if err != nil {
		return err
	}
	if int(tag.RowsAffected()) != len(items) {
		return rules.ErrNotFound
	}
	return nil
}

// RunnableBatches lists the batches the runner still has work on.
func (s *DB) RunnableBatches(ctx context.Context) ([]*rules.Batch, error) {
	ctx, cancel := callContext(ctx)
	defer cancel()
	return s.queryBatches(ctx, `SELECT doc FROM batches WHERE runnable ORDER BY id`)
}

// UsedOrderIDs says which orderIds the merchant's payouts already use, in one query.
func (s *DB) UsedOrderIDs(ctx context.Context, merchantID string, orderIDs []string) (map[string]int64, error) {
	ctx, cancel := callContext(ctx)
	defer cancel()
	used := map[string]int64{}
	if len(orderIDs) == 0 {
		return used, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT order_id, id FROM payouts WHERE merchant_id = $1 AND order_id = ANY($2::text[])`, merchantID, orderIDs)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var o string
		var id int64
		if err := rows.Scan(&o, &id); err != nil {
			return nil, err
		}
		used[o] = id
	}
	return used, rows.Err()
}

func scanDumpedBatch(r pgx.CollectableRow) (any, error) {
	var doc, items []byte
	if err := r.Scan(&doc, &items); err != nil {
		return nil, err
	}
	d := rules.DumpedBatch{Batch: &rules.Batch{}}
	if err := json.Unmarshal(doc, d.Batch); err != nil {
		return nil, err
	}
	return d, json.Unmarshal(items, &d.Items)
}

// restoreDumpedBatch writes a dumped batch with its id and items in one statement, and moves the
// batch numbering past it.
func restoreDumpedBatch(raw json.RawMessage) (string, []any, error) {
	var d rules.DumpedBatch
	if err := json.Unmarshal(raw, &d); err != nil {
		return "", nil, err
	}
	if d.Batch == nil || d.Batch.ID <= 0 {
		return "", nil, errors.New("a dumped batch needs its id")
	}
	doc, err := json.Marshal(d.Batch)
	if err != nil {
		return "", nil, err
	}
	seqs, payouts, docs, err := itemArrays(d.Items)
	if err != nil {
		return "", nil, err
	}
	return `WITH b AS (INSERT INTO batches (id, merchant_id, batch_id, runnable, doc) VALUES ($1, $5, $6, $7, $8) RETURNING id),
		i AS (INSERT INTO batch_items (batch_id, seq, payout_id, doc)
			SELECT b.id, s, p, d::jsonb FROM b, unnest($2::int[], $3::bigint[], $4::text[]) AS x(s, p, d))
		SELECT setval(pg_get_serial_sequence('batches', 'id'), GREATEST($1, (SELECT COALESCE(max(id), 1) FROM batches)))`,
		[]any{d.Batch.ID, seqs, payouts, docs, d.Batch.MerchantID, d.Batch.BatchID, batchRunnable(d.Batch), doc}, nil
}
