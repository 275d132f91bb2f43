package dashboard

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/base32"
	"encoding/base64"
	"errors"
	"image/png"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/alexedwards/argon2id"
	"github.com/go-chi/chi/v5"
	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"payouts/rules"
	"payouts/templates"
)

// Named users: who is signed in (the admin token, or a named user at its current credential
// version), what it may do (rules.Actor.Can: one check per route, the merchant checked where
// it is read), the set-up page, the sign-in with a password and a TOTP code, the Users,
// account and Audit pages.

// passwordParams are argon2id's parameters: 46 MiB, 1 pass, 1 lane (OWASP's first
// recommendation). RFC 9106's 64 MiB and 3 passes took 0.5–0.9 s a hash on this project's
// shared 2-core machine (BenchmarkPasswordHash), too long for a sign-in and a door to
// exhausting the CPU; these take about 0.09 s there under the same load.
var passwordParams = &argon2id.Params{Memory: 46 * 1024, Iterations: 1, Parallelism: 1, SaltLength: 16, KeyLength: 32}

// dummyHash is compared with when the email is unknown, so that a sign-in takes as long
// whether the user exists or not: made with the parameters the dashboard hashes with, once
// per process for the production ones (a test process starts a hundred servers).
func dummyHash(p *argon2id.Params) string {
	if p == passwordParams {
		return productionDummyHash()
	}
	h, _ := argon2id.CreateHash("payouts: no such user", p)
	return h
}

var productionDummyHash = sync.OnceValue(func() string {
	h, _ := argon2id.CreateHash("payouts: no such user", passwordParams)
	return h
})

// hashPassword is how a password set here is stored.
func (d *Dashboard) hashPassword(pw string) (string, error) {
	return argon2id.CreateHash(pw, d.passwordParams)
}

// totpOpts are the codes' parameters: 6 digits every 30 s, SHA-1 (what every app reads).
var totpOpts = totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1}

type actorKey struct{}

// actor is who signed the request's session in (signedIn put it there): the one function
// the pages and the lead's batch approval ask, with Actor.Can.
func (d *Dashboard) actor(r *http.Request) rules.Actor {
	a, _ := r.Context().Value(actorKey{}).(rules.Actor)
	return a
}

// sessionActor resolves the session's principal: the admin token's, or a user's that is
// active at the version the session holds. false: signed out, or no longer current.
func (d *Dashboard) sessionActor(r *http.Request) (rules.Actor, bool) {
	a, ok, _ := d.resolveActor(r)
	return a, ok
}

// resolveActor is sessionActor with the error of reading a user: a user's session is not
// ended because the database could not be reached (signedIn answers 503 instead).
func (d *Dashboard) resolveActor(r *http.Request) (rules.Actor, bool, error) {
	if a, ok := r.Context().Value(actorKey{}).(rules.Actor); ok {
		return a, true, nil
	}
	ctx := r.Context()
	if !d.sm.GetBool(ctx, kSignedIn) {
		return rules.Actor{}, false, nil
	}
	p := d.sm.GetString(ctx, kPrincipal)
	if d.cfg.AdminToken != "" && p == d.principal {
		return rules.AdminActor(d.principal), true, nil
	}
	rest, ok := strings.CutPrefix(p, "user:")
	if !ok || d.cfg.Users == nil {
		return rules.Actor{}, false, nil
	}
	id, _, _ := strings.Cut(rest, ":")
	u, err := d.cfg.Users.Store.User(ctx, id)
	if err != nil && !errors.Is(err, rules.ErrNotFound) {
		return rules.Actor{}, false, err
	}
	if err != nil || u.Status != rules.UserActive || u.Principal() != p {
		return rules.Actor{}, false, nil
	}
	return u.Actor(), true, nil
}

// withActor is the request's context with its actor and the audit log's scope.
func (d *Dashboard) withActor(r *http.Request, a rules.Actor) context.Context {
	ctx := context.WithValue(r.Context(), actorKey{}, a)
	if d.cfg.Auditor != nil {
		ctx = rules.WithAudit(ctx, d.cfg.Auditor, a, d.clientAddr(r), r.UserAgent())
	}
	return ctx
}

