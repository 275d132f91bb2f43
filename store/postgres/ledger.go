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

// ledger is rules.Ledger over one transaction, as store/bolt's: the balances it reads are
// locked (SELECT ... FOR UPDATE) until the transaction ends, so that writers on several
// instances take turns on a balance; the balances it changes, and the reservations of the
// payouts written with it, are checked against the ledger invariant (rules.CheckBalanceChange)
// before they are written.
type ledger struct {
	ctx     context.Context
	tx      pgx.Tx
	touched map[balanceKey]*balanceChange
	held    *heldBalances // the group's, if the ledger's transaction is a group's (group.go)
	events  []rules.Event // enqueued, written with the balances (queueWrites)
}

// balanceKey names one balance.
type balanceKey struct{ merchantID, country, currency string }

// balanceChange is what one transaction does to one balance: the balance before it and now,
// and the change in the reservations of the payouts it wrote.
type balanceChange struct {
	before, now rules.Balance
	reserved    int64
	stored      bool          // a row exists: written with UPDATE, else INSERT
	dirty       bool          // changed since it was read or last written
	entries     []rules.Entry // the ledger entries made and not written yet, in order
	chained     rules.Balance // the balance the next entries follow: before, or as last written
}

func newLedger(ctx context.Context, tx pgx.Tx) *ledger {
	return &ledger{ctx: ctx, tx: tx, touched: map[balanceKey]*balanceChange{}, held: heldBalancesOf(ctx)}
}

// Balance reads a balance, locking it until the transaction ends; one never written is zero.
func (l *ledger) Balance(merchantID, country, currency string) (rules.Balance, error) {
	c, err := l.at(balanceKey{merchantID, country, currency})
	if err != nil {
		return rules.Balance{}, err
	}
	return c.now, nil
}

// PutBalance changes a balance; it is checked and written when the transaction's writes are
// (check, queueWrites).
func (l *ledger) PutBalance(merchantID string, b rules.Balance) error {
	if b.Available < 0 || b.Balance < 0 || b.Available > b.Balance {
		return errors.New("store: a balance would go negative or above its total")
	}
	c, err := l.at(balanceKey{merchantID, b.Country, b.Currency})
	if err != nil {
		return err
	}
	c.now, c.dirty = b, true
	return nil
}

// Enqueue writes an event into the outbox in the ledger's transaction, with the ledger's
// other writes: the events of a whole lifecycle round go in one statement (queueWrites).
func (l *ledger) Enqueue(ev rules.Event) error {
	if ev.ID == "" {
		return errors.New("store: an event needs an id")
	}
	l.events = append(l.events, ev)
	return nil
}

// snapshot is the payout's balance as the transaction holds it before a step, or nil when
// the transaction has not read it yet (then the step's first read is what it was before).
func (l *ledger) snapshot(p *rules.Payout) *rules.Balance {
	if c := l.touched[balanceKey{p.MerchantID, p.Country, p.Currency}]; c != nil {
		b := c.now
		return &b
	}
	return nil
}

// moved notes what a step did to a written payout's balance: its reservation's change, and
// its ledger entries (rules.BalanceMoves) from the balance before the step (snapshot).
func (l *ledger) moved(p *rules.Payout, reservedBefore int64, before *rules.Balance) error {
	c := l.touched[balanceKey{p.MerchantID, p.Country, p.Currency}]
	if c == nil {
		if p.Reserved == reservedBefore {
			return nil // the step did not read the balance, let alone change it
		}
		var err error
		if c, err = l.at(balanceKey{p.MerchantID, p.Country, p.Currency}); err != nil {
			return err
		}
	}
	if before == nil {
		before = &c.before
	}
	c.reserved += p.Reserved - reservedBefore
	c.entries = append(c.entries, rules.BalanceMoves(*before, c.now, p)...)
	return nil
}

// entry notes an entry of a balance not made by a payout (a funding).
func (l *ledger) entry(k balanceKey, e rules.Entry) error {
	c, err := l.at(k)
	if err != nil {
		return err
	}
	c.entries = append(c.entries, e)
	return nil
}

