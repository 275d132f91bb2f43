package dashboard

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/go-chi/chi/v5"

	"payouts/rules"
	"payouts/templates"
)

// settingNames are the merchant's switches, in the order the forms show them.
var settingNames = []string{"psp", "emailNotifications", "cardPayouts", "cardOnFile", "cashPayouts",
	"realTimePhoneAccount", "realTimeKey", "pendingOnNoBalance"}

func settingPtrs(s *rules.Settings) map[string]*bool {
	return map[string]*bool{"psp": &s.PSP, "emailNotifications": &s.EmailNotifications, "cardPayouts": &s.CardPayouts,
		"cardOnFile": &s.CardOnFile, "cashPayouts": &s.CashPayouts, "realTimePhoneAccount": &s.RealTimePhoneAccount,
		"realTimeKey": &s.RealTimeKey, "pendingOnNoBalance": &s.PendingOnNoBalance}
}

func merchantForm(id, name string, s rules.Settings, w templates.Words) templates.MerchantForm {
	f := templates.MerchantForm{ID: id, Name: name, NotificationURL: s.NotificationURL,
		AllowedOrigins: strings.Join(s.AllowedOrigins, "\n")}
	ptrs := settingPtrs(&s)
	for _, n := range settingNames {
		f.Settings = append(f.Settings, templates.SettingBox{Name: n, Label: w.S("set." + n), Checked: *ptrs[n]})
	}
	return f
}

// readSettings reads the settings of a merchant form; errs has a message per bad field. The
// settings are checked by rules.CheckSettings, as the admin API checks them.
func readSettings(r *http.Request, w templates.Words, allowHTTP bool) (rules.Settings, map[string]string) {
	var s rules.Settings
	errs := map[string]string{}
	for n, p := range settingPtrs(&s) {
		*p = r.PostForm.Get(n) == "on"
	}
	s.NotificationURL = strings.TrimSpace(r.PostForm.Get("notificationUrl"))
	for _, line := range strings.FieldsFunc(r.PostForm.Get("allowedOrigins"), func(c rune) bool { return c == '\n' || c == '\r' || c == ',' || c == ' ' }) {
		if u, err := url.Parse(line); err == nil && rules.IsOrigin(line) {
			line = u.Scheme + "://" + strings.ToLower(u.Host) // stored as an origin compares
		}
		s.AllowedOrigins = append(s.AllowedOrigins, line) // anything else is refused below
	}
	for _, e := range rules.CheckSettings(s, allowHTTP) {
		if e.Code == rules.CodeNotificationURL {
			errs["notificationUrl"] = w.S("m.badURL")
		} else {
			errs["allowedOrigins"] = w.S("m.badOrigin")
		}
	}
	return s, errs
}

// merchants is /dashboard/merchants: the list and the create form.
func (d *Dashboard) merchants(w http.ResponseWriter, r *http.Request) {
	f := d.frame(r, "m.title", "merchants")
	d.showMerchants(w, r, f, merchantForm("", "", rules.DefaultSettings(), f.W), http.StatusOK)
}

func (d *Dashboard) showMerchants(w http.ResponseWriter, r *http.Request, f templates.Frame, form templates.MerchantForm, code int) {
	_, ms, err := d.merchantNames(r)
	if err != nil {
		d.internal(w, r, err)
		return
	}
	v := templates.MerchantsView{Frame: f, Form: form}
	for _, m := range ms {
		row := templates.MerchantRow{ID: m.ID, Href: "/dashboard/merchants/" + url.PathEscape(m.ID), Name: m.Name, Created: timeText(m.CreatedAt)}
		bs, err := d.cfg.Store.Balances(r.Context(), m.ID)
		if err != nil {
			d.internal(w, r, err)
			return
		}
		for _, b := range bs {
			row.Balances = append(row.Balances, templates.FormatAmount(b.Currency, b.Available)+" ("+b.Country+")")
		}
		v.Rows = append(v.Rows, row)
	}
	d.render(w, r, code, templates.DashMerchants(v))
}