// clientAddr is the request's client address without its port.
func (d *Dashboard) clientAddr(r *http.Request) string {
	if d.cfg.ClientAddr != nil {
		return d.cfg.ClientAddr(r)
	}
	if i := strings.LastIndexByte(r.RemoteAddr, ':'); i > 0 {
		return strings.Trim(r.RemoteAddr[:i], "[]")
	}
	return r.RemoteAddr
}

// audit records an action of an actor not yet in the request's context (a sign-in, a set-up).
func (d *Dashboard) audit(r *http.Request, a rules.Actor, action, target string, detail any) {
	if d.cfg.Auditor != nil {
		d.cfg.Auditor.Record(r.Context(), a, d.clientAddr(r), r.UserAgent(), action, target, a.MerchantID, detail)
	}
}

// perms is what the pages show the actor.
func perms(a rules.Actor) templates.Perms {
	return templates.Perms{Create: a.Can(rules.PermCreate, ""), Fund: a.Can(rules.PermFund, ""), Manage: a.Can(rules.PermManage, ""),
		Admin: a.Can(rules.PermAdmin, ""), User: a.UserID != ""}
}

// require refuses (403) a request whose actor lacks perm on every merchant; the merchant of
// the path is checked where it is read (merchantOf, payoutByID).
func (d *Dashboard) require(perm rules.Permission) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !d.actor(r).Can(perm, "") {
				f := d.frame(r, "forbidden", "")
				d.render(w, r, http.StatusForbidden, templates.DashMessage(templates.MessageView{Frame: f, Message: f.W.S("forbidden")}))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// scope is the merchant a merchant user is confined to; "" for an operator.
func (d *Dashboard) scope(r *http.Request) string {
	if a := d.actor(r); a.Role != rules.RoleOperator {
		return a.MerchantID
	}
	return ""
}

// hidden answers 404 for another merchant's page, as for one that does not exist: a merchant
// user learns nothing of the others.
func (d *Dashboard) hidden(w http.ResponseWriter, r *http.Request) {
	f := d.frame(r, "m.notFound", "")
	d.render(w, r, http.StatusNotFound, templates.DashMessage(templates.MessageView{Frame: f, Message: f.W.S("m.notFound")}))
}

// userLogin signs a user in with email, password and a current TOTP code. Every failure
// answers alike and counts against the address; a code is accepted once (its step is kept).
// Each checked failure also doubles the account's wait (rules.SignInDelays): until it has
// passed, an attempt for the account is refused (429, Retry-After) without being checked.
func (d *Dashboard) userLogin(w http.ResponseWriter, r *http.Request) {
	email, password, code := strings.TrimSpace(r.PostForm.Get("email")), r.PostForm.Get("password"), strings.TrimSpace(r.PostForm.Get("code"))
	account := rules.EmailKey(email)
	// refuse counts a refusal (rules.SignInRefusals: one audit entry per address and account
	// a minute, and each lock-out at once).
	refuse := func(u *rules.User, why string, rf rules.Refusal) {
		rf.Actor = rules.Actor{Principal: "anonymous", Name: email}
		if u != nil {
			rf.Actor = u.Actor()
		}
		rf.Addr, rf.UserAgent, rf.Method, rf.Email, rf.Account, rf.Why = d.clientAddr(r), r.UserAgent(), "user", email, account, why
		d.cfg.Log.Warn("dashboard sign-in failed", "addr", r.RemoteAddr, "why", why)
		d.refusals.Refused(r.Context(), rf)
	}
	if d.cfg.Limiter != nil && d.cfg.Limiter.Blocked(r) {
		refuse(nil, "limited", rules.Refusal{AddressOver: true})
		d.loginFailed(w, r, "login.userWrong")
		return
	}
	failures, wait, ok := d.delays.Attempt(account)
	if !ok {
		over := d.accountWaiting(w, r, wait)
		refuse(nil, "account waiting", rules.Refusal{AccountFailures: failures, AccountWait: wait, AddressOver: over})
		return
	}
	// fail is a checked attempt that failed: it counts against the address, and counted
	// against the account when it was let through.
	fail := func(u *rules.User, why string) {
		over := d.loginFailed(w, r, "login.userWrong")
		refuse(u, why, rules.Refusal{AccountFailures: failures, AccountWait: wait, LocksAccount: wait > 0, AddressOver: over})
	}
	// unchecked is an attempt that could not be checked (the store failed): not a failure.
	unchecked := func(err error) {
		d.delays.Unchecked(account)
		d.internal(w, r, err)
	}
	u, err := d.cfg.Users.Store.UserByEmail(r.Context(), email)
	if err != nil && !errors.Is(err, rules.ErrNotFound) {
		unchecked(err)
		return
	}
	hash := d.dummyHash
	if u != nil && u.PasswordHash != "" {
		hash = u.PasswordHash
	}
	match, err := argon2id.ComparePasswordAndHash(password, hash)
	if err != nil {
		unchecked(err)
		return
	}
	switch {
	case u == nil:
		fail(nil, "unknown email")
		return
	case !match || u.PasswordHash == "":
		fail(u, "wrong password")
		return
	case u.Status != rules.UserActive:
		fail(u, "user "+string(u.Status))
		return
	}
	u, err = d.cfg.Users.Store.UpdateUser(r.Context(), u.ID, func(u *rules.User) error {
		step, ok := d.checkCode(u, u.TOTPSealed, code)
		if !ok {
			return errWrongCode
		}
		u.TOTPLastStep = step
		return nil
	})
	if errors.Is(err, errWrongCode) {
		fail(u, "wrong or replayed code")
		return
	}
	if err != nil {
		unchecked(err)
		return
	}
	d.delays.Succeeded(account)
	d.startSession(w, r, u.Principal(), u.Actor(), "user")
}

// accountWaiting answers an attempt refused because its account's wait has not passed: 429
// with the wait as Retry-After (at least the address's minute when the address is over its
// allowance too, which the attempt counts against, and then it reports so).
func (d *Dashboard) accountWaiting(w http.ResponseWriter, r *http.Request, wait time.Duration) (addressOver bool) {
	retry := int((wait + time.Second - 1) / time.Second)
	if d.cfg.Limiter != nil && (d.cfg.Limiter.Blocked(r) || d.cfg.Limiter.Fail(r)) {
		retry, addressOver = max(retry, 60), true
	}
	w.Header().Set("Retry-After", strconv.Itoa(retry))
	d.showLogin(w, r, http.StatusTooManyRequests, "login.accountWaiting")
	return addressOver
}

var errWrongCode = errors.New("wrong or replayed TOTP code")

// checkCode checks a TOTP code against the user's sealed secret, one step either side of
// now; a step at or before the last one accepted is a replay. It answers the step matched.
func (d *Dashboard) checkCode(u *rules.User, sealed []byte, code string) (int64, bool) {
	if len(code) != 6 || len(sealed) == 0 || d.cfg.Open == nil {
		return 0, false
	}
	secret, err := d.cfg.Open(sealed, "user:"+u.ID)
	if err != nil {
		d.cfg.Log.Error("a user's TOTP secret does not open", "user", u.ID, "err", err)
		return 0, false
	}
	now := d.cfg.RealNow().Unix() / 30
	for step := now - 1; step <= now+1; step++ {
		want, err := totp.GenerateCodeCustom(string(secret), time.Unix(step*30, 0), totpOpts)
		if err == nil && subtle.ConstantTimeCompare([]byte(want), []byte(code)) == 1 && step > u.TOTPLastStep {
			return step, true
		}
	}
	return 0, false
}

func (d *Dashboard) setupRoutes(r chi.Router) {
	if d.cfg.Users == nil {
		return
	}
	r.Get("/dashboard/setup", d.setupPage)
	r.Post("/dashboard/setup", d.setup)
	// Links made before the token moved to the query: redirected (the form posts to the new
	// form), the path recorded as its route (api's unloggedParams).
	r.Get("/dashboard/setup/{token}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		http.Redirect(w, r, setupPath(chi.URLParam(r, "token")), http.StatusSeeOther)
	})
	r.Post("/dashboard/setup/{token}", d.setup)
}

