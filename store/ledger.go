package store

import (
	"bytes"
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"

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
		Funded: r.Funded, Processed: r.Processed, Reversed: r.Reversed}, nil
}

func encodeBalance(b rules.Balance) ([]byte, error) {
	return marshal(balanceRecord{Country: b.Country, Currency: b.Currency, Available: b.Available, Balance: b.Balance,
		Funded: b.Funded, Processed: b.Processed, Reversed: b.Reversed, Tracked: true})
}

// readBalance reads one balance in tx; a balance never written is zero.
func readBalance(tx *bolt.Tx, merchantID, country, currency string) (rules.Balance, error) {
	raw := tx.Bucket(bBalances).Get(key(merchantID, country, currency))
	if raw == nil {
		return rules.Balance{Country: country, Currency: currency}, nil
	}
	return decodeBalance(raw)
}

func writeBalance(tx *bolt.Tx, merchantID string, b rules.Balance) error {
	raw, err := encodeBalance(b)
	if err != nil {
		return err
	}
	return tx.Bucket(bBalances).Put(key(merchantID, b.Country, b.Currency), raw)
}

// ErrLedger is the invariant failing: the write that would break it is refused whole.
var ErrLedger = fmt.Errorf("store: ledger invariant broken")

// CheckLedger checks, inside tx, the ledger invariant of one merchant's balance in one
// country and currency (issue 11):
//
//	balance   = funded − processed + reversed, none of them negative, reversed ≤ processed
//	available = balance − the amounts reserved by the merchant's open payouts in that currency
//
// Every write transaction that changes a balance runs it before it commits.
func CheckLedger(tx *bolt.Tx, merchantID, country, currency string) error {
	b, err := readBalance(tx, merchantID, country, currency)
	if err != nil {
		return err
	}
	if b.Funded-b.Processed+b.Reversed != b.Balance || b.Processed < 0 || b.Reversed < 0 || b.Reversed > b.Processed {
		return fmt.Errorf("%w: merchant %s %s/%s: balance %d, funded %d − processed %d + reversed %d",
			ErrLedger, merchantID, country, currency, b.Balance, b.Funded, b.Processed, b.Reversed)
	}
	reserved, err := reservedByOpenPayouts(tx, merchantID, country, currency)
	if err != nil {
		return err
	}
	if b.Available != b.Balance-reserved || b.Available < 0 {
		return fmt.Errorf("%w: merchant %s %s/%s: available %d, balance %d − reserved %d",
			ErrLedger, merchantID, country, currency, b.Available, b.Balance, reserved)
	}
	return nil
}

// reservedByOpenPayouts sums what the merchant's payouts that are not final hold in one
// country and currency (only IN_PROGRESS payouts hold money; PENDING_BALANCE waits for it).
// It reads every open payout: CheckAllLedgers uses it, the write path checks changes only.
func reservedByOpenPayouts(tx *bolt.Tx, merchantID, country, currency string) (int64, error) {
	var sum int64
	pb := payoutBucketsOf(tx)
	for _, stage := range []rules.Stage{rules.StageInProgress, rules.StagePending} {
		prefix := append(key(merchantID, string(stage)), 0)
		c := tx.Bucket(bByStage).Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			if len(k) != len(prefix)+8 {
				continue
			}
			p, _, err := pb.read(int64(binary.BigEndian.Uint64(k[len(prefix):])))
			if err != nil {
				return 0, err
			}
			if p.Country == country && p.Currency == currency {
				sum += p.Reserved
			}
		}
	}
	return sum, nil
}

// balanceChange is what one write transaction did to one balance: the balance before it,
// and the change in the reservations of the payouts it wrote.
type balanceChange struct {
	before   rules.Balance
	reserved int64
}

// touchedBalances remembers the balances a transaction read, wrote or reserved on.
type touchedBalances map[[3]string]*balanceChange

