package web

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/alexedwards/scs/v2"
	"github.com/go-chi/chi/v5"

	"payouts/rules"
	"payouts/rules/requirements"
	"payouts/static"
	"payouts/templates"
)

// LinkLifecycle moves payout links (rules.Lifecycle).
type LinkLifecycle interface {
	LinkDestination(ctx context.Context, m *rules.Merchant, id int64, req *rules.PayoutRequest, route rules.Route) (*rules.Payout, error)
	LinkCard(ctx context.Context, m *rules.Merchant, id int64, req *rules.PayoutRequest, route rules.Route, card rules.CardRef) (*rules.Payout, error)
	CountLinkAttempt(ctx context.Context, m *rules.Merchant, id int64, what rules.LinkAttempt) (*rules.Payout, error)
	EndLink(ctx context.Context, m *rules.Merchant, id int64, status rules.Status, code, note string) (*rules.Payout, error)
}

// LinkConfig wires the payout links' pages.
type LinkConfig struct {
	// BaseURL and BaseFromProxy are the card form's (Config).
	BaseURL       string
	BaseFromProxy bool
	Payouts       Payouts
	Merchants     func(id string) (*rules.Merchant, error)
	Lifecycle     LinkLifecycle
	// Directory names the holder of a Peru cellphone or a Bre-B key for the review step;
	// nil (--sandbox=false, no connector) leaves only the merchant's document to prove.
	Directory rules.Directory
	// Vault and Sealer keep a Peru card typed on a link, as the card form's (Config).
	Vault  Vault
	Sealer Sealer
	// Sessions keep which payout each link's token opens, under the token's hash (the card
	// form's session store). What the page counts is on the payout (CountLinkAttempt),
	// written with the checks it decides.
	Sessions scs.Store
	// Key derives each link's token from its payout (HMAC-SHA256): the same link is
	// answered again to a replayed create, and no token is ever stored.
	Key []byte
	Now func() time.Time
	Log *slog.Logger
	// Grace keeps an expired link readable, to show its expiry. Default 1h.
	Grace time.Duration
}

// Links serves the payout links' pages.
type Links struct {
	cfg LinkConfig
	cop *http.CrossOriginProtection
}

