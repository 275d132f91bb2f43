package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"slices"
	"time"

	bbolt "go.etcd.io/bbolt"

	"payouts/rules"
)

// What the dashboard reads of the outbox and does to it. It goes through the outbox's own
// buckets and its enqueue, never through the payout records (their encoding is the payouts
// file's business).

// OutboxRecords lists the events held in the outbox and in the dead letters, newest first,
// up to limit, those keep(rec) accepts.
func (s *DB) OutboxRecords(ctx context.Context, limit int, keep func(rules.OutboxRecord) bool) ([]rules.OutboxRecord, error) {
	var out []rules.OutboxRecord
	err := s.bdb.View(func(tx *bbolt.Tx) error {
		for _, b := range []struct {
			name []byte
			dead bool
		}{{bOutbox, false}, {bOutboxDead, true}} {
			c := tx.Bucket(b.name).Cursor()
			for k, v := c.Last(); k != nil; k, v = c.Prev() {
				var ev rules.Event
				if err := unmarshal(v, &ev); err != nil {
					return err
				}
				rec := rules.HeldRecord(ev, b.dead)
				if keep == nil || keep(rec) {
					out = append(out, rec)
				}
			}
		}
		return nil
	})
	slices.SortStableFunc(out, func(a, b rules.OutboxRecord) int { return b.CreatedAt.Compare(a.CreatedAt) })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, err
}

// maxDeliveredScan bounds how many delivered ids one listing reads (they are kept for
// KeepDeliveredIDs, then pruned).
const maxDeliveredScan = 100_000

// DeliveredRecords lists the delivered event ids, newest delivery first, up to limit, those
// keep(rec) accepts. The kind and, for outcome events ("kind:payoutId:status"), the payout
// id are read from the id.
func (s *DB) DeliveredRecords(ctx context.Context, limit int, keep func(rules.OutboxRecord) bool) ([]rules.OutboxRecord, error) {
	var out []rules.OutboxRecord
	err := s.bdb.View(func(tx *bbolt.Tx) error {
		c := tx.Bucket(bOutboxSent).Cursor()
		n := 0
		for k, v := c.First(); k != nil && n < maxDeliveredScan; k, v = c.Next() {
			n++
			at, err := time.Parse(time.RFC3339Nano, string(v))
			if err != nil {
				continue
			}
			rec := rules.DeliveredRecord(string(k), at)
			if keep == nil || keep(rec) {
				out = append(out, rec)
			}
		}
		return nil
	})
	slices.SortFunc(out, func(a, b rules.OutboxRecord) int { return b.DeliveredAt.Compare(a.DeliveredAt) })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, err
}

// ResendEvent makes a new attempt of an event: a pending or retrying event becomes due at
// now; a dead letter goes back into the outbox, due at now, with its attempts and last error
// kept and a fresh CreatedAt (the dispatcher gives up on an event a day after it was
// written, so a revived letter gets its retries again). The event id stays the same, so it
// is still delivered at most once. found is false when no such event is held (unknown, or
// already delivered).
func (s *DB) ResendEvent(ctx context.Context, id string, now time.Time) (rules.Event, bool, error) {
	var ev rules.Event
	found := false
	var oldSeq uint64 // the pending entry replaced, whose claim goes with it
	err := s.bdb.Update(func(tx *bbolt.Tx) error {
		oldSeq = 0
		if tx.Bucket(bOutboxSent).Get([]byte(id)) != nil {
			return nil // delivered: a new attempt would be a second delivery
		}
		seq, raw := findEvent(tx.Bucket(bOutbox), id)
		if raw != nil {
			oldSeq = seq
			if err := unmarshal(raw, &ev); err != nil {
				return err
			}
			if err := forgetDue(tx, seq); err != nil {
				return err
			}
			if err := tx.Bucket(bOutbox).Delete(be64(seq)); err != nil {
				return err
			}
		} else {
			dead := tx.Bucket(bOutboxDead)
			seq, raw = findEvent(dead, id)
			if raw == nil {
				return nil
			}
			if err := unmarshal(raw, &ev); err != nil {
				return err
			}
			if err := dead.Delete(be64(seq)); err != nil {
				return err
			}
			ev.CreatedAt = now
		}
		found = true
		ev.NextAt = now
		return enqueue(tx, ev)
	})
	if err == nil && oldSeq != 0 {
		s.eventClaims.release(oldSeq)
	}
	return ev, found, err
}

// findEvent finds a held event by id (a scan: the dashboard's buttons are rare, the outbox
// short).
func findEvent(b *bbolt.Bucket, id string) (uint64, []byte) {
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		var ev rules.Event
		if unmarshal(v, &ev) == nil && ev.ID == id {
			return beUint(k), bytes.Clone(v)
		}
	}
	return 0, nil
}

func beUint(k []byte) uint64 { return binary.BigEndian.Uint64(k) }
