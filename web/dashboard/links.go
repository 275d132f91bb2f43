package dashboard

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"payouts/rules"
	"payouts/rules/requirements"
	"payouts/static"
	"payouts/templates"
)

// Payout links from the dashboard: a form that creates one through the same service as
// POST /payouts/link, and on the payout's page the link's state, its URL to copy, its email
// sent again and (payoutActions) its cancel.

// linkCurrencies are the currencies a link may be paid in, by country.
var linkCurrencies = map[string][]string{"COL": {"COP"}, "PER": {"PEN", "USD"}}

// linkExpiries are the lengths the form offers, in minutes, with their words; the API
// takes any from 5 to 43,200.
var linkExpiries = []struct {
	minutes int
	key     string
}{{60, "nl.1h"}, {1440, "nl.1d"}, {4320, "nl.3d"}, {rules.LinkMinutesDefault, "nl.7d"}, {20160, "nl.14d"}, {rules.LinkMinutesMax, "nl.30d"}}

// newLink is GET /dashboard/merchants/{id}/new-link.
func (d *Dashboard) newLink(w http.ResponseWriter, r *http.Request) {
	m, ok := d.merchantOf(w, r)
	if !ok {
		return
	}
	d.showNewLink(w, r, m, nil, nil, http.StatusOK)
}

// linkCountry is the form's country: the query's, else Colombia.
func linkCountry(r *http.Request) string {
	if c := r.URL.Query().Get("country"); c == "PER" {
		return c
	}
	return "COL"
}

// showNewLink renders the form with the values sent and the errors of a refused create.
func (d *Dashboard) showNewLink(w http.ResponseWriter, r *http.Request, m *rules.Merchant, values url.Values, refused *rules.Problem, code int) {
	f := d.frame(r, "nl.title", "merchants")
	f.Title = f.W.S("nl.title") + " · " + m.Name
	lang := f.HTMLLang()
	country := linkCountry(r)
	now := d.cfg.Now()
	v := templates.NewLinkView{Frame: f, MerchantID: m.ID, Country: country, Mails: m.Settings.EmailNotifications,
		Action:    "/dashboard/merchants/" + url.PathEscape(m.ID) + "/new-link?country=" + country,
		Countries: options([]string{"COL", "PER"}, country)}
	if values == nil {
		values = url.Values{"expirationTime": {strconv.Itoa(rules.LinkMinutesDefault)}, "lang": {lang}}
	}
	errs := map[string]string{}
	if refused != nil {
		for _, e := range refused.Errors {
			msg := e.Code + ": " + rules.MessageIn(lang, e.Code, e.Message)
			name := e.Field
			if strings.HasPrefix(name, "allowedDestinations") {
				name = "allowedDestinations"
			}
			errs[name] = strings.TrimSpace(errs[name] + " " + msg)
			if e.Field != "" {
				msg = e.Field + " · " + msg
			}
			v.Errors = append(v.Errors, msg)
		}
		if len(v.Errors) == 0 {
			v.Errors = []string{f.W.S("nl.refused")}
		}
	}
	field := func(name, label, input string, required bool) templates.DashLinkField {
		lf := templates.DashLinkField{ID: "nl-" + strings.ReplaceAll(name, ".", "-"), Name: name, Label: f.W.S(label), Input: input,
			Value: values.Get(name), Required: required, Error: errs[name]}
		delete(errs, name)
		return lf
	}
	amount := field("amount", "nl.amount", "text", true)
	amount.Hint = f.W.S("nl.amountHint")
	currency := field("currency", "nl.currency", "select", true)
	for _, c := range linkCurrencies[country] {
		currency.Options = append(currency.Options, templates.Option{Value: c, Label: c})
	}
	email := field("beneficiary.email", "nl.email", "email", true)
	email.Autocomplete = "off"
	docType := field("beneficiary.document.type", "nl.docType", "select", false)
	docType.Options = documentTypes(country, m, now)
	docNumber := field("beneficiary.document.number", "nl.docNumber", "text", false)
	docNumber.Hint = f.W.S("nl.docHint")
	expiry := field("expirationTime", "nl.expiry", "select", true)
	for _, e := range linkExpiries {
		expiry.Options = append(expiry.Options, templates.Option{Value: strconv.Itoa(e.minutes), Label: f.W.S(e.key)})
	}
	langField := field("lang", "nl.lang", "select", true)
	langField.Options = []templates.Option{{Value: "es", Label: "Español"}, {Value: "en", Label: "English"}}
	v.Fields = []templates.DashLinkField{amount, currency, field("orderId", "nl.orderId", "text", true),
		field("description", "nl.description", "text", false), field("beneficiary.name", "nl.name", "text", true),
		field("beneficiary.lastName", "nl.lastName", "text", true), email, docType, docNumber, expiry, langField,
		field("returnUrl", "nl.returnUrl", "url", false)}
	for _, k := range rules.LinkKinds(country, m) {
		s := strconv.Itoa(k)
		v.Kinds = append(v.Kinds, templates.DashLinkKind{Value: s, Label: f.W.S("lk.kind." + s), Checked: slices.Contains(values["allowedDestinations"], s)})
	}
	v.KindsError = errs["allowedDestinations"]
	delete(errs, "allowedDestinations")
	d.render(w, r, code, templates.DashNewLink(v))
}