// NewLinks makes the payout links' handlers.
func NewLinks(cfg LinkConfig) *Links {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Grace == 0 {
		cfg.Grace = time.Hour
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	return &Links{cfg: cfg, cop: http.NewCrossOriginProtection()}
}

// Routes adds the link page. Its token is a query parameter, so that the access log (paths
// only) never holds it; the destination travels only in the POST body.
func (l *Links) Routes(r chi.Router) {
	r.Get("/link", l.page)
	r.Post("/link", l.submit)
	r.Get("/link/status", l.status)
}

// linkSession is what the session store keeps of a link, under its token's hash: written
// once, when the link is made, and only read after.
type linkSession struct {
	Payout   int64  `json:"p"`
	Merchant string `json:"m"`
}

// token is the link's token: 256 bits of HMAC-SHA256 under the link key, unguessable
// without it.
func (l *Links) token(id int64) string {
	mac := hmac.New(sha256.New, l.cfg.Key)
	mac.Write([]byte("payout-link\x00" + strconv.FormatInt(id, 10)))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// storeKey is what the session store knows a token by: its hash.
func storeKey(token string) string {
	sum := sha256.Sum256([]byte("link:" + token))
	return "link-" + hex.EncodeToString(sum[:])
}

// Open gives a payout link its page (on a replay, the page it already has) and answers its
// absolute URL.
func (l *Links) Open(ctx context.Context, m *rules.Merchant, p *rules.Payout) (string, error) {
	// No lock: two replays at once both write a fresh record only while none exists.
	token := l.token(p.ID)
	key := storeKey(token)
	if _, found, err := l.cfg.Sessions.Find(key); err != nil {
		return "", err
	} else if !found {
		b, _ := json.Marshal(linkSession{Payout: p.ID, Merchant: m.ID})
		if err := l.cfg.Sessions.Commit(key, b, p.SessionExpiresAt.Add(l.cfg.Grace)); err != nil {
			return "", err
		}
	}
	lang := "es"
	if p.Link != nil && p.Link.Lang == "en" {
		lang = "en"
	}
	return l.selfURL(l.baseURL(ctx), token, lang, 0), nil
}

func (l *Links) baseURL(ctx context.Context) string {
	if l.cfg.BaseFromProxy {
		if b := rules.PublicBase(ctx); b != "" {
			return b
		}
	}
	return l.cfg.BaseURL
}

func (l *Links) selfURL(base, token, lang string, kind int) string {
	u := base + "/link?s=" + url.QueryEscape(token)
	if lang == "en" {
		u += "&lang=en"
	}
	if kind > 0 {
		u += "&kind=" + strconv.Itoa(kind)
	}
	return u
}

// linkState is a resolved link: its session, payout and merchant, and what it shows.
type linkState struct {
	token string
	s     linkSession
	p     *rules.Payout
	m     *rules.Merchant
	kind  string // kindForm, kindResult, kindExpired, kindLocked, kindInvalid
}

// resolve reads a token's link and decides what its page shows.
func (l *Links) resolve(ctx context.Context, token string) (*linkState, error) {
	if len(token) != 43 {
		return &linkState{kind: kindInvalid}, nil
	}
	b, found, err := l.cfg.Sessions.Find(storeKey(token))
	if err != nil {
		return nil, err
	}
	if !found {
		return &linkState{kind: kindInvalid}, nil
	}
	st := &linkState{token: token}
	if err := json.Unmarshal(b, &st.s); err != nil {
		return nil, err
	}
	st.p, err = l.cfg.Payouts.Payout(ctx, st.s.Merchant, st.s.Payout)
	if errors.Is(err, rules.ErrNotFound) {
		return &linkState{kind: kindInvalid}, nil
	}
	if err != nil {
		return nil, err
	}
	if st.m, err = l.cfg.Merchants(st.s.Merchant); err != nil {
		return nil, err
	}
	switch {
	case st.p.Channel != rules.ChannelLink:
		st.kind = kindResult
	case st.p.Link.Locked():
		st.kind = kindLocked
	case st.p.Status == rules.StatusExpired:
		st.kind = kindExpired
	case st.p.Status.Final():
		st.kind = kindResult // cancelled, or rejected before a destination came
	case !l.cfg.Now().Before(st.p.SessionExpiresAt):
		st.kind = kindExpired // the lifecycle ends the payout within moments
	default:
		st.kind = kindForm
	}
	return st, nil
}

func (l *Links) page(w http.ResponseWriter, r *http.Request) {
	st, err := l.resolve(r.Context(), r.URL.Query().Get("s"))
	if err != nil {
		l.internal(w, r, err)
		return
	}
	kind, _ := strconv.Atoi(r.URL.Query().Get("kind"))
	l.show(w, r, st, kind, nil, nil, http.StatusOK)
}

// show renders a link: its form (with the last submission's values and errors), or its state.
func (l *Links) show(w http.ResponseWriter, r *http.Request, st *linkState, kind int, values url.Values, errs []*rules.Error, code int) {
	lang := langOf(r)
	if st.kind != kindForm {
		code = http.StatusOK
		if st.kind != kindResult {
			code = http.StatusGone // expired, locked, invalid
		}
		l.write(w, r, st.m, code, templates.ResultPage(l.resultView(r.Context(), st, lang)))
		return
	}
	v, err := l.formView(r.Context(), st, lang, kind, values, errs)
	if err != nil {
		l.internal(w, r, err)
		return
	}
	l.write(w, r, st.m, code, templates.LinkPage(v))
}

func (l *Links) basePage(ctx context.Context, st *linkState, lang string) templates.Page {
	base := l.baseURL(ctx)
	p := templates.Page{Lang: lang, T: templates.LinkTexts(lang), Static: func(name string) string { return base + static.Path(name) }}
	if st.m != nil {
		p.MerchantName = st.m.Name
	}
	if st.p != nil {
		p.Amount = templates.FormatAmount(st.p.Currency, st.p.Amount)
		if st.p.Link != nil && rules.LogoURLAllowed(st.p.Link.Logo) {
			p.LogoURL = st.p.Link.Logo
		}
	}
	if st.token != "" {
		other := "en"
		if lang == "en" {
			other = "es"
		}
		p.OtherLang = l.selfURL(base, st.token, other, 0)
	}
	return p
}

// formView is the link's form; with a kind chosen, its fields come from the requirements
// schema of that kind (the schema GET /requirements serves).
func (l *Links) formView(ctx context.Context, st *linkState, lang string, kind int, values url.Values, errs []*rules.Error) (templates.LinkForm, error) {
	base := l.baseURL(ctx)
	words := templates.LinkWordsFor(lang)
	f := templates.LinkForm{Page: l.basePage(ctx, st, lang), W: words, Choose: base + "/link", Token: st.token,
		ExpiresAt: st.p.SessionExpiresAt, AttemptsLeft: rules.LinkAttemptsMax - st.p.Link.Failures, ShowAttempts: st.p.Link.Failures > 0}
	f.Script = templates.Script{Mode: "static", Texts: f.T.JS()}
	kinds := st.p.Link.Kinds
	if len(kinds) == 1 {
		kind = kinds[0]
	}
	if !slices.Contains(kinds, kind) {
		kind = 0
	}
	for _, k := range kinds {
		f.Kinds = append(f.Kinds, templates.LinkKind{Value: k, Label: words.KindLabel(st.p.Country, k), Selected: k == kind})
	}
	if isCardKind(st.p, kind) {
		l.cardView(ctx, &f, st, lang, kind, values, errs)
		return f, nil
	}
	var fields []fieldSpec
	if kind != 0 {
		var err error
		if fields, err = linkFields(st.p.Country, kind, st.m, l.cfg.Now()); err != nil {
			return f, err
		}
		f.Kind, f.Action = kind, l.selfURL(base, st.token, lang, kind)
	}
	byField := map[string]*rules.Error{}
	for _, e := range errs {
		name, ok := strings.CutPrefix(e.Field, "destination.bankAccount.")
		if ok && slices.ContainsFunc(fields, func(s fieldSpec) bool { return s.name == name }) {
			if _, dup := byField[name]; !dup {
				byField[name] = e
			}
			f.Summary = append(f.Summary, templates.LinkError{Field: "f-" + name, Code: e.Code, Message: rules.MessageIn(lang, e.Code, e.Message)})
		}
	}
	for _, e := range errs { // what no input holds, after the fields'
		name, _ := strings.CutPrefix(e.Field, "destination.bankAccount.")
		if !slices.ContainsFunc(fields, func(s fieldSpec) bool { return s.name == name }) {
			f.Summary = append(f.Summary, templates.LinkError{Code: e.Code, Message: rules.MessageIn(lang, e.Code, e.Message)})
		}
	}
	for _, s := range fields {
		lf := templates.LinkField{Name: s.name, Label: words.Fields[s.name], Value: values.Get(s.name), MaxLength: s.maxLength}
		if lf.Label == "" {
			lf.Label = s.name
		}
		lf.Hint = words.Hints[s.name+"."+strconv.Itoa(kind)]
		if lf.Hint == "" {
			lf.Hint = words.Hints[s.name]
		}
		if s.digits {
			lf.InputMode = "numeric"
		}
		options := s.options
		if s.name == "bankCode" {
			options = rules.LinkBanks(st.p, st.m, kind, options, l.cfg.Now().UTC())
		}
		for _, o := range options {
			lf.Options = append(lf.Options, templates.LinkOption{Value: o, Label: bankLabel(st.p.Country, kind, o), Selected: o == lf.Value})
		}
		if e := byField[s.name]; e != nil {
			lf.Error, lf.Code = rules.MessageIn(lang, e.Code, e.Message), e.Code
		}
		f.Fields = append(f.Fields, lf)
	}
	return f, nil
}

// fieldSpec is one input of a kind, read from its requirements schema.
type fieldSpec struct {
	name      string
	options   []string // the schema's enum
	maxLength int
	digits    bool
}

// linkFields reads the destination fields a kind requires from the requirements schema of
// the country and account type: the bank account's required properties but accountType
// (the kind), each with its enum, its length and whether it takes digits only.
func linkFields(country string, kind int, m *rules.Merchant, now time.Time) ([]fieldSpec, error) {
	s, err := requirements.For(requirements.Query{Country: country, AccountType: strconv.Itoa(kind)}, m, now)
	if err != nil {
		return nil, err
	}
	ba := dig(s, "properties", "destination", "properties", "bankAccount")
	props, _ := ba["properties"].(map[string]any)
	var out []fieldSpec
	for _, name := range destinationFields(ba) {
		if name == "accountType" {
			continue
		}
		prop, _ := props[name].(map[string]any)
		spec := fieldSpec{name: name}
		walkSchema(prop, func(n map[string]any) {
			if e, ok := n["enum"].([]any); ok && spec.options == nil {
				for _, v := range e {
					if s, ok := v.(string); ok {
						spec.options = append(spec.options, s)
					}
				}
			}
			if ml, ok := n["maxLength"].(int); ok && (spec.maxLength == 0 || ml < spec.maxLength) {
				spec.maxLength = ml
			}
			if p, ok := n["pattern"].(string); ok && strings.HasPrefix(p, "^[0-9]") {
				spec.digits = true
			}
		})
		out = append(out, spec)
	}
	return out, nil
}

// destinationFields are the fields a bank account's schema asks for: those it requires, then
// those of the alternatives it requires one of (a Peru bank account: a CCI, or a bank and an
// account number), each once.
func destinationFields(ba map[string]any) []string {
	names := requiredOf(ba)
	all, _ := ba["allOf"].([]any)
	for _, a := range all {
		alt, _ := a.(map[string]any)
		anyOf, _ := alt["anyOf"].([]any)
		for _, o := range anyOf {
			one, _ := o.(map[string]any)
			for _, name := range requiredOf(one) {
				if !slices.Contains(names, name) {
					names = append(names, name)
				}
			}
		}
	}
	return names
}

func requiredOf(n map[string]any) []string {
	switch r := n["required"].(type) {
	case []string:
		return r
	case []any:
		var out []string
		for _, v := range r {
			if s, ok := v.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// dig follows keys down a schema; nil when one is missing.
func dig(n map[string]any, keys ...string) map[string]any {
	for _, k := range keys {
		next, ok := n[k].(map[string]any)
		if !ok {
			return nil
		}
		n = next
	}
	return n
}

// walkSchema calls f on n and on every schema its allOf holds.
func walkSchema(n map[string]any, f func(map[string]any)) {
	if n == nil {
		return
	}
	f(n)
	switch all := n["allOf"].(type) {
	case []any:
		for _, x := range all {
			if m, ok := x.(map[string]any); ok {
				walkSchema(m, f)
			}
		}
	case []map[string]any:
		for _, m := range all {
			walkSchema(m, f)
		}
	}
}

// submit takes the destination in two steps: the form's, checked as a create's is
// (rules.CheckLinkDestination), then the review's (review, confirm), where the directory and
// the merchant's document prove the account is the beneficiary's. Errors re-render the step
// (422) and count as a failed attempt, the fifth locks the link and ends the payout; success
// redirects (303) to the link's progress.
func (l *Links) submit(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	token := r.URL.Query().Get("s")
	redirect := func() {
		http.Redirect(w, r, l.selfURL(l.baseURL(r.Context()), token, langOf(r), 0), http.StatusSeeOther)
	}
	st, err := l.resolve(r.Context(), token)
	if err != nil {
		l.internal(w, r, err)
		return
	}
	if st.kind != kindForm {
		redirect()
		return
	}
	if err := l.cop.Check(r); err != nil && !originAllowed(r, st.m) {
		l.cfg.Log.Warn("payout link post refused: cross-origin", "payout", st.p.ID, "origin", r.Header.Get("Origin"))
		http.Error(w, "cross-origin form post refused", http.StatusForbidden)
		return
	}
	if err := r.ParseForm(); err != nil {
		http.Error(w, "the form could not be read", http.StatusBadRequest)
		return
	}
	// No lock: two submissions at once (a double click, two tabs, two instances) each run
	// the checks; the store's conditional writes decide: every failure is counted, the fifth
	// locks the link once, and one destination only is taken (rules.Lifecycle.LinkDestination).
	kind, _ := strconv.Atoi(r.PostForm.Get("kind"))
	if isCardKind(st.p, kind) {
		l.submitCard(w, r, st, kind)
		return
	}
	fields, err := linkFields(st.p.Country, kind, st.m, l.cfg.Now())
	if err != nil || !slices.Contains(st.p.Link.Kinds, kind) {
		l.failed(w, r, st, 0, r.PostForm, []*rules.Error{{Code: rules.CodeLinkDestinations, Field: "destination.bankAccount.accountType",
			Message: "this link does not offer that kind of destination"}})
		return
	}
	ba := readDestination(kind, fields, r.PostForm)
	req, route, err := rules.CheckLinkDestination(st.p, st.m, ba, l.cfg.Now().UTC())
	var p *rules.Problem
	if errors.As(err, &p) {
		l.failed(w, r, st, kind, r.PostForm, p.Errors)
		return
	}
	if err != nil {
		l.internal(w, r, err)
		return
	}
	if r.PostForm.Get("step") == "review" {
		l.confirm(w, r, st, kind, fields, ba, req, route)
		return
	}
	l.review(w, r, st, kind, fields, ba, req, route)
}

// readDestination is the bank account the form's fields of kind give.
func readDestination(kind int, fields []fieldSpec, form url.Values) rules.BankAccount {
	ba := rules.BankAccount{AccountType: rules.Text(strconv.Itoa(kind))}
	for _, f := range fields {
		v := strings.TrimSpace(form.Get(f.name))
		switch f.name {
		case "bankCode":
			ba.BankCode = v
		case "accountNumber":
			ba.AccountNumber = rules.Text(v)
		case "cci":
			ba.CCI = v
		case "AdittionalAccountInfo":
			ba.AdittionalAccountInfo = rules.Text(v)
		case "alias":
			ba.Alias = v
		case "expirationDate":
			ba.ExpirationDate = v
		}
	}
	return ba
}

// take gives the payout the destination and shows the link's progress.
func (l *Links) take(w http.ResponseWriter, r *http.Request, st *linkState, req *rules.PayoutRequest, route rules.Route) {
	if _, err := l.cfg.Lifecycle.LinkDestination(r.Context(), st.m, st.p.ID, req, route); err != nil {
		// It moved on meanwhile (expired, cancelled): the redirect shows what it is.
		l.cfg.Log.Info("payout link destination not taken", "payout", st.p.ID, "err", err)
	} else {
		l.cfg.Log.Info("payout link destination given", "payout", st.p.ID, "merchant_id", st.m.ID, "channel", route.Channel)
	}
	http.Redirect(w, r, l.selfURL(l.baseURL(r.Context()), st.token, langOf(r), 0), http.StatusSeeOther)
}

// failed counts a failed submission; the fifth locks the link and ends its payout
// (REJECTED/EXPIRED, as the card form's), the others re-render the form with its errors.
func (l *Links) failed(w http.ResponseWriter, r *http.Request, st *linkState, kind int, values url.Values, errs []*rules.Error) {
	if l.count(w, r, st, rules.LinkFailed) {
		return
	}
	l.show(w, r, st, kind, values, errs, http.StatusUnprocessableEntity)
}

// count counts what against the link, on its payout (rules.Lifecycle.CountLinkAttempt). The
// attempt that locks the link ends its payout (REJECTED/EXPIRED, as the card form's) and
// shows so: count then answers true, as it does when it answered otherwise (an error, a
// link that moved on meanwhile); false leaves the step to re-render itself, st holding the
// payout as counted.
func (l *Links) count(w http.ResponseWriter, r *http.Request, st *linkState, what rules.LinkAttempt) bool {
	p, err := l.cfg.Lifecycle.CountLinkAttempt(r.Context(), st.m, st.p.ID, what)
	var re *rules.Error
	if errors.As(err, &re) {
		// It moved on meanwhile (another submission gave it, locked or ended it; it
		// expired): the redirect shows what it is.
		l.cfg.Log.Info("payout link attempt not counted", "payout", st.p.ID, "err", err)
		http.Redirect(w, r, l.selfURL(l.baseURL(r.Context()), st.token, langOf(r), 0), http.StatusSeeOther)
		return true
	}
	if err != nil {
		l.internal(w, r, err)
		return true
	}
	st.p = p
	if !p.Link.Locked() {
		return false
	}
	l.cfg.Log.Info("payout link locked after failed attempts", "payout", p.ID, "failures", p.Link.Failures, "looks", p.Link.Looks)
	st.kind = kindLocked
	l.show(w, r, st, 0, nil, nil, http.StatusGone)
	return true
}

// outcome is the state of a link's page after its form, and the message it posts.
func (l *Links) outcome(st *linkState) (string, *templates.Message) {
	msg := func(topic string, stage rules.Stage, status rules.Status) *templates.Message {
		return &templates.Message{Topic: topic, Data: templates.MessageData{PayoutID: st.p.ID, OrderID: st.p.OrderID,
			Stage: string(stage), Status: string(status)}}
	}
	switch st.kind {
	case kindExpired:
		return "expired", msg("mps-payout-finished-timeout", rules.StageRejected, rules.StatusExpired)
	case kindLocked:
		return "locked", msg("mps-payout-finished-fail", st.p.Stage, st.p.Status)
	}
	switch st.p.Stage {
	case rules.StageSuccess:
		return "success", msg("mps-payout-finished-ok", st.p.Stage, st.p.Status)
	case rules.StageRejected:
		return "failed", msg("mps-payout-finished-fail", st.p.Stage, st.p.Status)
	}
	return "processing", nil
}

func (l *Links) resultView(ctx context.Context, st *linkState, lang string) templates.Result {
	page := l.basePage(ctx, st, lang)
	t := page.T
	v := templates.Result{Page: page}
	if st.kind == kindInvalid {
		v.State, v.Title, v.Detail = "invalid", t.Invalid, t.InvalidDetail
		v.Script = templates.Script{Mode: "invalid", Texts: t.JS()}
		return v
	}
	state, msg := l.outcome(st)
	base := l.baseURL(ctx)
	v.State = state
	v.Script = templates.Script{Mode: "result", Targets: postTargets(st.m), Message: msg, Texts: t.JS(),
		SelfURL: l.selfURL(base, st.token, lang, 0), StatusURL: base + "/link/status?s=" + url.QueryEscape(st.token)}
	switch state {
	case "processing":
		v.Title, v.Detail, v.Refresh = t.Processing, t.ProcessingDetail, 2
	case "success":
		v.Title, v.Detail = t.Success, t.SuccessDetail
	case "failed":
		v.Title, v.Detail = t.Failed, t.FailedDetail
		if len(st.p.Errors) > 0 && st.p.Errors[0].Code == rules.CodeLinkOwnership {
			// The directory lists another bank: the beneficiary reads why, in the original's words.
			v.Detail = rules.MessageIn(lang, rules.CodeLinkOwnership, rules.Published(rules.CodeLinkOwnership)) + "."
		}
	case "locked":
		v.Title, v.Detail = t.Locked, t.LockedDetail
		v.Script.Mode = "locked"
	case "expired":
		v.Title, v.Detail = t.Expired, t.ExpiredDetail
		v.Script.Mode = "expired"
	}
	if state != "processing" && st.p.Link != nil && st.p.Link.ReturnURL != "" {
		v.TimeoutURL = st.p.Link.ReturnURL
	}
	return v
}

// status answers the progress page's polling, as the card form's does.
func (l *Links) status(w http.ResponseWriter, r *http.Request) {
	st, err := l.resolve(r.Context(), r.URL.Query().Get("s"))
	if err != nil {
		l.internal(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	if st.kind == kindInvalid {
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"state":"invalid","final":true}`))
		return
	}
	v := statusView{PayoutID: st.p.ID, OrderID: st.p.OrderID, Stage: string(st.p.Stage), Status: string(st.p.Status), State: st.kind}
	if st.kind != kindForm {
		state, msg := l.outcome(st)
		v.State = state
		if msg != nil {
			v.Final, v.Topic, v.Stage, v.Status = true, msg.Topic, msg.Data.Stage, msg.Data.Status
		}
	}
	json.NewEncoder(w).Encode(v)
}

// write renders a page with the card form's headers: its CSP (frame-ancestors the merchant's
// allowed origins), no-store and no-referrer.
func (l *Links) write(w http.ResponseWriter, r *http.Request, m *rules.Merchant, code int, comp templ.Component) {
	nonce := newNonce()
	var buf bytes.Buffer
	if err := comp.Render(templ.WithNonce(r.Context(), nonce), &buf); err != nil {
		l.internal(w, r, err)
		return
	}
	setPageHeaders(w, m, nonce)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	w.Write(buf.Bytes())
}

// internal answers 500 with nothing internal; the log has the error (never the token or
// the destination: the errors come from the store).
func (l *Links) internal(w http.ResponseWriter, r *http.Request, err error) {
	l.cfg.Log.Error("payout link failed", "path", r.URL.Path, "err", err)
	w.Header().Set("Cache-Control", "no-store")
	http.Error(w, "internal error", http.StatusInternalServerError)
}
