package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

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
	stored                                          bool          // the balance had a row when it was read
	entries                                         []rules.Entry // its ledger entries, in order (entries.go)
}

// add adds what a ledger did to one balance it touched.
func (ds balanceDeltas) add(k balanceKey, ch *rules.BalanceChange) {
	d := ds[k]
	if d == nil {
		d = &balanceDelta{stored: ch.Stored}
		ds[k] = d
	}
	d.available += ch.Now.Available - ch.Before.Available
	d.balance += ch.Now.Balance - ch.Before.Balance
	d.funded += ch.Now.Funded - ch.Before.Funded
	d.processed += ch.Now.Processed - ch.Before.Processed
	d.reversed += ch.Now.Reversed - ch.Before.Reversed
	d.reserved += ch.Reserved
	d.entries = append(d.entries, ch.Entries...)
}

// checkChange is the part of the ledger invariant that the deltas alone decide: what each
// balance holds back (balance − available) moves by exactly the change in the reservations,
// and a balance written for the first time holds its totals. The rest, on the rows as the
// statements leave them, is checked by the statements themselves (queue).
func (ds balanceDeltas) checkChange() error {
	for k, d := range ds {
		var ea, eb int64
		for _, e := range d.entries {
			da, db := e.Deltas()
			ea, eb = ea+da, eb+db
		}
		if ea != d.available || eb != d.balance {
			return fmt.Errorf("%w: merchant %s %s/%s: available moves by %d and balance by %d, but the ledger entries by %d and %d",
				rules.ErrLedger, k.MerchantID, k.Country, k.Currency, d.available, d.balance, ea, eb)
		}
		if d.balance-d.available != d.reserved {
			return fmt.Errorf("%w: merchant %s %s/%s: held back moves by %d, but the payouts' reservations by %d",
				rules.ErrLedger, k.MerchantID, k.Country, k.Currency, d.balance-d.available, d.reserved)
		}
		if !d.stored {
			b := rules.Balance{Country: k.Country, Currency: k.Currency, Available: d.available, Balance: d.balance,
				Funded: d.funded, Processed: d.processed, Reversed: d.reversed}
			if err := rules.CheckBalanceTotals(k.MerchantID, b); err != nil {
				return err
			}
		}
	}
	return nil
}

