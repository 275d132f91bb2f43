package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"

	"payouts/rules"
)

// CreatePayout stores p under a new id, with its indexes, its first lifecycle entry (due)
// and its events, in one transaction shared with concurrent creates (db.Batch). If the
// merchant already used p.OrderID, nothing is written and the stored payout is returned
// with created false: the caller decides between a replay and a conflict.
func (s *DB) CreatePayout(p *rules.Payout, due time.Time, events []rules.Event) (*rules.Payout, bool, error) {
	var existing *rules.Payout
	var created bool
	err := s.bolt.Batch(func(tx *bolt.Tx) error {
		// Batch may run this function again alone if its batch fails: start clean.
		existing, created = nil, false
		if raw := tx.Bucket(bOrders).Get(key(p.MerchantID, p.OrderID)); raw != nil {
			existing = new(rules.Payout)
			return getJSON(tx.Bucket(bPayouts), raw, existing)
		}
		if err := insertPayout(tx, p, due, events); err != nil {
			return err
		}
		created = true
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	if created {
		return p, true, nil
	}
	return existing, false, nil
}

// insertPayout writes a new payout with the next id, its order and list indexes, its queue
// entry and its events.
func insertPayout(tx *bolt.Tx, p *rules.Payout, due time.Time, events []rules.Event) error {
	payouts := tx.Bucket(bPayouts)
	seq, err := payouts.NextSequence()
	if err != nil {
		return err
	}
	p.ID = int64(seq)
	idKey := be64(seq)
	if err := putJSON(payouts, idKey, p); err != nil {
		return err
	}
	if err := tx.Bucket(bOrders).Put(key(p.MerchantID, p.OrderID), idKey); err != nil {
		return err
	}
	if err := putIndexes(tx, p); err != nil {
		return err
	}
	if !due.IsZero() {
		if err := setDue(tx, p.ID, due, p.Status); err != nil {
			return err
		}
	}
	for _, ev := range events {
		ev.PayoutID = p.ID
		if err := enqueue(tx, ev); err != nil {
			return err
		}
	}
	return nil
}

// ImportPayouts stores payouts in one transaction without queueing them (bulk loads, such
// as the benchmark's million stored payouts). An orderId already used is an error.
func (s *DB) ImportPayouts(ps []*rules.Payout) error {
	return s.bolt.Update(func(tx *bolt.Tx) error {
		for _, p := range ps {
			if tx.Bucket(bOrders).Get(key(p.MerchantID, p.OrderID)) != nil {
				return fmt.Errorf("import: orderId %s already used", p.OrderID)
			}
			if err := insertPayout(tx, p, time.Time{}, nil); err != nil {
				return err
			}
		}
		return nil
	})
}

func putIndexes(tx *bolt.Tx, p *rules.Payout) error {
	if err := tx.Bucket(bByMerch).Put(keyID([]byte(p.MerchantID), p.ID), nil); err != nil {
		return err
	}
	if err := tx.Bucket(bByStage).Put(keyID(key(p.MerchantID, string(p.Stage)), p.ID), nil); err != nil {
		return err
	}
	return tx.Bucket(bByStatus).Put(keyID(key(p.MerchantID, string(p.Status)), p.ID), nil)
}

func deleteStateIndexes(tx *bolt.Tx, merchantID string, id int64, stage rules.Stage, status rules.Status) error {
	if err := tx.Bucket(bByStage).Delete(keyID(key(merchantID, string(stage)), id)); err != nil {
		return err
	}
	return tx.Bucket(bByStatus).Delete(keyID(key(merchantID, string(status)), id))
}

// Payout reads one payout of a merchant; another merchant's payout is not found.
func (s *DB) Payout(merchantID string, id int64) (*rules.Payout, error) {
	var p rules.Payout
	err := s.bolt.View(func(tx *bolt.Tx) error {
		if id <= 0 {
			return ErrNotFound
		}
		return getJSON(tx.Bucket(bPayouts), be64(uint64(id)), &p)
	})
	if err != nil {
		return nil, err
	}
	if p.MerchantID != merchantID {
		return nil, ErrNotFound
	}
	return &p, nil
}

// PayoutByOrder reads a merchant's payout by its orderId.
func (s *DB) PayoutByOrder(merchantID, orderID string) (*rules.Payout, error) {
	var p rules.Payout
	err := s.bolt.View(func(tx *bolt.Tx) error {
		raw := tx.Bucket(bOrders).Get(key(merchantID, orderID))
		if raw == nil {
			return ErrNotFound
		}
		return getJSON(tx.Bucket(bPayouts), raw, &p)
	})
	if err != nil {
		return nil, err
	}
	return &p, nil
}

// ListPayouts returns one page of a merchant's payouts, newest first, walking the narrowest
// index the filter allows (status, then stage, then all of the merchant's).
func (s *DB) ListPayouts(merchantID string, f rules.ListFilter) (rules.Page, error) {
	var page rules.Page
	if f.Limit <= 0 {
		f.Limit = 50
	}
	if f.OrderID != "" {
		p, err := s.PayoutByOrder(merchantID, f.OrderID)
		if errors.Is(err, ErrNotFound) {
			return page, nil
		}
		if err != nil {
			return page, err
		}
		if matches(p, f) && (f.Cursor == 0 || p.ID < f.Cursor) {
			page.Items = []*rules.Payout{p}
		}
		return page, nil
	}
	bucket, prefix := bByMerch, []byte(merchantID)
	switch {
	case f.Status != "":
		bucket, prefix = bByStatus, key(merchantID, string(f.Status))
	case f.Stage != "":
		bucket, prefix = bByStage, key(merchantID, string(f.Stage))
	}
	prefix = append(prefix, 0)
	err := s.bolt.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucket).Cursor()
		payouts := tx.Bucket(bPayouts)
		var k []byte
		if f.Cursor > 0 {
			k, _ = c.Seek(binary.BigEndian.AppendUint64(bytes.Clone(prefix), uint64(f.Cursor)))
		} else {
			k, _ = c.Seek(append(bytes.Clone(prefix), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff))
		}
		if k == nil {
			k, _ = c.Last()
		} else {
			k, _ = c.Prev()
		}
		scanned := 0
		for ; k != nil && bytes.HasPrefix(k, prefix) && len(k) == len(prefix)+8; k, _ = c.Prev() {
			id := binary.BigEndian.Uint64(k[len(prefix):])
			if scanned == maxScan {
				// A filter no index serves (country, to) stops here with a cursor rather
				// than reading the whole history in one request.
				page.NextCursor = int64(id) + 1
				break
			}
			scanned++
			var p rules.Payout
			if err := getJSON(payouts, be64(id), &p); err != nil {
				return err
			}
			if !f.From.IsZero() && p.CreatedAt.Before(f.From) {
				break // ids grow with creation time: nothing older can match
			}
			if !matches(&p, f) {
				continue
			}
			if len(page.Items) == f.Limit {
				page.NextCursor = page.Items[len(page.Items)-1].ID
				break
			}
			page.Items = append(page.Items, &p)
		}
		return nil
	})
	return page, err
}

