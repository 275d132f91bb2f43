package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	bbolt "go.etcd.io/bbolt"

	"payouts/rules"
)

// Dump and Restore copy a store in the engine-neutral records of rules.DumpRecord (payouts
// migrate). Dump reads everything in one read transaction, kind by kind in
// rules.DumpKinds order; Restore writes the records into an empty database in one write
// transaction, through the writes the engine uses elsewhere, so that every index is built
// as a write would have built it. The lookup request ids are not dumped: they only refuse
// a reused id for a day.

// dumpers emit the records of one kind: one for each of rules.DumpKinds.
var dumpers = map[string]func(tx *bbolt.Tx, emit emitFunc) error{
	rules.DumpMerchant:        dumpMerchants,
	rules.DumpBalance:         dumpBalances,
	rules.DumpPayout:          dumpPayouts,
	rules.DumpEvent:           dumpEvents,
	rules.DumpDelivered:       dumpDelivered,
	rules.DumpMail:            dumpMails,
	rules.DumpCard:            dumpCards,
	rules.DumpSession:         dumpSessions,
	rules.DumpCardSession:     dumpCardSessions,
	rules.DumpClock:           dumpClock,
	rules.DumpScripts:         dumpScripts,
	rules.DumpDirectory:       dumpDirectory,
	rules.DumpIntegrationUser: dumpIntegrationUsers,
	rules.DumpLoggedEvent:     dumpLoggedEvents,
	rules.DumpInboxItem:       dumpInboxItems,
	rules.DumpDeliveryChaos:   dumpDeliveryChaos,
	rules.DumpBatch:           dumpBatches,
	rules.DumpLedgerEntry:     dumpEntries,
	rules.DumpUser:            dumpUsers,
	rules.DumpAudit:           dumpAudit,
}

// emitFunc hands one record of a kind to Dump's caller.
type emitFunc func(v any) error

// Dump calls fn with every record of the store, in rules.DumpKinds order, in one read
// transaction (a consistent copy while the server runs). fn's error stops the dump.
func (s *DB) Dump(ctx context.Context, fn func(rules.DumpRecord) error) error {
	return s.bdb.View(func(tx *bbolt.Tx) error {
		for _, kind := range rules.DumpKinds {
			dump := dumpers[kind]
			if dump == nil {
				return fmt.Errorf("store: no dump of %s records", kind)
			}
			emit := func(v any) error {
				raw, err := marshal(v)
				if err != nil {
					return err
				}
				return fn(rules.DumpRecord{Kind: kind, Value: raw})
			}
			if err := dump(tx, emit); err != nil {
				return fmt.Errorf("dump %s: %w", kind, err)
			}
		}
		return nil
	})
}

func dumpMerchants(tx *bbolt.Tx, emit emitFunc) error {
	return tx.Bucket(bMerchants).ForEach(func(_, v []byte) error {
		var m rules.Merchant
		if err := unmarshal(v, &m); err != nil {
			return err
		}
		return emit(&m)
	})
}

func dumpBalances(tx *bbolt.Tx, emit emitFunc) error {
	return tx.Bucket(bBalances).ForEach(func(k, v []byte) error {
		parts := bytes.Split(k, []byte{0})
		if len(parts) != 3 {
			return fmt.Errorf("store: balance key %q", k)
		}
		b, err := decodeBalance(v)
		if err != nil {
			return err
		}
		return emit(rules.DumpedBalance{MerchantID: string(parts[0]), Balance: b})
	})
}

func dumpPayouts(tx *bbolt.Tx, emit emitFunc) error {
	pb := payoutBucketsOf(tx)
	return pb.core.ForEach(func(k, _ []byte) error {
		p, due, err := pb.read(int64(binary.BigEndian.Uint64(k)))
		if err != nil {
			return err
		}
		return emit(rules.DumpedPayout{Payout: p, Due: due})
	})
}

