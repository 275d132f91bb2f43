package rules

import (
	"errors"
	"time"
)

// LedgerTx is a Ledger inside one write of an engine: the protocol of a lifecycle step (or a
// create's admission, or a funding) on a payout and its merchant's balances, kept here once so
// that every engine applies it the same way. The engine only reads and writes
// (LedgerEngine): LedgerTx remembers each balance as first read, as the steps left it, the
// change in the reservations of the payouts written, and the ledger entries made; Commit
// checks the ledger invariant on them and hands each balance to the engine to write.
//
// Set it up with Init; the zero LedgerTx is not ready. Its methods are for one goroutine.
type LedgerTx struct {
	engine  LedgerEngine
	touched map[BalanceKey]*BalanceChange
}

// LedgerEngine is what a LedgerTx asks of its engine, inside the engine's transaction.
type LedgerEngine interface {
	// ReadBalance reads a balance as the transaction sees it (locking it, where the engine
	// locks), once per transaction; a balance never written is zero, stored false.
	ReadBalance(k BalanceKey) (b Balance, stored bool, err error)
	// WriteBalance writes one balance the transaction touched, with its new ledger entries
	// (numbered and chained by the engine: ChainEntries) when it has any, and returns the
	// balance as written. It is called for every balance read, changed or not (an engine
	// may have to note one only read), after the invariant held for all of them.
	WriteBalance(k BalanceKey, c *BalanceChange) (Balance, error)
	// Enqueue writes an event into the outbox in the transaction (its id is set).
	Enqueue(ev Event) error
}

// BalanceKey names one balance of a merchant.
type BalanceKey struct{ MerchantID, Country, Currency string }

// BalanceChange is what one transaction does to one balance: the balance before it (as
// read, or as last written) and now, the change in the reservations of the payouts it
// wrote, and the ledger entries made and not written yet, in order.
type BalanceChange struct {
	Before, Now Balance
	Reserved    int64
	Entries     []Entry
	// Stored is the engine's: the balance has a record (ReadBalance said so, or the
	// engine wrote one).
	Stored bool
}

// Init readies t over an engine, forgetting anything it held.
func (t *LedgerTx) Init(e LedgerEngine) {
	t.engine = e
	if t.touched == nil {
		t.touched = make(map[BalanceKey]*BalanceChange, 1)
	} else {
		clear(t.touched)
	}
}

// Balance is a balance as the transaction has it: read once, then as the steps changed it.
func (t *LedgerTx) Balance(merchantID, country, currency string) (Balance, error) {
	c, err := t.at(BalanceKey{merchantID, country, currency})
	if err != nil {
		return Balance{}, err
	}
	return c.Now, nil
}

// PutBalance changes a balance; it is checked and written by Commit.
func (t *LedgerTx) PutBalance(merchantID string, b Balance) error {
	if b.Available < 0 || b.Balance < 0 || b.Available > b.Balance {
		return errors.New("store: a balance would go negative or above its total")
	}
	c, err := t.at(BalanceKey{merchantID, b.Country, b.Currency})
	if err != nil {
		return err
	}
	b.Entries = c.Now.Entries // the engine's bookkeeping, not the step's
	c.Now = b
	return nil
}

// Enqueue writes an event with the transaction's other writes.
func (t *LedgerTx) Enqueue(ev Event) error {
	if ev.ID == "" {
		return errors.New("store: an event needs an id")
	}
	return t.engine.Enqueue(ev)
}

// Apply runs step on p, a stored payout, and notes what it did to p's balance: the change of
// its reservation and its ledger entries (BalanceMoves). changed is false when step answered
// ErrNoChange: the payout is not to be written (nor is anything else it did noted). Any other
// error of step is returned as it is.
func (t *LedgerTx) Apply(p *Payout, step Step) (next time.Time, changed bool, err error) {
	reserved := p.Reserved
	snap, read := t.snapshot(p)
	next, err = step(p, t)
	if errors.Is(err, ErrNoChange) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, err
	}
	return next, true, t.moved(p, reserved, snap, read)
}

// Admit enqueues a new payout's events, with its id, and runs admit on it (when given) as
// Apply does, and says when the payout is due: admit's answer, or due when admit is nil or
// changed nothing (the payout is then left as it was given).
func (t *LedgerTx) Admit(p *Payout, due time.Time, events []Event, admit Step) (time.Time, error) {
	for _, ev := range events {
		ev.PayoutID = p.ID
		if err := t.Enqueue(ev); err != nil {
			return due, err
		}
	}
	if admit == nil {
		return due, nil
	}
	given := p.Clone()
	snap, read := t.snapshot(p)
	next, err := admit(p, t)
	switch {
	case errors.Is(err, ErrNoChange):
		*p = *given
		return due, nil
	case err != nil:
		return due, err
	}
	return next, t.moved(p, given.Reserved, snap, read)
}