// setupToken is the request's set-up token. It travels in the query (t), as the card form's
// session does: the access log and the spans record the path, never the query, and whoever
// reads a token could finish the set-up first and own the account.
func setupToken(r *http.Request) string {
	if t := chi.URLParam(r, "token"); t != "" {
		return t
	}
	return r.URL.Query().Get("t")
}

// setupPath is the set-up page of token, relative to the server.
func setupPath(token string) string {
	return rules.SetupLink("", token)
}

// setupUser is the pending user of the request's set-up token, or none when it is unknown,
// used or expired.
func (d *Dashboard) setupUser(r *http.Request) (*rules.User, error) {
	u, err := d.cfg.Users.Store.UserBySetupHash(r.Context(), rules.SetupHash(setupToken(r)))
	if errors.Is(err, rules.ErrNotFound) || (err == nil && (u.Status != rules.UserPending || !d.cfg.RealNow().Before(u.SetupExpires))) {
		return nil, nil
	}
	return u, err
}

// setupPage offers a TOTP secret (kept sealed, pending, until a code confirms it).
func (d *Dashboard) setupPage(w http.ResponseWriter, r *http.Request) {
	u, err := d.setupUser(r)
	if err != nil {
		d.internal(w, r, err)
		return
	}
	d.showSetup(w, r, u, nil, http.StatusOK)
}

