package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	gojson "github.com/goccy/go-json"
	"github.com/jackc/pgx/v5"

	"payouts/rules"
)

// A merchant is one row of merchants: rules.Merchant as JSON (doc) under its id.

// CreateMerchant stores a new merchant, giving it the next number of merchant_numbers that
// no merchant uses as its id when m.ID is empty; a taken id is rules.ErrExists. prepare runs
// once the id is known, inside the transaction, before the write (to seal the secret to it).
func (s *DB) CreateMerchant(ctx context.Context, m *rules.Merchant, prepare func(*rules.Merchant) error) error {
	ctx, cancel := callContext(ctx)
	defer cancel()
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if m.ID != "" {
			return insertMerchant(ctx, tx, m, prepare)
		}
		for {
			id, err := nextMerchantNumber(ctx, tx)
			if err != nil {
				return err
			}
			m.ID = id
			err = insertMerchant(ctx, tx, m, prepare)
			if !errors.Is(err, rules.ErrExists) {
				return err
			}
		}
	})
}

// nextMerchantNumber is the next number of merchant_numbers that no merchant uses as its id.
func nextMerchantNumber(ctx context.Context, tx pgx.Tx) (string, error) {
	for {
		var n int64
		var taken bool
		err := tx.QueryRow(ctx, `SELECT n, EXISTS (SELECT 1 FROM merchants WHERE id = n::text)
			FROM nextval('merchant_numbers') AS n`).Scan(&n, &taken)
		if err != nil {
			return "", fmt.Errorf("store: next merchant number: %w", err)
		}
		if !taken {
			return strconv.FormatInt(n, 10), nil
		}
	}
}

// insertMerchant writes a new merchant after prepare, or answers rules.ErrExists (before
// prepare when the id is known to be taken; after it when a concurrent create took it).
func insertMerchant(ctx context.Context, tx pgx.Tx, m *rules.Merchant, prepare func(*rules.Merchant) error) error {
	var taken bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM merchants WHERE id = $1)`, m.ID).Scan(&taken); err != nil {
		return fmt.Errorf("store: create merchant %s: %w", m.ID, err)
	}
	if taken {
		return rules.ErrExists
	}
	if prepare != nil {
		if err := prepare(m); err != nil {
			return err
		}
	}
	doc, err := gojson.Marshal(m)
	if err != nil {
		return fmt.Errorf("store: encode merchant %s: %w", m.ID, err)
	}
	tag, err := tx.Exec(ctx, `INSERT INTO merchants (id, doc) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING`, m.ID, doc)
	if err != nil {
		return fmt.Errorf("store: create merchant %s: %w", m.ID, err)
	}
	if tag.RowsAffected() == 0 {
		return rules.ErrExists
	}
	return nil
}

// Merchant reads one merchant; rules.ErrNotFound when none.
func (s *DB) Merchant(ctx context.Context, id string) (*rules.Merchant, error) {
	if !storable(id) {
		return nil, rules.ErrNotFound
	}
	ctx, cancel := callContext(ctx)
	defer cancel()
	var doc []byte
	err := s.pool.QueryRow(ctx, `SELECT doc FROM merchants WHERE id = $1`, id).Scan(&doc)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, rules.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store: read merchant %s: %w", id, err)
	}
	return decodeMerchant(doc)
}

// UpdateMerchant changes a merchant inside one transaction, holding its row's lock.
func (s *DB) UpdateMerchant(ctx context.Context, id string, fn func(*rules.Merchant) error) (*rules.Merchant, error) {
	if !storable(id) {
		return nil, rules.ErrNotFound
	}
	ctx, cancel := callContext(ctx)
	defer cancel()
	var m *rules.Merchant
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var doc []byte
		err := tx.QueryRow(ctx, `SELECT doc FROM merchants WHERE id = $1 FOR UPDATE`, id).Scan(&doc)
		if errors.Is(err, pgx.ErrNoRows) {
			return rules.ErrNotFound
		}
		if err != nil {
			return fmt.Errorf("store: read merchant %s: %w", id, err)
		}
		if m, err = decodeMerchant(doc); err != nil {
			return err
		}
		if err := fn(m); err != nil {
			return err
		}
		m.ID = id
		if doc, err = gojson.Marshal(m); err != nil {
			return fmt.Errorf("store: encode merchant %s: %w", id, err)
		}
		if _, err := tx.Exec(ctx, `UPDATE merchants SET doc = $2 WHERE id = $1`, id, doc); err != nil {
			return fmt.Errorf("store: write merchant %s: %w", id, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// Merchants lists every merchant, by id byte-wise (store/bolt's order).
func (s *DB) Merchants(ctx context.Context) ([]*rules.Merchant, error) {
	ctx, cancel := callContext(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, `SELECT doc FROM merchants ORDER BY id COLLATE "C"`)
	if err != nil {
		return nil, fmt.Errorf("store: list merchants: %w", err)
	}
	var out []*rules.Merchant
	var doc []byte
	_, err = pgx.ForEachRow(rows, []any{&doc}, func() error {
		m, err := decodeMerchant(doc)
		if err == nil {
			out = append(out, m)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: list merchants: %w", err)
	}
	return out, nil
}

func decodeMerchant(doc []byte) (*rules.Merchant, error) {
	var m rules.Merchant
	if err := gojson.Unmarshal(doc, &m); err != nil {
		return nil, fmt.Errorf("store: decode merchant: %w", err)
	}
	return &m, nil
}
