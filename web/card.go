// Package web serves the HTML side of the service: the Peru card form,
// its sessions (scs, stored in bbolt, the token in the URL) and its forgery protection.
package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/alexedwards/scs/v2"
	"github.com/go-chi/chi/v5"

	"payouts/rules"
	"payouts/static"
	"payouts/templates"
)

// Payouts reads payouts (the storage engine).
type Payouts interface {
	Payout(ctx context.Context, merchantID string, id int64) (*rules.Payout, error)
}

// Lifecycle moves card payouts (rules.Lifecycle).
type Lifecycle interface {
	CardEntered(ctx context.Context, id int64, card rules.CardRef) (*rules.Payout, error)
	RestartCardSession(ctx context.Context, id int64, expiresAt time.Time) (*rules.Payout, error)
	CountCardAttempt(ctx context.Context, m *rules.Merchant, id int64, session time.Time) (*rules.Payout, error)
}

// Vault keeps tokenized cards (the storage engine).
type Vault interface {
	SavedCard(ctx context.Context, merchantID string, docType int, docNumber string) (rules.CardRef, bool, error)
	PutCard(ctx context.Context, merchantID string, docType int, docNumber string, payoutID int64, ref rules.CardRef, sealed []byte, onFile bool) error
	KeepCardOnFile(ctx context.Context, merchantID string, docType int, docNumber string, payoutID int64, token string) error
	UseSavedCard(ctx context.Context, merchantID string, docType int, docNumber string, payoutID int64) (rules.CardRef, error)
	DropUntakenCard(ctx context.Context, payoutID int64, token string) error
}

// Sessions is the scs store of the form sessions plus which session is a payout's current
// one (store.SessionStore).
type Sessions interface {
	scs.Store
	BindCardSession(payoutID int64, sid string, expiry time.Time) error
	CardSession(payoutID int64) (string, error)
}

// Sealer encrypts card data (store.Sealer, AES-256-GCM).
type Sealer interface {
	Seal(plain, additional []byte) []byte
}

// Config wires the card form.
type Config struct {
	// BaseURL is the absolute URL of this server (--public-url): links in the form and the
	// iframe URL are built on it, so that the page also works as <iframe srcdoc>.
	BaseURL string
	// BaseFromProxy lets a trusted proxy's X-Forwarded-Proto and X-Forwarded-Host (or
	// Forwarded) give the base URL instead, when no --public-url was given.
	BaseFromProxy bool
	Payouts       Payouts
	Merchants     func(id string) (*rules.Merchant, error)
	Lifecycle     Lifecycle
	Vault         Vault
	Sessions      Sessions
	Sealer        Sealer
	Now           func() time.Time
	Log           *slog.Logger
	// SessionLength replaces the merchant's expirationTime (5 to 30 minutes). Tests only:
	// it lets a browser test watch a session expire in seconds.
	SessionLength time.Duration
	// Grace keeps an expired session readable, to show the expiry page (with the way back
	// to timeoutUrl) to a late visitor; the form takes no card after the expiry. Default 1h.
	Grace time.Duration
}

// Session keys. The failed attempts are counted on the payout (rules.Lifecycle.CountCardAttempt),
// not in the session: a session written before may still hold them, and they are not read.
const (
	kPayout   = "payout"
	kMerchant = "merchant"
	kSID      = "sid"
)

// Cards serves the card form. It holds no lock of its own: what two submissions at once
// must not both do (take a card, count a failure, lock the form) is one conditional write of
// the payout each, on one instance or several.
type Cards struct {
	cfg Config
	sm  *scs.SessionManager
	cop *http.CrossOriginProtection
}

// NewCards makes the card form handlers.
func NewCards(cfg Config) *Cards {
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
	sm := scs.New()
	sm.Store = cfg.Sessions
	// The store keeps only a hash of each token: a copy of the database opens no form.
	sm.HashTokenInStore = true
	sm.Lifetime = 30 * time.Minute // every session gets its own deadline; this is a bound
	return &Cards{cfg: cfg, sm: sm, cop: http.NewCrossOriginProtection()}
}

