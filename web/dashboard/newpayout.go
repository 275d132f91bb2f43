package dashboard

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	"payouts/rules"
	"payouts/rules/requirements"
	"payouts/templates"
)

// The sandbox's "New payout" form: the destination is chosen first, then
// the form is built from its requirements schema (requirements.For, the one the API serves)
// and posted through the same service as POST /payouts.

// destinationQuery reads the destination of the form from the URL.
func destinationQuery(r *http.Request) (requirements.Query, bool) {
	q := r.URL.Query()
	rq := requirements.Query{Country: q.Get("country"), AccountType: q.Get("accountType"), BankCode: q.Get("bankCode")}
	if q.Get("endpoint") == "card" {
		rq.Endpoint = rules.EndpointCard
	}
	return rq, rq.Country != ""
}

// newPayout is GET /dashboard/merchants/{id}/new-payout.
func (d *Dashboard) newPayout(w http.ResponseWriter, r *http.Request) {
	m, ok := d.merchantOf(w, r)
	if !ok {
		return
	}
	d.showNewPayout(w, r, m, nil, nil, http.StatusOK)
}

// showNewPayout renders the form with the values sent and the errors of a refused create.
func (d *Dashboard) showNewPayout(w http.ResponseWriter, r *http.Request, m *rules.Merchant, values url.Values, refused *rules.Problem, code int) {
	f := d.frame(r, "np.title", "merchants")
	if !d.cfg.Sandbox {
		d.back(w, r, "/dashboard/merchants/"+url.PathEscape(m.ID), "", f.W.S("np.sandboxOnly"))
		return
	}
	f.Title = f.W.S("np.title") + " · " + m.Name
	q, chosen := destinationQuery(r)
	v := templates.NewPayoutView{Frame: f, MerchantID: m.ID, Country: q.Country, AccountType: q.AccountType, BankCode: q.BankCode,
		Card: q.Endpoint == rules.EndpointCard, Action: r.URL.RequestURI()}
	if v.Country == "" {
		v.Country = "PER"
	}
	if chosen {
		s, err := requirements.For(q, m, d.cfg.Now())
		var p *rules.Problem
		switch {
		case errors.As(err, &p):
			v.QueryError = problemText(p)
		case err != nil:
			d.internal(w, r, err)
			return
		default:
			raw, _ := json.MarshalIndent(s, "", "  ")
			v.Schema = string(raw)
			fieldErrs := map[string]string{}
			if refused != nil {
				for _, e := range refused.Errors {
					fieldErrs[e.Field] = strings.TrimSpace(fieldErrs[e.Field] + " " + e.Code + ": " + e.Message)
				}
			}
			if values == nil {
				values = url.Values{"country": {q.Country}, "destination.bankAccount.accountType": {q.AccountType},
					"destination.bankAccount.bankCode": {q.BankCode}}
			}
			for _, fl := range schemaFields(s, "", true) {
				sf := fl.view(values.Get(fl.path))
				if e, ok := fieldErrs[fl.path]; ok {
					sf.Error = e
					delete(fieldErrs, fl.path)
				}
				if fl.required {
					v.Required = append(v.Required, sf)
				} else {
					v.Optional = append(v.Optional, sf)
				}
			}
			for field, e := range fieldErrs {
				v.Errors = append(v.Errors, strings.TrimSpace(field+" "+e))
			}
			sort.Strings(v.Errors)
			if refused != nil && len(v.Errors) == 0 {
				v.Errors = []string{f.W.S("np.refused")}
			}
		}
	}
	d.render(w, r, code, templates.DashNewPayout(v))
}

