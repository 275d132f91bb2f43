package rules

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"
)

// LifecycleStore is what the lifecycle needs of the database.
type LifecycleStore interface {
	Due(ctx context.Context, now time.Time, limit int) ([]DueEntry, error)
	// DueRead is Due that may also read the payouts it claims, with the claim: a database
	// at network distance saves a round trip a round. A payout it does not read (none, on
	// an engine at no distance) the lifecycle reads itself.
	DueRead(ctx context.Context, now time.Time, limit int) ([]DueEntry, map[int64]*Payout, error)
	NextDue(ctx context.Context) (time.Time, error)
	PayoutsByID(ctx context.Context, ids []int64) ([]*Payout, error)
	UpdatePayouts(ctx context.Context, ids []int64, step Step) error
	WithStatus(ctx context.Context, merchantID string, status Status, limit int) ([]int64, error)
	// Fund changes a balance by amount, with its ledger entry at the service's time at.
	Fund(ctx context.Context, merchantID, country, currency string, amount int64, at time.Time) (Balance, error)
	Balances(ctx context.Context, merchantID string) ([]Balance, error)
}

// Lifecycle moves payouts through their stages (Stage, Status, CanMove), in the server, not in
// the request: its worker (workers.Lifecycle) takes the payouts whose next step is due, asks
// the rail outside any transaction, and records each transition (Step) in one transaction
// with its balance change and its events. The queue is in the database, so a restart
// resumes where it stopped. The transitions that come from outside the rail (a settlement,
// a cancel, a card typed, a link's destination) are its methods too.
type Lifecycle struct {
	Store     LifecycleStore
	Merchants func(id string) (*Merchant, error)
	Now       func() time.Time
	Log       *slog.Logger

	onFinal    OutcomeHooks
	onFinished DoneHooks

	once sync.Once
	wake chan struct{}
}

// OnFinal is the list of hooks that give the events written with a payout's outcome
// (emails, notifications), in the transaction that records it.
func (lc *Lifecycle) OnFinal() *OutcomeHooks { return &lc.onFinal }

// OnFinished is the list of hooks told after a payout's outcome (SUCCESS or REJECTED)
// committed: metrics, waking the outbox lanes, dropping a card.
func (lc *Lifecycle) OnFinished() *DoneHooks { return &lc.onFinished }

func (lc *Lifecycle) init() {
	lc.once.Do(func() {
		lc.wake = make(chan struct{}, 1)
		if lc.Log == nil {
			lc.Log = slog.Default()
		}
	})
}

// Kick wakes the worker: a payout is due now.
func (lc *Lifecycle) Kick() {
	lc.init()
	select {
	case lc.wake <- struct{}{}:
	default:
	}
}

// Woken is told by Kick: the worker (workers.Lifecycle) waits on it between rounds.
func (lc *Lifecycle) Woken() <-chan struct{} {
	lc.init()
	return lc.wake
}

// RailAnswer is what a payout's rail said before the step that records it: the receipt of
// a submission or the outcome asked, or the failed call's error.
type RailAnswer struct {
	Submission Submission
	Outcome    Outcome
	Err        error
}

// Step moves payout p of merchant m as far as it can go at now, with its rail's answer when
// it waits on one, inside the transaction of l. It returns when p is due next; ErrNoChange
// when it cannot move.
func (lc *Lifecycle) Step(p *Payout, m *Merchant, l Ledger, now time.Time, a RailAnswer) (time.Time, error) {
	lc.init()
	return lc.step(p, m, l, now, a.Submission, a.Outcome, a.Err)
}

// Admit takes a new payout through the steps that need no rail (authorization, with its
// reservation on the merchant's balance, then routing), in the transaction that creates it,
// so that no later round has to read and rewrite it for them. Each transition is recorded
// with the time it is taken. It returns when the payout is due next, like a Step; a final
// outcome (NO_BALANCE) writes its events through l.
func (lc *Lifecycle) Admit(p *Payout, m *Merchant, l Ledger) (time.Time, error) {
	lc.init()
	if p.Status != StatusCreated {
		return time.Time{}, ErrNoChange
	}
	return lc.step(p, m, l, lc.Now().UTC(), Submission{}, Outcome{}, nil)
}