// queue queues one statement per balance changed, in key order (so that two writers never
// wait on each other's balances), into b: an UPDATE adding the change to the row as it is
// when the statement reaches it, or the INSERT of a balance that had no row (a row written
// meanwhile fails it: 23505). The row is locked from there to the commit, which follows in
// the same pipeline: no round trip of the client's is spent holding it. The rows' CHECKs
// refuse a change that would overdraw (23514); the UPDATE checks the ledger's totals on the
// new row (rules.CheckBalanceTotals) and, should they not hold, writes a NULL available,
// which the column refuses (23502, errLedgerRow): the transaction fails with nothing stored.
// Each statement answers the row as it left it: when after is not nil, it gets them (the
// figures of the transaction, once it commits).
func (ds balanceDeltas) queue(b *pgx.Batch, after map[balanceKey]rules.Balance) {
	keys := make([]balanceKey, 0, len(ds))
	for k, d := range ds {
		if d.available|d.balance|d.funded|d.processed|d.reversed != 0 || len(d.entries) > 0 {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, compareBalanceKeys)
	for _, k := range keys {
		d := ds[k]
		sql := `WITH u AS (UPDATE balances SET available = CASE
				WHEN funded + $6 - (processed + $7) + reversed + $8 = balance + $5
					AND processed + $7 >= 0 AND reversed + $8 >= 0 AND reversed + $8 <= processed + $7
				THEN available + $4 END,
				balance = balance + $5, funded = funded + $6, processed = processed + $7, reversed = reversed + $8,
				entries = entries + $9
			WHERE merchant_id = $1 AND country = $2 AND currency = $3
			RETURNING available, balance, funded, processed, reversed, entries)` + deltaEntries
		if !d.stored {
			sql = `WITH u AS (INSERT INTO balances (merchant_id, country, currency, available, balance, funded, processed, reversed, entries)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING available, balance, funded, processed, reversed, entries)` + deltaEntries
		}
		if d.stored && len(d.entries) > 0 {
			// The row is locked by a statement of its own first: the delta statement's
			// snapshot is then taken after a writer that held it committed, so that it sees
			// that writer's entries, the one before its own among them (deltaEntries stamps
			// its entries no earlier). In one statement, the UPDATE waits for the row but
			// reads the entries as they were before the wait. Queued in the same pipeline:
			// no round trip more.
			b.Queue(`SELECT 1 FROM balances WHERE merchant_id = $1 AND country = $2 AND currency = $3 FOR UPDATE`,
				k.MerchantID, k.Country, k.Currency)
		}
		args := append([]any{k.MerchantID, k.Country, k.Currency, d.available, d.balance, d.funded, d.processed, d.reversed},
			entryArgs(d.entries)...)
		want := int64(len(d.entries))
		b.Queue(sql, args...).Query(func(rows pgx.Rows) error {
			v := rules.Balance{Country: k.Country, Currency: k.Currency}
			var written, n int64
			_, err := pgx.ForEachRow(rows, []any{&v.Available, &v.Balance, &v.Funded, &v.Processed, &v.Reversed, &v.Entries, &written},
				func() error { n++; return nil })
			if err != nil {
				return err
			}
			if n != 1 || written != want { // the balance's row and its entries, written together
				return fmt.Errorf("store: balance %s %s/%s: no row", k.MerchantID, k.Country, k.Currency)
			}
			if after != nil {
				after[k] = v
			}
			return nil
		})
	}
}

// ledgerRow reports the failure of a balance statement whose totals did not hold (queue).
func ledgerRow(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23502" && pgErr.TableName == "balances"
}

// querier is a transaction, or a connection inside one.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// sendCommitted sends b, which begins with BEGIN and ends with COMMIT (queueCommit), on
// conn: the whole transaction, or what is left of it, in one round trip. When a statement
// fails, nothing is stored: the statements after it are skipped, and the transaction is
// rolled back.
func sendCommitted(ctx context.Context, conn *pgxpool.Conn, b *pgx.Batch) error {
	err := conn.SendBatch(ctx, b).Close()
	if err != nil {
		rollback(ctx, conn)
	}
	return err
}

// queueCommit ends b with the COMMIT of its transaction.
func queueCommit(b *pgx.Batch) {
	b.Queue("COMMIT").Exec(func(tag pgconn.CommandTag) error {
		if tag.String() == "ROLLBACK" {
			return pgx.ErrTxCommitRollback
		}
		return nil
	})
}

// rollback ends a transaction left open on conn (a failed statement, a step's error).
func rollback(ctx context.Context, conn *pgxpool.Conn) {
	if pg := conn.Conn().PgConn(); !pg.IsClosed() && pg.TxStatus() != 'I' {
		conn.Exec(ctx, "ROLLBACK")
	}
}

// queueReadBalances queues the read, without a lock, of the balances where selects, into
// the map: a set-based write decides on them and applies its changes as deltas (queue).
func queueReadBalances(b *pgx.Batch, into map[balanceKey]heldBalance, where string, args ...any) {
	b.Queue(`SELECT merchant_id, country, currency, available, balance, funded, processed, reversed, entries FROM balances
		WHERE `+where, args...).Query(func(rows pgx.Rows) error {
		var k balanceKey
		var v rules.Balance
		_, err := pgx.ForEachRow(rows, []any{&k.MerchantID, &k.Country, &k.Currency, &v.Available, &v.Balance, &v.Funded, &v.Processed, &v.Reversed, &v.Entries},
			func() error {
				v.Country, v.Currency = k.Country, k.Currency
				into[k] = heldBalance{b: v, stored: true}
				return nil
			})
		return err
	})
}