// Routes adds the form, its status endpoint and the static files. The session token is a
// query parameter, not a path segment: the access log writes paths only, so it never logs a
// token; the card number travels only in POST bodies.
func (c *Cards) Routes(r chi.Router) {
	r.Get("/card", c.page)
	r.Post("/card", c.submit)
	r.Get("/card/status", c.status)
	r.Handle("/static/*", static.Handler())
}

// Form is what the card endpoint answers: the form's URL, its expiry and the page itself.
// URL is empty when no form was opened (the payout already has its card or its outcome).
type Form struct {
	URL       string
	ExpiresAt time.Time
	Payout    *rules.Payout
	Page      []byte
}

// Open starts the card form of a payout the card endpoint created, or restarts it when the
// merchant re-sent the same orderId before a card was entered: a new session with a new
// expiry, the old link dead. Otherwise it opens nothing and shows the
// payout as it is.
func (c *Cards) Open(ctx context.Context, m *rules.Merchant, res rules.CreateResult, lang string) (Form, error) {
	p := res.Payout
	now := c.cfg.Now()
	restart := !res.Created && p.Card == nil && !p.Status.Final() && now.Before(p.SessionExpiresAt)
	if !res.Created && !restart {
		return c.snapshot(ctx, m, p, lang)
	}
	exp := p.SessionExpiresAt
	if restart || c.cfg.SessionLength > 0 {
		length := time.Duration(res.Route.ExpirationMinutes) * time.Minute
		if c.cfg.SessionLength > 0 {
			length = c.cfg.SessionLength
		}
		exp = now.Add(length).UTC()
		np, err := c.cfg.Lifecycle.RestartCardSession(ctx, p.ID, exp)
		var re *rules.Error
		if errors.As(err, &re) && re.Code == rules.CodeWrongState {
			// It moved on meanwhile: a card came in, or an outcome.
			cur, err := c.cfg.Payouts.Payout(ctx, m.ID, p.ID)
			if err != nil {
				return Form{}, err
			}
			return c.snapshot(ctx, m, cur, lang)
		}
		if err != nil {
			return Form{}, err
		}
		p = np
	}
	token, err := c.newSession(ctx, p, exp)
	if err != nil {
		return Form{}, err
	}
	st := &state{s: &session{token: token, payoutID: p.ID, merchantID: m.ID, base: c.baseURL(ctx)}, p: p, m: m, kind: kindForm}
	// The page for <iframe srcdoc> runs in the embedder's origin: its post is cross-origin and
	// must carry an Origin header to pass (originAllowed).
	v := c.formView(ctx, st, lang, now, nil, cardInput{}, true)
	v.Referrer = "strict-origin"
	page, err := renderBytes(ctx, templates.CardFormPage(v))
	if err != nil {
		return Form{}, err
	}
	return Form{URL: c.selfURL(st.s.base, token, lang), ExpiresAt: exp, Payout: p, Page: page}, nil
}

// snapshot answers a replay that opens no form: the payout as it stands.
func (c *Cards) snapshot(ctx context.Context, m *rules.Merchant, p *rules.Payout, lang string) (Form, error) {
	st := &state{p: p, m: m, kind: kindResult}
	if p.Card == nil && p.Status == rules.StatusExpired {
		st.kind = kindExpired
	}
	v := c.resultView(st, lang)
	v.Script = templates.Script{Mode: "static", Texts: v.T.JS()}
	v.Refresh = 0
	page, err := renderBytes(ctx, templates.ResultPage(v))
	return Form{Payout: p, Page: page}, err
}

