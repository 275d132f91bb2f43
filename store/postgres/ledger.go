package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	gojson "github.com/goccy/go-json"
	"github.com/jackc/pgx/v5"

	"payouts/rules"
)

// ledger is the engine under a rules.LedgerTx over one transaction, as store/bolt's: the
// balances it reads are locked (SELECT ... FOR UPDATE) until the transaction ends, so that
// writers on several instances take turns on a balance, unless its group holds them already
// (held). What it writes goes one of two ways: into batch, each balance changed as a whole
// with its entries and the events (queueWrites), or, for a set-based write (deltas not nil),
// into the sums a group's statements add to the rows (deltas.go), the events kept in events.
type ledger struct {
	lt     rules.LedgerTx
	ctx    context.Context
	tx     pgx.Tx
	held   *heldBalances // the group's, if the ledger's transaction is a group's (group.go)
	events []rules.Event // enqueued, written with the balances
	batch  *pgx.Batch    // where Commit queues the balances' writes (queueWrites)
	deltas balanceDeltas // set-based: where Commit adds the balances' changes instead
}

// balanceKey names one balance.
type balanceKey = rules.BalanceKey

func newLedger(ctx context.Context, tx pgx.Tx) *ledger {
	l := &ledger{ctx: ctx, tx: tx, held: heldBalancesOf(ctx)}
	l.lt.Init(l)
	return l
}

// ReadBalance reads a balance, locking it until the transaction ends; one never written is
// zero, without a row.
func (l *ledger) ReadBalance(k balanceKey) (rules.Balance, bool, error) {
	if h, ok := l.held.get(k); ok {
		return h.b, h.stored, nil
	}
	if l.tx == nil { // a set-based write's ledger: the balances it read ahead; one not read has no row
		return rules.Balance{Country: k.Country, Currency: k.Currency}, false, nil
	}
	b, stored, err := lockBalance(l.ctx, l.tx, k)
	if err != nil {
		return b, false, fmt.Errorf("store: balance %s %s/%s: %w", k.MerchantID, k.Country, k.Currency, err)
	}
	return b, stored, nil
}

// Enqueue keeps an event to be written with the ledger's other writes: the events of a whole
// lifecycle round go in one statement.
func (l *ledger) Enqueue(ev rules.Event) error {
	l.events = append(l.events, ev)
	return nil
}

