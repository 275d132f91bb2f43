package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	bbolt "go.etcd.io/bbolt"

	"payouts/rules"
)

// bEntries holds the ledger entries: merchantId 0 country 0 currency 0 be64(id)
// → the entry, encoded compactly (encodeEntry); written with the balance they move.
var bEntries = []byte("ledger_entries")

// entryPrefix is the key prefix of one balance's entries.
func entryPrefix(merchantID, country, currency string) []byte {
	return append(key(merchantID, country, currency), 0)
}

func entryKey(merchantID, country, currency string, id int64) []byte {
	return binary.BigEndian.AppendUint64(entryPrefix(merchantID, country, currency), uint64(id))
}

// entryTypeCodes number the entry types in the record (one byte).
var entryTypeCodes = func() map[rules.EntryType]byte {
	m := map[rules.EntryType]byte{}
	for i, t := range rules.EntryTypes {
		m[t] = byte(i + 1)
	}
	return m
}()

// encodeEntry writes an entry as a version byte, its type's code, then varints (the time in
// unix nanoseconds, amount, available, balance, payout id) and the order and batch ids: about
// 40 bytes where JSON takes 150.
func encodeEntry(e rules.Entry) []byte {
	b := make([]byte, 0, 48+len(e.OrderID)+len(e.BatchID))
	b = append(b, 1, entryTypeCodes[e.Type])
	b = binary.AppendVarint(b, nanos(e.At))
	b = binary.AppendVarint(b, e.Amount)
	b = binary.AppendVarint(b, e.Available)
	b = binary.AppendVarint(b, e.Balance)
	b = binary.AppendVarint(b, e.PayoutID)
	b = appendString(b, e.OrderID)
	return appendString(b, e.BatchID)
}

var errBadEntry = errors.New("store: a ledger entry record is damaged")

func decodeEntry(id int64, raw []byte) (rules.Entry, error) {
	r := &stateReader{b: raw}
	if r.byte() != 1 {
		return rules.Entry{}, errBadEntry
	}
	code := r.byte()
	e := rules.Entry{ID: id, At: fromNanos(r.varint()), Amount: r.varint(), Available: r.varint(), Balance: r.varint(),
		PayoutID: r.varint(), OrderID: r.string(), BatchID: r.string()}
	if r.err != nil || code == 0 || int(code) > len(rules.EntryTypes) {
		return rules.Entry{}, errBadEntry
	}
	e.Type = rules.EntryTypes[code-1]
	return e, nil
}

// writeEntries chains a transaction's entries of one balance after the balance as it was
// before (rules.ChainEntries), writes them, and checks that they end on the balance as the
// transaction leaves it, whose last entry id it records. A balance changed without an entry,
// or entries that do not add up to the change, break the ledger invariant.
func writeEntries(tx *bbolt.Tx, merchantID string, before, now rules.Balance, entries []rules.Entry) (rules.Balance, error) {
	if len(entries) == 0 {
		if now != before {
			if now.Available != before.Available || now.Balance != before.Balance {
				return now, fmt.Errorf("%w: merchant %s %s/%s changed without a ledger entry", rules.ErrLedger, merchantID, now.Country, now.Currency)
			}
			return now, writeBalance(tx, merchantID, now) // totals only: CheckBalanceChange refused any that does not hold
		}
		return now, nil
	}
	rules.ChainEntries(entries, before.Entries, before.Available, before.Balance)
	b := tx.Bucket(bEntries)
	// A balance's entries come in id order, at the end of its range: its pages fill up rather
	// than split half empty, and the page a transaction copies and grows is smaller on average.
	b.FillPercent = 1.0
	if before.Entries > 0 {
		prev, err := decodeEntry(before.Entries, b.Get(entryKey(merchantID, now.Country, now.Currency, before.Entries)))
		if err != nil {
			return now, fmt.Errorf("store: the last ledger entry of %s %s/%s: %w", merchantID, now.Country, now.Currency, err)
		}
		rules.OrderEntryTimes(entries, prev.At)
	}
	last := entries[len(entries)-1]
	now.Entries = last.ID
	if err := rules.CheckEntriesEnd(merchantID, now, last); err != nil {
		return now, err
	}
	for _, e := range entries {
		if err := b.Put(entryKey(merchantID, now.Country, now.Currency, e.ID), encodeEntry(e)); err != nil {
			return now, err
		}
	}
	return now, writeBalance(tx, merchantID, now)
}

