package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"slices"
	"time"

	bbolt "go.etcd.io/bbolt"

	"payouts/rules"
)

// The outbox's other buckets (bOutbox itself holds the pending events).
var (
	bOutboxSent = []byte("outbox_sent")  // event id → delivery time (RFC 3339): delivered once
	bOutboxDead = []byte("outbox_dead")  // be64(seq) → Event JSON: given up, kept for inspection
	bMailbox    = []byte("sandbox_mail") // be64(seq) → mail JSON: the sandbox mailbox
	bOutboxDue  = []byte("outbox_due")   // lane 0 be64(NextAt nanos) be64(seq) → nil: pending events by lane and due time
)

// dueKey is an event's place in the due-time index of its lane.
func dueKey(ev rules.Event, seq uint64) []byte {
	lane := rules.LaneOf(ev.Kind)
	k := make([]byte, 0, len(lane)+17)
	k = append(k, lane...)
	k = append(k, 0)
	k = binary.BigEndian.AppendUint64(k, uint64(ev.NextAt.UnixNano()))
	return binary.BigEndian.AppendUint64(k, seq)
}

// forgetDue removes the due-time entry of the pending event seq.
func forgetDue(tx *bbolt.Tx, seq uint64) error {
	raw := tx.Bucket(bOutbox).Get(be64(seq))
	if raw == nil {
		return nil
	}
	var ev rules.Event
	if err := unmarshal(raw, &ev); err != nil {
		return err
	}
	return tx.Bucket(bOutboxDue).Delete(dueKey(ev, seq))
}

// DueEvents lists up to limit outbox events due at now, earliest due first (then in the
// order they were written), and the NextAt of the first event not yet due. Events whose
// id was already delivered are dropped from the outbox instead of being listed
// (rules.OutboxStore).
func (s *DB) DueEvents(ctx context.Context, lane rules.Lane, now time.Time, limit int) ([]rules.OutboxEntry, time.Time, error) {
	return s.DueEventsSkipping(ctx, lane, now, limit, nil)
}

// DueEventsSkipping is DueEvents leaving out the events skip refuses (rules.OutboxSkipper),
// asked in order with each event's merchant. The merchant is kept in the due-time index,
// so an event skipped is not even decoded. The events listed are claimed (claims.go): no
// other call lists them until EventDelivered, RescheduleEvent or DeadEvent settles them or
// their lease ends; claimed events are left out before skip is asked.
func (s *DB) DueEventsSkipping(ctx context.Context, lane rules.Lane, now time.Time, limit int, skip func(seq uint64, merchantID string) bool) ([]rules.OutboxEntry, time.Time, error) {
	due, next, stale, err := s.claimDueEvents(lane, now, limit, skip)
	if err != nil || len(stale) == 0 {
		return due, next, err
	}
	err = s.bdb.Update(func(tx *bbolt.Tx) error {
		for _, seq := range stale {
			if err := forgetDue(tx, seq); err != nil {
				return err
			}
			if err := tx.Bucket(bOutbox).Delete(be64(seq)); err != nil {
				return err
			}
		}
		return nil
	})
	return due, next, err
}

// claimDueEvents lists and claims the due events of a lane, and the seqs of the copies of
// events already delivered, for the caller to drop.
func (s *DB) claimDueEvents(lane rules.Lane, now time.Time, limit int, skip func(seq uint64, merchantID string) bool) (due []rules.OutboxEntry, next time.Time, stale []uint64, err error) {
	err = s.bdb.View(func(tx *bbolt.Tx) error {
		sent := tx.Bucket(bOutboxSent)
		events := tx.Bucket(bOutbox)
		c := tx.Bucket(bOutboxDue).Cursor()
		end := uint64(now.UnixNano())
		prefix := append([]byte(lane), 0)
		// The lane's due-time index: only the events due now are read, however many wait.
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			k = k[len(prefix):]
			if at := binary.BigEndian.Uint64(k[:8]); at > end {
				next = time.Unix(0, int64(at))
				break
			}
			seq := binary.BigEndian.Uint64(k[8:])
			if s.eventClaims.held(seq, now) {
				continue
			}
			var ev rules.Event
			decoded := false
			if skip != nil && len(v) == 0 {
				// An entry written before the index held the merchant.
				if err := getJSON(events, be64(seq), &ev); err != nil {
					return err
				}
				v, decoded = []byte(ev.MerchantID), true
			}
			if skip != nil && skip(seq, string(v)) {
				continue
			}
			if !decoded {
				if err := getJSON(events, be64(seq), &ev); err != nil {
					return err
				}
			}
			if sent.Get([]byte(ev.ID)) != nil {
				stale = append(stale, seq)
				continue
			}
			due = append(due, rules.OutboxEntry{Seq: seq, Event: ev})
			if len(due) == limit {
				break // a full batch: the dispatcher looks again at once, next is not needed
			}
		}
		return nil
	})
	if err != nil {
		return nil, time.Time{}, nil, err
	}
	seqs := make([]uint64, len(due))
	for i, e := range due {
		seqs[i] = e.Seq
	}
	// Another reader may have claimed some of them since they were read: they are its own.
	// And one may have claimed, delivered and released one while this read's snapshot still
	// showed it due: a read begun after the claim no longer finds it as it was read.
	taken := s.eventClaims.take(seqs, now)
	if slices.Contains(taken, true) {
		err := s.bdb.View(func(tx *bbolt.Tx) error {
			c := tx.Bucket(bOutboxDue).Cursor()
			for i, e := range due {
				if !taken[i] {
					continue
				}
				// Seek, not Get: an entry written before the index held the merchant is empty.
				k := dueKey(e.Event, e.Seq)
				if found, _ := c.Seek(k); !bytes.Equal(found, k) {
					taken[i] = false
					s.eventClaims.release(e.Seq)
				}
			}
			return nil
		})
		if err != nil {
			for i, e := range due {
				if taken[i] {
					s.eventClaims.release(e.Seq)
				}
			}
			return nil, time.Time{}, nil, err
		}
	}
	out := due[:0]
	for i, e := range due {
		if taken[i] {
			out = append(out, e)
		}
	}
	return out, next, stale, nil
}