// newSession opens a form session for a payout until exp, and makes it the payout's only
// live one.
func (c *Cards) newSession(ctx context.Context, p *rules.Payout, exp time.Time) (string, error) {
	sctx, err := c.sm.Load(ctx, "")
	if err != nil {
		return "", err
	}
	sid := randomID()
	c.sm.Put(sctx, kPayout, p.ID)
	c.sm.Put(sctx, kMerchant, p.MerchantID)
	c.sm.Put(sctx, kSID, sid)
	c.sm.SetDeadline(sctx, exp.Add(c.cfg.Grace))
	token, _, err := c.sm.Commit(sctx)
	if err != nil {
		return "", err
	}
	if err := c.cfg.Sessions.BindCardSession(p.ID, sid, exp.Add(c.cfg.Grace)); err != nil {
		return "", err
	}
	return token, nil
}

// session is a loaded form session.
type session struct {
	ctx        context.Context // scs data lives here
	token      string
	payoutID   int64
	merchantID string
	sid        string
	base       string // the absolute URL the form's links are built on (Cards.baseURL)
}

// What a form link shows.
const (
	kindInvalid = "invalid" // unknown, replaced or long expired link
	kindForm    = "form"    // waiting for the card
	kindResult  = "result"  // the card is in: progress, then the outcome
	kindExpired = "expired" // the session ran out without a card
	kindLocked  = "locked"  // five failed submissions
)

type state struct {
	s    *session
	p    *rules.Payout
	m    *rules.Merchant
	kind string
}

// resolve loads the session of a token and decides what its link shows.
func (c *Cards) resolve(ctx context.Context, token string) (*state, error) {
	if len(token) < 32 || len(token) > 64 {
		return &state{kind: kindInvalid}, nil
	}
	sctx, err := c.sm.Load(ctx, token)
	if err != nil {
		return nil, err
	}
	s := &session{ctx: sctx, token: token, base: c.baseURL(ctx),
		payoutID:   c.sm.GetInt64(sctx, kPayout),
		merchantID: c.sm.GetString(sctx, kMerchant),
		sid:        c.sm.GetString(sctx, kSID),
	}
	if s.payoutID == 0 {
		return &state{kind: kindInvalid}, nil
	}
	cur, err := c.cfg.Sessions.CardSession(s.payoutID)
	if err != nil {
		return nil, err
	}
	if cur != s.sid {
		// The merchant restarted the process: this link is dead.
		if err := c.sm.Destroy(sctx); err != nil {
			return nil, err
		}
		return &state{kind: kindInvalid}, nil
	}
	p, err := c.cfg.Payouts.Payout(ctx, s.merchantID, s.payoutID)
	if errors.Is(err, rules.ErrNotFound) {
		return &state{kind: kindInvalid}, nil
	}
	if err != nil {
		return nil, err
	}
	m, err := c.cfg.Merchants(s.merchantID)
	if err != nil {
		return nil, err
	}
	st := &state{s: s, p: p, m: m}
	switch {
	case p.Card != nil:
		st.kind = kindResult
	case p.CardLocked():
		st.kind = kindLocked
	case p.Status == rules.StatusExpired:
		st.kind = kindExpired
	case p.Status.Final():
		st.kind = kindResult // rejected before a card came (no balance)
	case !c.cfg.Now().Before(p.SessionExpiresAt):
		st.kind = kindExpired
	default:
		st.kind = kindForm
	}
	return st, nil
}

func langOf(r *http.Request) string {
	if r.URL.Query().Get("lang") == "en" {
		return "en"
	}
	return "es"
}

// baseURL is the absolute URL a request reached this server at: --public-url when it was
// given, else the https address a trusted proxy forwarded (rules.PublicBase), else the
// listener's (so that an iframe served over TLS is an https:// one).
func (c *Cards) baseURL(ctx context.Context) string {
	if c.cfg.BaseFromProxy {
		if b := rules.PublicBase(ctx); b != "" {
			return b
		}
	}
	return c.cfg.BaseURL
}

