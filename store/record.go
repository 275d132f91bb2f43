package store

import (
	"time"

	bolt "go.etcd.io/bbolt"

	"payouts/rules"
)

// A payout is stored in two parts, so that a lifecycle step rewrites a few hundred bytes
// rather than the whole record:
//
//   - its core (bPayouts): what the request and the rules fixed at creation, written once
//     (about 500 bytes, most of them the request as sent);
//   - its state (bPayoutState): stage, status, the other fields steps change and the
//     history, rewritten at each step (100 to 300 bytes).
//
// The history lives in the state rather than as entries of its own: the state's page is
// written at every step anyway, while separate entries, inserted among the recent payouts,
// split their pages half empty (measured: 740 bytes of pages per payout for the history
// alone, against about 130 more bytes of state).
//
// Field names are short and times are Unix nanoseconds: a record is read and written far
// more often than it is looked at. read puts the parts back into a rules.Payout.

// payoutCore is the part of a payout written once. OrderID, Country and Currency are kept
// only when they differ from the request's (they never do for a created payout).
type payoutCore struct {
	MerchantID  string              `json:"m"`
	OrderID     string              `json:"o,omitempty"`
	Country     string              `json:"c,omitempty"`
	Currency    string              `json:"cu,omitempty"`
	Amount      int64               `json:"a"`
	Channel     rules.Channel       `json:"ch"`
	AccountType int                 `json:"at"`
	BankCode    string              `json:"bc,omitempty"`
	Fingerprint string              `json:"f"`
	CreatedAt   int64               `json:"t"`
	ClaimUntil  int64               `json:"cl,omitempty"`
	Request     rules.PayoutRequest `json:"r"`
}

// payoutState is the part of a payout its steps change.
type payoutState struct {
	Stage            rules.Stage     `json:"g"`
	Status           rules.Status    `json:"s"`
	StatusChangedAt  int64           `json:"t"`
	Reserved         int64           `json:"rs,omitempty"`
	RailRef          string          `json:"rr,omitempty"`
	SessionExpiresAt int64           `json:"se,omitempty"`
	ClaimCodeHash    string          `json:"ch,omitempty"`
	ClaimAttempts    int             `json:"ca,omitempty"`
	Card             *rules.CardRef  `json:"cd,omitempty"`
	Errors           []*rules.Error  `json:"e,omitempty"`
	History          []transitionRec `json:"h"`
}

// transitionRec is one history entry; Stage only when it is not the status's own.
type transitionRec struct {
	Stage  rules.Stage  `json:"g,omitempty"`
	Status rules.Status `json:"s"`
	At     int64        `json:"t"`
	Code   string       `json:"c,omitempty"`
	Note   string       `json:"n,omitempty"`
}

func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

func coreOf(p *rules.Payout) payoutCore {
	c := payoutCore{MerchantID: p.MerchantID, Amount: p.Amount, Channel: p.Channel, AccountType: p.AccountType,
		BankCode: p.BankCode, Fingerprint: p.Fingerprint, CreatedAt: nanos(p.CreatedAt), ClaimUntil: nanos(p.ClaimUntil),
		Request: p.Request}
	if p.OrderID != p.Request.OrderID {
		c.OrderID = p.OrderID
	}
	if p.Country != p.Request.Country {
		c.Country = p.Country
	}
	if p.Currency != p.Request.Currency {
		c.Currency = p.Currency
	}
	return c
}

func stateOf(p *rules.Payout) payoutState {
	s := payoutState{Stage: p.Stage, Status: p.Status, StatusChangedAt: nanos(p.StatusChangedAt),
		Reserved: p.Reserved, RailRef: p.RailRef, SessionExpiresAt: nanos(p.SessionExpiresAt),
		ClaimCodeHash: p.ClaimCodeHash, ClaimAttempts: p.ClaimAttempts, Card: p.Card, Errors: p.Errors,
		History: make([]transitionRec, len(p.History))}
	for i, t := range p.History {
		s.History[i] = transitionOf(t)
	}
	return s
}