// putDue writes an event's entry in the due-time index of its lane, with its merchant.
func putDue(tx *bbolt.Tx, ev rules.Event, seq uint64) error {
	return tx.Bucket(bOutboxDue).Put(dueKey(ev, seq), []byte(ev.MerchantID))
}

// EventDelivered removes a delivered event and records its id, in one transaction, and
// releases its claim.
func (s *DB) EventDelivered(ctx context.Context, seq uint64, id string, at time.Time) error {
	defer s.eventClaims.release(seq)
	return s.bdb.Update(func(tx *bbolt.Tx) error {
		if err := forgetDue(tx, seq); err != nil {
			return err
		}
		if err := tx.Bucket(bOutbox).Delete(be64(seq)); err != nil {
			return err
		}
		return tx.Bucket(bOutboxSent).Put([]byte(id), []byte(at.UTC().Format(time.RFC3339Nano)))
	})
}

// RescheduleEvent writes an event back in its place with its new schedule, and releases its
// claim. An event no longer in the outbox stays gone.
func (s *DB) RescheduleEvent(ctx context.Context, seq uint64, ev rules.Event) error {
	defer s.eventClaims.release(seq)
	return s.bdb.Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bOutbox)
		if b.Get(be64(seq)) == nil {
			return nil
		}
		if err := forgetDue(tx, seq); err != nil {
			return err
		}
		if err := putDue(tx, ev, seq); err != nil {
			return err
		}
		return putJSON(b, be64(seq), ev)
	})
}

// DeadEvent moves an event from the outbox to the dead letters, and releases its claim.
func (s *DB) DeadEvent(ctx context.Context, seq uint64, ev rules.Event) error {
	defer s.eventClaims.release(seq)
	return s.bdb.Update(func(tx *bbolt.Tx) error {
		if err := forgetDue(tx, seq); err != nil {
			return err
		}
		if err := tx.Bucket(bOutbox).Delete(be64(seq)); err != nil {
			return err
		}
		return putJSON(tx.Bucket(bOutboxDead), be64(seq), ev)
	})
}

// DeadEvents lists the dead letters, oldest first, up to limit.
func (s *DB) DeadEvents(ctx context.Context, limit int) ([]rules.Event, error) {
	return s.events(bOutboxDead, limit)
}

// OutboxEvents lists the pending events in the order they were written, up to limit.
func (s *DB) OutboxEvents(ctx context.Context, limit int) ([]rules.Event, error) {
	return s.events(bOutbox, limit)
}

func (s *DB) events(bucket []byte, limit int) ([]rules.Event, error) {
	var out []rules.Event
	err := s.bdb.View(func(tx *bbolt.Tx) error {
		c := tx.Bucket(bucket).Cursor()
		for k, v := c.First(); k != nil && len(out) < limit; k, v = c.Next() {
			var ev rules.Event
			if err := unmarshal(v, &ev); err != nil {
				return err
			}
			out = append(out, ev)
		}
		return nil
	})
	return out, err
}

// WasDelivered reports whether the event id was delivered, and when.
func (s *DB) WasDelivered(ctx context.Context, id string) (time.Time, bool, error) {
	var at time.Time
	var ok bool
	err := s.bdb.View(func(tx *bbolt.Tx) error {
		v := tx.Bucket(bOutboxSent).Get([]byte(id))
		if v == nil {
			return nil
		}
		ok = true
		var err error
		at, err = time.Parse(time.RFC3339Nano, string(v))
		return err
	})
	return at, ok, err
}

