// Package dashboard serves the operators' dashboard: server-rendered pages under /dashboard
// (templ + chi; no JavaScript but a payout link's Copy button, which the page does
// without) behind a sign-in with a named user (a password and TOTP, its
// role read by rules.Actor.Can) or the admin token, and /docs.
package dashboard

import (
	"bytes"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/alexedwards/argon2id"
	"github.com/alexedwards/scs/v2"
	"github.com/go-chi/chi/v5"

	"payouts/rules"
	"payouts/static"
	"payouts/templates"
)

// Store is what the dashboard reads and changes directly (implemented by both
// storage engines).
type Store interface {
	Merchants(ctx context.Context) ([]*rules.Merchant, error)
	Merchant(ctx context.Context, id string) (*rules.Merchant, error)
	UpdateMerchant(ctx context.Context, id string, fn func(*rules.Merchant) error) (*rules.Merchant, error)
	Balances(ctx context.Context, merchantID string) ([]rules.Balance, error)
	ListPayouts(ctx context.Context, merchantID string, f rules.ListFilter) (rules.Page, error)
	PayoutsByID(ctx context.Context, ids []int64) ([]*rules.Payout, error)
	SandboxMails(ctx context.Context, limit int) ([][]byte, error)
}

// Delivery states.
const (
	StatePending   = "pending"
	StateRetrying  = "retrying"
	StateDead      = "dead"
	StateDelivered = "delivered"
)

// States lists the delivery states in the order the filter offers them.
var States = []string{StatePending, StateRetrying, StateDead, StateDelivered}

// Delivery is one outbox event and where it stands. A delivered event is known only by its
// id and delivery time; its kind and (for outcome events) payout are read from the id.
type Delivery struct {
	rules.Event
	State       string
	DeliveredAt time.Time
}

// Outbox is the durable outbox as the dashboard sees it (the engine's, adapted by
// internal/server's dashboard.go).
type Outbox interface {
	// Held lists the pending, retrying and dead events, newest first.
	Held(ctx context.Context, limit int, keep func(Delivery) bool) ([]Delivery, error)
	// Delivered lists the delivered event ids, newest delivery first.
	Delivered(ctx context.Context, limit int, keep func(Delivery) bool) ([]Delivery, error)
	// Resend makes a new attempt of a held event now (the same event id); found is false
	// when none is held.
	Resend(ctx context.Context, id string, now time.Time) (ev rules.Event, found bool, err error)
	Depth(ctx context.Context) int
}

// Limiter counts failed sign-ins per client address: the admin API's counter
// (api.SignInLimiter), so that the two together allow what either allows alone.
type Limiter interface {
	Blocked(r *http.Request) bool
	Fail(r *http.Request) bool
}