// maxScan bounds the payouts one listing request reads.
const maxScan = 5000

func matches(p *rules.Payout, f rules.ListFilter) bool {
	return (f.Stage == "" || p.Stage == f.Stage) &&
		(f.Status == "" || p.Status == f.Status) &&
		(f.Country == "" || p.Country == f.Country) &&
		(f.From.IsZero() || !p.CreatedAt.Before(f.From)) &&
		(f.To.IsZero() || p.CreatedAt.Before(f.To))
}

// PayoutsByID reads several payouts; missing ids are skipped. It remembers what it decoded
// so that an UpdatePayouts of the same payouts, if they did not change in between, need not
// decode them again (the lifecycle reads, asks the rail, then writes).
func (s *DB) PayoutsByID(ids []int64) ([]*rules.Payout, error) {
	out := make([]*rules.Payout, 0, len(ids))
	err := s.bolt.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bPayouts)
		for _, id := range ids {
			raw := b.Get(be64(uint64(id)))
			if raw == nil {
				continue
			}
			p := new(rules.Payout)
			if err := unmarshal(raw, p); err != nil {
				return err
			}
			out = append(out, p)
			s.decoded.put(id, raw, p)
		}
		return nil
	})
	return out, err
}

// WithStatus lists the ids of a merchant's payouts in one status, oldest first.
func (s *DB) WithStatus(merchantID string, status rules.Status, limit int) ([]int64, error) {
	var ids []int64
	prefix := append(key(merchantID, string(status)), 0)
	err := s.bolt.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bByStatus).Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && len(ids) < limit; k, _ = c.Next() {
			if len(k) == len(prefix)+8 {
				ids = append(ids, int64(binary.BigEndian.Uint64(k[len(prefix):])))
			}
		}
		return nil
	})
	return ids, err
}

