package rules

import "time"

// Stage is what a merchant integrates on; Status is its detail.
type Stage string

const (
	StageInProgress Stage = "IN_PROGRESS"
	StagePending    Stage = "PENDING"
	StageSuccess    Stage = "SUCCESS"
	StageRejected   Stage = "REJECTED"
)

// Status is the detail of a stage (wire names).
type Status string

const (
	StatusCreated        Status = "CREATED"
	StatusAuthorized     Status = "AUTHORIZED"
	StatusWaitingRouting Status = "WAITING_ROUTING"
	StatusPendingBank    Status = "PENDING_BANK"
	StatusPendingBalance Status = "PENDING_BALANCE"
	StatusProcessed      Status = "PROCESSED"
	StatusDataError      Status = "DATA_ERROR"
	StatusBusinessError  Status = "BUSINESS_ERROR"
	StatusDenied         Status = "DENIED"
	StatusNoBalance      Status = "NO_BALANCE"
	StatusRejectedBank   Status = "REJECTED_BANK"
	StatusReversed       Status = "REVERSED"
	StatusError          Status = "ERROR"
	StatusExpired        Status = "EXPIRED"
)

// StageOf is the stage a status belongs to.
func StageOf(s Status) Stage {
	switch s {
	case StatusCreated, StatusAuthorized, StatusWaitingRouting, StatusPendingBank:
		return StageInProgress
	case StatusPendingBalance:
		return StagePending
	case StatusProcessed:
		return StageSuccess
	}
	return StageRejected
}

// Statuses lists every status, for validation of query filters.
var Statuses = []Status{
	StatusCreated, StatusAuthorized, StatusWaitingRouting, StatusPendingBank, StatusPendingBalance,
	StatusProcessed, StatusDataError, StatusBusinessError, StatusDenied, StatusNoBalance,
	StatusRejectedBank, StatusReversed, StatusError, StatusExpired,
}

// Stages lists every stage.
var Stages = []Stage{StageInProgress, StagePending, StageSuccess, StageRejected}

// Final reports whether a status ends the payout's life (REVERSED may still follow PROCESSED).
func (s Status) Final() bool {
	st := StageOf(s)
	return st == StageSuccess || st == StageRejected
}

// Channel is the rail a payout takes, decided by the country rules from the bank tables.
type Channel string

const (
	ChannelRealTime    Channel = "REAL_TIME"     // Colombia phone/account channel, Peru with cci or wallet
	ChannelRealTimeKey Channel = "REAL_TIME_KEY" // Colombia Bre-B key
	ChannelBatch       Channel = "BATCH"         // non-real-time, settled in the next batch
	ChannelCash        Channel = "CASH"          // Colombia cash claim with an OTP
	ChannelCard        Channel = "CARD"          // Peru VISA Original Credit Transfer, after the card form
	// ChannelLink is a payout link's until the beneficiary gives the destination, which
	// then decides its channel.
	ChannelLink Channel = "LINK"
)

// RealTime reports whether the channel settles in real time.
func (c Channel) RealTime() bool {
	return c == ChannelRealTime || c == ChannelRealTimeKey || c == ChannelCard
}

// Transition is one entry of a payout's history.
type Transition struct {
	Stage  Stage     `json:"stage"`
	Status Status    `json:"status"`
	At     time.Time `json:"at"`
	Code   string    `json:"code,omitempty"`
	Note   string    `json:"note,omitempty"`
}

