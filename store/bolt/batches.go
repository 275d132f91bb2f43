package bolt

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"

	bbolt "go.etcd.io/bbolt"

	"payouts/rules"
)

// Batches: the batch records by id, the merchant's batchIds, and the items, one
// record each, so that recording a chunk of created items rewrites only those.
var (
	bBatches    = []byte("batches")         // be64(id) → Batch JSON; its sequence numbers batches
	bBatchIDs   = []byte("batch_ids")       // merchantId 0 batchId → be64(id)
	bBatchMerch = []byte("idx_batch_merch") // merchantId 0 be64(id) → nil
	bBatchItems = []byte("batch_items")     // be64(id) be32(seq) → BatchItem JSON
	bBatchRun   = []byte("batch_run")       // be64(id) → nil: batches the runner still has work on
)

func restoreBatchRecord(tx *bbolt.Tx, raw json.RawMessage) error {
	var d rules.DumpedBatch
	if err := json.Unmarshal(raw, &d); err != nil {
		return err
	}
	return restoreBatch(tx, d)
}

func itemKey(id int64, seq int) []byte {
	b := make([]byte, 12)
	binary.BigEndian.PutUint64(b, uint64(id))
	binary.BigEndian.PutUint32(b[8:], uint32(seq))
	return b
}

// runnable says whether the runner still has work on a batch.
func runnable(b *rules.Batch) bool {
	return b.Status == rules.BatchApproved || b.Status == rules.BatchProcessing ||
		b.Status == rules.BatchCompleted && b.NotifiedAt.IsZero()
}

// putBatch writes a batch and its run mark.
func putBatch(tx *bbolt.Tx, b *rules.Batch) error {
	k := be64(uint64(b.ID))
	if err := putJSON(tx.Bucket(bBatches), k, b); err != nil {
		return err
	}
	if runnable(b) {
		return tx.Bucket(bBatchRun).Put(k, nil)
	}
	return tx.Bucket(bBatchRun).Delete(k)
}

// insertBatch writes a new batch (its ID set) with its indexes and items.
func insertBatch(tx *bbolt.Tx, b *rules.Batch, items []rules.BatchItem) error {
	bs := tx.Bucket(bBatches)
	if seq := bs.Sequence(); uint64(b.ID) > seq {
		if err := bs.SetSequence(uint64(b.ID)); err != nil {
			return err
		}
	}
	if err := putBatch(tx, b); err != nil {
		return err
	}
	if err := tx.Bucket(bBatchIDs).Put(key(b.MerchantID, b.BatchID), be64(uint64(b.ID))); err != nil {
		return err
	}
	if err := tx.Bucket(bBatchMerch).Put(keyID([]byte(b.MerchantID), b.ID), nil); err != nil {
		return err
	}
	bi := tx.Bucket(bBatchItems)
	bi.FillPercent = 1.0
	for i := range items {
		if err := putJSON(bi, itemKey(b.ID, items[i].Seq), &items[i]); err != nil {
			return err
		}
	}
	return nil
}