func (d *Dashboard) showSetup(w http.ResponseWriter, r *http.Request, u *rules.User, errs map[string]string, code int) {
	f := d.frame(r, "setup.title", "")
	f.SignedIn, f.Can, f.Who = false, templates.Perms{}, ""
	v := templates.SetupView{Frame: f, Gone: u == nil, Errors: errs, Action: setupPath(setupToken(r))}
	if u == nil {
		d.render(w, r, http.StatusNotFound, templates.DashSetup(v))
		return
	}
	var key *otp.Key
	if len(u.TOTPPending) > 0 { // the same secret again when the page is reloaded
		if b32, err := d.cfg.Open(u.TOTPPending, "user:"+u.ID); err == nil {
			if raw, err := otpEncoding.DecodeString(string(b32)); err == nil {
				key, _ = totp.Generate(totp.GenerateOpts{Issuer: "payouts", AccountName: u.Email, Secret: raw, Period: 30,
					Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
			}
		}
	}
	if key == nil {
		k, err := totp.Generate(totp.GenerateOpts{Issuer: "payouts", AccountName: u.Email, Period: 30, Digits: otp.DigitsSix,
			Algorithm: otp.AlgorithmSHA1})
		if err != nil {
			d.internal(w, r, err)
			return
		}
		sealed := d.cfg.Seal([]byte(k.Secret()), "user:"+u.ID)
		if _, err := d.cfg.Users.Store.UpdateUser(r.Context(), u.ID, func(u *rules.User) error { u.TOTPPending = sealed; return nil }); err != nil {
			d.internal(w, r, err)
			return
		}
		key = k
	}
	img, err := key.Image(200, 200)
	if err != nil {
		d.internal(w, r, err)
		return
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		d.internal(w, r, err)
		return
	}
	v.Name, v.Email, v.OTPAuthURI, v.Secret = u.Name, u.Email, key.URL(), key.Secret()
	v.QR = "data:image/png;base64," + base64.StdEncoding.EncodeToString(buf.Bytes())
	d.render(w, r, code, templates.DashSetup(v))
}

// otpEncoding is how pquerna/otp writes a secret (base32 without padding); the sealed
// secret is that text.
var otpEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// setup sets the password and confirms the pending TOTP secret with a current code: the user
// becomes active, the link is used up.
func (d *Dashboard) setup(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 8<<10)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "the form could not be read", http.StatusBadRequest)
		return
	}
	u, err := d.setupUser(r)
	if err != nil {
		d.internal(w, r, err)
		return
	}
	if u == nil {
		d.showSetup(w, r, nil, nil, http.StatusNotFound)
		return
	}
	words := templates.DashWords(d.lang(r))
	pw, pw2, code := r.PostForm.Get("password"), r.PostForm.Get("password2"), strings.TrimSpace(r.PostForm.Get("code"))
	errs := map[string]string{}
	if rules.CheckPassword(pw) != "" {
		errs["password"] = words.S("setup.short")
	} else if pw != pw2 {
		errs["password2"] = words.S("setup.mismatch")
	}
	if len(errs) > 0 {
		d.showSetup(w, r, u, errs, http.StatusUnprocessableEntity)
		return
	}
	hash, err := d.hashPassword(pw)
	if err != nil {
		d.internal(w, r, err)
		return
	}
	token := rules.SetupHash(setupToken(r))
	done, err := d.cfg.Users.Store.UpdateUser(r.Context(), u.ID, func(u *rules.User) error {
		if u.SetupHash != token || u.Status != rules.UserPending {
			return rules.ErrNotFound // used meanwhile
		}
		step, ok := d.checkCode(u, u.TOTPPending, code)
		if !ok {
			return errWrongCode
		}
		u.PasswordHash, u.TOTPSealed, u.TOTPPending, u.TOTPLastStep = hash, u.TOTPPending, nil, step
		u.Status, u.SetupHash, u.SetupExpires, u.UpdatedAt = rules.UserActive, "", time.Time{}, d.cfg.RealNow().UTC()
		u.Version++
		return nil
	})
	switch {
	case errors.Is(err, errWrongCode):
		d.showSetup(w, r, u, map[string]string{"code": words.S("setup.badCode")}, http.StatusUnprocessableEntity)
		return
	case errors.Is(err, rules.ErrNotFound):
		d.showSetup(w, r, nil, nil, http.StatusNotFound)
		return
	case err != nil:
		d.internal(w, r, err)
		return
	}
	a := done.Actor()
	d.audit(r, a, "user.password.set", "user:"+done.ID, nil)
	d.audit(r, a, "user.totp.enrol", "user:"+done.ID, nil)
	d.back(w, r, "/dashboard/login", words.S("setup.done"), "")
}