// createMerchant makes a merchant and shows its credentials once, on its page.
func (d *Dashboard) createMerchant(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 32<<10)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "the form could not be read", http.StatusBadRequest)
		return
	}
	f := d.frame(r, "m.title", "merchants")
	s, errs := readSettings(r, f.W, d.cfg.AllowHTTPNotificationURL)
	id, name := strings.TrimSpace(r.PostForm.Get("merchantId")), strings.TrimSpace(r.PostForm.Get("name"))
	if name == "" {
		errs["name"] = f.W.S("m.nameRequired")
	}
	form := merchantForm(id, name, s, f.W)
	if len(errs) == 0 {
		m, key, secret, err := d.cfg.CreateMerchant(id, name, s)
		var re *rules.Error
		switch {
		case errors.As(err, &re):
			errs["merchantId"] = re.Message
		case err != nil:
			d.internal(w, r, err)
			return
		default:
			d.cfg.Log.Info("dashboard: merchant created", "merchant_id", m.ID)
			rules.Audit(r.Context(), "merchant.create", "merchant:"+m.ID, m.ID, map[string]any{"name": m.Name, "settings": s})
			d.sm.Put(r.Context(), kCreds, key+"\n"+secret)
			d.back(w, r, "/dashboard/merchants/"+url.PathEscape(m.ID), "", "")
			return
		}
	}
	form.Errors = errs
	f.Error = f.W.S("m.fixErrors")
	d.showMerchants(w, r, f, form, http.StatusUnprocessableEntity)
}

// merchantForm reads a posted form of at most limit bytes and the merchant of the path; false
// when either failed, the answer already written.
func (d *Dashboard) merchantForm(w http.ResponseWriter, r *http.Request, limit int64) (*rules.Merchant, bool) {
	r.Body = http.MaxBytesReader(w, r.Body, limit)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "the form could not be read", http.StatusBadRequest)
		return nil, false
	}
	return d.merchantOf(w, r)
}

// merchantOf is the path's merchant; a merchant user asking for another merchant (or for
// one that does not exist) gets 404, the same answer.
func (d *Dashboard) merchantOf(w http.ResponseWriter, r *http.Request) (*rules.Merchant, bool) {
	id := chi.URLParam(r, "id")
	if !d.actor(r).Sees(id) {
		d.hidden(w, r)
		return nil, false
	}
	m, err := d.cfg.Store.Merchant(r.Context(), id)
	if errors.Is(err, rules.ErrNotFound) {
		d.back(w, r, "/dashboard/merchants", "", templates.DashWords(d.lang(r)).S("m.notFound"))
		return nil, false
	}
	if err != nil {
		d.internal(w, r, err)
		return nil, false
	}
	return m, true
}

// merchant is /dashboard/merchants/{id}.
func (d *Dashboard) merchant(w http.ResponseWriter, r *http.Request) {
	m, ok := d.merchantOf(w, r)
	if !ok {
		return
	}
	f := d.frame(r, "m.title", "merchants")
	d.showMerchant(w, r, f, m, merchantForm(m.ID, m.Name, m.Settings, f.W), templates.FundForm{}, http.StatusOK)
}

// fundPairs are the balances a merchant can hold.
var fundPairs = []string{"COL COP", "PER PEN", "PER USD"}

func (d *Dashboard) showMerchant(w http.ResponseWriter, r *http.Request, f templates.Frame, m *rules.Merchant,
	form templates.MerchantForm, fund templates.FundForm, code int) {
	f.Title = m.Name + " (" + m.ID + ")"
	v := templates.MerchantView{Frame: f, ID: m.ID, Name: m.Name, Created: timeText(m.CreatedAt), Form: form, Fund: fund,
		PayoutsHref: "/dashboard/payouts?merchant=" + url.QueryEscape(m.ID)}
	if c := d.sm.PopString(r.Context(), kCreds); c != "" {
		key, secret, _ := strings.Cut(c, "\n")
		v.Creds = &templates.Creds{APIKey: key, APISecret: secret}
		w.Header().Set("Cache-Control", "no-store")
	}
	bs, err := d.cfg.Store.Balances(r.Context(), m.ID)
	if err != nil {
		d.internal(w, r, err)
		return
	}
	for _, b := range bs {
		v.Balances = append(v.Balances, templates.BalanceRow{Country: b.Country, Currency: b.Currency,
			Available: templates.FormatAmount(b.Currency, b.Available), Balance: templates.FormatAmount(b.Currency, b.Balance)})
	}
	if d.cfg.Sandbox && d.cfg.Scripts != nil {
		rs, err := d.cfg.Scripts(r.Context(), m.ID)
		if err != nil {
			d.internal(w, r, err)
			return
		}
		v.Sandbox, v.Scripts = true, scriptRows(rs, f.W)
	}
	v.Keys = keyRows(m, d.cfg.Now(), f.W)
	v.Certify, v.NotificationURL = d.cfg.CertifyReceiver != nil && f.Can.Manage, m.Settings.NotificationURL
	for _, p := range fundPairs {
		v.Fund.Pairs = append(v.Fund.Pairs, templates.Option{Value: p, Label: p, Selected: p == fund.Pair})
	}
	if v.Webhooks, err = d.webhooksPanel(r.Context(), m); err != nil {
		d.internal(w, r, err)
		return
	}
	d.render(w, r, code, templates.DashMerchant(v))
}