// Due lists up to limit payouts whose next lifecycle step is due at or before now, oldest
// first, with the status each had when it was queued.
func (s *DB) Due(now time.Time, limit int) ([]rules.DueEntry, error) {
	var due []rules.DueEntry
	err := s.bolt.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bDue).Cursor()
		end := uint64(now.UnixNano())
		for k, v := c.First(); k != nil && len(due) < limit; k, v = c.Next() {
			if binary.BigEndian.Uint64(k[:8]) > end {
				break
			}
			due = append(due, rules.DueEntry{ID: int64(binary.BigEndian.Uint64(k[8:])), Status: rules.Status(v)})
		}
		return nil
	})
	return due, err
}

// NextDue is the time of the earliest queued step, zero when the queue is empty.
func (s *DB) NextDue() (time.Time, error) {
	var t time.Time
	err := s.bolt.View(func(tx *bolt.Tx) error {
		if k, _ := tx.Bucket(bDue).Cursor().First(); k != nil {
			t = time.Unix(0, int64(binary.BigEndian.Uint64(k[:8])))
		}
		return nil
	})
	return t, err
}

func setDue(tx *bolt.Tx, id int64, at time.Time, status rules.Status) error {
	if err := clearDue(tx, id); err != nil {
		return err
	}
	k := make([]byte, 16)
	binary.BigEndian.PutUint64(k, uint64(at.UnixNano()))
	binary.BigEndian.PutUint64(k[8:], uint64(id))
	if err := tx.Bucket(bDue).Put(k, []byte(status)); err != nil {
		return err
	}
	return tx.Bucket(bDueByID).Put(be64(uint64(id)), k)
}

func clearDue(tx *bolt.Tx, id int64) error {
	byID := tx.Bucket(bDueByID)
	idKey := be64(uint64(id))
	if old := byID.Get(idKey); old != nil {
		if err := tx.Bucket(bDue).Delete(bytes.Clone(old)); err != nil {
			return err
		}
		return byID.Delete(idKey)
	}
	return nil
}

// UpdatePayouts runs step on each payout in one transaction: the payout, its indexes, its
// queue entry, the balances and the events it enqueues are written together. A step that
// returns ErrNoChange leaves its payout untouched; any other error aborts the transaction.
func (s *DB) UpdatePayouts(ids []int64, step rules.Step) error {
	return s.bolt.Update(func(tx *bolt.Tx) error {
		l := &ledger{tx: tx}
		payouts := tx.Bucket(bPayouts)
		for _, id := range ids {
			raw := payouts.Get(be64(uint64(id)))
			if raw == nil {
				if err := clearDue(tx, id); err != nil {
					return err
				}
				continue
			}
			p := s.decoded.take(id, raw)
			if p == nil {
				p = new(rules.Payout)
				if err := unmarshal(raw, p); err != nil {
					return err
				}
			}
			stage, status := p.Stage, p.Status
			next, err := step(p, l)
			if errors.Is(err, rules.ErrNoChange) {
				continue
			}
			if err != nil {
				return err
			}
			if err := putJSON(payouts, be64(uint64(id)), p); err != nil {
				return err
			}
			if stage != p.Stage || status != p.Status {
				if err := deleteStateIndexes(tx, p.MerchantID, id, stage, status); err != nil {
					return err
				}
				if err := putIndexes(tx, p); err != nil {
					return err
				}
			}
			if next.IsZero() {
				err = clearDue(tx, id)
			} else {
				err = setDue(tx, id, next, p.Status)
			}
			if err != nil {
				return err
			}
		}
		return l.touched.check(tx) // the ledger invariant (ledger.go)
	})
}