// documentTypes are the document types the country's requirements schema lists.
func documentTypes(country string, m *rules.Merchant, now time.Time) []templates.Option {
	for _, k := range rules.LinkKinds(country, m) {
		s, err := requirements.For(requirements.Query{Country: country, AccountType: strconv.Itoa(k)}, m, now)
		if err != nil {
			continue
		}
		for _, fl := range schemaFields(s, "", true) {
			if fl.path == "beneficiary.document.type" && len(fl.options) > 0 {
				out := make([]templates.Option, len(fl.options))
				for i, o := range fl.options {
					out[i] = templates.Option{Value: o, Label: o}
				}
				return out
			}
		}
	}
	return nil
}

// linkBody is the body of POST /payouts/link the form makes. The amount is typed in units
// with up to two decimals; one that does not read so goes as typed, for the rules to refuse
// with their code.
func linkBody(form url.Values, country string) []byte {
	get := func(name string) string { return strings.TrimSpace(form.Get(name)) }
	body := map[string]any{"country": country}
	set := func(path string, v any) {
		if s, ok := v.(string); ok && s == "" {
			return
		}
		setPath(body, path, v)
	}
	if a := get("amount"); a != "" {
		if n, ok := ParseDecimal(a); ok {
			set("amount", json.Number(strconv.FormatInt(n, 10)))
		} else {
			set("amount", a)
		}
	}
	for _, name := range []string{"currency", "orderId", "description", "beneficiary.name", "beneficiary.lastName", "beneficiary.email",
		"beneficiary.document.number", "returnUrl", "lang"} {
		set(name, get(name))
	}
	number := func(s string) any {
		if rules.IsDigits(s) {
			return json.Number(s)
		}
		return s
	}
	if t := get("beneficiary.document.type"); t != "" {
		set("beneficiary.document.type", number(t))
	}
	if e := get("expirationTime"); e != "" {
		set("expirationTime", number(e))
	}
	if kinds := form["allowedDestinations"]; len(kinds) > 0 {
		list := make([]any, len(kinds))
		for i, k := range kinds {
			list[i] = number(k)
		}
		body["allowedDestinations"] = list
	}
	raw, _ := json.Marshal(body)
	return raw
}

// createLink is POST /dashboard/merchants/{id}/new-link.
func (d *Dashboard) createLink(w http.ResponseWriter, r *http.Request) {
	m, ok := d.merchantForm(w, r, 64<<10)
	if !ok {
		return
	}
	words := templates.DashWords(d.lang(r))
	if d.cfg.CreateLink == nil {
		d.back(w, r, "/dashboard/merchants/"+url.PathEscape(m.ID), "", words.S("err.internal"))
		return
	}
	p, _, created, err := d.cfg.CreateLink(r.Context(), m, linkBody(r.PostForm, linkCountry(r)))
	var prob *rules.Problem
	var re *rules.Error
	switch {
	case errors.As(err, &prob):
		d.showNewLink(w, r, m, r.PostForm, prob, http.StatusBadRequest)
	case errors.As(err, &re):
		d.showNewLink(w, r, m, r.PostForm, &rules.Problem{Kind: re.Kind, Errors: []*rules.Error{re}}, http.StatusBadRequest)
	case err != nil:
		d.internal(w, r, err)
	default:
		id := strconv.FormatInt(p.ID, 10)
		flash := sprintf(words.S("nl.created"), p.ID)
		if created {
			rules.Audit(r.Context(), "payout.link.create", "payout:"+id, m.ID, map[string]any{"orderId": p.OrderID,
				"amount": p.Amount, "currency": p.Currency, "expiresAt": p.SessionExpiresAt.UTC().Format(time.RFC3339)})
			d.cfg.Log.Info("dashboard: payout link created", "payout", p.ID, "merchant_id", m.ID)
		} else {
			flash = sprintf(words.S("nl.replayed"), p.ID)
		}
		d.back(w, r, "/dashboard/payouts/"+id, flash, "")
	}
}