// updateMerchant saves the name and settings.
func (d *Dashboard) updateMerchant(w http.ResponseWriter, r *http.Request) {
	m, ok := d.merchantForm(w, r, 32<<10)
	if !ok {
		return
	}
	f := d.frame(r, "m.title", "merchants")
	s, errs := readSettings(r, f.W, d.cfg.AllowHTTPNotificationURL)
	name := strings.TrimSpace(r.PostForm.Get("name"))
	if name == "" {
		errs["name"] = f.W.S("m.nameRequired")
	}
	if len(errs) > 0 {
		form := merchantForm(m.ID, name, s, f.W)
		form.Errors = errs
		f.Error = f.W.S("m.fixErrors")
		d.showMerchant(w, r, f, m, form, templates.FundForm{}, http.StatusUnprocessableEntity)
		return
	}
	if _, err := d.cfg.Store.UpdateMerchant(r.Context(), m.ID, func(x *rules.Merchant) error {
		x.Name, x.Settings = name, s
		return nil
	}); err != nil {
		d.internal(w, r, err)
		return
	}
	if d.cfg.Forget != nil {
		d.cfg.Forget(m.ID)
	}
	d.cfg.Log.Info("dashboard: merchant changed", "merchant_id", m.ID)
	rules.Audit(r.Context(), "merchant.update", "merchant:"+m.ID, m.ID, map[string]any{"name": name, "settings": s})
	d.back(w, r, "/dashboard/merchants/"+url.PathEscape(m.ID), f.W.S("m.saved"), "")
}

// fund adds to (or, negative, withdraws from) a balance; held payouts are released.
func (d *Dashboard) fund(w http.ResponseWriter, r *http.Request) {
	m, ok := d.merchantForm(w, r, 8<<10)
	if !ok {
		return
	}
	f := d.frame(r, "m.title", "merchants")
	pair := r.PostForm.Get("pair")
	amount, okAmount := ParseDecimal(r.PostForm.Get("amount"))
	if !slices.Contains(fundPairs, pair) || !okAmount || amount == 0 {
		f.Error = f.W.S("m.fixErrors")
		fund := templates.FundForm{Pair: pair, Amount: r.PostForm.Get("amount"), Error: f.W.S("m.badAmount")}
		d.showMerchant(w, r, f, m, merchantForm(m.ID, m.Name, m.Settings, f.W), fund, http.StatusUnprocessableEntity)
		return
	}
	country, currency, _ := strings.Cut(pair, " ")
	if _, err := d.cfg.Fund(r.Context(), m.ID, country, currency, amount); err != nil {
		var re *rules.Error
		if errors.As(err, &re) {
			d.back(w, r, "/dashboard/merchants/"+url.PathEscape(m.ID), "", re.Message)
			return
		}
		d.internal(w, r, err)
		return
	}
	d.cfg.Log.Info("dashboard: balance funded", "merchant_id", m.ID, "country", country, "currency", currency, "amount", amount)
	rules.Audit(r.Context(), "balance.fund", "merchant:"+m.ID, m.ID, map[string]any{"country": country, "currency": currency, "amount": amount})
	d.back(w, r, "/dashboard/merchants/"+url.PathEscape(m.ID), f.W.S("m.funded"), "")
}