func dumpEvents(tx *bbolt.Tx, emit emitFunc) error {
	for _, b := range []struct {
		name []byte
		dead bool
	}{{bOutbox, false}, {bOutboxDead, true}} {
		err := tx.Bucket(b.name).ForEach(func(_, v []byte) error {
			var ev rules.Event
			if err := unmarshal(v, &ev); err != nil {
				return err
			}
			return emit(rules.DumpedEvent{Event: ev, Dead: b.dead})
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func dumpDelivered(tx *bbolt.Tx, emit emitFunc) error {
	return tx.Bucket(bOutboxSent).ForEach(func(k, v []byte) error {
		at, err := time.Parse(time.RFC3339Nano, string(v))
		if err != nil {
			return fmt.Errorf("store: delivery time of %q: %w", k, err)
		}
		return emit(rules.DumpedDelivery{ID: string(k), At: at})
	})
}

func dumpMails(tx *bbolt.Tx, emit emitFunc) error {
	return tx.Bucket(bMailbox).ForEach(func(_, v []byte) error {
		eventID, raw, at := decodeMail(v)
		return emit(rules.DumpedMail{EventID: eventID, Raw: raw, At: at})
	})
}

func dumpCards(tx *bbolt.Tx, emit emitFunc) error {
	err := tx.Bucket(bCards).ForEach(func(k, v []byte) error {
		parts := bytes.SplitN(k, []byte{0}, 3)
		if len(parts) != 3 {
			return fmt.Errorf("store: card key %q", k)
		}
		docType, err := strconv.Atoi(string(parts[1]))
		if err != nil {
			return fmt.Errorf("store: card key %q: %w", k, err)
		}
		var c cardRecord
		if err := unmarshal(v, &c); err != nil {
			return err
		}
		return emit(rules.DumpedCard{MerchantID: string(parts[0]), DocType: docType, DocNumber: string(parts[2]),
			Ref: c.ref(), Sealed: c.Sealed, OnFile: c.OnFile})
	})
	if err != nil {
		return err
	}
	return tx.Bucket(bCardByPay).ForEach(func(k, v []byte) error {
		var c cardRecord
		if err := unmarshal(v, &c); err != nil {
			return err
		}
		return emit(rules.DumpedCard{PayoutID: int64(binary.BigEndian.Uint64(k)), Ref: c.ref(), Sealed: c.Sealed, OnFile: c.OnFile})
	})
}

func dumpSessions(tx *bbolt.Tx, emit emitFunc) error {
	return tx.Bucket(bSessions).ForEach(func(k, v []byte) error {
		if len(v) < 8 {
			return nil // malformed: never found, dropped by Cleanup
		}
		return emit(rules.DumpedSession{Token: string(k), Data: bytes.Clone(v[8:]), Expiry: expiryOf(v).UTC()})
	})
}

func dumpCardSessions(tx *bbolt.Tx, emit emitFunc) error {
	c := tx.Bucket(bMisc).Cursor()
	for k, v := c.Seek(cardSessionPrefix); k != nil && bytes.HasPrefix(k, cardSessionPrefix); k, v = c.Next() {
		if len(k) != len(cardSessionPrefix)+8 || len(v) < 8 {
			continue
		}
		err := emit(rules.DumpedCardSession{PayoutID: int64(binary.BigEndian.Uint64(k[len(cardSessionPrefix):])),
			SessionID: string(v[8:]), Expiry: expiryOf(v).UTC()})
		if err != nil {
			return err
		}
	}
	return nil
}

func dumpClock(tx *bbolt.Tx, emit emitFunc) error {
	v := tx.Bucket(bMeta).Get(metaClockOffset)
	if v == nil {
		return nil
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		return err
	}
	return emit(rules.DumpedClock{Offset: time.Duration(n)})
}

// miscRecords calls fn with the rest of the key and the value of each misc record under
// prefix (a key without its NUL).
func miscRecords(tx *bbolt.Tx, prefix string, fn func(rest, v []byte) error) error {
	p := append([]byte(prefix), 0)
	c := tx.Bucket(bMisc).Cursor()
	for k, v := c.Seek(p); k != nil && bytes.HasPrefix(k, p); k, v = c.Next() {
		if err := fn(k[len(p):], v); err != nil {
			return err
		}
	}
	return nil
}

func dumpScripts(tx *bbolt.Tx, emit emitFunc) error {
	return miscRecords(tx, "sandbox-rules", func(merchantID, v []byte) error {
		var rs []rules.ScriptRule
		if err := unmarshal(v, &rs); err != nil {
			return err
		}
		return emit(rules.DumpedScripts{MerchantID: string(merchantID), Rules: rs})
	})
}

func dumpDirectory(tx *bbolt.Tx, emit emitFunc) error {
	return miscRecords(tx, "directory", func(rest, v []byte) error {
		country, id, ok := bytes.Cut(rest, []byte{0})
		if !ok {
			return fmt.Errorf("store: directory key %q", rest)
		}
		var e rules.DirectoryEntry
		if err := unmarshal(v, &e); err != nil {
			return err
		}
		return emit(rules.DumpedDirectoryEntry{Country: string(country), ID: string(id), Entry: e})
	})
}

func dumpIntegrationUsers(tx *bbolt.Tx, emit emitFunc) error {
	return miscRecords(tx, "integration-user", func(_, v []byte) error {
		var u rules.IntegrationUser
		if err := unmarshal(v, &u); err != nil {
			return err
		}
		return emit(&u)
	})
}

// errRestoreNotEmpty refuses a restore into a database in use.
var errRestoreNotEmpty = errors.New("store: restore needs an empty database, and this one holds merchants or payouts")

// Restore writes dumped records into an empty database (one without merchants or payouts),
// in one transaction: a record that does not fit stops it with nothing written. Payouts
// keep their ids, and the numbering of payouts and merchants goes on after the highest
// restored; events take new outbox seqs in the order given.
func (s *DB) Restore(ctx context.Context, recs []rules.DumpRecord) error {
	return s.bdb.Update(func(tx *bbolt.Tx) error {
		for _, b := range [][]byte{bMerchants, bPayouts} {
			if k, _ := tx.Bucket(b).Cursor().First(); k != nil {
				return errRestoreNotEmpty
			}
		}
		appendOnly(tx)
		for i, r := range recs {
			if err := restore(tx, s.due, r); err != nil {
				return fmt.Errorf("restore: record %d (%s): %w", i, r.Kind, err)
			}
		}
		return openEntries(tx, time.Now()) // a dump made before ledger entries existed
	})
}

// restore writes one record; a payout is queued in dq once tx commits.
func restore(tx *bbolt.Tx, dq *dueQueue, r rules.DumpRecord) error {
	switch r.Kind {
	case rules.DumpMerchant:
		var m rules.Merchant
		if err := json.Unmarshal(r.Value, &m); err != nil {
			return err
		}
		return restoreMerchant(tx, &m)
	case rules.DumpBalance:
		var b rules.DumpedBalance
		if err := json.Unmarshal(r.Value, &b); err != nil {
			return err
		}
		return writeBalance(tx, b.MerchantID, b.Balance)
	case rules.DumpPayout:
		var p rules.DumpedPayout
		if err := json.Unmarshal(r.Value, &p); err != nil {
			return err
		}
		if p.Payout == nil {
			return errors.New("store: a payout record without its payout")
		}
		return putPayoutWithID(tx, dq, p.Payout, p.Due)
	case rules.DumpEvent:
		var e rules.DumpedEvent
		if err := json.Unmarshal(r.Value, &e); err != nil {
			return err
		}
		if !e.Dead {
			return enqueue(tx, e.Event)
		}
		seq, err := tx.Bucket(bOutbox).NextSequence() // the dead letters share the outbox's seqs
		if err != nil {
			return err
		}
		return putJSON(tx.Bucket(bOutboxDead), be64(seq), e.Event)
	case rules.DumpDelivered:
		var d rules.DumpedDelivery
		if err := json.Unmarshal(r.Value, &d); err != nil {
			return err
		}
		if d.ID == "" {
			return errors.New("store: a delivered event id is empty")
		}
		return tx.Bucket(bOutboxSent).Put([]byte(d.ID), []byte(d.At.UTC().Format(time.RFC3339Nano)))
	case rules.DumpMail:
		var m rules.DumpedMail
		if err := json.Unmarshal(r.Value, &m); err != nil {
			return err
		}
		if !json.Valid(m.Raw) {
			return errors.New("store: a sandbox mail is JSON")
		}
		return putMail(tx, m.EventID, m.Raw, m.At)
	case rules.DumpCard:
		var c rules.DumpedCard
		if err := json.Unmarshal(r.Value, &c); err != nil {
			return err
		}
		rec := cardRecord{Token: c.Ref.Token, Brand: c.Ref.Brand, BIN: c.Ref.BIN, Last4: c.Ref.Last4, Sealed: c.Sealed, OnFile: c.OnFile}
		if c.PayoutID != 0 {
			return putJSON(tx.Bucket(bCardByPay), payoutCardKey(c.PayoutID, c.Ref.Token), &rec)
		}
		return putJSON(tx.Bucket(bCards), beneficiaryKey(c.MerchantID, c.DocType, c.DocNumber), &rec)
	case rules.DumpSession:
		var d rules.DumpedSession
		if err := json.Unmarshal(r.Value, &d); err != nil {
			return err
		}
		return tx.Bucket(bSessions).Put([]byte(d.Token), expiringValue(d.Expiry, d.Data))
	case rules.DumpCardSession:
		var d rules.DumpedCardSession
		if err := json.Unmarshal(r.Value, &d); err != nil {
			return err
		}
		return tx.Bucket(bMisc).Put(cardSessionKey(d.PayoutID), expiringValue(d.Expiry, []byte(d.SessionID)))
	case rules.DumpClock:
		var d rules.DumpedClock
		if err := json.Unmarshal(r.Value, &d); err != nil {
			return err
		}
		return tx.Bucket(bMeta).Put(metaClockOffset, []byte(strconv.FormatInt(int64(d.Offset), 10)))
	case rules.DumpScripts:
		var d rules.DumpedScripts
		if err := json.Unmarshal(r.Value, &d); err != nil {
			return err
		}
		return putJSON(tx.Bucket(bMisc), sandboxRulesKey(d.MerchantID), d.Rules)
	case rules.DumpDirectory:
		var d rules.DumpedDirectoryEntry
		if err := json.Unmarshal(r.Value, &d); err != nil {
			return err
		}
		return putJSON(tx.Bucket(bMisc), directoryKey(d.Country, d.ID), d.Entry)
	case rules.DumpIntegrationUser:
		var u rules.IntegrationUser
		if err := json.Unmarshal(r.Value, &u); err != nil {
			return err
		}
		return putIntegrationUser(tx.Bucket(bMisc), &u)
	}
	if f := moreRestores[r.Kind]; f != nil {
		return f(tx, r.Value)
	}
	return fmt.Errorf("store: unknown record kind %q", r.Kind)
}

// moreRestores write the kinds that restore's switch does not: those of the features
// in files of their own. With that switch, one for each of rules.DumpKinds.
var moreRestores = map[string]func(tx *bbolt.Tx, raw json.RawMessage) error{
	rules.DumpLoggedEvent:   restoreLoggedEvent,
	rules.DumpInboxItem:     restoreInboxItem,
	rules.DumpDeliveryChaos: restoreDeliveryChaos,
	rules.DumpBatch:         restoreBatchRecord,
	rules.DumpLedgerEntry:   restoreEntry,
	rules.DumpUser:          restoreUser,
	rules.DumpAudit:         restoreAudit,
}

// restoreMerchant writes a merchant under its id and moves the numbering of merchants past
// a numeric id.
func restoreMerchant(tx *bbolt.Tx, m *rules.Merchant) error {
	if m.ID == "" {
		return errors.New("store: a merchant without an id")
	}
	b := tx.Bucket(bMerchants)
	if b.Get([]byte(m.ID)) != nil {
		return ErrExists
	}
	if n, err := strconv.ParseUint(m.ID, 10, 64); err == nil && n > b.Sequence() {
		if err := b.SetSequence(n); err != nil {
			return err
		}
	}
	return putJSON(b, []byte(m.ID), m)
}