// Config wires the dashboard.
type Config struct {
	Store      Store
	Outbox     Outbox
	Sessions   scs.Store // the bbolt session store the card form uses too
	AdminToken string
	// Secure marks the cookie Secure: the server is reached over https (--public-url).
	Secure  bool
	Limiter Limiter
	Sandbox bool
	// AllowHTTPNotificationURL lets a notificationUrl be http (the server's
	// --allow-private-notification-urls), as in the admin API.
	AllowHTTPNotificationURL bool
	// Settle forces a payout's outcome (the lifecycle's, as the sandbox simulate endpoint).
	Settle func(ctx context.Context, merchantID string, id int64, status rules.Status) (*rules.Payout, error)
	// Fund adds to a balance and releases held payouts (the lifecycle's).
	Fund func(ctx context.Context, merchantID, country, currency string, amount int64) (rules.Balance, error)
	// CreateMerchant makes a merchant with fresh credentials (merchants.Service.Create).
	CreateMerchant func(id, name string, s rules.Settings) (m *rules.Merchant, apiKey, apiSecret string, err error)
	// CreatePayout creates a payout as the API does (the service's CreatePayout): the sandbox's
	// "New payout" form posts through it.
	CreatePayout func(ctx context.Context, m *rules.Merchant, body []byte, ep rules.Endpoint) (*rules.Payout, error)
	// Scripts reads a merchant's scripted outcomes (the rail's ScriptBook); nil without the sandbox.
	Scripts func(ctx context.Context, merchantID string) ([]rules.ScriptRule, error)
	// Forget drops a changed merchant from the API's cache.
	Forget func(id string)
	// Events is the event log: attempts, inbox, delivery chaos. May be nil.
	Events EventLog
	// Ledger is what the ledger page reads: entries, balances, payouts. May be nil.
	Ledger rules.ReconcileSource

	// A merchant's API keys, a payout's cancel, a card payout's form (keys_actions.go).
	// RotateKey issues a new key and secret (merchants.Service.RotateKey; the old pair works for grace).
	RotateKey func(id string, grace time.Duration) (keyID, apiKey, apiSecret string, err error)
	// RevokeKey ends an old key at once (merchants.Service.RevokeKey).
	RevokeKey func(id, keyID string) error
	// Cancel withdraws a payout not yet sent to the rail (the lifecycle's).
	Cancel func(ctx context.Context, merchantID string, id int64) (*rules.Payout, error)
	// CardForm opens a fresh link to a card payout's form (the old link dies, as when the
	// merchant resends its orderId); "" when the form can no longer be opened.
	CardForm func(ctx context.Context, p *rules.Payout, lang string) (string, error)
	// CreateLink creates a payout link as POST /payouts/link does (the service's CreateLink)
	// and answers its page's URL; created is false for a replay of the same body.
	CreateLink func(ctx context.Context, m *rules.Merchant, body []byte) (p *rules.Payout, link string, created bool, err error)
	// LinkURL is a payout link's page (its token is derived from the payout, so the same
	// URL every time); nil when the server has no payout links.
	LinkURL func(ctx context.Context, m *rules.Merchant, p *rules.Payout) (string, error)
	// ResendLinkMail writes a new email event for a waiting payout link (the lifecycle's,
	// with its limits) and wakes the mail lane.
	ResendLinkMail func(ctx context.Context, m *rules.Merchant, id int64) (*rules.Payout, error)
	Now            func() time.Time
	Log            *slog.Logger
	// PasswordHashing, when set, replaces argon2id's parameters (passwordParams) for the
	// passwords set here and an unknown email's comparison. Only tests set it
	// (server.Options), whose servers set and check dozens of passwords each: a server
	// started from its flags hashes with passwordParams.
	PasswordHashing *argon2id.Params

	// CertifyReceiver starts a receiver certification run of m against url (its
	// notificationUrl when empty) and answers the run's id; nil: no certification (sandbox off).
	CertifyReceiver func(ctx context.Context, m *rules.Merchant, url string) (string, error)
	// CertificationReport reads a run of the merchant: done, and then its report as a
	// self-contained page (rules.ErrNotFound for a run it does not have).
	CertificationReport func(merchantID, runID string) (done bool, page []byte, err error)

	// Named users (nil: the admin token only) and the audit log.
	Users     *rules.UserAdmin
	AuditLog  rules.AuditLog
	Auditor   *rules.Auditor
	PublicURL string
	// Seal and Open keep a user's TOTP secret sealed, bound to its id (the store's sealer).
	Seal func(plain []byte, bound string) []byte
	Open func(sealed []byte, bound string) ([]byte, error)
	// RealNow is the wall clock of the audit log and the TOTP codes (Now may be the sandbox's).
	RealNow func() time.Time
	// ClientAddr is the request's client address (api.ClientAddr: a trusted proxy's forwarded
	// one); nil takes the peer's.
	ClientAddr func(*http.Request) string

	// Batches (nil: no batch pages), their result CSV (api.BatchResultCSV), and
	// keys with a role beside the current one (merchants.Service.AddRoleKey).
	Batches    *rules.Batches
	BatchCSV   func(items []rules.BatchItem) []byte
	AddRoleKey func(id string, role rules.KeyRole) (keyID, apiKey, apiSecret string, err error)

	// SignInDelays are the users' per-account waits after failed sign-ins (nil: the
	// dashboard's own, rules.NewSignInDelays on RealNow). The admin token has none.
	SignInDelays *rules.SignInDelays
	// SignInRefusals count the refused sign-ins into the audit log (nil: the dashboard's
	// own over Auditor, whose counts are written as refusals come in).
	SignInRefusals *rules.SignInRefusals
	// Backups lists the scheduled backups' targets whose last backup failed, which the
	// overview warns of (backups.go); nil when the server makes none.
	Backups func() []BackupProblem
	// KeyFiles lists the key and secret files that others than their owner may read, which
	// the overview warns of; nil: none is looked at.
	KeyFiles func() []KeyFileWarning
}