// ledger is rules.Ledger over one write transaction; the balances it writes are checked
// against the ledger invariant before the transaction commits (ledger.go).
type ledger struct {
	tx      *bolt.Tx
	touched touchedBalances
}

func (l *ledger) Balance(merchantID, country, currency string) (rules.Balance, error) {
	return readBalance(l.tx, merchantID, country, currency)
}

func (l *ledger) PutBalance(merchantID string, b rules.Balance) error {
	if b.Available < 0 || b.Balance < 0 || b.Available > b.Balance {
		return errors.New("store: a balance would go negative or above its total")
	}
	if l.touched == nil {
		l.touched = touchedBalances{}
	}
	l.touched.add(merchantID, b.Country, b.Currency)
	return writeBalance(l.tx, merchantID, b)
}

func (l *ledger) Enqueue(ev rules.Event) error { return enqueue(l.tx, ev) }

func enqueue(tx *bolt.Tx, ev rules.Event) error {
	b := tx.Bucket(bOutbox)
	seq, err := b.NextSequence()
	if err != nil {
		return err
	}
	if ev.ID == "" {
		return errors.New("store: an event needs an id")
	}
	if err := putDue(tx, ev, seq); err != nil {
		return err
	}
	return putJSON(b, be64(seq), ev)
}

// Balances lists a merchant's balances.
func (s *DB) Balances(merchantID string) ([]rules.Balance, error) {
	out := []rules.Balance{}
	prefix := append([]byte(merchantID), 0)
	err := s.bolt.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bBalances).Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			b, err := decodeBalance(v)
			if err != nil {
				return err
			}
			out = append(out, b)
		}
		return nil
	})
	return out, err
}

// Fund adds amount (minor units, may be negative to withdraw) to a merchant's balance.
func (s *DB) Fund(merchantID, country, currency string, amount int64) (rules.Balance, error) {
	var out rules.Balance
	err := s.bolt.Update(func(tx *bolt.Tx) error {
		l := &ledger{tx: tx}
		b, err := l.Balance(merchantID, country, currency)
		if err != nil {
			return err
		}
		if b, err = rules.ApplyFunding(b, amount); err != nil {
			return err
		}
		if err := l.PutBalance(merchantID, b); err != nil {
			return err
		}
		out = b
		return l.touched.check(tx) // the ledger invariant (ledger.go)
	})
	return out, err
}

// OutboxDepth counts the events waiting in the outbox.
func (s *DB) OutboxDepth() int {
	n := 0
	s.bolt.View(func(tx *bolt.Tx) error {
		n = tx.Bucket(bOutbox).Stats().KeyN
		return nil
	})
	return n
}

// decodedCache holds payouts PayoutsByID decoded, each with the exact bytes it came from,
// for the UpdatePayouts that usually follows. An entry is used only if the stored bytes are
// still the same, and only once; the cache is small and forgets everything when full.
type decodedCache struct {
	mu sync.Mutex
	m  map[int64]decoded
}

type decoded struct {
	raw []byte
	p   *rules.Payout
}

func (c *decodedCache) put(id int64, raw []byte, p *rules.Payout) {
	cp := *p // the caller keeps p; the cache keeps its own copy
	cp.History = slices.Clone(p.History)
	cp.Errors = slices.Clone(p.Errors)
	if p.Card != nil {
		card := *p.Card
		cp.Card = &card
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) > 4096 {
		c.m = make(map[int64]decoded, 1024)
	}
	c.m[id] = decoded{raw: bytes.Clone(raw), p: &cp}
}

func (c *decodedCache) take(id int64, raw []byte) *rules.Payout {
	c.mu.Lock()
	defer c.mu.Unlock()
	d, ok := c.m[id]
	if !ok {
		return nil
	}
	delete(c.m, id)
	if !bytes.Equal(d.raw, raw) {
		return nil
	}
	return d.p
}
