package dashboard

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"payouts/rules"
	"payouts/templates"
)

// The merchant page's API keys (new, revoke) and the payout page's actions: Cancel while
// it is allowed, and a fresh link to a card payout's form.

// kCardForm holds the fresh form link of a card payout, for the next page only.
const kCardForm = "dashboard.cardForm"

// keyRows lists a merchant's live keys, the current one first.
func keyRows(m *rules.Merchant, now time.Time, w templates.Words) []templates.KeyRow {
	created := m.KeyCreatedAt
	if created.IsZero() {
		created = m.CreatedAt
	}
	full := string(rules.KeyRoleFull)
	rows := []templates.KeyRow{{ID: rules.KeyID(m.APIKeyHash), Role: full, Current: true, Created: timeText(created), Expires: w.S("k.never")}}
	for _, k := range m.LiveOldKeys(now) {
		rows = append(rows, templates.KeyRow{ID: rules.KeyID(k.APIKeyHash), Role: full, Created: timeText(k.CreatedAt), Expires: timeText(k.ExpiresAt)})
	}
	for _, k := range m.RoleKeys { // keys with a role: valid until revoked
		rows = append(rows, templates.KeyRow{ID: rules.KeyID(k.APIKeyHash), Role: string(k.Role), Created: timeText(k.CreatedAt), Expires: w.S("k.untilRevoked")})
	}
	return rows
}

// newKey issues a new key and secret, shown once on the merchant's page; the old pair keeps
// working for the chosen grace.
func (d *Dashboard) newKey(w http.ResponseWriter, r *http.Request) {
	m, ok := d.merchantForm(w, r, 8<<10)
	if !ok {
		return
	}
	self := "/dashboard/merchants/" + url.PathEscape(m.ID)
	words := templates.DashWords(d.lang(r))
	if role, ok := rules.ParseKeyRole(r.PostForm.Get("role")); !ok {
		d.back(w, r, self, "", rules.MessageIn(d.lang(r), rules.CodeKeyRole, "role must be full, maker, checker or read"))
		return
	} else if role != rules.KeyRoleFull && d.cfg.AddRoleKey != nil { // a role's key goes beside the current one
		keyID, key, secret, err := d.cfg.AddRoleKey(m.ID, role)
		if err != nil {
			d.internal(w, r, err)
			return
		}
		if d.cfg.Forget != nil {
			d.cfg.Forget(m.ID)
		}
		d.cfg.Log.Info("dashboard: API key issued", "merchant_id", m.ID, "key_id", keyID, "role", role)
		d.sm.Put(r.Context(), kCreds, key+"\n"+secret)
		d.back(w, r, self, sprintf(words.S("k.issued"), keyID), "")
		return
	}
	grace, err := time.ParseDuration(r.PostForm.Get("grace"))
	if err != nil || grace < 0 || grace > 30*24*time.Hour {
		d.back(w, r, self, "", words.S("k.badGrace"))
		return
	}
	if d.cfg.RotateKey == nil {
		http.Error(w, "key rotation is not wired", http.StatusNotImplemented)
		return
	}
	keyID, key, secret, err := d.cfg.RotateKey(m.ID, grace)
	if err != nil {
		d.internal(w, r, err)
		return
	}
	if d.cfg.Forget != nil {
		d.cfg.Forget(m.ID)
	}
	d.cfg.Log.Info("dashboard: API key issued", "merchant_id", m.ID, "key_id", keyID, "grace", grace)
	rules.Audit(r.Context(), "key.rotate", "merchant:"+m.ID, m.ID, map[string]any{"keyId": keyID, "graceSeconds": int64(grace / time.Second)})
	d.sm.Put(r.Context(), kCreds, key+"\n"+secret)
	d.back(w, r, self, sprintf(words.S("k.issued"), keyID), "")
}

// revokeKey ends an old key at once.
func (d *Dashboard) revokeKey(w http.ResponseWriter, r *http.Request) {
	m, ok := d.merchantForm(w, r, 8<<10)
	if !ok {
		return
	}
	self := "/dashboard/merchants/" + url.PathEscape(m.ID)
	words := templates.DashWords(d.lang(r))
	keyID := r.PostForm.Get("key")
	err := d.cfg.RevokeKey(m.ID, keyID)
	var re *rules.Error
	if errors.As(err, &re) {
		d.back(w, r, self, "", rules.MessageIn(d.lang(r), re.Code, re.Message))
		return
	}
	if err != nil {
		d.internal(w, r, err)
		return
	}
	if d.cfg.Forget != nil {
		d.cfg.Forget(m.ID)
	}
	d.cfg.Log.Info("dashboard: API key revoked", "merchant_id", m.ID, "key_id", keyID)
	rules.Audit(r.Context(), "key.revoke", "merchant:"+m.ID, m.ID, map[string]string{"keyId": keyID})
	d.back(w, r, self, sprintf(words.S("k.revoked"), keyID), "")
}