func (c *Cards) selfURL(base, token, lang string) string {
	u := base + "/card?s=" + url.QueryEscape(token)
	if lang == "en" {
		u += "&lang=en"
	}
	return u
}

func (c *Cards) statusURL(base, token string) string {
	return base + "/card/status?s=" + url.QueryEscape(token)
}

// page shows what a form link is at: the form, the progress or outcome, the expiry.
func (c *Cards) page(w http.ResponseWriter, r *http.Request) {
	st, err := c.resolve(r.Context(), r.URL.Query().Get("s"))
	if err != nil {
		c.internal(w, r, err)
		return
	}
	c.show(w, r, st, nil, cardInput{}, http.StatusOK)
}

// show renders a state. errs (field → message key) re-render the form with its messages.
func (c *Cards) show(w http.ResponseWriter, r *http.Request, st *state, errs map[string]string, in cardInput, code int) {
	lang := langOf(r)
	if st.kind == kindForm {
		c.write(w, r, st.m, code, templates.CardFormPage(c.formView(r.Context(), st, lang, c.cfg.Now(), errs, in, in == cardInput{})))
		return
	}
	switch st.kind {
	case kindExpired, kindLocked, kindInvalid:
		code = http.StatusGone
	}
	c.write(w, r, st.m, code, templates.ResultPage(c.resultView(st, lang)))
}

func (c *Cards) base(st *state, lang string) templates.Page {
	t := templates.TextsFor(lang)
	base := c.cfg.BaseURL
	if st.s != nil {
		base = st.s.base
	}
	p := templates.Page{Lang: lang, T: t, Static: func(name string) string { return base + static.Path(name) }}
	if st.m != nil {
		p.MerchantName = st.m.Name
	}
	if st.p != nil {
		p.Amount = templates.FormatAmount(st.p.Currency, st.p.Amount)
		if logo, err := url.Parse(strings.TrimSpace(st.p.Request.MerchantLogo)); err == nil && rules.LogoURLAllowed(logo.String()) {
			p.LogoURL = logo.String()
		}
	}
	if st.s != nil {
		other := "en"
		if lang == "en" {
			other = "es"
		}
		p.OtherLang = c.selfURL(st.s.base, st.s.token, other)
	}
	return p
}

// formView is the form page; useSaved preselects the card on file (a fresh page).
func (c *Cards) formView(ctx context.Context, st *state, lang string, now time.Time, errs map[string]string, in cardInput, useSaved bool) templates.CardForm {
	page := c.base(st, lang)
	left := st.p.SessionExpiresAt.Sub(now)
	f := templates.CardForm{Page: page, Action: c.selfURL(st.s.base, st.s.token, lang), ExpiresAt: st.p.SessionExpiresAt,
		Remaining: templates.Clock(left), SecondsLeft: int(left / time.Second),
		Holder: in.Holder, Expiry: in.Expiry}
	if st.m.Settings.CardOnFile {
		doc := st.p.Request.Beneficiary.Document
		if ref, ok, err := c.cfg.Vault.SavedCard(ctx, st.m.ID, doc.Type, doc.Number); err == nil && ok {
			f.SavedCard = templates.MaskedCard(ref.Brand, ref.Last4)
			f.UseSaved = useSaved
		} else if err != nil {
			c.cfg.Log.Error("card on file lookup failed", "payout", st.p.ID, "err", err)
		}
	}
	if len(errs) > 0 {
		f.Errors = map[string]string{}
		for k, key := range errs {
			f.Errors[k] = page.T.Errors[key]
		}
	}
	f.AttemptsLeft = rules.CardAttemptsMax - st.p.CardAttempts
	f.ShowAttempts = st.p.CardAttempts > 0
	f.Script = templates.Script{Mode: kindForm, SelfURL: c.selfURL(st.s.base, st.s.token, lang),
		RemainingMs: max(left.Milliseconds(), 1), Texts: page.T.JS()}
	return f
}

