package api

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strconv"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"payouts/rules"
)

// Ledger holds the operations over a balance's ledger entries: the entries, paged, and
// a day's statement built from them.
type Ledger struct {
	Entries rules.LedgerEntries
	// Now is the service's clock (the sandbox's test clock when it runs): a day that has not
	// begun on it has no statement.
	Now func() time.Time
}

// EntryView is one ledger entry on the wire.
type EntryView struct {
	ID        int64  `json:"id" example:"42" doc:"The entry's number in its balance, from 1 without gaps: pass the last one seen as after"`
	At        string `json:"at" example:"2026-11-25T15:04:05.123Z" doc:"When the movement was made, on the service's clock (UTC)"`
	Type      string `json:"type" enum:"opening,funding,withdrawal,reservation,release,debit,reversal" example:"reservation"`
	Amount    int64  `json:"amount" example:"-150000" doc:"Signed, in minor units. funding, withdrawal and reversal move available and balance; reservation and release move available only; debit moves balance only; opening is the balance found when entries began (it brings its available with it)"`
	Available int64  `json:"available" example:"850000" doc:"The available balance after the entry"`
	Balance   int64  `json:"balance" example:"1000000" doc:"The balance after the entry"`
	PayoutID  int64  `json:"payoutId,omitempty" example:"1042" doc:"The payout the movement belongs to"`
	OrderID   string `json:"orderId,omitempty" example:"ORD-2026-000123" doc:"That payout's orderId"`
	BatchID   string `json:"batchId,omitempty" doc:"The batch the payout belongs to, when it came in one"`
}

// BalanceTransactions is one page of a balance's entries.
type BalanceTransactions struct {
	Country  string      `json:"country" example:"PER"`
	Currency string      `json:"currency" example:"PEN"`
	Items    []EntryView `json:"items"`
	Next     *string     `json:"next" doc:"Pass as after for the next page; null on the last page"`
}

func entryView(e rules.Entry) EntryView {
	return EntryView{ID: e.ID, At: wireTime(e.At), Type: string(e.Type), Amount: e.Amount, Available: e.Available, Balance: e.Balance,
		PayoutID: e.PayoutID, OrderID: e.OrderID, BatchID: e.BatchID}
}

// StatementView is a day's statement on the wire (rules.Statement).
type StatementView struct {
	Currency         string         `json:"currency" example:"PEN"`
	Date             string         `json:"date" example:"2026-11-24"`
	Timezone         string         `json:"timezone" example:"-05:00" doc:"Days are UTC−5 (Colombia and Peru) for every currency, USD included"`
	Complete         bool           `json:"complete" doc:"false while the day is still running: the figures so far"`
	Opening          int64          `json:"opening" doc:"The balance at the start of the day: after the last entry before it"`
	OpeningAvailable int64          `json:"openingAvailable"`
	Funded           int64          `json:"funded" doc:"Fundings (positive)"`
	Withdrawn        int64          `json:"withdrawn" doc:"Withdrawals (negative)"`
	Reserved         int64          `json:"reserved" doc:"Amounts held for payouts (negative; available only)"`
	Released         int64          `json:"released" doc:"Holds released by payouts that ended unpaid (positive; available only)"`
	Paid             int64          `json:"paid" doc:"Payouts paid (negative; balance only: their amounts were held before)"`
	Reversed         int64          `json:"reversed" doc:"Paid payouts returned by the bank (positive)"`
	Opened           int64          `json:"opened" doc:"An opening entry's amount, on the day a balance kept before entries got one"`
	Closing          int64          `json:"closing" doc:"opening + funded + withdrawn + paid + reversed + opened"`
	ClosingAvailable int64          `json:"closingAvailable" doc:"openingAvailable + funded + withdrawn + reserved + released + reversed + opened"`
	Counts           map[string]int `json:"counts" doc:"Entries of the day by type"`
	FirstEntry       int64          `json:"firstEntry,omitempty" doc:"The day's first and last entry ids (absent on a day without entries)"`
	LastEntry        int64          `json:"lastEntry,omitempty"`
}

func statementView(s rules.Statement) StatementView {
	v := StatementView{Currency: s.Currency, Date: s.Date, Timezone: s.Timezone, Complete: s.Complete, Opening: s.Opening,
		OpeningAvailable: s.OpeningAvailable, Funded: s.Funded, Withdrawn: s.Withdrawn, Reserved: s.Reserved, Released: s.Released,
		Paid: s.Paid, Reversed: s.Reversed, Opened: s.Opened, Closing: s.Closing, ClosingAvailable: s.ClosingAvailable,
		Counts: map[string]int{}, FirstEntry: s.FirstEntry, LastEntry: s.LastEntry}
	for t, n := range s.Counts {
		v.Counts[string(t)] = n
	}
	return v
}

const ledgerDoc = "This project's extension: every change of a balance writes an append-only ledger entry in the same transaction, " +
	"so that the entries of a balance add up to it: the sum of the entries' available changes is the available balance, " +
	"of their balance changes the balance, and the last entry carries both."

// balanceCountry is the country whose balance a currency is, or the 400 that says there is none.
func balanceCountry(currency, field string) (string, error) {
	country := rules.CountryOfCurrency(currency)
	if country == "" {
		return "", &rules.Error{Kind: rules.KindInvalid, Code: rules.CodeLedgerCurrency, Field: field, Value: currency,
			Message: "must be COP, PEN or USD: the currencies balances are kept in"}
	}
	return country, nil
}

