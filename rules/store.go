package rules

import (
	"encoding/json"
	"errors"
	"time"
)

// Event is one entry of the durable outbox: written in the same transaction as the state
// change that causes it, delivered later by a dispatcher.
type Event struct {
	ID         string          `json:"id"`   // unique, stable: the delivery is once per ID
	Kind       string          `json:"kind"` // EventBeneficiaryMail, EventMerchantNotification, EventCashOTP
	MerchantID string          `json:"merchantId"`
	PayoutID   int64           `json:"payoutId"`
	Data       json.RawMessage `json:"data,omitempty"`
	CreatedAt  time.Time       `json:"createdAt"`
	Attempts   int             `json:"attempts"`
	NextAt     time.Time       `json:"nextAt"`
	LastError  string          `json:"lastError,omitempty"`
	// Traceparent is its payout's (Payout.Traceparent): the delivery is a span of the trace
	// of the request that created the payout.
	Traceparent string `json:"traceparent,omitempty"`
}

// Event kinds.
const (
	EventBeneficiaryMail      = "beneficiary.mail"
	EventMerchantNotification = "merchant.notification"
	EventCashOTP              = "cash.otp"
)

// Ledger is what a lifecycle step may touch besides its payout, inside the same
// transaction: the merchant's balances and the outbox.
type Ledger interface {
	Balance(merchantID, country, currency string) (Balance, error)
	PutBalance(merchantID string, b Balance) error
	Enqueue(ev Event) error
}

// Step is one lifecycle step on a payout, run inside a write transaction with the payout
// as stored. It changes the payout and returns when it is due next (zero: not queued), or
// returns ErrNoChange to leave everything as it was. The payout is the step's own: an engine
// keeps no reference to it once UpdatePayouts returns, so a step may keep it, which once
// UpdatePayouts returned nil is the payout as stored (a copy would be garbage for nothing).
type Step func(p *Payout, l Ledger) (next time.Time, err error)

// ErrNoChange is returned by a Step that leaves its payout alone.
var ErrNoChange = errors.New("no change")

// DueEntry is one payout of the lifecycle queue, with the status it was queued in.
type DueEntry struct {
	ID     int64
	Status Status
}

// ListFilter selects payouts of one merchant (GET /payouts).
type ListFilter struct {
	Stage   Stage
	Status  Status
	Country string
	OrderID string
	From    time.Time // created at or after
	To      time.Time // created before
	Limit   int
	Cursor  int64 // list payouts with an id below this; 0 is from the newest
}

// ListMaxScan bounds the payouts one listing request reads: a filter no index serves (the
// country, a creation time before) stops there with a cursor rather than reading a
// merchant's whole history in one request.
const ListMaxScan = 5000

// Page is one page of a listing, newest first.
type Page struct {
	Items      []*Payout
	NextCursor int64 // 0 when there is no further page
}
