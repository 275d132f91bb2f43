package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	bbolt "go.etcd.io/bbolt"

	"payouts/rules"
)

// The event log, the sandbox inbox and the delivery chaos (rules.EventLog). Their
// buckets are made by the first write, so that a file from before them opens unchanged.
var (
	bEventLog     = []byte("event_log")          // be64(seq) → LoggedEvent JSON
	bEventLogIDs  = []byte("event_log_ids")      // merchantId 0 eventId → be64(seq)
	bEventLogMerc = []byte("event_log_merchant") // merchantId 0 be64(seq) → nil
	bInbox        = []byte("sandbox_inbox")      // merchantId 0 be64(seq) → InboxItem JSON
	bEventFeed    = []byte("event_feed")         // merchantId 0 be64(cursor) → be64(event seq) be32(attempt index)
)

func eventFeed(tx *bbolt.Tx) (*bbolt.Bucket, error) { return tx.CreateBucketIfNotExists(bEventFeed) }

func eventLogBuckets(tx *bbolt.Tx) (log, ids, merc, inbox *bbolt.Bucket, err error) {
	bs := make([]*bbolt.Bucket, 4)
	for i, name := range [][]byte{bEventLog, bEventLogIDs, bEventLogMerc, bInbox} {
		if bs[i], err = tx.CreateBucketIfNotExists(name); err != nil {
			return
		}
	}
	return bs[0], bs[1], bs[2], bs[3], nil
}

func merchantSeqKey(merchantID string, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(append([]byte(merchantID), 0), seq)
}

// LogAttempt appends an attempt to an event's record, creating it on the first.
func (s *DB) LogAttempt(ctx context.Context, ev rules.LoggedEvent, a rules.DeliveryAttempt) error {
	return s.bdb.Update(func(tx *bbolt.Tx) error {
		log, ids, merc, _, err := eventLogBuckets(tx)
		if err != nil {
			return err
		}
		idKey := key(ev.MerchantID, ev.ID)
		var rec rules.LoggedEvent
		if v := ids.Get(idKey); v != nil {
			if err := getJSON(log, v, &rec); err != nil {
				return err
			}
		} else {
			seq, err := log.NextSequence()
			if err != nil {
				return err
			}
			rec = ev
			rec.Seq, rec.Attempts, rec.DeliveredAt = int64(seq), nil, time.Time{}
			if err := ids.Put(idKey, be64(seq)); err != nil {
				return err
			}
			if err := merc.Put(merchantSeqKey(ev.MerchantID, seq), nil); err != nil {
				return err
			}
		}
		rec.Attempts = append(rec.Attempts, a)
		if a.Delivered() && rec.DeliveredAt.IsZero() {
			rec.DeliveredAt = a.At
		}
		if err := feedAttempt(tx, rec.MerchantID, rec.Seq, len(rec.Attempts)-1); err != nil {
			return err
		}
		return putJSON(log, be64(uint64(rec.Seq)), rec)
	})
}

// feedAttempt appends attempt n of the event seq to its merchant's feed.
func feedAttempt(tx *bbolt.Tx, merchantID string, seq int64, n int) error {
	feed, err := eventFeed(tx)
	if err != nil {
		return err
	}
	cursor, err := feed.NextSequence()
	if err != nil {
		return err
	}
	return feed.Put(merchantSeqKey(merchantID, cursor), binary.BigEndian.AppendUint32(be64(uint64(seq)), uint32(n)))
}

// AttemptsAfter lists a merchant's delivery attempts after a feed cursor, oldest first.
func (s *DB) AttemptsAfter(ctx context.Context, merchantID string, after int64, limit int) ([]rules.FedAttempt, error) {
	var out []rules.FedAttempt
	err := s.bdb.View(func(tx *bbolt.Tx) error {
		log, feed := tx.Bucket(bEventLog), tx.Bucket(bEventFeed)
		if log == nil || feed == nil {
			return nil
		}
		prefix := append([]byte(merchantID), 0)
		c := feed.Cursor()
		for k, v := c.Seek(merchantSeqKey(merchantID, uint64(after)+1)); k != nil && bytes.HasPrefix(k, prefix) && len(out) < limit; k, v = c.Next() {
			if len(v) != 12 {
				return fmt.Errorf("store: event feed entry %q", v)
			}
			var e rules.LoggedEvent
			if err := getJSON(log, v[:8], &e); err != nil {
				if errors.Is(err, ErrNotFound) {
					continue // pruned
				}
				return err
			}
			n := int(binary.BigEndian.Uint32(v[8:]))
			if n >= len(e.Attempts) {
				return fmt.Errorf("store: event feed names attempt %d of %s, which has %d", n, e.ID, len(e.Attempts))
			}
			a := e.Attempts[n]
			e.Attempts = nil
			out = append(out, rules.FedAttempt{Cursor: int64(binary.BigEndian.Uint64(k[len(prefix):])), Event: e, Attempt: a})
		}
		return nil
	})
	return out, err
}

