package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"payouts/rules"
)

// Ledger entries (rules.LedgerEntries): a transaction that holds its balances locked (ledger.go) numbers
// its entries and writes them beside the balance, in the same batch; a set-based write
// (deltas.go) writes them in the statement that applies its deltas, numbered and chained
// there on the row as the statement finds it.

// entryColumns are entries as the arrays of one unnest: type, at, amount, the change of
// available and of balance, payout id (0: none), order id and batch id ("": none).
type entryColumns struct {
	typ, order, batch []string
	at                []time.Time
	amount, da, db    []int64
	payout            []int64
}

func columnsOf(entries []rules.Entry) entryColumns {
	var c entryColumns
	for _, e := range entries {
		da, db := e.Deltas()
		c.typ, c.order, c.batch = append(c.typ, string(e.Type)), append(c.order, e.OrderID), append(c.batch, e.BatchID)
		c.at, c.amount, c.da, c.db = append(c.at, e.At), append(c.amount, e.Amount), append(c.da, da), append(c.db, db)
		c.payout = append(c.payout, e.PayoutID)
	}
	return c
}

// chainEntries numbers the entries a locked transaction made on one balance after the ones
// written (rules.ChainEntries) and checks that they end on the balance as it leaves it,
// which it returns with its last entry's id. A balance changed without an entry breaks the
// ledger invariant.
func chainEntries(k balanceKey, c *rules.BalanceChange) (rules.Balance, error) {
	now := c.Now
	if len(c.Entries) == 0 {
		if now.Available != c.Before.Available || now.Balance != c.Before.Balance {
			return now, fmt.Errorf("%w: merchant %s %s/%s changed without a ledger entry", rules.ErrLedger, k.MerchantID, k.Country, k.Currency)
		}
		return now, nil
	}
	rules.ChainEntries(c.Entries, c.Before.Entries, c.Before.Available, c.Before.Balance)
	last := c.Entries[len(c.Entries)-1]
	now.Entries = last.ID
	return now, rules.CheckEntriesEnd(k.MerchantID, now, last)
}

// queueEntries queues the INSERT of entries numbered and chained already.
func queueEntries(b *pgx.Batch, k balanceKey, entries []rules.Entry) {
	if len(entries) == 0 {
		return
	}
	ids, avail, bal := make([]int64, len(entries)), make([]int64, len(entries)), make([]int64, len(entries))
	for i, e := range entries {
		ids[i], avail[i], bal[i] = e.ID, e.Available, e.Balance
	}
	c := columnsOf(entries)
	b.Queue(`INSERT INTO ledger_entries (merchant_id, country, currency, id, at, type, amount, available, balance, payout_id, order_id, batch_id)
		SELECT $1, $2, $3, id,
			GREATEST(max(at) OVER (ORDER BY id), (SELECT l.at FROM ledger_entries l
				WHERE l.merchant_id = $1 AND l.country = $2 AND l.currency = $3 AND l.id = ($4::bigint[])[1] - 1)),
			type, amount, available, balance, NULLIF(payout_id, 0), NULLIF(order_id, ''), NULLIF(batch_id, '')
		FROM unnest($4::bigint[], $5::timestamptz[], $6::text[], $7::bigint[], $8::bigint[], $9::bigint[], $10::bigint[], $11::text[], $12::text[])
			AS e(id, at, type, amount, available, balance, payout_id, order_id, batch_id)`,
		k.MerchantID, k.Country, k.Currency, ids, c.at, c.typ, c.amount, avail, bal, c.payout, c.order, c.batch)
}

// deltaEntries is the part of a balance's delta statement (deltas.go) that writes its
// entries and answers the row: u is the balance row the statement left (RETURNING its
// figures), $9 the number of entries, $4 and $5 the change of available and balance; the
// entries are numbered after the row's last, chained backwards from its figures, and stamped
// no earlier than the entry before them (rules.OrderEntryTimes; GREATEST ignores a NULL: none
// before). The statement answers the row as it leaves it and the number of entries written:
// no row when the balance had none to update.
const deltaEntries = `,
	e AS (SELECT * FROM unnest($10::text[], $11::timestamptz[], $12::bigint[], $13::bigint[], $14::bigint[], $15::bigint[], $16::text[], $17::text[])
		WITH ORDINALITY AS e(type, at, amount, da, db, payout_id, order_id, batch_id, n)),
	prev AS (SELECT (SELECT l.at FROM ledger_entries l
		WHERE l.merchant_id = $1 AND l.country = $2 AND l.currency = $3 AND l.id = u.entries - $9) AS at FROM u),
	i AS (INSERT INTO ledger_entries (merchant_id, country, currency, id, at, type, amount, available, balance, payout_id, order_id, batch_id)
	SELECT $1, $2, $3, u.entries - $9 + e.n, GREATEST(max(e.at) OVER w, (SELECT at FROM prev)),
		e.type, e.amount,
		u.available - $4 + sum(e.da) OVER w, u.balance - $5 + sum(e.db) OVER w,
		NULLIF(e.payout_id, 0), NULLIF(e.order_id, ''), NULLIF(e.batch_id, '')
	FROM u, e WINDOW w AS (ORDER BY e.n) RETURNING 1)
	SELECT u.available, u.balance, u.funded, u.processed, u.reversed, u.entries, (SELECT count(*) FROM i) FROM u`

// entryArgs are the arguments $9 to $17 of a delta statement.
func entryArgs(entries []rules.Entry) []any {
	c := columnsOf(entries)
	return []any{int64(len(entries)), c.typ, c.at, c.amount, c.da, c.db, c.payout, c.order, c.batch}
}