func (d *Dashboard) userRoutes(r chi.Router, admin func(http.Handler) http.Handler) {
	r.Get("/dashboard/audit", d.auditPage)
	r.Get("/dashboard/audit.csv", d.auditCSV)
	if d.cfg.Users == nil {
		return
	}
	r.Get("/dashboard/account", d.account)
	r.Post("/dashboard/account", d.changePassword)
	r.With(admin).Get("/dashboard/users", d.users)
	r.With(admin).Post("/dashboard/users", d.createUser)
	r.With(admin).Post("/dashboard/users/{id}/{action:disable|enable|reset}", d.userAction)
}

// users is /dashboard/users (operators).
func (d *Dashboard) users(w http.ResponseWriter, r *http.Request) {
	d.showUsers(w, r, templates.NewUserForm{Role: string(rules.RoleMaker)}, "", "", http.StatusOK)
}

func (d *Dashboard) showUsers(w http.ResponseWriter, r *http.Request, form templates.NewUserForm, link, linkFor string, code int) {
	f := d.frame(r, "u.title", "users")
	us, err := d.cfg.Users.Store.Users(r.Context())
	if err != nil {
		d.internal(w, r, err)
		return
	}
	names, ms, err := d.merchantNames(r)
	if err != nil {
		d.internal(w, r, err)
		return
	}
	v := templates.UsersView{Frame: f, Form: form, NewLink: link, NewLinkFor: linkFor, Merchants: merchantOptions(ms, form.MerchantID)}
	for _, role := range rules.Roles {
		v.Roles = append(v.Roles, templates.Option{Value: string(role), Label: f.W.S("u.role." + string(role)), Selected: string(role) == form.Role})
	}
	for _, u := range us {
		m := u.MerchantID
		if n := names[m]; n != "" {
			m += " · " + n
		}
		v.Rows = append(v.Rows, templates.UserRow{ID: u.ID, Name: u.Name, Email: u.Email, Role: string(u.Role), Merchant: m,
			Status: f.W.S("u.st." + string(u.Status)), Created: timeText(u.CreatedAt), Disabled: u.Status == rules.UserDisabled})
	}
	d.render(w, r, code, templates.DashUsers(v))
}

// createUser makes a user and shows its set-up link once.
func (d *Dashboard) createUser(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 8<<10)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "the form could not be read", http.StatusBadRequest)
		return
	}
	form := templates.NewUserForm{Name: r.PostForm.Get("name"), Email: r.PostForm.Get("email"), Role: r.PostForm.Get("role"),
		MerchantID: r.PostForm.Get("merchantId")}
	if form.Role == string(rules.RoleOperator) {
		form.MerchantID = "" // the select keeps its value when the role changes
	}
	u, token, err := d.cfg.Users.Create(r.Context(), rules.NewUser{Name: form.Name, Email: form.Email, Role: rules.Role(form.Role),
		MerchantID: form.MerchantID})
	if err != nil {
		form.Errors = fieldErrors(err)
		if form.Errors == nil {
			d.internal(w, r, err)
			return
		}
		d.sm.Put(r.Context(), kError, templates.DashWords(d.lang(r)).S("u.fix"))
		d.showUsers(w, r, form, "", "", http.StatusUnprocessableEntity)
		return
	}
	d.showUsers(w, r, templates.NewUserForm{Role: string(rules.RoleMaker)}, rules.SetupLink(d.publicBase(r), token), u.Email, http.StatusCreated)
}