// Payout is a stored payout: the accepted request, what the rules decided and where it is.
type Payout struct {
	ID          int64         `json:"id"`
	MerchantID  string        `json:"merchantId"`
	OrderID     string        `json:"orderId"`
	Country     string        `json:"country"`
	Currency    string        `json:"currency"`
	Amount      int64         `json:"amount"` // minor units
	Channel     Channel       `json:"channel"`
	AccountType int           `json:"accountType"`
	BankCode    string        `json:"bankCode,omitempty"`
	Request     PayoutRequest `json:"request"`
	Fingerprint string        `json:"fingerprint"`

	Stage           Stage        `json:"stage"`
	Status          Status       `json:"status"`
	StatusChangedAt time.Time    `json:"statusChangedAt"`
	CreatedAt       time.Time    `json:"createdAt"`
	History         []Transition `json:"history"`
	Errors          []*Error     `json:"errors,omitempty"`

	// ClaimUntil ends a Colombia cash claim (end of expirationDate in UTC-5).
	ClaimUntil time.Time `json:"claimUntil,omitzero"`
	// Reserved is the amount held on the merchant's balance for this payout.
	Reserved int64 `json:"reserved,omitempty"`
	// ClaimCodeHash is the SHA-256 (hex) of a Colombia cash claim's one-time code; the code
	// itself is only ever in the beneficiary's email. ClaimAttempts counts wrong codes.
	ClaimCodeHash string `json:"claimCodeHash,omitempty"`
	ClaimAttempts int    `json:"claimAttempts,omitempty"`
	// RailRef is the rail's reference once the payout was submitted; a Colombia cash payout's
	// is, once claimed, the code the beneficiary collected the cash with (spent by then).
	RailRef string `json:"railRef,omitempty"`

	// Card is the tokenized card of a card payout, once the beneficiary entered it.
	Card *CardRef `json:"card,omitempty"`
	// SessionExpiresAt ends a card payout's form session, or a payout link: without a card
	// (a destination) by then it EXPIRES.
	SessionExpiresAt time.Time `json:"sessionExpiresAt,omitzero"`
	// CardAttempts are the card form's failed submissions in its current session
	// (CountCardAttempt); none at creation, and none kept by a store written before they
	// were counted here.
	CardAttempts int `json:"cardAttempts,omitempty"`

	// Link is set on a payout created as a payout link: what its beneficiary may choose.
	// Its expiry is SessionExpiresAt; it waits on ChannelLink until the destination comes.
	Link *Link `json:"link,omitempty"`

	// Traceparent is the W3C traceparent of the request that created the payout, when traces
	// are exported: its rail calls and notifications are spans of that trace, however much
	// later they run. Ids only; never shown in an answer.
	Traceparent string `json:"traceparent,omitempty"`
}

// CardRef is what a payout keeps of a card: a token of the sealed PAN, and the parts that
// may be shown. Never the PAN, never the CVV.
type CardRef struct {
	Token string `json:"token"`
	Brand string `json:"brand"`
	BIN   string `json:"bin"`
	Last4 string `json:"last4"`
}

// Move records a transition to status at time at, with an optional error. It refuses to go
// backwards: a final status changes only from PROCESSED to REVERSED.
func (p *Payout) Move(status Status, at time.Time, code, note string) bool {
	if !CanMove(p.Status, status) {
		return false
	}
	p.Status = status
	p.Stage = StageOf(status)
	p.StatusChangedAt = at
	p.History = append(p.History, Transition{Stage: p.Stage, Status: status, At: at, Code: code, Note: note})
	if code != "" && p.Stage == StageRejected {
		p.Errors = append(p.Errors, &Error{Code: code, Message: WithPublished(code, note)})
	}
	return true
}

// order ranks the in-progress statuses so that transitions only move forward.
var order = map[Status]int{
	StatusCreated: 0, StatusAuthorized: 1, StatusPendingBalance: 2, StatusWaitingRouting: 3, StatusPendingBank: 4,
}

// CanMove reports whether from → to is a forward transition of the stages.
func CanMove(from, to Status) bool {
	if from == to {
		return false
	}
	if from == StatusProcessed {
		return to == StatusReversed
	}
	if to == StatusReversed {
		return false // a return of money that was paid: only after PROCESSED
	}
	if from.Final() {
		return false
	}
	if to.Final() {
		return true
	}
	return order[to] > order[from]
}