// KeyFileWarning is a key or secret file that others than its owner may read.
type KeyFileWarning = templates.KeyFileWarning

// IdleTimeout signs an operator out after this long without a request: a working day.
const IdleTimeout = 8 * time.Hour

// Session keys.
const (
	kSignedIn = "dashboard.signedIn"
	kLang     = "dashboard.lang"
	kFlash    = "dashboard.flash"
	kError    = "dashboard.error"
	kCreds    = "dashboard.creds"
	// kPrincipal is who the session was signed in as: "admin-token:" and a fingerprint of
	// the token. A session whose principal is not the server's current one is over: a new
	// --admin-token ends every session the old one opened. When the dashboard has users,
	// a user's sign-in stores "user:<id>:<credential version>" here and the same check ends
	// the sessions of a removed user or a changed password.
	kPrincipal = "dashboard.principal"
)

// adminPrincipal is the principal of a sign-in with token: a fingerprint, never the token.
func adminPrincipal(token string) string { return rules.AdminPrincipal(token) }

// Dashboard serves the pages.
type Dashboard struct {
	cfg       Config
	principal string
	sm        *scs.SessionManager
	cop       *http.CrossOriginProtection
	delays    *rules.SignInDelays
	refusals  *rules.SignInRefusals
	// passwordParams hash the passwords set here; dummyHash is their unknown email's.
	passwordParams *argon2id.Params
	dummyHash      string
}

// New makes the dashboard.
func New(cfg Config) *Dashboard {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.RealNow == nil {
		cfg.RealNow = time.Now
	}
	if cfg.SignInDelays == nil {
		cfg.SignInDelays = rules.NewSignInDelays(cfg.RealNow)
	}
	if cfg.SignInRefusals == nil && cfg.Auditor != nil {
		cfg.SignInRefusals = rules.NewSignInRefusals(cfg.Auditor)
	}
	sm := scs.New()
	sm.Store = cfg.Sessions
	sm.HashTokenInStore = true // a copy of the database signs nobody in
	sm.IdleTimeout = IdleTimeout
	sm.Lifetime = 7 * 24 * time.Hour // the idle timeout ends a session first, unless it is used all week
	sm.Cookie.Name = "payouts_dashboard"
	sm.Cookie.Path = "/"
	sm.Cookie.HttpOnly = true
	sm.Cookie.SameSite = http.SameSiteStrictMode
	sm.Cookie.Secure = cfg.Secure
	sm.Cookie.Persist = false // gone with the browser
	d := &Dashboard{cfg: cfg, principal: adminPrincipal(cfg.AdminToken), sm: sm, cop: http.NewCrossOriginProtection(), delays: cfg.SignInDelays,
		refusals: cfg.SignInRefusals}
	d.passwordParams = passwordParams
	if cfg.PasswordHashing != nil {
		d.passwordParams = cfg.PasswordHashing
	}
	d.dummyHash = dummyHash(d.passwordParams)
	sm.ErrorFunc = d.sessionFailed
	return d
}