// LoggedEvents lists a merchant's events after q.After, oldest first.
func (s *DB) LoggedEvents(ctx context.Context, merchantID string, q rules.EventQuery) ([]rules.LoggedEvent, error) {
	var out []rules.LoggedEvent
	err := s.bdb.View(func(tx *bbolt.Tx) error {
		log, merc := tx.Bucket(bEventLog), tx.Bucket(bEventLogMerc)
		if log == nil || merc == nil {
			return nil
		}
		prefix := append([]byte(merchantID), 0)
		c := merc.Cursor()
		for k, _ := c.Seek(merchantSeqKey(merchantID, uint64(q.After)+1)); k != nil && bytes.HasPrefix(k, prefix) && len(out) < q.Limit; k, _ = c.Next() {
			var e rules.LoggedEvent
			if err := getJSON(log, k[len(prefix):], &e); err != nil {
				if errors.Is(err, ErrNotFound) {
					continue
				}
				return err
			}
			if q.Matches(e) {
				out = append(out, e)
			}
		}
		return nil
	})
	return out, err
}

// LoggedEvent reads one of a merchant's events.
func (s *DB) LoggedEvent(ctx context.Context, merchantID, id string) (rules.LoggedEvent, error) {
	var e rules.LoggedEvent
	err := s.bdb.View(func(tx *bbolt.Tx) error {
		log, ids := tx.Bucket(bEventLog), tx.Bucket(bEventLogIDs)
		if log == nil || ids == nil {
			return ErrNotFound
		}
		v := ids.Get(key(merchantID, id))
		if v == nil {
			return ErrNotFound
		}
		return getJSON(log, v, &e)
	})
	return e, err
}

