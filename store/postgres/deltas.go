package postgres

import (
	"slices"

	"github.com/jackc/pgx/v5"

	"payouts/rules"
)

// balanceDeltas are what a set-based write does to the balances it touches: the sum of its
// changes to each, applied to the row as it is when the write reaches it (UPDATE ... SET
// available = available + ..., the row locked from there to the commit), and the change in
// the reservations of the payouts written, for the ledger invariant.
type balanceDeltas map[balanceKey]*balanceDelta

type balanceDelta struct {
	available, balance, funded, processed, reversed int64
	reserved                                        int64
	stored                                          bool // the balance had a row when it was read
}

// add adds what a ledger did to the balances it touched.
func (ds balanceDeltas) add(l *ledger) {
	for k, ch := range l.touched {
		d := ds[k]
		if d == nil {
			d = &balanceDelta{stored: ch.stored}
			ds[k] = d
		}
		d.available += ch.now.Available - ch.before.Available
		d.balance += ch.now.Balance - ch.before.Balance
		d.funded += ch.now.Funded - ch.before.Funded
		d.processed += ch.now.Processed - ch.before.Processed
		d.reversed += ch.now.Reversed - ch.before.Reversed
		d.reserved += ch.reserved
	}
}

// queue queues one statement per balance changed, in key order (so that two writers never
// wait on each other's balances), into b: an UPDATE adding the change to the row, or the
// INSERT of a balance that had none (a row written meanwhile fails it: 23505). Each returns
// the row as it leaves it, into the map returned once b is sent. The rows' CHECKs refuse a
// change that would overdraw (23514).
func (ds balanceDeltas) queue(b *pgx.Batch) map[balanceKey]rules.Balance {
	keys := make([]balanceKey, 0, len(ds))
	for k, d := range ds {
		if d.available|d.balance|d.funded|d.processed|d.reversed != 0 {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, compareBalanceKeys)
	after := make(map[balanceKey]rules.Balance, len(keys))
	for _, k := range keys {
		d := ds[k]
		sql := `UPDATE balances SET available = available + $4, balance = balance + $5, funded = funded + $6,
				processed = processed + $7, reversed = reversed + $8
			WHERE merchant_id = $1 AND country = $2 AND currency = $3
			RETURNING available, balance, funded, processed, reversed`
		if !d.stored {
			sql = `INSERT INTO balances (merchant_id, country, currency, available, balance, funded, processed, reversed)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
				RETURNING available, balance, funded, processed, reversed`
		}
		b.Queue(sql, k.merchantID, k.country, k.currency, d.available, d.balance, d.funded, d.processed, d.reversed).
			QueryRow(func(row pgx.Row) error {
				v := rules.Balance{Country: k.country, Currency: k.currency}
				err := row.Scan(&v.Available, &v.Balance, &v.Funded, &v.Processed, &v.Reversed)
				after[k] = v
				return err
			})
	}
	return after
}

// check is the ledger invariant on the rows as the statements left them (after): each
// row's change is the sum queued, and what it holds back moved by the reservations.
func (ds balanceDeltas) check(after map[balanceKey]rules.Balance) error {
	for k, now := range after {
		d := ds[k]
		before := now
		before.Available -= d.available
		before.Balance -= d.balance
		before.Funded -= d.funded
		before.Processed -= d.processed
		before.Reversed -= d.reversed
		if err := rules.CheckBalanceChange(k.merchantID, before, now, d.reserved); err != nil {
			return err
		}
	}
	return nil
}