// at is the change of one balance, noting the balance as it was before the transaction.
func (t touchedBalances) at(tx *bolt.Tx, merchantID, country, currency string) (*balanceChange, error) {
	k := [3]string{merchantID, country, currency}
	if c := t[k]; c != nil {
		return c, nil
	}
	b, err := readBalance(tx, merchantID, country, currency)
	if err != nil {
		return nil, err
	}
	c := &balanceChange{before: b}
	t[k] = c
	return c, nil
}

// check is the ledger invariant for the balances one transaction changed, checked on the
// change so that its cost does not grow with the open payouts: the totals hold absolutely
// (balance = funded − processed + reversed), and what the balance holds back
// (balance − available) moved by exactly what the written payouts' reservations moved.
// Every earlier write held the invariant, so available = balance − reserved(open payouts)
// holds after this one too; CheckAllLedgers checks it from scratch.
func (t touchedBalances) check(tx *bolt.Tx) error {
	for k, c := range t {
		b, err := readBalance(tx, k[0], k[1], k[2])
		if err != nil {
			return err
		}
		if b.Funded-b.Processed+b.Reversed != b.Balance || b.Processed < 0 || b.Reversed < 0 || b.Reversed > b.Processed {
			return fmt.Errorf("%w: merchant %s %s/%s: balance %d, funded %d − processed %d + reversed %d",
				ErrLedger, k[0], k[1], k[2], b.Balance, b.Funded, b.Processed, b.Reversed)
		}
		held, heldBefore := b.Balance-b.Available, c.before.Balance-c.before.Available
		if b.Available < 0 || held-heldBefore != c.reserved {
			return fmt.Errorf("%w: merchant %s %s/%s: held back %d → %d, but the payouts' reservations moved by %d",
				ErrLedger, k[0], k[1], k[2], heldBefore, held, c.reserved)
		}
	}
	return nil
}

// CheckAllLedgers checks the invariant of every stored balance, and that every REVERSED
// payout was PROCESSED first and the totals match the payouts: processed is the sum of the
// payouts that reached PROCESSED, reversed of those returned. Tests run it after lifecycle
// tests.
func (s *DB) CheckAllLedgers() error {
	return s.bolt.View(func(tx *bolt.Tx) error {
		type sums struct{ processed, reversed int64 }
		want := map[[3]string]*sums{}
		pb := payoutBucketsOf(tx)
		err := pb.core.ForEach(func(idKey, _ []byte) error {
			p, _, err := pb.read(int64(binary.BigEndian.Uint64(idKey)))
			if err != nil {
				return err
			}
			k := [3]string{p.MerchantID, p.Country, p.Currency}
			if want[k] == nil {
				want[k] = &sums{}
			}
			processed := false
			for _, h := range p.History {
				if h.Status == rules.StatusProcessed {
					processed = true
				}
			}
			if processed {
				want[k].processed += p.Amount
			}
			if p.Status == rules.StatusReversed {
				if !processed {
					return fmt.Errorf("%w: payout %d is REVERSED without having been PROCESSED", ErrLedger, p.ID)
				}
				want[k].reversed += p.Amount
			}
			return nil
		})
		if err != nil {
			return err
		}
		return tx.Bucket(bBalances).ForEach(func(k, v []byte) error {
			parts := bytes.Split(k, []byte{0})
			if len(parts) != 3 {
				return fmt.Errorf("store: balance key %q", k)
			}
			m, country, currency := string(parts[0]), string(parts[1]), string(parts[2])
			if err := CheckLedger(tx, m, country, currency); err != nil {
				return err
			}
			b, err := decodeBalance(v)
			if err != nil {
				return err
			}
			w := want[[3]string{m, country, currency}]
			if w == nil {
				w = &sums{}
			}
			if b.Processed != w.processed || b.Reversed != w.reversed {
				return fmt.Errorf("%w: merchant %s %s/%s: processed %d, reversed %d; the payouts say %d and %d",
					ErrLedger, m, country, currency, b.Processed, b.Reversed, w.processed, w.reversed)
			}
			return nil
		})
	})
}
