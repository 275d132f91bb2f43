package api

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"payouts/rules"
)

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

// TimeFormat is the wire time: UTC RFC 3339 with milliseconds.
const TimeFormat = "2006-01-02T15:04:05.000Z07:00"

func wireTime(t time.Time) string {
	var b [len("2006-01-02T15:04:05.000Z")]byte
	return string(appendWireTime(b[:0], t))
}

// appendWireTime appends t as TimeFormat writes it in UTC, digit by digit: every answer
// carries a few of these, and time.Format's general layout machinery was 3 % of a read.
func appendWireTime(b []byte, t time.Time) []byte {
	t = t.UTC()
	y, mo, d := t.Date()
	if y < 0 || y > 9999 {
		return t.AppendFormat(b, TimeFormat)
	}
	h, mi, s := t.Clock()
	ms := t.Nanosecond() / int(time.Millisecond)
	b = append(b, byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10), '-',
		byte('0'+int(mo)/10), byte('0'+int(mo)%10), '-', byte('0'+d/10), byte('0'+d%10), 'T',
		byte('0'+h/10), byte('0'+h%10), ':', byte('0'+mi/10), byte('0'+mi%10), ':', byte('0'+s/10), byte('0'+s%10), '.',
		byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10), 'Z')
	return b
}

// PayoutHead is the "payout" object of the create answer.
type PayoutHead struct {
	ID       int64  `json:"Id" doc:"Identifier of the payout"`
	Country  string `json:"country"`
	Amount   int64  `json:"amount" doc:"Minor units"`
	Currency string `json:"currency"`
	OrderID  string `json:"orderId"`
}

// OutputView is the "output" object of the create answer.
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

// PayoutView is the create response.
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

// PayoutDetail is the "payout" object of GET /payouts/{id}: the request
// nested as it was sent, account numbers masked to their last four characters.
type PayoutDetail struct {
	ID              int64                  `json:"Id" doc:"Identifier of the payout"`
	Country         string                 `json:"country"`
	Amount          int64                  `json:"amount" doc:"Minor units"`
	Currency        string                 `json:"currency"`
	OrderID         string                 `json:"orderId"`
	Description     string                 `json:"description,omitempty"`
	Beneficiary     rules.Beneficiary      `json:"beneficiary"`
	Destination     DestinationView        `json:"destination"`
	SubMerchantInfo *rules.SubMerchantInfo `json:"subMerchantInfo,omitempty"`
}

// DestinationView is destination as sent, with its account numbers masked.
type DestinationView struct {
	BankAccount BankAccountView `json:"bankAccount"`
}

// BankAccountView is destination.bankAccount: accountType as a string (wire), every
// account number, CCI, phone or key masked to its last four characters.
type BankAccountView struct {
	BankCode       string         `json:"bankCode,omitempty"`
	AccountType    string         `json:"accountType" doc:"The numeric account type, as a string"`
	AccountNumber  string         `json:"accountNumber,omitempty" doc:"Masked: the last four characters"`
	CCI            string         `json:"cci,omitempty" doc:"Masked: the last four characters"`
	ExpirationDate string         `json:"expirationDate,omitempty"`
	Location       *rules.Address `json:"location,omitempty"`
}

// CardView is what a card payout shows of its card (this project's extra).
type CardView struct {
	Brand string `json:"brand"`
	BIN   string `json:"bin"`
	Last4 string `json:"last4"`
}

// PayoutDetailView is what GET /payouts/{id} and the listing answer: the original's shape
// (payout, output, errors when rejected) and this project's extras under names of their own:
// the channel, the creation time, the card and the history of transitions.
type PayoutDetailView struct {
	Payout    PayoutDetail     `json:"payout"`
	Output    OutputView       `json:"output"`
	Errors    []ErrorView      `json:"errors,omitempty" doc:"Why a rejected payout was rejected"`
	Channel   string           `json:"channel" doc:"This project's extra: the rail the rules chose"`
	CreatedAt string           `json:"createdAt" doc:"This project's extra"`
	Card      *CardView        `json:"card,omitempty" doc:"This project's extra: the card of a card payout, once entered"`
	Link      *LinkView        `json:"link,omitempty" doc:"This project's extra: the link of a payout link"`
	History   []TransitionView `json:"history" doc:"This project's extra: every transition with its time"`
}

func payoutView(p *rules.Payout) PayoutView {
	v := PayoutView{
		Payout: PayoutHead{ID: p.ID, Country: p.Country, Amount: p.Amount, Currency: p.Currency, OrderID: p.OrderID},
		Output: OutputView{Stage: string(p.Stage), Status: string(p.Status), StatusChangeDateTime: wireTime(p.StatusChangedAt)},
	}
	if p.Stage == rules.StageRejected {
		for _, e := range p.Errors {
			v.Errors = append(v.Errors, ErrorView{Code: e.Code, Message: rules.WithPublished(e.Code, e.Message)})
		}
	}
	return v
}