// linkState is what became of payout link p at now: waiting, submitted (the beneficiary
// gave a destination), expired, cancelled, or ended otherwise (locked after failed
// attempts, no balance).
func linkState(p *rules.Payout, now time.Time) string {
	switch {
	case p.Channel != rules.ChannelLink:
		return "submitted"
	case rules.LinkWaiting(p, now):
		return "waiting"
	case rules.Cancelled(p):
		return "cancelled"
	case !p.Status.Final(), p.Status == rules.StatusExpired && slices.ContainsFunc(p.Errors, func(e *rules.Error) bool { return e.Code == rules.CodeLinkExpired }):
		return "expired" // past its expiry: the lifecycle ends it on its next look
	}
	return "ended"
}

// linkPanel is the link of payout link p for its page; nil for any other payout. Its URL
// is shown only to whom may act on it (a maker, an operator), and only while it waits:
// whoever holds it decides where the money goes.
func (d *Dashboard) linkPanel(r *http.Request, p *rules.Payout, w templates.Words) (*templates.LinkPanel, error) {
	if p.Link == nil {
		return nil, nil
	}
	now := d.cfg.Now()
	state := linkState(p, now)
	lp := &templates.LinkPanel{State: state, StateLabel: w.S("lk." + state), ExpiresAt: timeText(p.SessionExpiresAt),
		Resent: len(p.Link.Resent), ResendURL: "/dashboard/payouts/" + strconv.FormatInt(p.ID, 10) + "/link-mail"}
	kinds := make([]string, len(p.Link.Kinds))
	for i, k := range p.Link.Kinds {
		kinds[i] = w.S("lk.kind." + strconv.Itoa(k))
	}
	lp.Kinds = strings.Join(kinds, ", ")
	if state != "waiting" || !d.actor(r).Can(rules.PermCreate, p.MerchantID) {
		return lp, nil
	}
	m, err := d.cfg.Store.Merchant(r.Context(), p.MerchantID)
	if err != nil {
		return nil, err
	}
	if d.cfg.LinkURL != nil {
		if lp.URL, err = d.cfg.LinkURL(r.Context(), m, p); err != nil {
			return nil, err
		}
	}
	if d.cfg.ResendLinkMail != nil {
		code, why := rules.LinkMailRefusal(p, m, now)
		lp.CanResend = code == ""
		lp.ResendNote = sprintf(w.S("lk.resendLeft"), len(p.Link.Resent), rules.LinkResendMax)
		if !lp.CanResend {
			lp.ResendNote += " " + code + ": " + why
		}
	}
	return lp, nil
}

// resendLinkMail is POST /dashboard/payouts/{id}/link-mail: the link's email again, within
// its limits (rules.LinkMailRefusal).
func (d *Dashboard) resendLinkMail(w http.ResponseWriter, r *http.Request) {
	p, self, ok := d.payoutForm(w, r)
	if !ok {
		return
	}
	words := templates.DashWords(d.lang(r))
	m, err := d.cfg.Store.Merchant(r.Context(), p.MerchantID)
	if err != nil {
		d.internal(w, r, err)
		return
	}
	if d.cfg.ResendLinkMail == nil {
		d.back(w, r, self, "", words.S("err.internal"))
		return
	}
	np, err := d.cfg.ResendLinkMail(r.Context(), m, p.ID)
	var re *rules.Error
	if errors.As(err, &re) {
		d.back(w, r, self, "", re.Code+": "+rules.MessageIn(d.lang(r), re.Code, re.Message))
		return
	}
	if err != nil {
		d.internal(w, r, err)
		return
	}
	rules.Audit(r.Context(), "payout.link.resend", "payout:"+strconv.FormatInt(p.ID, 10), p.MerchantID,
		map[string]any{"orderId": p.OrderID, "resent": len(np.Link.Resent)})
	d.cfg.Log.Info("dashboard: payout link email resent", "payout", p.ID, "resent", len(np.Link.Resent))
	d.back(w, r, self, words.S("lk.resent"), "")
}

// linkScript is the page's script when it shows a link to copy.
func linkScript(lp *templates.LinkPanel) string {
	if lp != nil && lp.URL != "" {
		return static.Path("dashcopy.js")
	}
	return ""
}