// PruneEventLog forgets the events first tried, and the inbox items received, before cutoff.
func (s *DB) PruneEventLog(ctx context.Context, cutoff time.Time) (int, error) {
	n := 0
	err := s.bdb.Update(func(tx *bbolt.Tx) error {
		log, ids, merc, inbox, err := eventLogBuckets(tx)
		if err != nil {
			return err
		}
		var old []rules.LoggedEvent
		err = log.ForEach(func(k, v []byte) error {
			var e rules.LoggedEvent
			if err := unmarshal(v, &e); err != nil {
				return err
			}
			if e.CreatedAt.Before(cutoff) {
				old = append(old, rules.LoggedEvent{Seq: e.Seq, ID: e.ID, MerchantID: e.MerchantID})
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, e := range old {
			if err := log.Delete(be64(uint64(e.Seq))); err != nil {
				return err
			}
			if err := ids.Delete(key(e.MerchantID, e.ID)); err != nil {
				return err
			}
			if err := merc.Delete(merchantSeqKey(e.MerchantID, uint64(e.Seq))); err != nil {
				return err
			}
		}
		n = len(old)
		if len(old) > 0 {
			gone := make(map[uint64]bool, len(old))
			for _, e := range old {
				gone[uint64(e.Seq)] = true
			}
			feed, err := eventFeed(tx)
			if err != nil {
				return err
			}
			var stale [][]byte
			err = feed.ForEach(func(k, v []byte) error {
				if len(v) >= 8 && gone[binary.BigEndian.Uint64(v[:8])] {
					stale = append(stale, bytes.Clone(k))
				}
				return nil
			})
			if err != nil {
				return err
			}
			for _, k := range stale {
				if err := feed.Delete(k); err != nil {
					return err
				}
			}
		}
		var dead [][]byte
		err = inbox.ForEach(func(k, v []byte) error {
			var it rules.InboxItem
			if err := unmarshal(v, &it); err != nil {
				return err
			}
			if it.ReceivedAt.Before(cutoff) {
				dead = append(dead, bytes.Clone(k))
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, k := range dead {
			if err := inbox.Delete(k); err != nil {
				return err
			}
		}
		n += len(dead)
		return nil
	})
	return n, err
}

// PutInboxItem keeps a notification the sandbox inbox received.
func (s *DB) PutInboxItem(ctx context.Context, merchantID string, it rules.InboxItem) error {
	return s.bdb.Update(func(tx *bbolt.Tx) error { return putInboxItem(tx, merchantID, it) })
}

// putInboxItem appends an item to a merchant's inbox.
func putInboxItem(tx *bbolt.Tx, merchantID string, it rules.InboxItem) error {
	_, _, _, inbox, err := eventLogBuckets(tx)
	if err != nil {
		return err
	}
	seq, err := inbox.NextSequence()
	if err != nil {
		return err
	}
	return putJSON(inbox, merchantSeqKey(merchantID, seq), it)
}

// InboxItems lists a merchant's inbox, newest first by receivedAt.
func (s *DB) InboxItems(ctx context.Context, merchantID string, limit int) ([]rules.InboxItem, error) {
	out := []rules.InboxItem{}
	err := s.bdb.View(func(tx *bbolt.Tx) error {
		inbox := tx.Bucket(bInbox)
		if inbox == nil {
			return nil
		}
		prefix := append([]byte(merchantID), 0)
		c := inbox.Cursor()
		k, v := c.Seek(merchantSeqKey(merchantID, ^uint64(0)))
		if k == nil {
			k, v = c.Last()
		} else if !bytes.Equal(k, merchantSeqKey(merchantID, ^uint64(0))) {
			k, v = c.Prev()
		}
		// Deliveries at once are stamped as they arrive and stored as they commit, which may
		// be the other order: past the page, the items stamped later than its oldest belong
		// in it (inboxSlack bounds how far back they are looked for).
		var oldest time.Time // of the page's first limit items
		for extra := 0; k != nil && bytes.HasPrefix(k, prefix) && extra < inboxSlack; k, v = c.Prev() {
			var it rules.InboxItem
			if err := unmarshal(v, &it); err != nil {
				return err
			}
			if len(out) >= limit {
				extra++
				if !it.ReceivedAt.After(oldest) {
					continue
				}
			} else if len(out) == 0 || it.ReceivedAt.Before(oldest) {
				oldest = it.ReceivedAt
			}
			out = append(out, it)
		}
		return nil
	})
	slices.SortStableFunc(out, func(a, b rules.InboxItem) int { return b.ReceivedAt.Compare(a.ReceivedAt) })
	return out[:min(len(out), limit)], err
}

// inboxSlack is how many items past a page of the inbox are read for one stamped later than
// the page's oldest.
const inboxSlack = 64

func deliveryChaosKey(merchantID string) []byte { return key("delivery-chaos", merchantID) }

// DeliveryChaos is a merchant's delivery chaos (ErrNotFound when off).
func (s *DB) DeliveryChaos(ctx context.Context, merchantID string) (rules.DeliveryChaos, error) {
	var c rules.DeliveryChaos
	err := s.bdb.View(func(tx *bbolt.Tx) error { return getJSON(tx.Bucket(bMisc), deliveryChaosKey(merchantID), &c) })
	return c, err
}

// PutDeliveryChaos sets a merchant's delivery chaos.
func (s *DB) PutDeliveryChaos(ctx context.Context, merchantID string, c rules.DeliveryChaos) error {
	return s.bdb.Update(func(tx *bbolt.Tx) error { return putJSON(tx.Bucket(bMisc), deliveryChaosKey(merchantID), c) })
}

// DeleteDeliveryChaos ends a merchant's delivery chaos (none is no error).
func (s *DB) DeleteDeliveryChaos(ctx context.Context, merchantID string) error {
	return s.bdb.Update(func(tx *bbolt.Tx) error { return tx.Bucket(bMisc).Delete(deliveryChaosKey(merchantID)) })
}