// PutSandboxMail keeps one mail (JSON) in the sandbox mailbox. A mail of an outbox event
// is written with the event's delivered mark in the same transaction, and not at all when
// the event was already delivered: the mailbox is the one end we own, so a crash between
// the mail and the mark can never make a second copy.
func (s *DB) PutSandboxMail(ctx context.Context, eventID string, raw []byte, at time.Time) error {
	if !json.Valid(raw) {
		return errors.New("store: a sandbox mail is JSON")
	}
	return s.bdb.Update(func(tx *bbolt.Tx) error {
		sent := tx.Bucket(bOutboxSent)
		if eventID != "" {
			if sent.Get([]byte(eventID)) != nil {
				return nil // delivered already
			}
			if err := sent.Put([]byte(eventID), []byte(at.UTC().Format(time.RFC3339Nano))); err != nil {
				return err
			}
		}
		return putMail(tx, eventID, raw, at)
	})
}

// putMail appends a mail to the sandbox mailbox.
func putMail(tx *bbolt.Tx, eventID string, raw []byte, at time.Time) error {
	b := tx.Bucket(bMailbox)
	seq, err := b.NextSequence()
	if err != nil {
		return err
	}
	return b.Put(be64(seq), encodeMail(eventID, raw, at))
}

// A mailbox record is a mail with its event id and time:
//
//	mailVersion, be64(at unix nanos), uvarint length and event id, the mail (JSON)
//
// A record written before they were kept is the mail alone, which starts with '{'.
const mailVersion = 1

func encodeMail(eventID string, raw []byte, at time.Time) []byte {
	b := make([]byte, 0, 1+8+binary.MaxVarintLen64+len(eventID)+len(raw))
	b = append(b, mailVersion)
	b = binary.BigEndian.AppendUint64(b, uint64(nanos(at)))
	b = appendString(b, eventID)
	return append(b, raw...)
}

// decodeMail reads a mailbox record (a copy: nothing points into the mmap). For a record
// of the mail alone, the event id and time are read from the mail's own "eventId" and
// "sentAt" (web/notify.Mail), when it has them.
func decodeMail(v []byte) (eventID string, raw []byte, at time.Time) {
	if id, body, ok := splitMail(v); ok {
		return id, bytes.Clone(body), fromNanos(int64(binary.BigEndian.Uint64(v[1:9])))
	}
	var own struct {
		EventID string    `json:"eventId"`
		SentAt  time.Time `json:"sentAt"`
	}
	if json.Unmarshal(v, &own) == nil {
		eventID, at = own.EventID, own.SentAt
	}
	return eventID, bytes.Clone(v), at
}

// splitMail reads a record with its event id and time: the event id and the mail; ok is
// false for a record of the mail alone.
func splitMail(v []byte) (eventID string, body []byte, ok bool) {
	if len(v) <= 9 || v[0] != mailVersion {
		return "", nil, false
	}
	r := &stateReader{b: v[9:]}
	eventID = r.string()
	return eventID, r.b, r.err == nil
}

// SandboxMails lists the sandbox mailbox, newest first, up to limit.
func (s *DB) SandboxMails(ctx context.Context, limit int) ([][]byte, error) {
	var out [][]byte
	err := s.bdb.View(func(tx *bbolt.Tx) error {
		c := tx.Bucket(bMailbox).Cursor()
		for k, v := c.Last(); k != nil && len(out) < limit; k, v = c.Prev() {
			if _, body, ok := splitMail(v); ok {
				v = body
			}
			out = append(out, bytes.Clone(v))
		}
		return nil
	})
	return out, err
}

// Outbox housekeeping bounds what the outbox keeps forever: a delivered id is needed only
// while a copy of its event could still arrive (retries end after 24 hours), and the sandbox
// mailbox is for reading recent mail.
const (
	KeepDeliveredIDs = 7 * 24 * time.Hour
	KeepSandboxMails = 10_000
)

// PruneOutbox forgets delivered ids older than KeepDeliveredIDs and all but the newest
// KeepSandboxMails sandbox mails; it says how many records it removed.
func (s *DB) PruneOutbox(ctx context.Context, now time.Time) (int, error) {
	removed := 0
	err := s.bdb.Update(func(tx *bbolt.Tx) error {
		sent := tx.Bucket(bOutboxSent)
		cutoff := now.Add(-KeepDeliveredIDs)
		var old [][]byte
		err := sent.ForEach(func(k, v []byte) error {
			if at, err := time.Parse(time.RFC3339Nano, string(v)); err == nil && at.Before(cutoff) {
				old = append(old, bytes.Clone(k))
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, k := range old {
			if err := sent.Delete(k); err != nil {
				return err
			}
		}
		removed += len(old)
		// Mail keys are sequence numbers: the oldest come first.
		box := tx.Bucket(bMailbox)
		excess := box.Stats().KeyN - KeepSandboxMails
		var oldest [][]byte
		c := box.Cursor()
		for k, _ := c.First(); k != nil && len(oldest) < excess; k, _ = c.Next() {
			oldest = append(oldest, bytes.Clone(k))
		}
		for _, k := range oldest {
			if err := box.Delete(k); err != nil {
				return err
			}
		}
		removed += len(oldest)
		return nil
	})
	return removed, err
}