// CreateBatch stores a new batch, or returns the merchant's batch of that batchId.
func (s *DB) CreateBatch(ctx context.Context, b *rules.Batch, items []rules.BatchItem) (*rules.Batch, bool, error) {
	var stored *rules.Batch
	created := false
	err := s.bdb.Update(func(tx *bbolt.Tx) error {
		if raw := tx.Bucket(bBatchIDs).Get(key(b.MerchantID, b.BatchID)); raw != nil {
			stored = &rules.Batch{}
			return getJSON(tx.Bucket(bBatches), raw, stored)
		}
		seq, err := tx.Bucket(bBatches).NextSequence()
		if err != nil {
			return err
		}
		nb := *b
		nb.ID = int64(seq)
		if err := insertBatch(tx, &nb, items); err != nil {
			return err
		}
		stored, created = &nb, true
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	return stored, created, nil
}

// getBatch reads a batch of the merchant in tx.
func getBatch(tx *bbolt.Tx, merchantID string, id int64) (*rules.Batch, error) {
	bs := tx.Bucket(bBatches)
	if bs == nil {
		return nil, ErrNotFound
	}
	var b rules.Batch
	if err := getJSON(bs, be64(uint64(id)), &b); err != nil {
		return nil, err
	}
	if b.MerchantID != merchantID {
		return nil, ErrNotFound
	}
	return &b, nil
}

// Batch reads one batch of the merchant.
func (s *DB) Batch(ctx context.Context, merchantID string, id int64) (*rules.Batch, error) {
	var b *rules.Batch
	err := s.bdb.View(func(tx *bbolt.Tx) (err error) {
		b, err = getBatch(tx, merchantID, id)
		return err
	})
	return b, err
}

// Batches lists the merchant's batches after the id after, in id order.
func (s *DB) Batches(ctx context.Context, merchantID string, after int64, limit int) ([]*rules.Batch, error) {
	out := []*rules.Batch{}
	err := s.bdb.View(func(tx *bbolt.Tx) error {
		idx := tx.Bucket(bBatchMerch)
		if idx == nil {
			return nil
		}
		prefix := append([]byte(merchantID), 0)
		c := idx.Cursor()
		for k, _ := c.Seek(keyID([]byte(merchantID), after+1)); k != nil && len(k) == len(prefix)+8 && string(k[:len(prefix)]) == string(prefix); k, _ = c.Next() {
			if limit > 0 && len(out) >= limit {
				break
			}
			b, err := getBatch(tx, merchantID, int64(binary.BigEndian.Uint64(k[len(prefix):])))
			if err != nil {
				return err
			}
			out = append(out, b)
		}
		return nil
	})
	return out, err
}

// BatchItems lists a batch's items after seq after, with their payouts' stage and status.
func (s *DB) BatchItems(ctx context.Context, merchantID string, id int64, after, limit int) ([]rules.BatchItem, error) {
	var out []rules.BatchItem
	err := s.bdb.View(func(tx *bbolt.Tx) error {
		if _, err := getBatch(tx, merchantID, id); err != nil {
			return err
		}
		pb := payoutBucketsOf(tx)
		c := tx.Bucket(bBatchItems).Cursor()
		prefix := be64(uint64(id))
		for k, v := c.Seek(itemKey(id, after+1)); k != nil && string(k[:8]) == string(prefix); k, v = c.Next() {
			if limit > 0 && len(out) >= limit {
				break
			}
			var it rules.BatchItem
			if err := unmarshal(v, &it); err != nil {
				return err
			}
			if it.PayoutID != 0 {
				p, err := pb.readState(it.PayoutID)
				if err != nil && !errors.Is(err, ErrNotFound) {
					return err
				}
				if p != nil {
					it.Stage, it.Status = p.Stage, p.Status
				}
			}
			out = append(out, it)
		}
		return nil
	})
	return out, err
}

// UpdateBatch changes a batch in one transaction, writing fn's events to the outbox in it.
func (s *DB) UpdateBatch(ctx context.Context, merchantID string, id int64, fn func(*rules.Batch) ([]rules.Event, error)) (*rules.Batch, error) {
	var b *rules.Batch
	err := s.bdb.Update(func(tx *bbolt.Tx) error {
		var err error
		if b, err = getBatch(tx, merchantID, id); err != nil {
			return err
		}
		evs, err := fn(b)
		if err != nil {
			return err
		}
		b.ID, b.MerchantID = id, merchantID
		for _, ev := range evs {
			if err := enqueue(tx, ev); err != nil {
				return err
			}
		}
		return putBatch(tx, b)
	})
	if err != nil {
		return nil, err
	}
	return b, nil
}

// RecordBatchItems writes the payouts or refusals of items.
func (s *DB) RecordBatchItems(ctx context.Context, merchantID string, id int64, items []rules.BatchItem) error {
	return s.bdb.Update(func(tx *bbolt.Tx) error {
		if _, err := getBatch(tx, merchantID, id); err != nil {
			return err
		}
		bi := tx.Bucket(bBatchItems)
		for i := range items {
			k := itemKey(id, items[i].Seq)
			if bi.Get(k) == nil {
				return ErrNotFound
			}
			if err := putJSON(bi, k, &items[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

// RunnableBatches lists the batches the runner still has work on.
func (s *DB) RunnableBatches(ctx context.Context) ([]*rules.Batch, error) {
	var out []*rules.Batch
	err := s.bdb.View(func(tx *bbolt.Tx) error {
		run := tx.Bucket(bBatchRun)
		if run == nil {
			return nil
		}
		return run.ForEach(func(k, _ []byte) error {
			var b rules.Batch
			if err := getJSON(tx.Bucket(bBatches), k, &b); err != nil {
				return err
			}
			out = append(out, &b)
			return nil
		})
	})
	return out, err
}

// UsedOrderIDs says which orderIds the merchant's payouts already use.
func (s *DB) UsedOrderIDs(ctx context.Context, merchantID string, orderIDs []string) (map[string]int64, error) {
	used := map[string]int64{}
	err := s.bdb.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bOrders)
		for _, o := range orderIDs {
			if raw := b.Get(key(merchantID, o)); raw != nil {
				used[o] = int64(binary.BigEndian.Uint64(raw))
			}
		}
		return nil
	})
	return used, err
}

// dumpBatches emits every batch with its items.
func dumpBatches(tx *bbolt.Tx, emit emitFunc) error {
	bs := tx.Bucket(bBatches)
	if bs == nil {
		return nil
	}
	return bs.ForEach(func(k, v []byte) error {
		var b rules.Batch
		if err := unmarshal(v, &b); err != nil {
			return err
		}
		d := rules.DumpedBatch{Batch: &b, Items: []rules.BatchItem{}}
		c := tx.Bucket(bBatchItems).Cursor()
		for ik, iv := c.Seek(itemKey(b.ID, 0)); ik != nil && string(ik[:8]) == string(k); ik, iv = c.Next() {
			var it rules.BatchItem
			if err := unmarshal(iv, &it); err != nil {
				return err
			}
			d.Items = append(d.Items, it)
		}
		return emit(d)
	})
}

// restoreBatch writes a dumped batch with its id.
func restoreBatch(tx *bbolt.Tx, d rules.DumpedBatch) error {
	if d.Batch == nil || d.Batch.ID <= 0 {
		return errors.New("store: a dumped batch needs its id")
	}
	return insertBatch(tx, d.Batch, d.Items)
}