// canCancel is the lifecycle's rule (rules.Lifecycle.Cancel): not sent to the rail yet, and
// for a card payout, no card entered.
func canCancel(p *rules.Payout) bool {
	switch p.Status {
	case rules.StatusCreated, rules.StatusAuthorized, rules.StatusPendingBalance, rules.StatusWaitingRouting:
		return p.Channel != rules.ChannelCard || p.Card == nil
	}
	return false
}

// canOpenCardForm: a card payout whose form may still take a card.
func canOpenCardForm(p *rules.Payout, now time.Time) bool {
	return p.Channel == rules.ChannelCard && p.Card == nil && !p.Status.Final() && now.Before(p.SessionExpiresAt)
}

// cancel withdraws the payout, as POST /payouts/{id}/cancel does.
func (d *Dashboard) cancel(w http.ResponseWriter, r *http.Request) {
	p, self, ok := d.payoutForm(w, r)
	if !ok {
		return
	}
	np, err := d.cfg.Cancel(r.Context(), p.MerchantID, p.ID)
	var re *rules.Error
	if errors.As(err, &re) {
		d.back(w, r, self, "", rules.MessageIn(d.lang(r), re.Code, re.Message))
		return
	}
	if err != nil {
		d.internal(w, r, err)
		return
	}
	d.cfg.Log.Info("dashboard: payout cancelled", "payout", p.ID)
	rules.Audit(r.Context(), "payout.cancel", "payout:"+strconv.FormatInt(p.ID, 10), p.MerchantID, map[string]string{"orderId": p.OrderID})
	d.back(w, r, self, sprintf(templates.DashWords(d.lang(r)).S("d.settled"), string(np.Stage)+"/"+string(np.Status)), "")
}

// cardForm opens a fresh link to the card payout's form and shows it on the payout's page.
func (d *Dashboard) cardForm(w http.ResponseWriter, r *http.Request) {
	p, self, ok := d.payoutForm(w, r)
	if !ok {
		return
	}
	words := templates.DashWords(d.lang(r))
	if d.cfg.CardForm == nil || !canOpenCardForm(p, d.cfg.Now()) {
		d.back(w, r, self, "", words.S("d.formGone"))
		return
	}
	link, err := d.cfg.CardForm(r.Context(), p, d.lang(r))
	if err != nil {
		d.internal(w, r, err)
		return
	}
	if link == "" {
		d.back(w, r, self, "", words.S("d.formGone"))
		return
	}
	d.sm.Put(r.Context(), kCardForm, strconv.FormatInt(p.ID, 10)+"\n"+link)
	rules.Audit(r.Context(), "payout.card-form", "payout:"+strconv.FormatInt(p.ID, 10), p.MerchantID, nil)
	d.back(w, r, self, words.S("d.formOpened"), "")
}

// payoutForm reads a payout action's form and its payout.
func (d *Dashboard) payoutForm(w http.ResponseWriter, r *http.Request) (*rules.Payout, string, bool) {
	r.Body = http.MaxBytesReader(w, r.Body, 8<<10)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "the form could not be read", http.StatusBadRequest)
		return nil, "", false
	}
	p, err := d.payoutByID(r)
	if errors.Is(err, errNotFound) && d.scope(r) != "" {
		d.hidden(w, r) // a merchant user: another merchant's payout is not there
		return nil, "", false
	}
	if errors.Is(err, errNotFound) {
		d.back(w, r, "/dashboard/payouts", "", templates.DashWords(d.lang(r)).S("d.notFound"))
		return nil, "", false
	}
	if err != nil {
		d.internal(w, r, err)
		return nil, "", false
	}
	return p, "/dashboard/payouts/" + strconv.FormatInt(p.ID, 10), true
}

// payoutActions fills what the payout page offers beyond the sandbox: Cancel, the card form.
func (d *Dashboard) payoutActions(r *http.Request, p *rules.Payout) templates.PayoutActions {
	self := "/dashboard/payouts/" + strconv.FormatInt(p.ID, 10)
	can := d.actor(r).Can(rules.PermCreate, p.MerchantID)
	a := templates.PayoutActions{
		CanCancel: d.cfg.Cancel != nil && canCancel(p) && can, CancelURL: self + "/cancel",
		IsCard: p.Channel == rules.ChannelCard, CanOpenForm: d.cfg.CardForm != nil && canOpenCardForm(p, d.cfg.Now()) && can,
		CardFormURL: self + "/card-form",
	}
	if v := d.sm.PopString(r.Context(), kCardForm); v != "" {
		if id, link, _ := strings.Cut(v, "\n"); id == strconv.FormatInt(p.ID, 10) {
			a.FormLink = link
		}
	}
	return a
}