func (lc *Lifecycle) finished(ctx context.Context, ps []*Payout) {
	for _, p := range ps {
		lc.onFinished.Trigger(ctx, p)
	}
}

// retryAfterRailError is how long a payout waits when a rail call failed.
const retryAfterRailError = 10 * time.Second

// step moves one payout as far as it can go now without the rail, or with the rail's answer.
func (lc *Lifecycle) step(p *Payout, m *Merchant, l Ledger, now time.Time, sub Submission, out Outcome, railErr error) (time.Time, error) {
	switch p.Status {
	case StatusCreated:
		p.Move(StatusAuthorized, now, "", "")
		return lc.reserveOrHold(p, m, l, now)
	case StatusAuthorized:
		if p.Reserved == 0 {
			return lc.reserveOrHold(p, m, l, now)
		}
		return lc.afterReserved(p, m, l, now)
	case StatusWaitingRouting:
		if railErr != nil {
			lc.Log.Warn("rail submit failed; retrying", "payout", p.ID, "err", railErr)
			return now.Add(retryAfterRailError), nil
		}
		// A cash payout its beneficiary claimed while the rail was being asked already holds
		// the code it was collected with (CashClaims.Claim): that stays its reference.
		if p.RailRef == "" {
			p.RailRef = sub.Reference
		}
		p.Move(StatusPendingBank, now, "", "submitted to "+string(p.Channel))
		return sub.CheckAt, nil
	case StatusPendingBank:
		if p.Channel == ChannelCash && !p.ClaimUntil.IsZero() && !now.Before(p.ClaimUntil) {
			return lc.finish(p, m, l, now, StatusExpired, CodeExpired, "the cash was not claimed before its expiration date")
		}
		if railErr != nil {
			lc.Log.Warn("rail outcome failed; retrying", "payout", p.ID, "err", railErr)
			return now.Add(retryAfterRailError), nil
		}
		if !out.Settled {
			return out.CheckAt, nil
		}
		next, err := lc.finish(p, m, l, now, out.Status, out.Code, out.Note)
		if err == nil && out.Then > 0 {
			next = now.Add(out.Then) // the rail has a later word: ask it then
		}
		return next, err
	case StatusProcessed:
		// The rail's later word on a paid payout (a scripted return, say), or nothing
		// more, which takes it off the queue.
		if railErr != nil {
			lc.Log.Warn("rail outcome failed; retrying", "payout", p.ID, "err", railErr)
			return now.Add(retryAfterRailError), nil
		}
		if !out.Settled {
			return out.CheckAt, nil
		}
		return lc.finish(p, m, l, now, out.Status, out.Code, out.Note)
	}
	lc.Log.Info("ignored a step on a payout that cannot move", "payout", p.ID, "status", p.Status)
	return time.Time{}, nil
}

// reserveOrHold holds the payout's amount on the merchant's balance and routes it; when the
// balance is short the payout waits as PENDING_BALANCE (merchant setting) or is rejected
// NO_BALANCE. A card payout never waits: its beneficiary is at the form.
func (lc *Lifecycle) reserveOrHold(p *Payout, m *Merchant, l Ledger, now time.Time) (time.Time, error) {
	ok, err := reserve(p, l)
	if err != nil {
		return time.Time{}, err
	}
	if ok {
		return lc.afterReserved(p, m, l, now)
	}
	if m.Settings.PendingOnNoBalance && p.Channel != ChannelCard && p.Channel != ChannelLink {
		p.Move(StatusPendingBalance, now, "", "waiting for the merchant's balance")
		return time.Time{}, nil // released by a funding, oldest first
	}
	return lc.finish(p, m, l, now, StatusNoBalance, CodeNoBalance, "the merchant's balance does not cover the payout")
}