// createPayout is POST /dashboard/merchants/{id}/new-payout: the body the form makes, through
// the service (the same checks, idempotency and lifecycle as the API).
func (d *Dashboard) createPayout(w http.ResponseWriter, r *http.Request) {
	m, ok := d.merchantOf(w, r)
	if !ok {
		return
	}
	if !d.cfg.Sandbox || d.cfg.CreatePayout == nil {
		d.back(w, r, "/dashboard/merchants/"+url.PathEscape(m.ID), "", templates.DashWords(d.lang(r)).S("np.sandboxOnly"))
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	q, _ := destinationQuery(r)
	s, err := requirements.For(q, m, d.cfg.Now())
	if err != nil {
		d.showNewPayout(w, r, m, r.PostForm, nil, http.StatusBadRequest)
		return
	}
	body := map[string]any{}
	for _, fl := range schemaFields(s, "", true) {
		if val := strings.TrimSpace(r.PostForm.Get(fl.path)); val != "" {
			setPath(body, fl.path, fl.value(val))
		}
	}
	raw, _ := json.Marshal(body)
	p, err := d.cfg.CreatePayout(r.Context(), m, raw, q.Endpoint)
	var prob *rules.Problem
	switch {
	case errors.As(err, &prob):
		d.showNewPayout(w, r, m, r.PostForm, prob, http.StatusBadRequest)
	case err != nil:
		d.internal(w, r, err)
	default:
		rules.Audit(r.Context(), "payout.create", "payout:"+strconv.FormatInt(p.ID, 10), m.ID, map[string]any{"orderId": p.OrderID,
			"amount": p.Amount, "currency": p.Currency})
		w2 := templates.DashWords(d.lang(r))
		d.back(w, r, "/dashboard/payouts/"+strconv.FormatInt(p.ID, 10), fmt.Sprintf(w2.S("np.created"), p.ID), "")
	}
}

func problemText(p *rules.Problem) string {
	var parts []string
	for _, e := range p.Errors {
		parts = append(parts, e.Code+" "+e.Field+": "+e.Message)
	}
	return strings.Join(parts, "; ")
}

// formField is a leaf of the schema: its path in the body and what the form needs of it.
type formField struct {
	path      string
	required  bool
	number    bool
	options   []string
	maxLength int
	min, max  string
	codes     []string
}

// hiddenFields are shape fields the form leaves out: the addresses, and the second spelling
// of timeoutUrl.
var hiddenFields = []string{"beneficiary.address", "destination.bankAccount.location", "TimeoutURL"}

// fieldRank puts the top-level fields in the order of the specification's tables.
var fieldRank = []string{"country", "currency", "amount", "orderId", "description", "beneficiary", "destination",
	"subMerchantInfo", "timeoutUrl", "merchantLogo", "expirationTime"}

// schemaFields lists the leaves of an object schema in form order; required says whether the
// object itself must be sent.
func schemaFields(s map[string]any, prefix string, required bool) []formField {
	props, _ := s["properties"].(map[string]any)
	req := map[string]bool{}
	if list, ok := s["required"].([]any); ok {
		for _, r := range list {
			req[fmt.Sprint(r)] = true
		}
	}
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	rank := func(n string) int {
		if i := slices.Index(fieldRank, n); i >= 0 {
			return i
		}
		return len(fieldRank)
	}
	sort.Slice(names, func(i, j int) bool {
		if ri, rj := rank(names[i]), rank(names[j]); ri != rj {
			return ri < rj
		}
		return names[i] < names[j]
	})
	var out []formField
	for _, name := range names {
		path := prefix + name
		if slices.Contains(hiddenFields, path) {
			continue
		}
		child, _ := props[name].(map[string]any)
		if _, nested := child["properties"]; nested {
			out = append(out, schemaFields(child, path+".", required && req[name])...)
			continue
		}
		out = append(out, leaf(path, child, required && req[name]))
	}
	return out
}

// leaf reads a property's constraints: its type and those of its allOf.
func leaf(path string, s map[string]any, required bool) formField {
	f := formField{path: path, required: required}
	typ := fmt.Sprint(s["type"])
	f.number = strings.Contains(typ, "number") && !strings.Contains(typ, "string") || strings.Contains(typ, "integer")
	rules, _ := s["allOf"].([]any)
	for _, r := range rules {
		rm, _ := r.(map[string]any)
		if c, ok := rm["x-code"].(string); ok && !slices.Contains(f.codes, c) {
			f.codes = append(f.codes, c)
		}
		if e, ok := rm["enum"].([]any); ok && f.options == nil {
			for _, v := range e {
				if v != nil {
					f.options = append(f.options, fmt.Sprint(v))
				}
			}
		}
		if n, ok := rm["maxLength"]; ok {
			if l, _ := strconv.Atoi(fmt.Sprint(n)); f.maxLength == 0 || l < f.maxLength {
				f.maxLength = l
			}
		}
		if n, ok := rm["minimum"]; ok {
			f.min = fmt.Sprint(n)
		}
		if n, ok := rm["maximum"]; ok {
			if f.max == "" || toInt(n) < toInt(f.max) {
				f.max = fmt.Sprint(n)
			}
		}
	}
	return f
}

func toInt(v any) int64 {
	n, _ := strconv.ParseInt(fmt.Sprint(v), 10, 64)
	return n
}

func (f formField) view(value string) templates.SchemaField {
	id := "np-" + strings.ReplaceAll(f.path, ".", "-")
	sf := templates.SchemaField{ID: id, Name: f.path, Label: f.path, Input: "text", Value: value, Min: f.min, Max: f.max,
		Hint: strings.Join(f.codes, ", ")}
	if f.maxLength > 0 {
		sf.MaxLength = strconv.Itoa(f.maxLength)
	}
	switch {
	case len(f.options) > 0:
		sf.Input = "select"
		for _, o := range f.options {
			sf.Options = append(sf.Options, templates.Option{Value: o, Label: o})
		}
	case f.number:
		sf.Input = "number"
	}
	return sf
}

// value is what the body carries for a field: a JSON number for a number field written in
// digits, else the text (the rules answer a wrong type with its code).
func (f formField) value(s string) any {
	if f.number && rules.IsDigits(s) {
		return json.Number(s)
	}
	return s
}

func setPath(m map[string]any, path string, v any) {
	parts := strings.Split(path, ".")
	for _, p := range parts[:len(parts)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	m[parts[len(parts)-1]] = v
}