// Routes adds /dashboard and /docs. Every /dashboard form post from another site is refused
// (403, http.CrossOriginProtection; the cookie is SameSite=Strict as well), and every page
// but the sign-in redirects to it when signed out.
func (d *Dashboard) Routes(r chi.Router) {
	r.Get("/docs", d.docs)
	r.Group(func(r chi.Router) {
		r.Use(d.cop.Handler, keepFirstAnswer, d.sm.LoadAndSave)
		r.Get("/dashboard/login", d.loginPage)
		r.Post("/dashboard/login", d.login)
		r.Post("/dashboard/lang", d.setLang)
		d.setupRoutes(r)
		r.Group(func(r chi.Router) {
			// Every page needs a signed-in actor; each state-changing post names the permission
			// it needs (rules.Actor.Can), and the merchant of its path or payout is checked where
			// it is read (merchantOf, payoutByID: another merchant's is 404).
			r.Use(d.signedIn)
			create, fund, manage, admin := d.require(rules.PermCreate), d.require(rules.PermFund), d.require(rules.PermManage), d.require(rules.PermAdmin)
			r.Post("/dashboard/logout", d.logout)
			r.Get("/dashboard", d.overview)
			r.Get("/dashboard/payouts", d.payouts)
			r.Get("/dashboard/payouts.csv", d.payoutsCSV)
			r.Get("/dashboard/payouts/{id}", d.payout)
			r.With(manage).Post("/dashboard/payouts/{id}/simulate", d.simulate)
			r.Get("/dashboard/deliveries", d.deliveries)
			r.With(manage).Post("/dashboard/deliveries/resend", d.resend)
			r.Get("/dashboard/merchants", d.merchants)
			r.With(admin).Post("/dashboard/merchants", d.createMerchant)
			r.Get("/dashboard/merchants/{id}", d.merchant)
			r.With(manage).Post("/dashboard/merchants/{id}", d.updateMerchant)
			r.With(fund).Post("/dashboard/merchants/{id}/fund", d.fund)
			r.With(create).Get("/dashboard/merchants/{id}/new-payout", d.newPayout)
			r.With(create).Post("/dashboard/merchants/{id}/new-payout", d.createPayout)
			r.With(manage).Post("/dashboard/merchants/{id}/certify", d.certifyReceiver)
			r.Get("/dashboard/merchants/{id}/certifications/{runId}", d.certification)
			r.With(manage).Post("/dashboard/merchants/{id}/keys", d.newKey)
			r.With(manage).Post("/dashboard/merchants/{id}/keys/revoke", d.revokeKey)
			d.batchRoutes(r)
			r.With(create).Post("/dashboard/payouts/{id}/cancel", d.cancel)
			r.With(create).Post("/dashboard/payouts/{id}/card-form", d.cardForm)
			r.With(create).Get("/dashboard/merchants/{id}/new-link", d.newLink)
			r.With(create).Post("/dashboard/merchants/{id}/new-link", d.createLink)
			r.With(create).Post("/dashboard/payouts/{id}/link-mail", d.resendLinkMail)
			r.Get("/dashboard/mail", d.mail)
			d.eventRoutes(r)
			d.userRoutes(r, admin)
			d.ledgerRoutes(r)
		})
	})
}

// isSignedIn reports whether the request's session was signed in by a principal that is
// still current: the server's admin token, or a user at its current credential version.
func (d *Dashboard) isSignedIn(r *http.Request) bool {
	_, ok := d.sessionActor(r)
	return ok
}

// signedIn sends a signed-out request to the sign-in page, and gives a signed-in one its
// actor (Dashboard.actor) and the audit log's scope (rules.Audit). A session signed in by a
// principal no longer current (the admin token before a restart with a new one; a user
// disabled, reset or whose password changed) is ended, not just refused.
func (d *Dashboard) signedIn(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, ok, err := d.resolveActor(r)
		if rules.Unavailable(err) {
			d.internal(w, r, err)
			return
		}
		if !ok {
			if d.sm.GetBool(r.Context(), kSignedIn) {
				d.cfg.Log.Info("dashboard session ended: its principal is no longer current", "addr", r.RemoteAddr)
				if err := d.sm.Destroy(r.Context()); err != nil {
					d.internal(w, r, err)
					return
				}
			}
			w.Header().Set("Cache-Control", "no-store")
			http.Redirect(w, r, "/dashboard/login", http.StatusSeeOther)
			return
		}
		next.ServeHTTP(w, r.WithContext(d.withActor(r, a)))
	})
}

func (d *Dashboard) lang(r *http.Request) string {
	if l := r.URL.Query().Get("lang"); l == "en" || l == "es" {
		return l
	}
	if d.sm.GetString(r.Context(), kLang) == "en" {
		return "en"
	}
	return "es"
}

// frame is the frame of a page, with the flash messages of the last action.
func (d *Dashboard) frame(r *http.Request, titleKey, active string) templates.Frame {
	lang := d.lang(r)
	w := templates.DashWords(lang)
	a, signedIn := d.sessionActor(r)
	return templates.Frame{Lang: lang, W: w, Title: w.S(titleKey), Active: active, Path: r.URL.RequestURI(),
		CSS: static.Path("dashboard.css"), SignedIn: signedIn, Who: a.Name, Can: perms(a),
		Flash: d.sm.PopString(r.Context(), kFlash), Error: d.sm.PopString(r.Context(), kError)}
}