// outcome is the state of a page after the form and the message it posts.
func (c *Cards) outcome(st *state) (string, *templates.Message) {
	msg := func(topic string, stage rules.Stage, status rules.Status) *templates.Message {
		return &templates.Message{Topic: topic, Data: templates.MessageData{PayoutID: st.p.ID, OrderID: st.p.OrderID,
			Stage: string(stage), Status: string(status)}}
	}
	switch st.kind {
	case kindExpired:
		// The lifecycle moves the payout to REJECTED/EXPIRED at the expiry (within a second);
		// the page says so at once.
		return "expired", msg("mps-payout-finished-timeout", rules.StageRejected, rules.StatusExpired)
	case kindLocked:
		stage, status := st.p.Stage, st.p.Status
		if !status.Final() {
			stage, status = rules.StageRejected, rules.StatusExpired
		}
		return "locked", msg("mps-payout-finished-fail", stage, status)
	}
	switch st.p.Stage {
	case rules.StageSuccess:
		return "success", msg("mps-payout-finished-ok", st.p.Stage, st.p.Status)
	case rules.StageRejected:
		return "failed", msg("mps-payout-finished-fail", st.p.Stage, st.p.Status)
	}
	return "processing", nil
}

func (c *Cards) resultView(st *state, lang string) templates.Result {
	page := c.base(st, lang)
	t := page.T
	v := templates.Result{Page: page}
	if st.kind == kindInvalid {
		v.State, v.Title, v.Detail = "invalid", t.Invalid, t.InvalidDetail
		v.Script = templates.Script{Mode: "invalid", Texts: t.JS()}
		return v
	}
	state, msg := c.outcome(st)
	v.State = state
	v.Script = templates.Script{Mode: "result", Targets: postTargets(st.m), Message: msg, Texts: t.JS()}
	if st.s != nil {
		v.Script.SelfURL = c.selfURL(st.s.base, st.s.token, lang)
		v.Script.StatusURL = c.statusURL(st.s.base, st.s.token)
	}
	if st.p.Card != nil {
		v.Card = templates.MaskedCard(st.p.Card.Brand, st.p.Card.Last4)
	}
	switch state {
	case "processing":
		v.Title, v.Detail, v.Refresh = t.Processing, t.ProcessingDetail, 2
	case "success":
		v.Title, v.Detail = t.Success, t.SuccessDetail
	case "failed":
		v.Title, v.Detail = t.Failed, t.FailedDetail
	case "locked":
		v.Title, v.Detail = t.Locked, t.LockedDetail
		v.Script.Mode = "locked"
	case "expired":
		v.Title, v.Detail = t.Expired, t.ExpiredDetail
		v.Script.Mode = "expired"
		if u, err := url.Parse(st.p.Request.TimeoutURL); err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" {
			v.TimeoutURL = u.String()
			v.Script.TimeoutURL = v.TimeoutURL
		}
	}
	return v
}