// afterReserved routes a payout whose amount is held, or keeps a card payout waiting for
// its card until its session expires.
func (lc *Lifecycle) afterReserved(p *Payout, m *Merchant, l Ledger, now time.Time) (time.Time, error) {
	if p.Channel == ChannelCard && p.Card == nil {
		if !p.SessionExpiresAt.IsZero() && !now.Before(p.SessionExpiresAt) {
			return lc.finish(p, m, l, now, StatusExpired, CodeExpired, "the card form session expired before a card was entered")
		}
		return p.SessionExpiresAt, nil
	}
	if p.Channel == ChannelLink {
		if !now.Before(p.SessionExpiresAt) {
			// The original's published message says it all: no detail after it.
			return lc.finish(p, m, l, now, StatusExpired, CodeLinkExpired, "")
		}
		return p.SessionExpiresAt, nil
	}
	p.Move(StatusWaitingRouting, now, "", "")
	return now, nil // the rail is asked outside the transaction, in the next round
}

// reserve holds the payout's amount on the merchant's balance; false when it does not cover.
func reserve(p *Payout, l Ledger) (bool, error) {
	b, err := l.Balance(p.MerchantID, p.Country, p.Currency)
	if err != nil {
		return false, err
	}
	if b.Available < p.Amount {
		return false, nil
	}
	b.Available -= p.Amount
	p.Reserved = p.Amount
	return true, l.PutBalance(p.MerchantID, b)
}

// finish moves a payout to a final status, settles its reservation and writes its events.
func (lc *Lifecycle) finish(p *Payout, m *Merchant, l Ledger, now time.Time, status Status, code, note string) (time.Time, error) {
	from := p.Status
	if !p.Move(status, now, code, note) {
		lc.Log.Warn("ignored a late or repeated outcome", "payout", p.ID, "from", from, "to", status)
		return time.Time{}, ErrNoChange
	}
	b, err := l.Balance(p.MerchantID, p.Country, p.Currency)
	if err != nil {
		return time.Time{}, err
	}
	switch {
	case status == StatusProcessed:
		b.Balance -= p.Reserved // the reservation already left Available
		b.Processed += p.Reserved
	case status == StatusReversed:
		b.Balance += p.Amount // the bank returned the money
		b.Available += p.Amount
		b.Reversed += p.Amount
	default:
		b.Available += p.Reserved
	}
	p.Reserved = 0
	if err := l.PutBalance(p.MerchantID, b); err != nil {
		return time.Time{}, err
	}
	for _, ev := range lc.onFinal.Trigger(p, m) {
		if err := l.Enqueue(ev); err != nil {
			return time.Time{}, err
		}
	}
	return time.Time{}, nil
}

// Fund adds to a merchant's balance and then releases its PENDING_BALANCE payouts in that
// country and currency, oldest first, as far as the money goes: the first one that does not
// fit stops the release, so a large old payout is not overtaken by later small ones.
func (lc *Lifecycle) Fund(ctx context.Context, merchantID, country, currency string, amount int64) (Balance, error) {
	lc.init()
	if err := CheckFundingOf(country, currency, amount); err != nil {
		return Balance{}, err
	}
	if _, err := lc.Store.Fund(ctx, merchantID, country, currency, amount, lc.Now()); err != nil {
		return Balance{}, err
	}
	if err := lc.Release(ctx, merchantID); err != nil {
		return Balance{}, err
	}
	all, err := lc.Store.Balances(ctx, merchantID)
	if err != nil {
		return Balance{}, err
	}
	for _, b := range all {
		if b.Country == country && b.Currency == currency {
			return b, nil
		}
	}
	return Balance{Country: country, Currency: currency}, nil
}

// Release authorizes held payouts of a merchant while its balances cover them.
func (lc *Lifecycle) Release(ctx context.Context, merchantID string) error {
	ids, err := lc.Store.WithStatus(ctx, merchantID, StatusPendingBalance, 10_000)
	if err != nil || len(ids) == 0 {
		return err
	}
	now := lc.Now().UTC()
	blocked := map[string]bool{} // country+currency whose oldest held payout did not fit
	err = lc.Store.UpdatePayouts(ctx, ids, func(p *Payout, l Ledger) (time.Time, error) {
		if p.Status != StatusPendingBalance || blocked[p.Country+p.Currency] {
			return time.Time{}, ErrNoChange
		}
		ok, err := reserve(p, l)
		if err != nil {
			return time.Time{}, err
		}
		if !ok {
			blocked[p.Country+p.Currency] = true
			return time.Time{}, ErrNoChange
		}
		p.Move(StatusWaitingRouting, now, "", "balance funded")
		return now, nil
	})
	lc.Kick()
	return err
}