// render writes a page with the dashboard's headers: no script at all, our styles only, no
// framing, forms only to this server, never cached.
func (d *Dashboard) render(w http.ResponseWriter, r *http.Request, code int, c templ.Component) {
	d.write(w, r, code, c, "")
}

// renderScripted is render for a page with a script of ours (Frame.Script): this server's
// files only, never inline.
func (d *Dashboard) renderScripted(w http.ResponseWriter, r *http.Request, code int, c templ.Component) {
	d.write(w, r, code, c, "script-src 'self'; ")
}

func (d *Dashboard) write(w http.ResponseWriter, r *http.Request, code int, c templ.Component, scripts string) {
	var buf bytes.Buffer
	if err := c.Render(r.Context(), &buf); err != nil {
		d.internal(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; "+scripts+"style-src 'self'; img-src 'self' data:; form-action 'self'; "+
		"frame-ancestors 'none'; base-uri 'none'")
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	w.WriteHeader(code)
	w.Write(buf.Bytes())
}

// back redirects (303) to a dashboard path, with a message for the next page.
func (d *Dashboard) back(w http.ResponseWriter, r *http.Request, to, flash, failure string) {
	if flash != "" {
		d.sm.Put(r.Context(), kFlash, flash)
	}
	if failure != "" {
		d.sm.Put(r.Context(), kError, failure)
	}
	http.Redirect(w, r, safeBack(to), http.StatusSeeOther)
}

// safeBack keeps a redirect on this server's dashboard.
func safeBack(to string) string {
	u, err := url.Parse(to)
	if err != nil || u.Scheme != "" || u.Host != "" || strings.HasPrefix(to, "//") || strings.Contains(to, "\\") ||
		(u.Path != "/dashboard" && !strings.HasPrefix(u.Path, "/dashboard/")) {
		return "/dashboard"
	}
	return to
}

// internal answers 500 with nothing internal; the log has the error. A database out of reach
// is not an internal error: 503 and the page that says so (outage.go).
func (d *Dashboard) internal(w http.ResponseWriter, r *http.Request, err error) {
	if rules.Unavailable(err) {
		d.cfg.Log.Warn("dashboard: database unavailable", "path", r.URL.Path, "err", err)
		d.unavailablePage(w, r, d.lang(r))
		return
	}
	d.cfg.Log.Error("dashboard failed", "path", r.URL.Path, "err", err)
	w.Header().Set("Cache-Control", "no-store")
	http.Error(w, templates.DashWords(d.lang(r)).S("err.internal"), http.StatusInternalServerError)
}

func (d *Dashboard) loginPage(w http.ResponseWriter, r *http.Request) {
	if d.isSignedIn(r) {
		http.Redirect(w, r, "/dashboard", http.StatusSeeOther)
		return
	}
	d.showLogin(w, r, http.StatusOK, "")
}

func (d *Dashboard) showLogin(w http.ResponseWriter, r *http.Request, code int, errKey string) {
	f := d.frame(r, "login.title", "")
	if errKey != "" {
		f.Error = f.W.S(errKey)
	}
	f.Path = "/dashboard/login"
	users, err := d.hasUsers(r.Context())
	if rules.Unavailable(err) {
		d.internal(w, r, err)
		return
	}
	d.render(w, r, code, templates.DashLogin(templates.LoginView{Frame: f, Users: users}))
}

// hasUsers reports whether a named user could sign in: until an operator creates one, the
// page offers the admin token alone, as the start-up text says. On a read error it says
// true, to offer both rather than hide a way in, with the error.
func (d *Dashboard) hasUsers(ctx context.Context) (bool, error) {
	if d.cfg.Users == nil {
		return false, nil
	}
	us, err := d.cfg.Users.Store.Users(ctx)
	return err != nil || len(us) > 0, err
}

// login takes the admin token: a new session token (no fixation), 303 to the overview.
// Failures count against the address in the admin API's counter; past its allowance a wrong
// token is answered 429, while the right one always signs in (anyone behind the
// operator's address could otherwise lock the operator out).
func (d *Dashboard) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 8<<10)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "the form could not be read", http.StatusBadRequest)
		return
	}
	if l := r.PostForm.Get("lang"); l == "en" || l == "es" {
		q := r.URL.Query()
		q.Set("lang", l)
		r.URL.RawQuery = q.Encode()
	}
	if r.PostForm.Get("email") != "" && d.cfg.Users != nil {
		d.userLogin(w, r)
		return
	}
	token := r.PostForm.Get("token")
	if d.cfg.AdminToken == "" || subtle.ConstantTimeCompare([]byte(token), []byte(d.cfg.AdminToken)) != 1 {
		d.cfg.Log.Warn("dashboard sign-in failed", "addr", r.RemoteAddr)
		over := d.loginFailed(w, r, "login.wrong")
		d.refusals.Refused(r.Context(), rules.Refusal{Actor: rules.Actor{Principal: "anonymous", Name: "admin token (wrong)"}, Addr: d.clientAddr(r),
			UserAgent: r.UserAgent(), Method: "admin-token", Why: "wrong token", AddressOver: over})
		return
	}
	d.startSession(w, r, d.principal, rules.AdminActor(d.principal), "admin-token")
}