// Entries lists a balance's entries with an id above after, oldest first (rules.LedgerEntries).
func (s *DB) Entries(ctx context.Context, merchantID, country, currency string, after int64, limit int) (rules.EntryPage, error) {
	ctx, cancel := callContext(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, `SELECT `+entrySelect+` FROM ledger_entries
		WHERE merchant_id = $1 AND country = $2 AND currency = $3 AND id > $4 ORDER BY id LIMIT $5`,
		merchantID, country, currency, after, limit+1)
	if err != nil {
		return rules.EntryPage{}, fmt.Errorf("store: ledger entries: %w", err)
	}
	items, err := pgx.CollectRows(rows, scanEntry)
	if err != nil {
		return rules.EntryPage{}, fmt.Errorf("store: ledger entries: %w", err)
	}
	page := rules.EntryPage{Items: items}
	if len(items) > limit {
		page.Items = items[:limit]
		page.Next = items[limit-1].ID
	}
	return page, nil
}

const entrySelect = `id, at, type, amount, available, balance, COALESCE(payout_id, 0), COALESCE(order_id, ''), COALESCE(batch_id, '')`

func scanEntry(r pgx.CollectableRow) (rules.Entry, error) {
	var e rules.Entry
	var typ string
	err := r.Scan(&e.ID, &e.At, &typ, &e.Amount, &e.Available, &e.Balance, &e.PayoutID, &e.OrderID, &e.BatchID)
	e.Type, e.At = rules.EntryType(typ), e.At.UTC()
	return e, err
}

// checkEntries checks every balance's entries from the first: a chain that ends on the
// balance (rules.CheckEntryChain, rules.CheckEntriesEnd).
func checkEntries(ctx context.Context, tx pgx.Tx) error {
	rows, err := tx.Query(ctx, `SELECT merchant_id, country, currency, available, balance, entries FROM balances
		ORDER BY merchant_id, country, currency`)
	if err != nil {
		return fmt.Errorf("store: check ledger entries: %w", err)
	}
	type owned struct {
		merchantID string
		b          rules.Balance
	}
	var balances []owned
	var o owned
	_, err = pgx.ForEachRow(rows, []any{&o.merchantID, &o.b.Country, &o.b.Currency, &o.b.Available, &o.b.Balance, &o.b.Entries},
		func() error { balances = append(balances, o); return nil })
	if err != nil {
		return fmt.Errorf("store: check ledger entries: %w", err)
	}
	for _, o := range balances {
		rows, err := tx.Query(ctx, `SELECT `+entrySelect+` FROM ledger_entries
			WHERE merchant_id = $1 AND country = $2 AND currency = $3 ORDER BY id`, o.merchantID, o.b.Country, o.b.Currency)
		if err != nil {
			return fmt.Errorf("store: check ledger entries: %w", err)
		}
		entries, err := pgx.CollectRows(rows, scanEntry)
		if err != nil {
			return fmt.Errorf("store: check ledger entries: %w", err)
		}
		last, err := rules.CheckEntryChain(rules.Entry{}, entries)
		if err != nil {
			return fmt.Errorf("merchant %s %s/%s: %w", o.merchantID, o.b.Country, o.b.Currency, err)
		}
		if err := rules.CheckEntriesEnd(o.merchantID, o.b, last); err != nil {
			return err
		}
	}
	return nil
}

func scanDumpedEntry(r pgx.CollectableRow) (any, error) {
	var d rules.DumpedLedgerEntry
	var typ string
	e := &d.Entry
	err := r.Scan(&d.MerchantID, &d.Country, &d.Currency, &e.ID, &e.At, &typ, &e.Amount, &e.Available, &e.Balance, &e.PayoutID, &e.OrderID, &e.BatchID)
	e.Type, e.At = rules.EntryType(typ), e.At.UTC()
	return d, err
}

// restoreEntry writes a dumped entry and records it as its balance's last (a balance's
// entries come in order, after the balances).
func restoreEntry(raw json.RawMessage) (string, []any, error) {
	var d rules.DumpedLedgerEntry
	if err := json.Unmarshal(raw, &d); err != nil {
		return "", nil, err
	}
	e := d.Entry
	return `WITH i AS (INSERT INTO ledger_entries (merchant_id, country, currency, id, at, type, amount, available, balance, payout_id, order_id, batch_id)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, NULLIF($10::bigint, 0), NULLIF($11, ''), NULLIF($12, '')) RETURNING id)
		UPDATE balances SET entries = (SELECT id FROM i) WHERE merchant_id = $1 AND country = $2 AND currency = $3`,
		[]any{d.MerchantID, d.Country, d.Currency, e.ID, e.At, string(e.Type), e.Amount, e.Available, e.Balance, e.PayoutID, e.OrderID, e.BatchID}, nil
}

// openEntries gives every balance without entries (a dump made before they existed) its
// opening entry, as migration 00006 does on upgrade.
func openEntries(ctx context.Context, tx pgx.Tx) error {
	_, err := tx.Exec(ctx, `WITH o AS (INSERT INTO ledger_entries (merchant_id, country, currency, id, at, type, amount, available, balance)
			SELECT merchant_id, country, currency, 1, now(), 'opening', balance, available, balance
			FROM balances WHERE entries = 0 AND (balance <> 0 OR available <> 0)
			RETURNING merchant_id, country, currency)
		UPDATE balances b SET entries = 1 FROM o
		WHERE b.merchant_id = o.merchant_id AND b.Country = o.country AND b.Currency = o.currency`)
	return err
}