// ErrWrongState is returned for an action the payout's status does not allow.
func wrongState(p *Payout, action string) error {
	return Errorf(KindConflict, CodeWrongState, "payout %d is %s/%s: cannot %s", p.ID, p.Stage, p.Status, action)
}

// Settle forces a payout's outcome: the sandbox simulate endpoint, a cash claim, a rail's
// push notification. SUCCESS needs the amount reserved (reserving it now if the payout was
// not authorized yet); REVERSED needs a PROCESSED payout.
func (lc *Lifecycle) Settle(ctx context.Context, merchantID string, id int64, status Status, code, note string) (*Payout, error) {
	lc.init()
	now := lc.Now().UTC()
	var result *Payout
	var stepErr error
	err := lc.Store.UpdatePayouts(ctx, []int64{id}, func(p *Payout, l Ledger) (time.Time, error) {
		if p.MerchantID != merchantID {
			stepErr = Errorf(KindNotFound, CodePayoutNotFound, "payout %d not found", id)
			return time.Time{}, ErrNoChange
		}
		if !CanMove(p.Status, status) {
			stepErr = wrongState(p, "move to "+string(status))
			return time.Time{}, ErrNoChange
		}
		m, err := lc.Merchants(p.MerchantID)
		if err != nil {
			return time.Time{}, err
		}
		if status == StatusProcessed && p.Reserved == 0 {
			ok, err := reserve(p, l)
			if err != nil {
				return time.Time{}, err
			}
			if !ok {
				stepErr = Errorf(KindConflict, CodeNoBalance, "payout %d: the merchant's balance does not cover it", id)
				return time.Time{}, ErrNoChange
			}
		}
		if code == "" && StageOf(status) == StageRejected {
			code, note = simulatedCode(status), "simulated in the sandbox"
		}
		next, err := lc.finish(p, m, l, now, status, code, note)
		result = p.Clone()
		return next, err
	})
	if err == nil && stepErr == nil && result == nil {
		stepErr = Errorf(KindNotFound, CodePayoutNotFound, "payout %d not found", id)
	}
	if err != nil {
		return nil, err
	}
	if stepErr != nil {
		return nil, stepErr
	}
	lc.finished(ctx, []*Payout{result})
	return result, nil
}

// Cancel withdraws a payout its merchant no longer wants, as long as it was not sent to the
// rail: CREATED, AUTHORIZED, PENDING_BALANCE and WAITING_ROUTING, and a card payout whose
// card was not entered yet. It ends REJECTED/ERROR with CodeCancelled, its reservation
// released and its outcome events written, like any rejection. Cancelling a cancelled
// payout answers it again (idempotent); anything later is a conflict (CodeCancelRefused).
//
// A worker that already asked the rail for a WAITING_ROUTING payout finds it moved when it
// records the answer and leaves it cancelled: the simulated rail keeps no state, and a real
// connector must make its submission revocable or take its payouts from PENDING_BANK on.
func (lc *Lifecycle) Cancel(ctx context.Context, merchantID string, id int64) (*Payout, error) {
	lc.init()
	now := lc.Now().UTC()
	var result *Payout
	var stepErr error
	var cancelled bool
	err := lc.Store.UpdatePayouts(ctx, []int64{id}, func(p *Payout, l Ledger) (time.Time, error) {
		if p.MerchantID != merchantID {
			stepErr = Errorf(KindNotFound, CodePayoutNotFound, "payout %d not found", id)
			return time.Time{}, ErrNoChange
		}
		if Cancelled(p) {
			result = p.Clone()
			return time.Time{}, ErrNoChange
		}
		if why := cancelRefusal(p); why != "" {
			stepErr = Errorf(KindConflict, CodeCancelRefused, "payout %d is %s/%s: %s", id, p.Stage, p.Status, why)
			return time.Time{}, ErrNoChange
		}
		m, err := lc.Merchants(p.MerchantID)
		if err != nil {
			return time.Time{}, err
		}
		next, err := lc.finish(p, m, l, now, StatusError, CodeCancelled, "cancelled by the merchant before it was sent")
		result, cancelled = p.Clone(), err == nil
		return next, err
	})
	if err != nil {
		return nil, err
	}
	if stepErr != nil {
		return nil, stepErr
	}
	if result == nil {
		return nil, Errorf(KindNotFound, CodePayoutNotFound, "payout %d not found", id)
	}
	if cancelled {
		lc.finished(ctx, []*Payout{result})
	}
	return result, nil
}