// loginFailed answers a failed sign-in: 401, or 429 past the address's allowance (the
// admin API's counter, for the token and the users alike), and then it reports so.
func (d *Dashboard) loginFailed(w http.ResponseWriter, r *http.Request, errKey string) (addressOver bool) {
	if d.cfg.Limiter != nil && (d.cfg.Limiter.Blocked(r) || d.cfg.Limiter.Fail(r)) {
		w.Header().Set("Retry-After", "60")
		d.showLogin(w, r, http.StatusTooManyRequests, "login.limited")
		return true
	}
	d.showLogin(w, r, http.StatusUnauthorized, errKey)
	return false
}

// startSession signs the session in as principal: a new session token (no fixation), 303
// to the overview, and the audit log's signin.success.
func (d *Dashboard) startSession(w http.ResponseWriter, r *http.Request, principal string, a rules.Actor, method string) {
	if err := d.sm.RenewToken(r.Context()); err != nil {
		d.internal(w, r, err)
		return
	}
	d.sm.Put(r.Context(), kSignedIn, true)
	d.sm.Put(r.Context(), kPrincipal, principal)
	d.sm.Put(r.Context(), kLang, d.lang(r))
	d.cfg.Log.Info("dashboard sign-in", "addr", r.RemoteAddr, "principal", principal)
	d.audit(r, a, "signin.success", "dashboard", map[string]string{"method": method})
	http.Redirect(w, r, "/dashboard", http.StatusSeeOther)
}

func (d *Dashboard) logout(w http.ResponseWriter, r *http.Request) {
	rules.Audit(r.Context(), "signout", "dashboard", "", nil)
	lang := d.lang(r)
	if err := d.sm.Destroy(r.Context()); err != nil {
		d.internal(w, r, err)
		return
	}
	http.Redirect(w, r, "/dashboard/login?lang="+lang, http.StatusSeeOther)
}

// setLang switches the language of the session; signed out, the sign-in page's.
func (d *Dashboard) setLang(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 8<<10)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "the form could not be read", http.StatusBadRequest)
		return
	}
	lang := "es"
	if r.PostForm.Get("lang") == "en" {
		lang = "en"
	}
	if !d.isSignedIn(r) {
		http.Redirect(w, r, "/dashboard/login?lang="+lang, http.StatusSeeOther)
		return
	}
	d.sm.Put(r.Context(), kLang, lang)
	http.Redirect(w, r, safeBack(r.PostForm.Get("back")), http.StatusSeeOther)
}

// docs serves the API reference, rendered in the browser by the embedded Redoc: no CDN.
func (d *Dashboard) docs(w http.ResponseWriter, r *http.Request) {
	nonce := randomNonce()
	var buf bytes.Buffer
	v := templates.DocsView{Script: static.Path("redoc/redoc.standalone.js"), SpecURL: "/openapi.json",
		YAMLURL: "/openapi.yaml", JSONURL: "/openapi.json"}
	if err := templates.DocsPage(v).Render(templ.WithNonce(r.Context(), nonce), &buf); err != nil {
		d.internal(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	// Redoc injects its styles (styled-components) and runs its search in a blob: worker;
	// everything it loads comes from this server.
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self' 'nonce-"+nonce+"'; style-src 'self' 'unsafe-inline'; "+
		"img-src 'self' data:; font-src 'self' data:; worker-src 'self' blob:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	w.Write(buf.Bytes())
}

var errNotFound = errors.New("not found")

func sprintf(format string, a ...any) string { return fmt.Sprintf(format, a...) }