// at is the change of one balance, reading (and locking) it on first use.
func (l *ledger) at(k balanceKey) (*balanceChange, error) {
	if c := l.touched[k]; c != nil {
		return c, nil
	}
	if h, ok := l.held.get(k); ok {
		c := &balanceChange{before: h.b, now: h.b, chained: h.b, stored: h.stored}
		l.touched[k] = c
		return c, nil
	}
	if l.tx == nil { // a set-based write's ledger: the balances it read ahead; one not read has no row
		c := &balanceChange{before: rules.Balance{Country: k.country, Currency: k.currency}}
		c.now, c.chained = c.before, c.before
		l.touched[k] = c
		return c, nil
	}
	b, stored, err := lockBalance(l.ctx, l.tx, k)
	if err != nil {
		return nil, fmt.Errorf("store: balance %s %s/%s: %w", k.merchantID, k.country, k.currency, err)
	}
	c := &balanceChange{before: b, now: b, chained: b, stored: stored}
	l.touched[k] = c
	return c, nil
}

// refused lists the balances the ledger read and left as they were: a decision the balance
// refused (a payout waits for it, or is rejected NO_BALANCE), which more money could change.
func (l *ledger) refused() []balanceKey {
	var keys []balanceKey
	for k, c := range l.touched {
		if c.now == c.before {
			keys = append(keys, k)
		}
	}
	return keys
}

// check is the ledger invariant for the balances the transaction touched, as they are now.
func (l *ledger) check() error {
	for k, c := range l.touched {
		if err := rules.CheckBalanceChange(k.merchantID, c.before, c.now, c.reserved); err != nil {
			return err
		}
	}
	return nil
}

// queueWrites queues the writes of the balances changed since the last ones, and of the
// events enqueued, into b, to be sent with the transaction's other writes. Call check first.
func (l *ledger) queueWrites(b *pgx.Batch) error {
	if err := queueEvents(b, l.events); err != nil {
		return err
	}
	l.events = nil
	for k, c := range l.touched {
		if err := chainEntries(k, c); err != nil {
			return err
		}
		if !c.dirty {
			continue
		}
		queueEntries(b, k, c.entries)
		c.entries = nil
		v := c.now
		if c.stored {
			b.Queue(`UPDATE balances SET available = $4, balance = $5, funded = $6, processed = $7, reversed = $8, entries = $9
				WHERE merchant_id = $1 AND country = $2 AND currency = $3`,
				k.merchantID, k.country, k.currency, v.Available, v.Balance, v.Funded, v.Processed, v.Reversed, v.Entries)
		} else {
			b.Queue(`INSERT INTO balances (merchant_id, country, currency, available, balance, funded, processed, reversed, entries)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
				k.merchantID, k.country, k.currency, v.Available, v.Balance, v.Funded, v.Processed, v.Reversed, v.Entries)
		}
		c.stored, c.dirty = true, false
	}
	for k, c := range l.touched {
		l.held.put(k, heldBalance{b: c.now, stored: c.stored})
	}
	return nil
}

// finish checks the ledger invariant and writes the balances changed.
func (l *ledger) finish() error {
	if err := l.check(); err != nil {
		return err
	}
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
		balanceLocks, k.merchantID+"\x1f"+k.country+"\x1f"+k.currency); err != nil {
		return b, false, err
	}
	return selectBalanceForUpdate(ctx, tx, k)
}

func selectBalanceForUpdate(ctx context.Context, tx querier, k balanceKey) (rules.Balance, bool, error) {
	b := rules.Balance{Country: k.country, Currency: k.currency}
	err := tx.QueryRow(ctx, `SELECT available, balance, funded, processed, reversed, entries FROM balances
		WHERE merchant_id = $1 AND country = $2 AND currency = $3 FOR UPDATE`, k.merchantID, k.country, k.currency).
		Scan(&b.Available, &b.Balance, &b.Funded, &b.Processed, &b.Reversed, &b.Entries)
	if errors.Is(err, pgx.ErrNoRows) {
		return b, false, nil
	}
	return b, err == nil, err
}

// Balances lists a merchant's balances, ordered as store/bolt orders them (by country, then
// currency, byte-wise).
func (s *DB) Balances(merchantID string) ([]rules.Balance, error) {
	ctx, cancel := callContext()
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
func (s *DB) Fund(merchantID, country, currency string, amount int64, at time.Time) (rules.Balance, error) {
	ctx, cancel := callContext()
	defer cancel()
	var out rules.Balance
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		l := newLedger(ctx, tx)
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
		if err := l.entry(balanceKey{merchantID, country, currency}, rules.FundingEntry(amount, at)); err != nil {
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
func (s *DB) CheckAllLedgers() error {
	ctx, cancel := context.WithTimeout(context.Background(), checkTimeout)
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
