package bolt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	bbolt "go.etcd.io/bbolt"

	"payouts/rules"
)

// Dump and Restore of the event log, the sandbox inbox and the delivery chaos (rules.EventLog).

func dumpLoggedEvents(tx *bbolt.Tx, emit emitFunc) error {
	b := tx.Bucket(bEventLog)
	if b == nil {
		return nil
	}
	return b.ForEach(func(_, v []byte) error {
		var e rules.LoggedEvent
		if err := unmarshal(v, &e); err != nil {
			return err
		}
		return emit(e)
	})
}

func dumpInboxItems(tx *bbolt.Tx, emit emitFunc) error {
	b := tx.Bucket(bInbox)
	if b == nil {
		return nil
	}
	return b.ForEach(func(k, v []byte) error {
		merchant, _, ok := bytes.Cut(k, []byte{0})
		if !ok {
			return fmt.Errorf("store: inbox key %q", k)
		}
		var it rules.InboxItem
		if err := unmarshal(v, &it); err != nil {
			return err
		}
		return emit(rules.DumpedInboxItem{MerchantID: string(merchant), Item: it})
	})
}

func dumpDeliveryChaos(tx *bbolt.Tx, emit emitFunc) error {
	return miscRecords(tx, "delivery-chaos", func(merchantID, v []byte) error {
		var c rules.DeliveryChaos
		if err := unmarshal(v, &c); err != nil {
			return err
		}
		return emit(rules.DumpedDeliveryChaos{MerchantID: string(merchantID), Chaos: c})
	})
}

// restoreLoggedEvent writes an event under its own seq, so that the cursors merchants hold
// still point where they did; the log's numbering goes on after the highest. The attempt feed
// is not dumped: it is rebuilt from the attempts, so stream cursors start anew.
func restoreLoggedEvent(tx *bbolt.Tx, raw json.RawMessage) error {
	var e rules.LoggedEvent
	if err := json.Unmarshal(raw, &e); err != nil {
		return err
	}
	if e.Seq <= 0 || e.ID == "" || e.MerchantID == "" {
		return errors.New("store: a logged event without its seq, id or merchant")
	}
	log, ids, merc, _, err := eventLogBuckets(tx)
	if err != nil {
		return err
	}
	seq := uint64(e.Seq)
	if log.Get(be64(seq)) != nil || ids.Get(key(e.MerchantID, e.ID)) != nil {
		return ErrExists
	}
	if seq > log.Sequence() {
		if err := log.SetSequence(seq); err != nil {
			return err
		}
	}
	if err := ids.Put(key(e.MerchantID, e.ID), be64(seq)); err != nil {
		return err
	}
	if err := merc.Put(merchantSeqKey(e.MerchantID, seq), nil); err != nil {
		return err
	}
	for n := range e.Attempts { // the feed starts anew, in the restored events' order
		if err := feedAttempt(tx, e.MerchantID, e.Seq, n); err != nil {
			return err
		}
	}
	return putJSON(log, be64(seq), e)
}

func restoreInboxItem(tx *bbolt.Tx, raw json.RawMessage) error {
	var d rules.DumpedInboxItem
	if err := json.Unmarshal(raw, &d); err != nil {
		return err
	}
	return putInboxItem(tx, d.MerchantID, d.Item)
}

func restoreDeliveryChaos(tx *bbolt.Tx, raw json.RawMessage) error {
	var d rules.DumpedDeliveryChaos
	if err := json.Unmarshal(raw, &d); err != nil {
		return err
	}
	return putJSON(tx.Bucket(bMisc), deliveryChaosKey(d.MerchantID), d.Chaos)
}