func payoutDetailView(p *rules.Payout) PayoutDetailView {
	pv := payoutView(p)
	req := &p.Request
	ba := req.Destination.BankAccount
	v := PayoutDetailView{
		Payout: PayoutDetail{ID: p.ID, Country: p.Country, Amount: p.Amount, Currency: p.Currency, OrderID: p.OrderID,
			Description: req.Description, Beneficiary: req.Beneficiary, SubMerchantInfo: req.SubMerchantInfo,
			Destination: DestinationView{BankAccount: BankAccountView{
				BankCode: p.BankCode, AccountType: strconv.Itoa(p.AccountType),
				AccountNumber: Mask(string(ba.AccountNumber)), CCI: Mask(ba.CCI),
				ExpirationDate: ba.ExpirationDate, Location: ba.Location,
			}}},
		Output: pv.Output, Errors: pv.Errors, Channel: string(p.Channel), CreatedAt: wireTime(p.CreatedAt),
		History: make([]TransitionView, 0, len(p.History)),
	}
	v.Link = linkView(p)
	if p.Card != nil {
		v.Card = &CardView{Brand: p.Card.Brand, BIN: p.Card.BIN, Last4: p.Card.Last4}
	}
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

// NotificationPayout is the "payout" of a merchant notification: id and
// amount are strings, the account number masked, the name first and last. Field order is the
// published vector's, so that its body round-trips byte for byte.
type NotificationPayout struct {
	ID            string `json:"id"`
	Country       string `json:"country"`
	Amount        string `json:"amount" doc:"Minor units, as a string"`
	Currency      string `json:"currency"`
	OrderID       string `json:"orderId"`
	MerchantID    string `json:"merchantId"`
	BankCode      string `json:"bankCode,omitempty"`
	AccountNumber string `json:"accountNumber,omitempty" doc:"Masked: the last four characters"`
	Name          string `json:"name,omitempty"`
	CustomerEmail string `json:"customerEmail,omitempty"`
	// PaymentCode is on SUCCESS only, as the original sends it: a Colombia cash payout's claim code, the one
	// the beneficiary collected the cash with; otherwise the rail's reference of the transfer.
	PaymentCode string `json:"paymentCode,omitempty" doc:"On SUCCESS: the claim code of a cash payout, else the rail's reference"`
}

// NotificationOutput is the "output" of a merchant notification: authorizationCode and
// authorizationDate on SUCCESS only.
type NotificationOutput struct {
	Stage                string `json:"stage"`
	Status               string `json:"status"`
	StatusChangeDateTime string `json:"statusChangeDateTime"`
	AuthorizationCode    string `json:"authorizationCode,omitempty"`
	AuthorizationDate    string `json:"authorizationDate,omitempty"`
}

// Notification is the body POSTed to a merchant's notificationUrl, as the
// original sends it; errors only on REJECTED.
type Notification struct {
	Payout NotificationPayout `json:"payout"`
	Output NotificationOutput `json:"output"`
	Errors []ErrorView        `json:"errors,omitempty"`
}

// describeNotification adds the merchant notification to the OpenAPI document as a webhook
// (OpenAPI 3.1), with its body and its verification header.
func describeNotification(a huma.API) {
	schema := a.OpenAPI().Components.Schemas.Schema(reflect.TypeOf(Notification{}), true, "Notification")
	a.OpenAPI().Webhooks = map[string]*huma.PathItem{"payout-outcome": {Post: &huma.Operation{
		OperationID: "payout-outcome-notification",
		Summary:     "Payout outcome, POSTed to the merchant's notificationUrl",
		Description: "Sent for stages SUCCESS and REJECTED, retried with backoff until a 2xx, at least once, every copy with the same Idempotency-Key (the event id). " +
			"The verification header is base64 RSA PKCS#1 v1.5 SHA-256 over merchantId followed by the raw body; the key is at " +
			"/api/v1/notifications/public-key (PEM) and /api/v1/notifications/certificate (X.509).",
		Tags: []string{"Notifications"},
		Parameters: []*huma.Param{
			{Name: "verification", In: "header", Required: true, Schema: &huma.Schema{Type: "string"}, Description: "base64 signature of merchantId + body"},
			{Name: "Idempotency-Key", In: "header", Required: true, Schema: &huma.Schema{Type: "string"}, Description: "The event id, the same on every copy"},
		},
		RequestBody: &huma.RequestBody{Required: true, Content: map[string]*huma.MediaType{"application/json": {Schema: schema}}},
		Responses:   map[string]*huma.Response{"200": {Description: "Any 2xx marks the notification delivered"}},
	}}}
}

// NotificationJSON is the body of a payout's merchant notification, as it stands.
func NotificationJSON(p *rules.Payout) ([]byte, error) {
	ba := p.Request.Destination.BankAccount
	account := Mask(string(ba.AccountNumber))
	switch {
	case account == "" && ba.CCI != "":
		account = Mask(ba.CCI)
	case account == "" && p.Card != nil:
		account = "************" + p.Card.Last4
	}
	b := p.Request.Beneficiary
	n := Notification{
		Payout: NotificationPayout{ID: itoa(p.ID), Country: p.Country, Amount: itoa(p.Amount), Currency: p.Currency,
			OrderID: p.OrderID, MerchantID: p.MerchantID, BankCode: p.BankCode, AccountNumber: account,
			Name: strings.TrimSpace(b.Name + " " + b.LastName), CustomerEmail: b.Email},
		Output: NotificationOutput{Stage: string(p.Stage), Status: string(p.Status), StatusChangeDateTime: wireTime(p.StatusChangedAt)},
		Errors: payoutView(p).Errors,
	}
	if p.Stage == rules.StageSuccess {
		n.Payout.PaymentCode = p.RailRef // a cash payout's: its claim code (rules.CashClaims)
		n.Output.AuthorizationCode = p.RailRef
		n.Output.AuthorizationDate = wireTime(p.StatusChangedAt)
	}
	return json.Marshal(n)
}
