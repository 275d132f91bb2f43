package bolt

import (
	"context"
	"strconv"

	bbolt "go.etcd.io/bbolt"

	"payouts/rules"
)

// ErrExists is returned when creating a record whose id is taken.
var ErrExists = rules.ErrExists

// CreateMerchant stores a new merchant, giving it the next numeric id when m.ID is empty.
// prepare runs once the id is known, inside the transaction (to seal the secret to it).
func (s *DB) CreateMerchant(ctx context.Context, m *rules.Merchant, prepare func(*rules.Merchant) error) error {
	return s.bdb.Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bMerchants)
		if m.ID == "" {
			for {
				seq, err := b.NextSequence()
				if err != nil {
					return err
				}
				id := strconv.FormatUint(seq, 10)
				if b.Get([]byte(id)) == nil {
					m.ID = id
					break
				}
			}
		} else if b.Get([]byte(m.ID)) != nil {
			return ErrExists
		}
		if prepare != nil {
			if err := prepare(m); err != nil {
				return err
			}
		}
		return putJSON(b, []byte(m.ID), m)
	})
}

// Merchant reads one merchant.
func (s *DB) Merchant(ctx context.Context, id string) (*rules.Merchant, error) {
	var m rules.Merchant
	err := s.bdb.View(func(tx *bbolt.Tx) error { return getJSON(tx.Bucket(bMerchants), []byte(id), &m) })
	if err != nil {
		return nil, err
	}
	return &m, nil
}

// UpdateMerchant changes a merchant inside one transaction.
func (s *DB) UpdateMerchant(ctx context.Context, id string, fn func(*rules.Merchant) error) (*rules.Merchant, error) {
	var m rules.Merchant
	err := s.bdb.Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bMerchants)
		if err := getJSON(b, []byte(id), &m); err != nil {
			return err
		}
		if err := fn(&m); err != nil {
			return err
		}
		m.ID = id
		return putJSON(b, []byte(id), &m)
	})
	if err != nil {
		return nil, err
	}
	return &m, nil
}

// Merchants lists every merchant.
func (s *DB) Merchants(ctx context.Context) ([]*rules.Merchant, error) {
	var out []*rules.Merchant
	err := s.bdb.View(func(tx *bbolt.Tx) error {
		return tx.Bucket(bMerchants).ForEach(func(k, v []byte) error {
			var m rules.Merchant
			if err := unmarshal(v, &m); err != nil {
				return err
			}
			out = append(out, &m)
			return nil
		})
	})
	return out, err
}