// fieldErrors are the messages of a refusal by field; nil when err is no refusal.
func fieldErrors(err error) map[string]string {
	var p *rules.Problem
	var e *rules.Error
	switch {
	case errors.As(err, &p):
		out := map[string]string{}
		for _, e := range p.Errors {
			out[e.Field] = e.Message + " (" + e.Code + ")"
		}
		return out
	case errors.As(err, &e):
		return map[string]string{e.Field: e.Message + " (" + e.Code + ")"}
	}
	return nil
}

// publicBase is the base URL of links: --public-url, else the request's own host.
func (d *Dashboard) publicBase(r *http.Request) string {
	if b := rules.PublicBase(r.Context()); b != "" {
		return b
	}
	if d.cfg.PublicURL != "" {
		return d.cfg.PublicURL
	}
	return "http://" + r.Host
}

// userAction disables, enables or resets a user (a reset shows the new link once).
func (d *Dashboard) userAction(w http.ResponseWriter, r *http.Request) {
	words := templates.DashWords(d.lang(r))
	id := chi.URLParam(r, "id")
	var err error
	switch chi.URLParam(r, "action") {
	case "disable", "enable":
		on := chi.URLParam(r, "action") == "enable"
		if _, err = d.cfg.Users.SetEnabled(r.Context(), id, on); err == nil {
			msg := words.S("u.disabled")
			if on {
				msg = words.S("u.enabled")
			}
			d.back(w, r, "/dashboard/users", msg, "")
			return
		}
	case "reset":
		var u *rules.User
		var token string
		if u, token, err = d.cfg.Users.Reset(r.Context(), id); err == nil {
			d.showUsers(w, r, templates.NewUserForm{Role: string(rules.RoleMaker)}, rules.SetupLink(d.publicBase(r), token), u.Email, http.StatusOK)
			return
		}
	}
	var re *rules.Error
	if errors.As(err, &re) {
		d.back(w, r, "/dashboard/users", "", re.Message+" ("+re.Code+")")
		return
	}
	d.internal(w, r, err)
}

// account is /dashboard/account: a user's own page.
func (d *Dashboard) account(w http.ResponseWriter, r *http.Request) {
	d.showAccount(w, r, nil, http.StatusOK)
}

func (d *Dashboard) showAccount(w http.ResponseWriter, r *http.Request, errs map[string]string, code int) {
	a := d.actor(r)
	if a.UserID == "" {
		http.Redirect(w, r, "/dashboard", http.StatusSeeOther)
		return
	}
	u, err := d.cfg.Users.Store.User(r.Context(), a.UserID)
	if err != nil {
		d.internal(w, r, err)
		return
	}
	f := d.frame(r, "acc.title", "account")
	d.render(w, r, code, templates.DashAccount(templates.AccountView{Frame: f, Name: u.Name, Email: u.Email, Role: string(u.Role),
		Merchant: u.MerchantID, Errors: errs}))
}