// registerLedger adds the ledger operations.
func registerLedger(a huma.API, l Ledger) {
	type listIn struct {
		MerchantID string `path:"merchantId"`
		Currency   string `query:"currency" required:"true" example:"PEN" doc:"The balance's currency: COP (Colombia), PEN or USD (Peru)"`
		After      string `query:"after" example:"42" doc:"An entry id (the last one seen, or the previous page's next): only the entries after it"`
		Limit      int    `query:"limit" minimum:"1" maximum:"500" default:"100"`
	}
	type listOut struct {
		Body BalanceTransactions
	}
	huma.Register(a, huma.Operation{
		OperationID: "list-balance-transactions", Method: http.MethodGet, Path: "/api/v1/{merchantId}/balance/transactions",
		Summary:     "A balance's ledger entries, oldest first (this project's extension)",
		Description: ledgerDoc + " Page forward with after=next. A currency never funded has no entries.",
		Tags:        []string{"Balance"}, Security: signedSecurity, Errors: []int{400, 401, 503}, Extensions: extension,
	}, func(ctx context.Context, in *listIn) (*listOut, error) {
		country, err := balanceCountry(in.Currency, "query.currency")
		if err != nil {
			return nil, err
		}
		var after int64
		if in.After != "" {
			if after, err = strconv.ParseInt(in.After, 10, 64); err != nil || after < 0 {
				return nil, &rules.Error{Kind: rules.KindInvalid, Code: rules.CodeQueryParam, Field: "query.after",
					Message: "must be an entry id (a whole number)", Value: in.After}
			}
		}
		page, err := l.Entries.Entries(ctx, merchantFrom(ctx).ID, country, in.Currency, after, in.Limit)
		if err != nil {
			return nil, err
		}
		out := &listOut{}
		out.Body.Country, out.Body.Currency = country, in.Currency
		out.Body.Items = make([]EntryView, 0, len(page.Items))
		for _, e := range page.Items {
			out.Body.Items = append(out.Body.Items, entryView(e))
		}
		if page.Next != 0 {
			n := strconv.FormatInt(page.Next, 10)
			out.Body.Next = &n
		}
		return out, nil
	})

	type statementIn struct {
		MerchantID string `path:"merchantId"`
		Currency   string `path:"currency" example:"PEN" doc:"COP, PEN or USD"`
		Date       string `path:"date" example:"2026-11-24" doc:"The day, YYYY-MM-DD, in UTC−5"`
		Accept     string `header:"Accept" doc:"application/json (default) or text/csv: a header row and the day's row"`
	}
	type statementOut struct {
		ContentType string `header:"Content-Type"`
		Body        []byte
	}
	schema := a.OpenAPI().Components.Schemas.Schema(reflect.TypeOf(StatementView{}), true, "Statement")
	huma.Register(a, huma.Operation{
		OperationID: "get-statement", Method: http.MethodGet, Path: "/api/v1/{merchantId}/statements/{currency}/{date}",
		Summary: "A balance's statement of one day (this project's extension)",
		Description: ledgerDoc + " The statement is built from the entries of the day (UTC−5, for USD too): " +
			"closing = opening + funded + withdrawn + paid + reversed + opened, and the same for the available balance with " +
			"reserved and released; each day's closing is the next day's opening (`payouts reconcile` proves it for a range). " +
			"Today's statement is the day so far (complete: false); a day that has not begun is refused (" + rules.CodeStatementFuture +
			"); a day before the merchant's first movement answers zeros. Days are the ledger's: in the sandbox, after the test clock " +
			"is reset, the days its entries reached while it was ahead are still answered, the last of them closing on the balance.",
		Tags: []string{"Balance"}, Security: signedSecurity, Errors: []int{400, 401, 503}, Extensions: extension,
		Responses: map[string]*huma.Response{"200": {Description: "The statement", Content: map[string]*huma.MediaType{
			"application/json": {Schema: schema},
			"text/csv": {Schema: &huma.Schema{Type: "string", Description: "A header row and the day's row",
				Examples: []any{"currency,date,timezone,complete,opening,...\nPEN,2026-11-24,'-05:00,true,1000000,..."}}},
		}}},
	}, func(ctx context.Context, in *statementIn) (*statementOut, error) {
		country, err := balanceCountry(in.Currency, "path.currency")
		if err != nil {
			return nil, err
		}
		if _, err := rules.StatementDay(in.Date); err != nil {
			return nil, err
		}
		entries, err := rules.AllEntries(ctx, l.Entries, merchantFrom(ctx).ID, country, in.Currency)
		if err != nil {
			return nil, err
		}
		s, err := rules.StatementOf(in.Currency, in.Date, "path.date", entries, l.Now())
		if err != nil {
			return nil, err
		}
		if prefersCSV(in.Accept) {
			var buf bytes.Buffer
			w := rules.NewCSVWriter(&buf)
			w.Write(rules.StatementCSVHeader)
			w.Write(s.CSV())
			w.Flush()
			return &statementOut{ContentType: "text/csv; charset=utf-8", Body: buf.Bytes()}, nil
		}
		b, err := json.Marshal(statementView(s))
		if err != nil {
			return nil, err
		}
		return &statementOut{ContentType: "application/json", Body: b}, nil
	})
}

// prefersCSV says whether the client ranks text/csv above JSON (JSON is the default).
func prefersCSV(accept string) bool {
	jq, js := acceptQ(accept, "application", "json")
	cq, cs := acceptQ(accept, "text", "csv")
	return cs >= 2 && cq > 0 && (cq > jq || cq == jq && cs > js)
}
