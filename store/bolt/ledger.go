package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"

	bbolt "go.etcd.io/bbolt"

	"payouts/rules"
)

// balanceRecord is a balance as stored: the wire fields and the ledger's running totals.
// Tracked is false for a record written before the totals existed; it is read as if all of
// its balance had been funded, which keeps the invariant true from then on.
type balanceRecord struct {
	Country   string `json:"country"`
	Currency  string `json:"currency"`
	Available int64  `json:"availableBalance"`
	Balance   int64  `json:"balance"`
	Funded    int64  `json:"funded"`
	Processed int64  `json:"processed"`
	Reversed  int64  `json:"reversed"`
	Tracked   bool   `json:"tracked"`
	Entries   int64  `json:"entries,omitempty"` // the last ledger entry's id (entries.go)
}

func decodeBalance(raw []byte) (rules.Balance, error) {
	var r balanceRecord
	if err := unmarshal(raw, &r); err != nil {
		return rules.Balance{}, err
	}
	if !r.Tracked {
		r.Funded, r.Processed, r.Reversed = r.Balance, 0, 0
	}
	return rules.Balance{Country: r.Country, Currency: r.Currency, Available: r.Available, Balance: r.Balance,
		Funded: r.Funded, Processed: r.Processed, Reversed: r.Reversed, Entries: r.Entries}, nil
}

func encodeBalance(b rules.Balance) ([]byte, error) {
	return marshal(balanceRecord{Country: b.Country, Currency: b.Currency, Available: b.Available, Balance: b.Balance,
		Funded: b.Funded, Processed: b.Processed, Reversed: b.Reversed, Tracked: true, Entries: b.Entries})
}

// readBalance reads one balance in tx; a balance never written is zero.
func readBalance(tx *bbolt.Tx, merchantID, country, currency string) (rules.Balance, error) {
	raw := tx.Bucket(bBalances).Get(key(merchantID, country, currency))
	if raw == nil {
		return rules.Balance{Country: country, Currency: currency}, nil
	}
	return decodeBalance(raw)
}

func writeBalance(tx *bbolt.Tx, merchantID string, b rules.Balance) error {
	raw, err := encodeBalance(b)
	if err != nil {
		return err
	}
	return tx.Bucket(bBalances).Put(key(merchantID, b.Country, b.Currency), raw)
}

// ErrLedger is the invariant failing (rules.ErrLedger).
var ErrLedger = rules.ErrLedger

// CheckAllLedgers checks the invariant of every stored balance from scratch
// (rules.LedgerTally). Tests run it after lifecycle tests.
func (s *DB) CheckAllLedgers(ctx context.Context) error {
	return s.bdb.View(func(tx *bbolt.Tx) error {
		var tally rules.LedgerTally
		pb := payoutBucketsOf(tx)
		err := pb.core.ForEach(func(idKey, _ []byte) error {
			p, _, err := pb.read(int64(binary.BigEndian.Uint64(idKey)))
			if err != nil {
				return err
			}
			return tally.AddPayout(p)
		})
		if err != nil {
			return err
		}
		err = tx.Bucket(bBalances).ForEach(func(k, v []byte) error {
			parts := bytes.Split(k, []byte{0})
			if len(parts) != 3 {
				return fmt.Errorf("store: balance key %q", k)
			}
			b, err := decodeBalance(v)
			if err != nil {
				return err
			}
			return tally.CheckBalance(string(parts[0]), b)
		})
		if err != nil {
			return err
		}
		return checkEntries(tx)
	})
}