// Entries lists a balance's entries with an id above after, oldest first (rules.LedgerEntries).
func (s *DB) Entries(ctx context.Context, merchantID, country, currency string, after int64, limit int) (rules.EntryPage, error) {
	page := rules.EntryPage{Items: []rules.Entry{}}
	err := s.bdb.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bEntries)
		if b == nil {
			return nil
		}
		prefix := entryPrefix(merchantID, country, currency)
		c := b.Cursor()
		for k, v := c.Seek(entryKey(merchantID, country, currency, after+1)); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			if len(page.Items) == limit {
				page.Next = page.Items[limit-1].ID
				return nil
			}
			e, err := decodeEntry(int64(binary.BigEndian.Uint64(k[len(prefix):])), v)
			if err != nil {
				return err
			}
			page.Items = append(page.Items, e)
		}
		return nil
	})
	return page, err
}

// checkEntries checks every balance's entries from the first: a chain that ends on the
// balance (rules.CheckEntryChain, rules.CheckEntriesEnd).
func checkEntries(tx *bbolt.Tx) error {
	eb := tx.Bucket(bEntries)
	if eb == nil {
		return nil // a file from before entries, opened read-only: Open upgrades it
	}
	return tx.Bucket(bBalances).ForEach(func(k, v []byte) error {
		parts := bytes.Split(k, []byte{0})
		if len(parts) != 3 {
			return fmt.Errorf("store: balance key %q", k)
		}
		b, err := decodeBalance(v)
		if err != nil {
			return err
		}
		var entries []rules.Entry
		prefix := append(bytes.Clone(k), 0)
		c := eb.Cursor()
		for ek, ev := c.Seek(prefix); ek != nil && bytes.HasPrefix(ek, prefix); ek, ev = c.Next() {
			e, err := decodeEntry(int64(binary.BigEndian.Uint64(ek[len(prefix):])), ev)
			if err != nil {
				return err
			}
			entries = append(entries, e)
		}
		last, err := rules.CheckEntryChain(rules.Entry{}, entries)
		if err != nil {
			return fmt.Errorf("merchant %s %s/%s: %w", parts[0], b.Country, b.Currency, err)
		}
		return rules.CheckEntriesEnd(string(parts[0]), b, last)
	})
}

// openEntries gives every balance kept before ledger entries existed (a store upgraded) its
// opening entry, so that the sum of its entries is its balance from then on. The opening is
// stamped with the machine's clock at the upgrade: the service's clock is not running yet.
func openEntries(tx *bbolt.Tx, now time.Time) error {
	type opening struct {
		merchantID string
		b          rules.Balance
	}
	var open []opening
	err := tx.Bucket(bBalances).ForEach(func(k, v []byte) error {
		merchantID, _, _ := bytes.Cut(k, []byte{0})
		b, err := decodeBalance(v)
		if err != nil {
			return err
		}
		if b.Entries == 0 && (b.Balance != 0 || b.Available != 0) {
			open = append(open, opening{string(merchantID), b})
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, o := range open {
		e := rules.Entry{At: now.UTC(), Type: rules.EntryOpening, Amount: o.b.Balance, Available: o.b.Available}
		before := rules.Balance{Country: o.b.Country, Currency: o.b.Currency}
		if _, err := writeEntries(tx, o.merchantID, before, o.b, []rules.Entry{e}); err != nil {
			return err
		}
	}
	return nil
}

func dumpEntries(tx *bbolt.Tx, emit emitFunc) error {
	b := tx.Bucket(bEntries)
	if b == nil {
		return nil
	}
	return b.ForEach(func(k, v []byte) error {
		parts := bytes.SplitN(k, []byte{0}, 4)
		if len(parts) != 4 || len(parts[3]) != 8 {
			return fmt.Errorf("store: ledger entry key %q", k)
		}
		e, err := decodeEntry(int64(binary.BigEndian.Uint64(parts[3])), v)
		if err != nil {
			return err
		}
		return emit(rules.DumpedLedgerEntry{MerchantID: string(parts[0]), Country: string(parts[1]), Currency: string(parts[2]), Entry: e})
	})
}

// restoreEntry writes a dumped entry as it was, and records it as its balance's last (the
// entries of a balance come in order, after the balances).
func restoreEntry(tx *bbolt.Tx, raw json.RawMessage) error {
	var d rules.DumpedLedgerEntry
	if err := json.Unmarshal(raw, &d); err != nil {
		return err
	}
	b, err := readBalance(tx, d.MerchantID, d.Country, d.Currency)
	if err != nil {
		return err
	}
	if d.Entry.ID != b.Entries+1 {
		return fmt.Errorf("store: ledger entry %d of %s %s/%s follows entry %d", d.Entry.ID, d.MerchantID, d.Country, d.Currency, b.Entries)
	}
	if err := tx.Bucket(bEntries).Put(entryKey(d.MerchantID, d.Country, d.Currency, d.Entry.ID), encodeEntry(d.Entry)); err != nil {
		return err
	}
	b.Entries = d.Entry.ID
	return writeBalance(tx, d.MerchantID, b)
}