func transitionOf(t rules.Transition) transitionRec {
	r := transitionRec{Status: t.Status, At: nanos(t.At), Code: t.Code, Note: t.Note}
	if t.Stage != rules.StageOf(t.Status) {
		r.Stage = t.Stage
	}
	return r
}

// payoutBuckets are the buckets of one payout's parts in a transaction.
type payoutBuckets struct{ core, state *bolt.Bucket }

func payoutBucketsOf(tx *bolt.Tx) payoutBuckets {
	return payoutBuckets{tx.Bucket(bPayouts), tx.Bucket(bPayoutState)}
}

// appendOnly tells bbolt that the keys of the payout cores, the list indexes and the queue
// go at the end of their range (ids and due times grow), and that cores are never
// rewritten: their pages fill up rather than split half empty. It lasts for the transaction.
func appendOnly(tx *bolt.Tx) {
	for _, name := range [][]byte{bPayouts, bByMerch, bByStage, bByStatus, bDue, bDueByID} {
		tx.Bucket(name).FillPercent = 1.0
	}
}

// insert writes all the parts of a new payout.
func (b payoutBuckets) insert(p *rules.Payout) error {
	idKey := be64(uint64(p.ID))
	if err := putJSON(b.core, idKey, coreOf(p)); err != nil {
		return err
	}
	return putJSON(b.state, idKey, stateOf(p))
}

// read puts a payout back together; ErrNotFound when there is none.
func (b payoutBuckets) read(id int64) (*rules.Payout, error) {
	idKey := be64(uint64(id))
	return decodePayout(id, b.core.Get(idKey), b.state.Get(idKey))
}

func decodePayout(id int64, coreRaw, stateRaw []byte) (*rules.Payout, error) {
	if coreRaw == nil || stateRaw == nil {
		return nil, ErrNotFound
	}
	var c payoutCore
	if err := unmarshal(coreRaw, &c); err != nil {
		return nil, err
	}
	var s payoutState
	if err := unmarshal(stateRaw, &s); err != nil {
		return nil, err
	}
	p := &rules.Payout{ID: id, MerchantID: c.MerchantID, OrderID: c.OrderID, Country: c.Country, Currency: c.Currency,
		Amount: c.Amount, Channel: c.Channel, AccountType: c.AccountType, BankCode: c.BankCode, Request: c.Request,
		Fingerprint: c.Fingerprint, CreatedAt: fromNanos(c.CreatedAt), ClaimUntil: fromNanos(c.ClaimUntil),
		Stage: s.Stage, Status: s.Status, StatusChangedAt: fromNanos(s.StatusChangedAt), Reserved: s.Reserved,
		RailRef: s.RailRef, SessionExpiresAt: fromNanos(s.SessionExpiresAt), ClaimCodeHash: s.ClaimCodeHash,
		ClaimAttempts: s.ClaimAttempts, Card: s.Card, Errors: s.Errors}
	if p.OrderID == "" {
		p.OrderID = c.Request.OrderID
	}
	if p.Country == "" {
		p.Country = c.Request.Country
	}
	if p.Currency == "" {
		p.Currency = c.Request.Currency
	}
	p.History = make([]rules.Transition, 0, len(s.History))
	for _, t := range s.History {
		stage := t.Stage
		if stage == "" {
			stage = rules.StageOf(t.Status)
		}
		p.History = append(p.History, rules.Transition{Stage: stage, Status: t.Status, At: fromNanos(t.At), Code: t.Code, Note: t.Note})
	}
	return p, nil
}

// readState reads only a payout's state (the status of a card sweep, for example).
func (b payoutBuckets) readState(id int64) (payoutState, error) {
	var s payoutState
	err := getJSON(b.state, be64(uint64(id)), &s)
	return s, err
}

// update writes what a step changed: the state, and the core only if the step changed it
// (none does today; the check keeps a future one from being lost).
func (b payoutBuckets) update(p *rules.Payout, core payoutCore) error {
	idKey := be64(uint64(p.ID))
	if c := coreOf(p); c != core {
		if err := putJSON(b.core, idKey, c); err != nil {
			return err
		}
	}
	return putJSON(b.state, idKey, stateOf(p))
}
