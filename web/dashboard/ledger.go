package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"payouts/rules"
	"payouts/templates"
)

// The ledger page: a merchant's ledger entries of one balance, a day's
// statement, and the reconciliation of a range of days with what it found.

// ledgerPage is how many entries the page shows at once.
const ledgerPage = 50

func (d *Dashboard) ledgerRoutes(r chi.Router) {
	if d.cfg.Ledger == nil {
		return
	}
	r.Get("/dashboard/merchants/{id}/ledger", d.ledger)
	r.Get("/dashboard/merchants/{id}/statement.csv", d.statementCSV)
}

// ledgerCurrency is the page's currency: the query's, or the merchant's first balance's.
func ledgerCurrency(r *http.Request) string {
	if c := r.URL.Query().Get("currency"); rules.CountryOfCurrency(c) != "" {
		return c
	}
	return "PEN"
}

// ledger is /dashboard/merchants/{id}/ledger?currency=&after=&date=&reconcile=1&from=&to=.
func (d *Dashboard) ledger(w http.ResponseWriter, r *http.Request) {
	m, ok := d.merchantOf(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	currency := ledgerCurrency(r)
	country := rules.CountryOfCurrency(currency)
	f := d.frame(r, "led.title", "merchants")
	f.Title = f.W.S("led.title") + " · " + m.Name
	base := merchantHref(m.ID) + "/ledger"
	v := templates.LedgerView{Frame: f, MerchantID: m.ID, MerchantHref: merchantHref(m.ID), Currency: currency}
	for _, c := range []string{"COP", "PEN", "USD"} {
		v.Currencies = append(v.Currencies, templates.Option{Value: base + "?currency=" + c, Label: c, Selected: c == currency})
	}

	after, _ := strconv.ParseInt(q.Get("after"), 10, 64)
	page, err := d.cfg.Ledger.Entries(r.Context(), m.ID, country, currency, max(after, 0), ledgerPage)
	if err != nil {
		d.internal(w, r, err)
		return
	}
	for _, e := range page.Items {
		row := templates.EntryRow{ID: strconv.FormatInt(e.ID, 10), At: timeText(e.At), Type: string(e.Type),
			Amount: strconv.FormatInt(e.Amount, 10), Available: strconv.FormatInt(e.Available, 10), Balance: strconv.FormatInt(e.Balance, 10),
			OrderID: e.OrderID, BatchID: e.BatchID}
		if e.PayoutID != 0 {
			row.PayoutID = strconv.FormatInt(e.PayoutID, 10)
			row.PayoutHref = "/dashboard/payouts/" + row.PayoutID
		}
		v.Entries = append(v.Entries, row)
	}
	if page.Next != 0 {
		v.NextHref = base + "?currency=" + currency + "&after=" + strconv.FormatInt(page.Next, 10)
	}
	if after > 0 {
		v.FirstHref = base + "?currency=" + currency
	}

	now := d.cfg.Now()
	entries, err := rules.AllEntries(r.Context(), d.cfg.Ledger, m.ID, country, currency)
	if err != nil {
		d.internal(w, r, err)
		return
	}
	v.Date = q.Get("date")
	if v.Date == "" { // the ledger's day: its statement closes on the balance
		v.Date = rules.LedgerNow(now, entries).In(rules.StatementZone).Format(time.DateOnly)
	}
	if s, err := rules.StatementOf(currency, v.Date, "date", entries, now); err != nil {
		v.DateError = d.problem(f.W, err)
	} else {
		v.Statement = statementView(f.W, s, base)
	}

	v.From, v.To = q.Get("from"), q.Get("to")
	if q.Get("reconcile") != "" {
		rc, err := rules.ReconcileBalance(r.Context(), d.cfg.Ledger, m.ID, currency, v.From, v.To, now)
		if err != nil {
			v.RangeError = d.problem(f.W, err)
		} else {
			v.Reconciled = reconcileView(rc)
			v.From, v.To = rc.From, rc.To
		}
	}
	d.render(w, r, http.StatusOK, templates.DashLedger(v))
}

// problem is a rules.Error's message for a form; anything else is not the user's to fix.
func (d *Dashboard) problem(w templates.Words, err error) string {
	var re *rules.Error
	if errors.As(err, &re) {
		return re.Code + ": " + re.Message
	}
	d.cfg.Log.Error("dashboard ledger", "err", err)
	return w.S("err.internal")
}

// statement builds a day's statement as the API does (rules.StatementOf).
func (d *Dashboard) statement(ctx context.Context, merchantID, currency, date string, now time.Time) (rules.Statement, error) {
	if _, err := rules.StatementDay(date); err != nil {
		err.(*rules.Error).Field = "date"
		return rules.Statement{}, err
	}
	entries, err := rules.AllEntries(ctx, d.cfg.Ledger, merchantID, rules.CountryOfCurrency(currency), currency)
	if err != nil {
		return rules.Statement{}, err
	}
	return rules.StatementOf(currency, date, "date", entries, now)
}

func statementView(w templates.Words, s rules.Statement, base string) *templates.StatementView {
	line := func(key string, v int64) templates.Option {
		return templates.Option{Label: w.S(key), Value: strconv.FormatInt(v, 10)}
	}
	v := &templates.StatementView{Date: s.Date, Timezone: "UTC" + s.Timezone, Complete: s.Complete,
		CSVHref: base[:len(base)-len("/ledger")] + "/statement.csv?currency=" + s.Currency + "&date=" + s.Date,
		Lines: []templates.Option{line("st.opening", s.Opening), line("st.funded", s.Funded), line("st.withdrawn", s.Withdrawn),
			line("st.paid", s.Paid), line("st.reversed", s.Reversed), line("st.opened", s.Opened), line("st.closing", s.Closing),
			line("st.openingAvailable", s.OpeningAvailable), line("st.reserved", s.Reserved), line("st.released", s.Released),
			line("st.closingAvailable", s.ClosingAvailable)}}
	var counts []string
	for _, t := range rules.EntryTypes {
		if n := s.Counts[t]; n > 0 {
			counts = append(counts, fmt.Sprintf("%s %d", t, n))
		}
	}
	v.Counts = strings.Join(counts, ", ")
	if v.Counts == "" {
		v.Counts = "0"
	}
	return v
}

func reconcileView(rc rules.Reconciliation) *templates.ReconcileView {
	v := &templates.ReconcileView{From: rc.From, To: rc.To, Entries: strconv.Itoa(rc.Entries), Payouts: strconv.Itoa(rc.Payouts)}
	for _, s := range rc.Days {
		v.Days = append(v.Days, templates.ReconcileDay{Date: s.Date, Opening: strconv.FormatInt(s.Opening, 10),
			Movements: strconv.FormatInt(s.Closing-s.Opening, 10), Closing: strconv.FormatInt(s.Closing, 10)})
	}
	for _, f := range rc.Findings {
		v.Findings = append(v.Findings, f.String())
	}
	return v
}

// statementCSV is /dashboard/merchants/{id}/statement.csv?currency=&date=: the API's CSV.
func (d *Dashboard) statementCSV(w http.ResponseWriter, r *http.Request) {
	m, ok := d.merchantOf(w, r)
	if !ok {
		return
	}
	currency, date := ledgerCurrency(r), r.URL.Query().Get("date")
	s, err := d.statement(r.Context(), m.ID, currency, date, d.cfg.Now())
	if err != nil {
		d.back(w, r, merchantHref(m.ID)+"/ledger?currency="+url.QueryEscape(currency), "", d.problem(templates.DashWords(d.lang(r)), err))
		return
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=statement-%s-%s-%s.csv", m.ID, currency, s.Date))
	cw := rules.NewCSVWriter(w)
	cw.Write(rules.StatementCSVHeader)
	cw.Write(s.CSV())
	cw.Flush()
}