// submit takes the card: checks it, tokenizes it, and hands the payout on; errors re-render
// the form (422), the fifth failure ends the session; success redirects (303) to the
// progress page.
func (c *Cards) submit(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	token := r.URL.Query().Get("s")
	redirect := func() { http.Redirect(w, r, c.selfURL(c.baseURL(r.Context()), token, langOf(r)), http.StatusSeeOther) }
	st, err := c.resolve(r.Context(), token)
	if err != nil {
		c.internal(w, r, err)
		return
	}
	if st.kind != kindForm {
		redirect()
		return
	}
	if err := c.cop.Check(r); err != nil && !originAllowed(r, st.m) {
		c.cfg.Log.Warn("card form post refused: cross-origin", "payout", st.p.ID, "origin", r.Header.Get("Origin"))
		http.Error(w, "cross-origin form post refused", http.StatusForbidden)
		return
	}
	if err := r.ParseForm(); err != nil {
		http.Error(w, "the form could not be read", http.StatusBadRequest)
		return
	}
	in := cardInput{Holder: r.PostForm.Get("holder"), PAN: r.PostForm.Get("pan"),
		Expiry: r.PostForm.Get("expiry"), CVV: r.PostForm.Get("cvv")}
	doc := st.p.Request.Beneficiary.Document
	onFile := st.m.Settings.CardOnFile

	// Without JavaScript the new card's fields stay visible next to the saved card: a typed
	// card number means a new card.
	if r.PostForm.Get("card") == "saved" && onFile && strings.TrimSpace(in.PAN) == "" {
		ref, err := c.cfg.Vault.UseSavedCard(r.Context(), st.m.ID, doc.Type, doc.Number, st.p.ID)
		if errors.Is(err, rules.ErrNotFound) {
			c.show(w, r, st, map[string]string{templates.FieldChoice: "card.gone"}, cardInput{}, http.StatusUnprocessableEntity)
			return
		}
		if err != nil {
			c.internal(w, r, err)
			return
		}
		c.enter(w, r, st, ref)
		redirect()
		return
	}

	cd, errs := checkCard(in, c.cfg.Now())
	if len(errs) > 0 {
		c.failed(w, r, st, errs, in)
		return
	}
	ref, sealed, err := c.tokenize(cd)
	if err != nil {
		c.internal(w, r, err)
		return
	}
	// The card goes on file only once the payout took it: a submission that lost the take
	// to another one at the same moment must not replace the beneficiary's card on file.
	if err := c.cfg.Vault.PutCard(r.Context(), st.m.ID, doc.Type, doc.Number, st.p.ID, ref, sealed, false); err != nil {
		c.internal(w, r, err)
		return
	}
	if c.enter(w, r, st, ref) && onFile {
		// The payout pays its card whether or not it is kept: a failure here only loses
		// the offer of the card next time.
		if err := c.cfg.Vault.KeepCardOnFile(r.Context(), st.m.ID, doc.Type, doc.Number, st.p.ID, ref.Token); err != nil {
			c.cfg.Log.Error("keep the card on file", "payout", st.p.ID, "err", err)
		}
	}
	redirect()
}

// enter hands the card to the lifecycle and says whether the payout took it; a payout that
// can no longer take it (it expired a moment ago) drops it again, and the redirect shows why.
func (c *Cards) enter(w http.ResponseWriter, r *http.Request, st *state, ref rules.CardRef) bool {
	if _, err := c.cfg.Lifecycle.CardEntered(r.Context(), st.p.ID, ref); err != nil {
		c.cfg.Log.Info("card not taken", "payout", st.p.ID, "err", err)
		// Only this submission's own card: another one, at the same moment, may be the card
		// the payout took.
		if err := c.cfg.Vault.DropUntakenCard(r.Context(), st.p.ID, ref.Token); err != nil {
			c.cfg.Log.Error("drop payout card", "payout", st.p.ID, "err", err)
		}
		return false
	}
	c.cfg.Log.Info("card entered", "payout", st.p.ID, "merchant_id", st.m.ID)
	return true
}

// failed counts a failed submission on the payout (rules.Lifecycle.CountCardAttempt); the
// fifth locks the form and ends the payout (REJECTED/EXPIRED, code 1127) in the same write,
// the others re-render the form with its messages. A form that moved on meanwhile (another
// submission took a card or locked it, it expired, the merchant restarted it) counts
// nothing: the redirect shows what it is.
func (c *Cards) failed(w http.ResponseWriter, r *http.Request, st *state, errs map[string]string, in cardInput) {
	p, err := c.cfg.Lifecycle.CountCardAttempt(r.Context(), st.m, st.p.ID, st.p.SessionExpiresAt)
	var re *rules.Error
	if errors.As(err, &re) {
		c.cfg.Log.Info("card attempt not counted", "payout", st.p.ID, "err", err)
		http.Redirect(w, r, c.selfURL(c.baseURL(r.Context()), st.s.token, langOf(r)), http.StatusSeeOther)
		return
	}
	if err != nil {
		c.internal(w, r, err)
		return
	}
	st.p = p
	if !p.CardLocked() {
		c.show(w, r, st, errs, cardInput{Holder: in.Holder, Expiry: in.Expiry}, http.StatusUnprocessableEntity)
		return
	}
	if !p.Status.Final() {
		c.cfg.Log.Info("lockout: payout not ended", "payout", p.ID, "status", p.Status)
	}
	c.cfg.Log.Info("card form locked after failed attempts", "payout", p.ID, "attempts", p.CardAttempts)
	st.kind = kindLocked
	c.show(w, r, st, nil, cardInput{}, http.StatusGone)
}

