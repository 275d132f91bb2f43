package dashboard

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"payouts/rules"
	"payouts/templates"
)

func randomNonce() string {
	b := make([]byte, 18)
	rand.Read(b)
	return base64.RawStdEncoding.EncodeToString(b)
}

// timeText is how the dashboard writes a time: UTC, to the second.
func timeText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

// Decimal writes minor units as a decimal string with two decimals ("-1234.05"), for the
// CSV: every currency served here has two implied decimals.
func Decimal(minor int64) string {
	sign := ""
	u := uint64(minor)
	if minor < 0 {
		sign, u = "-", uint64(-(minor+1))+1
	}
	c := strconv.FormatUint(u%100, 10)
	if len(c) == 1 {
		c = "0" + c
	}
	return sign + strconv.FormatUint(u/100, 10) + "." + c
}

// ParseDecimal reads an amount typed with at most two decimals ("1,500.5", "-20") into minor
// units; commas group thousands.
func ParseDecimal(s string) (int64, bool) {
	s = strings.ReplaceAll(strings.TrimSpace(s), ",", "")
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	whole, frac, dot := strings.Cut(s, ".")
	if whole == "" || len(whole) > 15 || strings.Trim(whole, "0123456789") != "" ||
		(dot && (frac == "" || len(frac) > 2 || strings.Trim(frac, "0123456789") != "")) {
		return 0, false
	}
	for len(frac) < 2 {
		frac += "0"
	}
	n, err := strconv.ParseInt(whole+frac, 10, 64)
	if err != nil {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}

func stageClass(s rules.Stage) string {
	return "stage-" + strings.ToLower(strings.ReplaceAll(string(s), "_", "-"))
}

// listQuery is a parsed payouts filter.
type listQuery struct {
	form      templates.PayoutFilters
	merchants []string // to search: one, or all
	filter    rules.ListFilter
	channel   rules.Channel
}

// parseList reads the filters of /dashboard/payouts and its CSV. A bad value is an error
// naming the field; nothing is listed then.
func (d *Dashboard) parseList(r *http.Request, all []*rules.Merchant) (listQuery, error) {
	q := r.URL.Query()
	lq := listQuery{form: templates.PayoutFilters{Merchant: q.Get("merchant"), OrderID: strings.TrimSpace(q.Get("orderId")),
		Stage: q.Get("stage"), Status: q.Get("status"), Country: q.Get("country"), Channel: q.Get("channel"),
		From: q.Get("from"), To: q.Get("to")}}
	f := &lq.filter
	f.OrderID = lq.form.OrderID
	if lq.form.Merchant != "" {
		if !slices.ContainsFunc(all, func(m *rules.Merchant) bool { return m.ID == lq.form.Merchant }) {
			return lq, errors.New("merchant")
		}
		lq.merchants = []string{lq.form.Merchant}
	} else {
		for _, m := range all {
			lq.merchants = append(lq.merchants, m.ID)
		}
	}
	if s := lq.form.Stage; s != "" {
		if !slices.Contains(rules.Stages, rules.Stage(s)) {
			return lq, errors.New("stage")
		}
		f.Stage = rules.Stage(s)
	}
	if s := lq.form.Status; s != "" {
		if !slices.Contains(rules.Statuses, rules.Status(s)) {
			return lq, errors.New("status")
		}
		f.Status = rules.Status(s)
	}
	if c := lq.form.Country; c != "" {
		if c != "COL" && c != "PER" {
			return lq, errors.New("country")
		}
		f.Country = c
	}
	if c := lq.form.Channel; c != "" {
		if !slices.Contains(channels, rules.Channel(c)) {
			return lq, errors.New("channel")
		}
		lq.channel = rules.Channel(c)
	}
	day := func(name, v string) (time.Time, error) {
		if v == "" {
			return time.Time{}, nil
		}
		t, err := time.Parse("2006-01-02", v)
		if err != nil {
			return t, errors.New(name)
		}
		return t, nil
	}
	var err error
	if f.From, err = day("from", lq.form.From); err != nil {
		return lq, err
	}
	if f.To, err = day("to", lq.form.To); err != nil {
		return lq, err
	}
	if !f.To.IsZero() {
		f.To = f.To.Add(24 * time.Hour) // the whole day of "to"
	}
	if c := q.Get("cursor"); c != "" {
		n, err := strconv.ParseInt(c, 10, 64)
		if err != nil || n <= 0 {
			return lq, errors.New("cursor")
		}
		f.Cursor = n
	}
	return lq, nil
}

var channels = []rules.Channel{rules.ChannelRealTime, rules.ChannelRealTimeKey, rules.ChannelBatch, rules.ChannelCash, rules.ChannelCard, rules.ChannelLink}

// maxRounds bounds the store reads of one listing page; past it the page ends with a cursor.
const maxRounds = 20

// list reads up to limit payouts of the given merchants, newest first, from cursor (the
// filter's Cursor: ids below it), those keep accepts. Payout ids are global, so one cursor
// serves every merchant: each round reads one page per merchant below the cursor, keeps what
// every merchant has been read down to, and moves the cursor there. next is 0 at the end.
func (d *Dashboard) list(ctx context.Context, merchants []string, f rules.ListFilter, limit int, keep func(*rules.Payout) bool) ([]*rules.Payout, int64, error) {
	var out []*rules.Payout
	cursor := f.Cursor
	for round := 0; round < maxRounds; round++ {
		var cands []*rules.Payout
		var floor int64
		for _, m := range merchants {
			pf := f
			pf.Cursor, pf.Limit = cursor, limit-len(out)
			page, err := d.cfg.Store.ListPayouts(ctx, m, pf)
			if err != nil {
				return nil, 0, err
			}
			// Every payout of m at or above NextCursor was read.
			floor = max(floor, page.NextCursor)
			cands = append(cands, page.Items...)
		}
		slices.SortFunc(cands, func(a, b *rules.Payout) int { return cmp.Compare(b.ID, a.ID) })
		for _, p := range cands {
			if p.ID < floor {
				break // another merchant was not read this far: next round
			}
			if keep != nil && !keep(p) {
				continue
			}
			out = append(out, p)
			if len(out) == limit {
				return out, p.ID, nil
			}
		}
		if floor == 0 {
			return out, 0, nil
		}
		cursor = floor
	}
	return out, cursor, nil
}

// merchantNames are the merchants the request's actor sees (a merchant user: its own), with
// their names.
func (d *Dashboard) merchantNames(r *http.Request) (map[string]string, []*rules.Merchant, error) {
	all, err := d.cfg.Store.Merchants(r.Context())
	if err != nil {
		return nil, nil, err
	}
	a := d.actor(r)
	ms := all[:0:0]
	for _, m := range all {
		if a.Sees(m.ID) {
			ms = append(ms, m)
		}
	}
	names := make(map[string]string, len(ms))
	for _, m := range ms {
		names[m.ID] = m.Name
	}
	return names, ms, nil
}

func (d *Dashboard) row(p *rules.Payout, names map[string]string) templates.PayoutRow {
	merchant := p.MerchantID
	if n := names[p.MerchantID]; n != "" {
		merchant = p.MerchantID + " · " + n
	}
	bank := p.BankCode
	if bank == "" {
		bank = "—"
	}
	return templates.PayoutRow{ID: strconv.FormatInt(p.ID, 10), Href: "/dashboard/payouts/" + strconv.FormatInt(p.ID, 10),
		OrderID: p.OrderID, Merchant: merchant, MerchantHref: "/dashboard/merchants/" + url.PathEscape(p.MerchantID),
		Country: p.Country, Amount: templates.FormatAmount(p.Currency, p.Amount), Currency: p.Currency,
		Stage: string(p.Stage), StageClass: stageClass(p.Stage), Status: string(p.Status), Channel: string(p.Channel),
		Bank: bank, Created: timeText(p.CreatedAt), Changed: timeText(p.StatusChangedAt)}
}

func options[T ~string](values []T, selected string) []templates.Option {
	out := make([]templates.Option, len(values))
	for i, v := range values {
		out[i] = templates.Option{Value: string(v), Label: string(v), Selected: string(v) == selected}
	}
	return out
}

func merchantOptions(ms []*rules.Merchant, selected string) []templates.Option {
	out := make([]templates.Option, len(ms))
	for i, m := range ms {
		out[i] = templates.Option{Value: m.ID, Label: m.ID + " · " + m.Name, Selected: m.ID == selected}
	}
	return out
}

// pageSize is how many payouts a list page shows.
const pageSize = 50

// payouts is /dashboard/payouts.
func (d *Dashboard) payouts(w http.ResponseWriter, r *http.Request) {
	names, ms, err := d.merchantNames(r)
	if err != nil {
		d.internal(w, r, err)
		return
	}
	f := d.frame(r, "p.title", "payouts")
	lq, perr := d.parseList(r, ms)
	v := templates.PayoutsView{Frame: f, F: lq.form, Merchants: merchantOptions(ms, lq.form.Merchant),
		Stages: options(rules.Stages, lq.form.Stage), Statuses: options(rules.Statuses, lq.form.Status),
		Countries: options([]string{"COL", "PER"}, lq.form.Country), Chans: options(channels, lq.form.Channel)}
	csvQuery := r.URL.Query()
	csvQuery.Del("cursor")
	v.CSVURL = "/dashboard/payouts.csv?" + csvQuery.Encode()
	if perr != nil {
		v.Error = sprintf(f.W.S("p.badFilter"), perr.Error())
		d.render(w, r, http.StatusBadRequest, templates.DashPayouts(v))
		return
	}
	items, next, err := d.list(r.Context(), lq.merchants, lq.filter, pageSize, lq.keep)
	if err != nil {
		d.internal(w, r, err)
		return
	}
	for _, p := range items {
		v.Rows = append(v.Rows, d.row(p, names))
	}
	if next > 0 {
		q := r.URL.Query()
		q.Set("cursor", strconv.FormatInt(next, 10))
		v.NextURL = "/dashboard/payouts?" + q.Encode()
	}
	d.render(w, r, http.StatusOK, templates.DashPayouts(v))
}

func (lq listQuery) keep(p *rules.Payout) bool { return lq.channel == "" || p.Channel == lq.channel }

// payoutsCSV streams every payout the filters select, one row each, for reconciliation.
func (d *Dashboard) payoutsCSV(w http.ResponseWriter, r *http.Request) {
	names, ms, err := d.merchantNames(r)
	if err != nil {
		d.internal(w, r, err)
		return
	}
	lq, perr := d.parseList(r, ms)
	if perr != nil {
		http.Error(w, "invalid filter: "+perr.Error(), http.StatusBadRequest)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/csv; charset=utf-8")
	h.Set("Content-Disposition", `attachment; filename="payouts-`+d.cfg.Now().UTC().Format("20060102-150405")+`.csv"`)
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	cw := rules.NewCSVWriter(w)
	cw.Write([]string{"payoutId", "orderId", "merchantId", "merchantName", "country", "currency", "amount", "amountMinor",
		"stage", "status", "channel", "bankCode", "createdAt", "statusChangedAt", "errorCode"})
	f := lq.filter
	for {
		items, next, err := d.list(r.Context(), lq.merchants, f, 500, lq.keep)
		if err != nil {
			// The header is out: end the body short so that the download reads as failed.
			d.cfg.Log.Error("dashboard CSV", "err", err)
			panic(http.ErrAbortHandler)
		}
		for _, p := range items {
			code := ""
			if len(p.Errors) > 0 {
				code = p.Errors[len(p.Errors)-1].Code
			}
			cw.Write([]string{strconv.FormatInt(p.ID, 10), p.OrderID, p.MerchantID, names[p.MerchantID], p.Country,
				p.Currency, Decimal(p.Amount), strconv.FormatInt(p.Amount, 10), string(p.Stage), string(p.Status),
				string(p.Channel), p.BankCode, p.CreatedAt.UTC().Format(time.RFC3339Nano),
				p.StatusChangedAt.UTC().Format(time.RFC3339Nano), code})
		}
		cw.Flush()
		if next == 0 || cw.Error() != nil {
			return
		}
		f.Cursor = next
	}
}

// payoutByID reads a payout of a merchant the actor sees; another merchant's is not found.
func (d *Dashboard) payoutByID(r *http.Request) (*rules.Payout, error) {
	id, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64)
	if err != nil || id <= 0 {
		return nil, errNotFound
	}
	ps, err := d.cfg.Store.PayoutsByID(r.Context(), []int64{id})
	if err != nil {
		return nil, err
	}
	if len(ps) == 0 || !d.actor(r).Sees(ps[0].MerchantID) {
		return nil, errNotFound
	}
	return ps[0], nil
}

// payout is /dashboard/payouts/{id}.
func (d *Dashboard) payout(w http.ResponseWriter, r *http.Request) {
	p, err := d.payoutByID(r)
	if errors.Is(err, errNotFound) {
		f := d.frame(r, "d.notFound", "payouts")
		d.render(w, r, http.StatusNotFound, templates.DashPayouts(templates.PayoutsView{Frame: f, CSVURL: "/dashboard/payouts.csv"}))
		return
	}
	if err != nil {
		d.internal(w, r, err)
		return
	}
	names, _, err := d.merchantNames(r)
	if err != nil {
		d.internal(w, r, err)
		return
	}
	f := d.frame(r, "d.title", "payouts")
	f.Title = sprintf(f.W.S("d.title"), strconv.FormatInt(p.ID, 10))
	v := templates.PayoutDetailView{Frame: f, P: d.row(p, names), Sandbox: d.cfg.Sandbox && d.cfg.Settle != nil,
		CanSettle: !p.Status.Final() && f.Can.Manage, CanReverse: p.Status == rules.StatusProcessed && f.Can.Manage,
		SimulateURL: "/dashboard/payouts/" + strconv.FormatInt(p.ID, 10) + "/simulate", ResendURL: "/dashboard/deliveries/resend"}
	for _, s := range []rules.Status{rules.StatusRejectedBank, rules.StatusDenied, rules.StatusError} {
		v.RejectStatuses = append(v.RejectStatuses, templates.Option{Value: string(s), Label: string(s)})
	}
	for _, e := range p.Errors {
		v.Errors = append(v.Errors, templates.KV{K: e.Code, V: rules.MessageIn(f.HTMLLang(), e.Code, e.Message)})
	}
	for _, t := range p.History {
		v.Timeline = append(v.Timeline, templates.TimelineItem{At: timeText(t.At), Stage: string(t.Stage),
			StageClass: stageClass(t.Stage), Status: string(t.Status), Code: t.Code, Note: rules.NoteIn(f.HTMLLang(), t.Note)})
	}
	v.Actions = d.payoutActions(r, p)
	if v.Link, err = d.linkPanel(r, p, f.W); err != nil {
		d.internal(w, r, err)
		return
	}
	v.Frame.Script = linkScript(v.Link)
	v.Movements = movements(p, f.W)
	v.Request = requestFacts(p)
	rows, err := d.payoutDeliveries(r.Context(), p, f.W)
	for i := range rows {
		rows[i].CanResend = rows[i].CanResend && f.Can.Manage
	}
	if err != nil {
		d.internal(w, r, err)
		return
	}
	v.Deliveries = rows
	if v.Frame.Script != "" {
		d.renderScripted(w, r, http.StatusOK, templates.DashPayout(v))
		return
	}
	d.render(w, r, http.StatusOK, templates.DashPayout(v))
}

// movements derives what the payout did to its merchant's balance from its history (the
// lifecycle's rules, rules/lifecycle.go): the amount is held from availableBalance when the
// payout is authorized (or released from PENDING_BALANCE, or settled directly), PROCESSED
// debits the balance, a rejection releases the hold, REVERSED credits both back.
func movements(p *rules.Payout, w templates.Words) []templates.Movement {
	amt := func(n int64) string { return templates.FormatAmount(p.Currency, n) }
	var out []templates.Movement
	held := false
	hold := func(at time.Time) {
		out = append(out, templates.Movement{At: timeText(at), What: w.S("mv.reserve"), Available: amt(-p.Amount), Balance: amt(0)})
		held = true
	}
	for i, t := range p.History {
		switch t.Status {
		case rules.StatusAuthorized:
			nextStatus := rules.Status("")
			if i+1 < len(p.History) {
				nextStatus = p.History[i+1].Status
			}
			switch {
			case nextStatus == rules.StatusPendingBalance || nextStatus == rules.StatusNoBalance:
			case nextStatus == "" && p.Reserved == 0:
			default:
				hold(t.At)
			}
		case rules.StatusWaitingRouting, rules.StatusPendingBank:
			if !held {
				hold(t.At)
			}
		case rules.StatusProcessed:
			if !held {
				hold(t.At)
			}
			out = append(out, templates.Movement{At: timeText(t.At), What: w.S("mv.debit"), Available: amt(0), Balance: amt(-p.Amount)})
			held = false
		case rules.StatusReversed:
			out = append(out, templates.Movement{At: timeText(t.At), What: w.S("mv.credit"), Available: amt(p.Amount), Balance: amt(p.Amount)})
		default:
			if t.Status.Final() && held {
				out = append(out, templates.Movement{At: timeText(t.At), What: w.S("mv.release"), Available: amt(p.Amount), Balance: amt(0)})
				held = false
			}
		}
	}
	return out
}

// mask keeps the last four characters of an account number, CCI, key, phone or document.
func mask(s string) string {
	if s == "" {
		return ""
	}
	r := []rune(s)
	if len(r) <= 4 {
		return strings.Repeat("•", len(r))
	}
	return strings.Repeat("•", len(r)-4) + string(r[len(r)-4:])
}

// requestFacts is the stored request, with every account identifier and document masked.
func requestFacts(p *rules.Payout) []templates.KV {
	q := p.Request
	b, a := q.Beneficiary, q.Destination.BankAccount
	var out []templates.KV
	add := func(k, v string) {
		if v != "" {
			out = append(out, templates.KV{K: k, V: v})
		}
	}
	add("country", q.Country)
	add("amount", string(q.Amount))
	add("currency", q.Currency)
	add("orderId", q.OrderID)
	add("description", q.Description)
	add("beneficiary.name", b.Name)
	add("beneficiary.lastName", b.LastName)
	add("beneficiary.email", b.Email)
	add("beneficiary.phoneNumber", mask(b.PhoneNumber))
	add("beneficiary.document.type", strconv.Itoa(b.Document.Type))
	add("beneficiary.document.number", mask(b.Document.Number))
	add("destination.bankAccount.bankCode", a.BankCode)
	add("destination.bankAccount.accountType", string(a.AccountType))
	add("destination.bankAccount.accountNumber", mask(string(a.AccountNumber)))
	add("destination.bankAccount.cci", mask(a.CCI))
	add("destination.bankAccount.clabe", mask(a.CLABE))
	add("destination.bankAccount.cbu", mask(a.CBU))
	add("destination.bankAccount.alias", mask(a.Alias))
	add("destination.bankAccount.expirationDate", a.ExpirationDate)
	if s := q.SubMerchantInfo; s != nil {
		add("subMerchantInfo.code", s.Code)
		add("subMerchantInfo.name", s.Name)
		add("subMerchantInfo.url", s.URL)
	}
	add("timeoutUrl", q.TimeoutURL)
	add("merchantLogo", q.MerchantLogo)
	add("expirationTime", string(q.ExpirationTime))
	if p.Card != nil {
		add("card", templates.MaskedCard(p.Card.Brand, p.Card.Last4))
	}
	return out
}

// simulate forces the payout's outcome in the sandbox: Succeed, Reject (status…), Reverse.
func (d *Dashboard) simulate(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 8<<10)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "the form could not be read", http.StatusBadRequest)
		return
	}
	p, err := d.payoutByID(r)
	if errors.Is(err, errNotFound) {
		d.back(w, r, "/dashboard/payouts", "", templates.DashWords(d.lang(r)).S("d.notFound"))
		return
	}
	if err != nil {
		d.internal(w, r, err)
		return
	}
	self := "/dashboard/payouts/" + strconv.FormatInt(p.ID, 10)
	if !d.cfg.Sandbox || d.cfg.Settle == nil {
		http.Error(w, "sandbox controls are off: the server runs with --sandbox=false", http.StatusForbidden)
		return
	}
	var status rules.Status
	switch r.PostForm.Get("action") {
	case "succeed":
		status = rules.StatusProcessed
	case "reverse":
		status = rules.StatusReversed
	case "reject":
		status = rules.Status(r.PostForm.Get("status"))
		if !slices.Contains([]rules.Status{rules.StatusRejectedBank, rules.StatusDenied, rules.StatusError}, status) {
			http.Error(w, "status must be REJECTED_BANK, DENIED or ERROR", http.StatusBadRequest)
			return
		}
	default:
		http.Error(w, "action must be succeed, reject or reverse", http.StatusBadRequest)
		return
	}
	np, err := d.cfg.Settle(r.Context(), p.MerchantID, p.ID, status)
	var re *rules.Error
	if errors.As(err, &re) {
		d.back(w, r, self, "", re.Message)
		return
	}
	if err != nil {
		d.internal(w, r, err)
		return
	}
	rules.Audit(r.Context(), "payout.simulate", "payout:"+strconv.FormatInt(p.ID, 10), p.MerchantID, map[string]string{"status": string(status)})
	d.cfg.Log.Info("dashboard: sandbox outcome", "payout", p.ID, "status", np.Status)
	d.back(w, r, self, sprintf(templates.DashWords(d.lang(r)).S("d.settled"), string(np.Stage)+"/"+string(np.Status)), "")
}