// changePassword sets a new password: the credential version moves, so every other session
// of the user ends, and this one goes on under the new version.
func (d *Dashboard) changePassword(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 8<<10)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "the form could not be read", http.StatusBadRequest)
		return
	}
	a := d.actor(r)
	if a.UserID == "" {
		http.Redirect(w, r, "/dashboard", http.StatusSeeOther)
		return
	}
	words := templates.DashWords(d.lang(r))
	current, pw, pw2 := r.PostForm.Get("current"), r.PostForm.Get("password"), r.PostForm.Get("password2")
	errs := map[string]string{}
	if rules.CheckPassword(pw) != "" {
		errs["password"] = words.S("setup.short")
	} else if pw != pw2 {
		errs["password2"] = words.S("setup.mismatch")
	}
	u, err := d.cfg.Users.Store.User(r.Context(), a.UserID)
	if err != nil {
		d.internal(w, r, err)
		return
	}
	if ok, err := argon2id.ComparePasswordAndHash(current, u.PasswordHash); err != nil || !ok {
		errs["current"] = words.S("acc.wrong")
		if d.cfg.Limiter != nil {
			d.cfg.Limiter.Fail(r)
		}
	}
	if len(errs) > 0 {
		d.showAccount(w, r, errs, http.StatusUnprocessableEntity)
		return
	}
	hash, err := d.hashPassword(pw)
	if err != nil {
		d.internal(w, r, err)
		return
	}
	u, err = d.cfg.Users.Store.UpdateUser(r.Context(), a.UserID, func(u *rules.User) error {
		u.PasswordHash, u.UpdatedAt = hash, d.cfg.RealNow().UTC()
		u.Version++
		return nil
	})
	if err != nil {
		d.internal(w, r, err)
		return
	}
	if err := d.sm.RenewToken(r.Context()); err != nil {
		d.internal(w, r, err)
		return
	}
	d.sm.Put(r.Context(), kPrincipal, u.Principal())
	rules.Audit(r.Context(), "user.password.change", "user:"+u.ID, u.MerchantID, nil)
	d.back(w, r, "/dashboard/account", words.S("acc.done"), "")
}

// auditFilter reads the Audit page's filter; a merchant user sees its merchant's entries only.
func (d *Dashboard) auditFilter(r *http.Request) (rules.AuditQuery, rules.AuditFilter, error) {
	q := r.URL.Query()
	aq := rules.AuditQuery{Actor: q.Get("actor"), Action: q.Get("action"), From: q.Get("from"), To: q.Get("to"), Cursor: q.Get("cursor")}
	f, err := aq.Filter()
	if s := d.scope(r); s != "" {
		f.MerchantID = s
	}
	return aq, f, err
}

// auditPage is /dashboard/audit.
func (d *Dashboard) auditPage(w http.ResponseWriter, r *http.Request) {
	f := d.frame(r, "au.title", "audit")
	aq, af, err := d.auditFilter(r)
	v := templates.AuditView{Frame: f, Actor: aq.Actor, Action: aq.Action, From: aq.From, To: aq.To, Scoped: d.scope(r)}
	q := r.URL.Query()
	q.Del("cursor")
	v.CSVHref = "/dashboard/audit.csv?" + q.Encode()
	if err != nil || d.cfg.AuditLog == nil {
		if err != nil {
			v.Error = err.Error()
		}
		d.render(w, r, http.StatusBadRequest, templates.DashAudit(v))
		return
	}
	af.Limit = 50
	page, err := d.cfg.AuditLog.AuditEntries(r.Context(), af)
	if err != nil {
		d.internal(w, r, err)
		return
	}
	for _, e := range page.Entries {
		v.Rows = append(v.Rows, templates.AuditRow{ID: strconv.FormatInt(e.ID, 10), At: timeText(e.At), Actor: e.ActorName, Principal: e.Principal,
			Action: e.Action, Target: e.Target, Merchant: e.MerchantID, Detail: string(e.Detail), RemoteAddr: e.RemoteAddr, UserAgent: e.UserAgent})
	}
	if page.Next > 0 {
		q.Set("cursor", strconv.FormatInt(page.Next, 10))
		v.NextHref = "/dashboard/audit?" + q.Encode()
	}
	d.render(w, r, http.StatusOK, templates.DashAudit(v))
}

// auditCSV is every entry the filter selects, as CSV, read page by page.
func (d *Dashboard) auditCSV(w http.ResponseWriter, r *http.Request) {
	_, af, err := d.auditFilter(r)
	if err != nil || d.cfg.AuditLog == nil {
		http.Error(w, "bad filter", http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="audit.csv"`)
	w.Header().Set("Cache-Control", "no-store")
	cw := rules.NewCSVWriter(w)
	af.Limit = 1000
	for first := true; ; first = false {
		page, err := d.cfg.AuditLog.AuditEntries(r.Context(), af)
		if err != nil {
			d.cfg.Log.Error("audit export", "err", err)
			return
		}
		if err := rules.WriteAuditCSV(cw, page.Entries, first); err != nil || page.Next == 0 {
			return
		}
		af.Before = page.Next
	}
}