// sealedCard is what is encrypted of a card. Never the CVV.
type sealedCard struct {
	PAN      string `json:"pan"`
	Holder   string `json:"holder"`
	ExpMonth int    `json:"expMonth"`
	ExpYear  int    `json:"expYear"`
}

// tokenize seals a card under a new token; only the brand, BIN and last four stay readable.
func (c *Cards) tokenize(cd card) (rules.CardRef, []byte, error) { return sealCard(c.cfg.Sealer, cd) }

// sealCard seals a card under a new token with sealer: the card form's and a payout link's
// cards alike.
func sealCard(sealer Sealer, cd card) (rules.CardRef, []byte, error) {
	plain, err := json.Marshal(sealedCard{PAN: cd.PAN, Holder: cd.Holder, ExpMonth: cd.ExpMonth, ExpYear: cd.ExpYear})
	if err != nil {
		return rules.CardRef{}, nil, err
	}
	token := "card_" + randomID()
	sealed := sealer.Seal(plain, []byte("card:"+token))
	clear(plain)
	return rules.CardRef{Token: token, Brand: "VISA", BIN: cd.PAN[:6], Last4: cd.PAN[len(cd.PAN)-4:]}, sealed, nil
}

// statusView is the answer of the status endpoint, polled by the progress page.
type statusView struct {
	PayoutID int64  `json:"payoutId"`
	OrderID  string `json:"orderId"`
	Stage    string `json:"stage"`
	Status   string `json:"status"`
	State    string `json:"state"`
	Final    bool   `json:"final"`
	Topic    string `json:"topic,omitempty"`
}

func (c *Cards) status(w http.ResponseWriter, r *http.Request) {
	st, err := c.resolve(r.Context(), r.URL.Query().Get("s"))
	if err != nil {
		c.internal(w, r, err)
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
		state, msg := c.outcome(st)
		v.State = state
		if msg != nil {
			v.Final, v.Topic, v.Stage, v.Status = true, msg.Topic, msg.Data.Stage, msg.Data.Status
		}
	}
	json.NewEncoder(w).Encode(v)
}

func (c *Cards) write(w http.ResponseWriter, r *http.Request, m *rules.Merchant, code int, comp templ.Component) {
	nonce := newNonce()
	var buf bytes.Buffer
	if err := comp.Render(templ.WithNonce(r.Context(), nonce), &buf); err != nil {
		c.internal(w, r, err)
		return
	}
	setPageHeaders(w, m, nonce)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	w.Write(buf.Bytes())
}

func renderBytes(ctx context.Context, comp templ.Component) ([]byte, error) {
	var buf bytes.Buffer
	err := comp.Render(ctx, &buf)
	return buf.Bytes(), err
}

// internal answers 500 with nothing internal; the log has the error (never card data: the
// errors here come from the store and the lifecycle, which never see it).
func (c *Cards) internal(w http.ResponseWriter, r *http.Request, err error) {
	c.cfg.Log.Error("card form failed", "path", r.URL.Path, "err", err)
	w.Header().Set("Cache-Control", "no-store")
	http.Error(w, "internal error", http.StatusInternalServerError)
}