// Cancelled reports whether the payout ended by a merchant's cancel.
func Cancelled(p *Payout) bool {
	if p.Status != StatusError {
		return false
	}
	for _, e := range p.Errors {
		if e.Code == CodeCancelled {
			return true
		}
	}
	return false
}

// cancelRefusal says why a payout can no longer be cancelled, or "".
func cancelRefusal(p *Payout) string {
	switch p.Status {
	case StatusCreated, StatusAuthorized, StatusPendingBalance, StatusWaitingRouting:
		if p.Channel == ChannelCard && p.Card != nil {
			return "the beneficiary already entered the card"
		}
		return ""
	case StatusPendingBank:
		return "it was already sent to the rail"
	}
	return "it already ended"
}

func simulatedCode(s Status) string {
	switch s {
	case StatusDenied:
		return CodeDenied
	case StatusReversed:
		return CodeReversed
	case StatusNoBalance:
		return CodeNoBalance
	case StatusExpired:
		return CodeExpired
	}
	return CodeBankRejected
}

// CardEntered records the tokenized card of a card payout and sends it on the real-time
// card rail. The payout must still be waiting for its card.
func (lc *Lifecycle) CardEntered(ctx context.Context, id int64, card CardRef) (*Payout, error) {
	lc.init()
	now := lc.Now().UTC()
	var result *Payout
	var stepErr error
	err := lc.Store.UpdatePayouts(ctx, []int64{id}, func(p *Payout, l Ledger) (time.Time, error) {
		if p.Channel != ChannelCard || p.Card != nil || p.Status.Final() || p.CardLocked() {
			stepErr = wrongState(p, "take a card")
			return time.Time{}, ErrNoChange
		}
		if !p.SessionExpiresAt.IsZero() && !now.Before(p.SessionExpiresAt) {
			stepErr = Errorf(KindConflict, CodeCardSessionExpired, "the card form session expired")
			return time.Time{}, ErrNoChange
		}
		c := card
		p.Card = &c
		result = p
		if p.Status == StatusAuthorized && p.Reserved > 0 {
			p.Move(StatusWaitingRouting, now, "", "card entered")
		}
		return now, nil // not yet reserved: the worker reserves, then routes
	})
	if err != nil {
		return nil, err
	}
	if stepErr != nil {
		return nil, stepErr
	}
	lc.Kick()
	return result.Clone(), nil
}

// RestartCardSession gives a card payout that still waits for its card a new expiry (the
// merchant re-sent the same orderId), and its new session no failed attempts.
func (lc *Lifecycle) RestartCardSession(ctx context.Context, id int64, expiresAt time.Time) (*Payout, error) {
	lc.init()
	var result *Payout
	var stepErr error
	err := lc.Store.UpdatePayouts(ctx, []int64{id}, func(p *Payout, l Ledger) (time.Time, error) {
		if p.Channel != ChannelCard || p.Card != nil || p.Status.Final() {
			stepErr = wrongState(p, "restart its card session")
			return time.Time{}, ErrNoChange
		}
		p.SessionExpiresAt = expiresAt
		p.CardAttempts = 0
		result = p.Clone()
		if p.Status == StatusAuthorized && p.Reserved > 0 {
			return expiresAt, nil
		}
		return lc.Now().UTC(), nil
	})
	if err != nil {
		return nil, err
	}
	if stepErr != nil {
		return nil, stepErr
	}
	return result, nil
}

// Clone is a copy of p that shares nothing a step changes (history, errors, card): what
// callers may keep after a transaction, or a payout as it was before a step.
func (p *Payout) Clone() *Payout {
	c := *p
	if p.History != nil {
		// With the original's room to grow: a copy is most often the one a step moves next.
		c.History = append(make([]Transition, 0, cap(p.History)), p.History...)
	}
	c.Errors = slices.Clone(p.Errors)
	if p.Card != nil {
		card := *p.Card
		c.Card = &card
	}
	return &c
}