// WriteBalance queues the write of one balance the transaction touched: into the deltas of a
// set-based write, or into batch (an UPDATE, or the INSERT of a balance without a row, with
// its entries) when it changed. The group's later writes read it as written (held).
func (l *ledger) WriteBalance(k balanceKey, c *rules.BalanceChange) (rules.Balance, error) {
	if l.deltas != nil {
		l.deltas.add(k, c)
		l.held.put(k, heldBalance{b: c.Now, stored: c.Stored})
		return c.Now, nil
	}
	v, err := chainEntries(k, c)
	if err != nil {
		return v, err
	}
	if v != c.Before || len(c.Entries) > 0 {
		queueEntries(l.batch, k, c.Entries)
		if c.Stored {
			l.batch.Queue(`UPDATE balances SET available = $4, balance = $5, funded = $6, processed = $7, reversed = $8, entries = $9
				WHERE merchant_id = $1 AND country = $2 AND currency = $3`,
				k.MerchantID, k.Country, k.Currency, v.Available, v.Balance, v.Funded, v.Processed, v.Reversed, v.Entries)
		} else {
			l.batch.Queue(`INSERT INTO balances (merchant_id, country, currency, available, balance, funded, processed, reversed, entries)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
				k.MerchantID, k.Country, k.Currency, v.Available, v.Balance, v.Funded, v.Processed, v.Reversed, v.Entries)
		}
		c.Stored = true
	}
	l.held.put(k, heldBalance{b: v, stored: c.Stored})
	return v, nil
}

// queueWrites checks the ledger invariant and queues the writes of the events enqueued and
// of the balances changed into b, to be sent with the transaction's other writes.
func (l *ledger) queueWrites(b *pgx.Batch) error {
	if err := l.lt.Check(); err != nil {
		return err
	}
	if err := queueEvents(b, l.events); err != nil {
		return err
	}
	l.events = nil
	l.batch = b
	defer func() { l.batch = nil }()
	return l.lt.Commit()
}

// finish checks the ledger invariant and writes the balances changed.
func (l *ledger) finish() error {
	b := &pgx.Batch{}
	if err := l.queueWrites(b); err != nil {
		return err
	}
	if b.Len() == 0 {
		return nil
	}
	if err := l.tx.SendBatch(l.ctx, b).Close(); err != nil {
		return fmt.Errorf("store: write balances: %w", err)
	}
	return nil
}

// heldBalances are the balances a group's transaction holds locked, as the writes of the
// group that succeeded left them: a later write of the group reads them here rather than
// from the database (where it would find the same, its transaction holding the lock). A
// write that fails is rolled back to its savepoint, with its balances and the locks it took:
// what it read is kept only once it succeeded (keep), else forgotten (drop).
type heldBalances struct {
	held, pending map[balanceKey]heldBalance
}

// heldBalance is a balance as a group's transaction holds it; stored says whether it has a
// row (else the advisory lock that stands for the row is held).
type heldBalance struct {
	b      rules.Balance
	stored bool
}

type heldBalancesKey struct{}

// withHeldBalances gives the writes of one run of a group their balances.
func withHeldBalances(ctx context.Context, h *heldBalances) context.Context {
	return context.WithValue(ctx, heldBalancesKey{}, h)
}

// heldBalancesOf is the balances of ctx's group; nil outside a group (a nil *heldBalances
// holds nothing).
func heldBalancesOf(ctx context.Context) *heldBalances {
	h, _ := ctx.Value(heldBalancesKey{}).(*heldBalances)
	return h
}

func (h *heldBalances) get(k balanceKey) (heldBalance, bool) {
	if h == nil {
		return heldBalance{}, false
	}
	v, ok := h.held[k]
	return v, ok
}

// put notes a balance as the write running now leaves it.
func (h *heldBalances) put(k balanceKey, v heldBalance) {
	if h == nil {
		return
	}
	if h.pending == nil {
		h.pending = map[balanceKey]heldBalance{}
	}
	h.pending[k] = v
}

// keep keeps what the write that just succeeded left.
func (h *heldBalances) keep() {
	if h.held == nil {
		h.held = map[balanceKey]heldBalance{}
	}
	for k, v := range h.pending {
		h.held[k] = v
	}
	clear(h.pending)
}

// drop forgets what the write that just failed left.
func (h *heldBalances) drop() { clear(h.pending) }

// balanceLocks is the first key of the advisory locks that stand for balance rows not
// written yet (the second is a hash of the balance's key).
const balanceLocks = 0x62616c // "bal"

// lockBalance reads a balance FOR UPDATE and says whether it has a row. A balance never
// written has none: an advisory lock on its key then stands for the row lock until the
// transaction ends, so that two transactions creating it take turns (the second reads the
// row the first wrote). No row is written for a balance only read, as in store/bolt.
func lockBalance(ctx context.Context, tx querier, k balanceKey) (rules.Balance, bool, error) {
	b, found, err := selectBalanceForUpdate(ctx, tx, k)
	if err != nil || found {
		return b, found, err
	}
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`,
		balanceLocks, k.MerchantID+"\x1f"+k.Country+"\x1f"+k.Currency); err != nil {
		return b, false, err
	}
	return selectBalanceForUpdate(ctx, tx, k)
}

func selectBalanceForUpdate(ctx context.Context, tx querier, k balanceKey) (rules.Balance, bool, error) {
	b := rules.Balance{Country: k.Country, Currency: k.Currency}
	err := tx.QueryRow(ctx, `SELECT available, balance, funded, processed, reversed, entries FROM balances
		WHERE merchant_id = $1 AND country = $2 AND currency = $3 FOR UPDATE`, k.MerchantID, k.Country, k.Currency).
		Scan(&b.Available, &b.Balance, &b.Funded, &b.Processed, &b.Reversed, &b.Entries)
	if errors.Is(err, pgx.ErrNoRows) {
		return b, false, nil
	}
	return b, err == nil, err
}

// Balances lists a merchant's balances, ordered as store/bolt orders them (by country, then
// currency, byte-wise).
func (s *DB) Balances(ctx context.Context, merchantID string) ([]rules.Balance, error) {
	ctx, cancel := callContext(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, `SELECT country, currency, available, balance, funded, processed, reversed, 0
		FROM balances WHERE merchant_id = $1 ORDER BY country COLLATE "C", currency COLLATE "C"`, merchantID)
	if err != nil {
		return nil, fmt.Errorf("store: balances of %s: %w", merchantID, err)
	}
	out := []rules.Balance{}
	var b rules.Balance
	_, err = pgx.ForEachRow(rows, []any{&b.Country, &b.Currency, &b.Available, &b.Balance, &b.Funded, &b.Processed, &b.Reversed, &b.Entries},
		func() error {
			out = append(out, b)
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("store: balances of %s: %w", merchantID, err)
	}
	return out, nil
}

// Fund adds amount (minor units, negative to withdraw) to a merchant's balance in one
// transaction, holding the balance's lock, under the ledger invariant.
func (s *DB) Fund(ctx context.Context, merchantID, country, currency string, amount int64, at time.Time) (rules.Balance, error) {
	ctx, cancel := callContext(ctx)
	defer cancel()
	var out rules.Balance
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		l := newLedger(ctx, tx)
		b, err := l.lt.Fund(merchantID, country, currency, amount, at)
		if err != nil {
			return err
		}
		if err := l.finish(); err != nil {
			return err
		}
		out = b
		out.Entries = 0 // the store's own bookkeeping, as Balances
		return nil
	})
	if err != nil {
		return rules.Balance{}, err
	}
	return out, nil
}

// checkTimeout bounds CheckAllLedgers, which reads every payout.
const checkTimeout = 30 * time.Minute

// CheckAllLedgers checks the invariant of every stored balance from scratch
// (rules.LedgerTally), on one snapshot of the whole database.
func (s *DB) CheckAllLedgers(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), checkTimeout)
	defer cancel()
	return pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly},
		func(tx pgx.Tx) error {
			var tally rules.LedgerTally
			if err := tallyPayouts(ctx, tx, &tally); err != nil {
				return fmt.Errorf("store: check ledgers: %w", err)
			}
			if err := checkBalances(ctx, tx, &tally); err != nil {
				return err
			}
			return checkEntries(ctx, tx)
		})
}

