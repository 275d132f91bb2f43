package api

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"payouts/rules"
)

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

// TimeFormat is the wire time: UTC RFC 3339 with milliseconds.
const TimeFormat = "2006-01-02T15:04:05.000Z07:00"

func wireTime(t time.Time) string { return t.UTC().Format(TimeFormat) }

// PayoutHead is the "payout" object of spec 2.7 (wire: "Id" with a capital I).
type PayoutHead struct {
	ID       int64  `json:"Id" doc:"Identifier of the payout"`
	Country  string `json:"country"`
	Amount   int64  `json:"amount" doc:"Minor units"`
	Currency string `json:"currency"`
	OrderID  string `json:"orderId"`
}

// OutputView is the "output" object of spec 2.7.
type OutputView struct {
	Stage                string `json:"stage" enum:"IN_PROGRESS,PENDING,SUCCESS,REJECTED"`
	Status               string `json:"status"`
	StatusChangeDateTime string `json:"statusChangeDateTime" doc:"UTC, RFC 3339 with milliseconds"`
}

// ErrorView is one error of a rejected payout.
type ErrorView struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// PayoutView is the create response (spec 2.7).
type PayoutView struct {
	Payout PayoutHead  `json:"payout"`
	Output OutputView  `json:"output"`
	Errors []ErrorView `json:"errors,omitempty" doc:"Why a rejected payout was rejected"`
}

// TransitionView is one entry of a payout's history.
type TransitionView struct {
	Stage  string `json:"stage"`
	Status string `json:"status"`
	At     string `json:"at"`
	Code   string `json:"code,omitempty"`
	Note   string `json:"note,omitempty"`
}

// DestinationView is the destination with its account numbers masked.
type DestinationView struct {
	BankCode      string `json:"bankCode,omitempty"`
	AccountType   int    `json:"accountType"`
	AccountNumber string `json:"accountNumber,omitempty"`
	CCI           string `json:"cci,omitempty"`
	Channel       string `json:"channel"`
}

// PayoutDetailView is what GET /payouts/{id} and the listing answer: the create response
// plus the masked destination, the description and the history of transitions.
type PayoutDetailView struct {
	Payout      PayoutHead       `json:"payout"`
	Output      OutputView       `json:"output"`
	Errors      []ErrorView      `json:"errors,omitempty"`
	Description string           `json:"description,omitempty"`
	Destination DestinationView  `json:"destination"`
	CreatedAt   string           `json:"createdAt"`
	History     []TransitionView `json:"history"`
}

func payoutView(p *rules.Payout) PayoutView {
	v := PayoutView{
		Payout: PayoutHead{ID: p.ID, Country: p.Country, Amount: p.Amount, Currency: p.Currency, OrderID: p.OrderID},
		Output: OutputView{Stage: string(p.Stage), Status: string(p.Status), StatusChangeDateTime: wireTime(p.StatusChangedAt)},
	}
	if p.Stage == rules.StageRejected {
		for _, e := range p.Errors {
			v.Errors = append(v.Errors, ErrorView{Code: e.Code, Message: e.Message})
		}
	}
	return v
}

func payoutDetailView(p *rules.Payout) PayoutDetailView {
	pv := payoutView(p)
	v := PayoutDetailView{Payout: pv.Payout, Output: pv.Output, Errors: pv.Errors,
		Description: p.Request.Description, CreatedAt: wireTime(p.CreatedAt)}
	ba := p.Request.Destination.BankAccount
	v.Destination = DestinationView{BankCode: p.BankCode, AccountType: p.AccountType,
		AccountNumber: Mask(string(ba.AccountNumber)), CCI: Mask(ba.CCI), Channel: string(p.Channel)}
	for _, t := range p.History {
		v.History = append(v.History, TransitionView{Stage: string(t.Stage), Status: string(t.Status), At: wireTime(t.At), Code: t.Code, Note: t.Note})
	}
	return v
}

// Mask keeps the last four characters of an account number, CCI, phone or key.
func Mask(s string) string {
	if s == "" {
		return ""
	}
	if len(s) <= 4 {
		return strings.Repeat("*", len(s))
	}
	return strings.Repeat("*", len(s)-4) + s[len(s)-4:]
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// PayoutJSON is the body of a merchant notification (contract section 7): the payout
// response of spec 2.7, with "errors" always present (empty unless REJECTED).
func PayoutJSON(p *rules.Payout) ([]byte, error) {
	v := payoutView(p)
	if v.Errors == nil {
		v.Errors = []ErrorView{}
	}
	return json.Marshal(struct {
		Payout PayoutHead  `json:"payout"`
		Output OutputView  `json:"output"`
		Errors []ErrorView `json:"errors"`
	}{v.Payout, v.Output, v.Errors})
}