// Fund adds a funding (negative: a withdrawal) to a balance with its ledger entry, as
// ApplyFunding allows, and returns the balance as changed.
func (t *LedgerTx) Fund(merchantID, country, currency string, amount int64, at time.Time) (Balance, error) {
	c, err := t.at(BalanceKey{merchantID, country, currency})
	if err != nil {
		return Balance{}, err
	}
	b, err := ApplyFunding(c.Now, amount)
	if err != nil {
		return Balance{}, err
	}
	if err := t.PutBalance(merchantID, b); err != nil {
		return Balance{}, err
	}
	c.Entries = append(c.Entries, FundingEntry(amount, at))
	return c.Now, nil
}

// Check is the ledger invariant (CheckBalanceChange) over the balances the transaction
// touched, as they are now.
func (t *LedgerTx) Check() error {
	for k, c := range t.touched {
		if err := CheckBalanceChange(k.MerchantID, c.Before, c.Now, c.Reserved); err != nil {
			return err
		}
	}
	return nil
}

// Commit checks the ledger invariant and has the engine write every balance touched; the
// transaction then goes on from the balances as written.
func (t *LedgerTx) Commit() error {
	if err := t.Check(); err != nil {
		return err
	}
	for k, c := range t.touched {
		written, err := t.engine.WriteBalance(k, c)
		if err != nil {
			return err
		}
		c.Before, c.Now, c.Reserved, c.Entries = written, written, 0, nil
	}
	return nil
}

// Refused lists the balances the transaction read and left as they were: a decision the
// balance refused (a payout waits for it, or is rejected NO_BALANCE), which more money could
// change. Ask before Commit.
func (t *LedgerTx) Refused() []BalanceKey {
	var keys []BalanceKey
	for k, c := range t.touched {
		if c.Now == c.Before {
			keys = append(keys, k)
		}
	}
	return keys
}

// Change is what the transaction did to one balance so far; nil when it did not touch it.
func (t *LedgerTx) Change(k BalanceKey) *BalanceChange { return t.touched[k] }

// Changes calls fn with every balance the transaction touched (in no order).
func (t *LedgerTx) Changes(fn func(BalanceKey, *BalanceChange)) {
	for k, c := range t.touched {
		fn(k, c)
	}
}

// at is the change of one balance, read on first use.
func (t *LedgerTx) at(k BalanceKey) (*BalanceChange, error) {
	if c := t.touched[k]; c != nil {
		return c, nil
	}
	b, stored, err := t.engine.ReadBalance(k)
	if err != nil {
		return nil, err
	}
	c := &BalanceChange{Before: b, Now: b, Stored: stored}
	t.touched[k] = c
	return c, nil
}

// snapshot is p's balance as the transaction holds it before a step; read is false when the
// transaction has not read it yet (then the step's first read is what it was before).
func (t *LedgerTx) snapshot(p *Payout) (b Balance, read bool) {
	if c := t.touched[BalanceKey{p.MerchantID, p.Country, p.Currency}]; c != nil {
		return c.Now, true
	}
	return Balance{}, false
}

// moved notes what a step did to a written payout's balance: its reservation's change, and
// its ledger entries from the balance before the step.
func (t *LedgerTx) moved(p *Payout, reservedBefore int64, before Balance, read bool) error {
	k := BalanceKey{p.MerchantID, p.Country, p.Currency}
	c := t.touched[k]
	if c == nil {
		if p.Reserved == reservedBefore {
			return nil // the step did not read the balance, let alone change it
		}
		var err error
		if c, err = t.at(k); err != nil {
			return err
		}
	}
	if !read {
		before = c.Before
	}
	c.Reserved += p.Reserved - reservedBefore
	c.Entries = append(c.Entries, BalanceMoves(before, c.Now, p)...)
	return nil
}

// Match says whether a payout belongs to a listing with this filter, but for its cursor and
// orderId, which the engine's walk decides (GET /payouts).
func (f ListFilter) Match(p *Payout) bool {
	return (f.Stage == "" || p.Stage == f.Stage) &&
		(f.Status == "" || p.Status == f.Status) &&
		(f.Country == "" || p.Country == f.Country) &&
		(f.From.IsZero() || !p.CreatedAt.Before(f.From)) &&
		(f.To.IsZero() || p.CreatedAt.Before(f.To))
}

// OrderPage is the page of a listing by orderId, given the payout of that order (nil: none):
// the payout, if it matches the rest of the filter and lies below the cursor.
func (f ListFilter) OrderPage(p *Payout) Page {
	if p == nil || !f.Match(p) || (f.Cursor != 0 && p.ID >= f.Cursor) {
		return Page{}
	}
	return Page{Items: []*Payout{p}}
}