// ledgerDoc is what the ledger reads of a payout's document.
type ledgerDoc struct {
	MerchantID string       `json:"merchantId"`
	Country    string       `json:"country"`
	Currency   string       `json:"currency"`
	Amount     int64        `json:"amount"`
	Stage      rules.Stage  `json:"stage"`
	Status     rules.Status `json:"status"`
	Reserved   int64        `json:"reserved"`
	History    []struct {
		Status rules.Status `json:"status"`
	} `json:"history"`
}

// tallyPayouts feeds every payout to the tally.
func tallyPayouts(ctx context.Context, tx pgx.Tx, tally *rules.LedgerTally) error {
	rows, err := tx.Query(ctx, `SELECT id, doc FROM payouts`)
	if err != nil {
		return err
	}
	var id int64
	var doc []byte
	_, err = pgx.ForEachRow(rows, []any{&id, &doc}, func() error {
		var d ledgerDoc
		if err := gojson.Unmarshal(doc, &d); err != nil {
			return fmt.Errorf("payout %d: %w", id, err)
		}
		p := &rules.Payout{ID: id, MerchantID: d.MerchantID, Country: d.Country, Currency: d.Currency, Amount: d.Amount,
			Stage: d.Stage, Status: d.Status, Reserved: d.Reserved, History: make([]rules.Transition, len(d.History))}
		for i, h := range d.History {
			p.History[i].Status = h.Status
		}
		return tally.AddPayout(p)
	})
	return err
}

// checkBalances checks every balance against the tally.
func checkBalances(ctx context.Context, tx pgx.Tx, tally *rules.LedgerTally) error {
	rows, err := tx.Query(ctx, `SELECT merchant_id, country, currency, available, balance, funded, processed, reversed
		FROM balances ORDER BY merchant_id, country, currency`)
	if err != nil {
		return fmt.Errorf("store: check ledgers: %w", err)
	}
	var merchantID string
	var b rules.Balance
	_, err = pgx.ForEachRow(rows, []any{&merchantID, &b.Country, &b.Currency, &b.Available, &b.Balance, &b.Funded, &b.Processed, &b.Reversed},
		func() error { return tally.CheckBalance(merchantID, b) })
	return err
}
