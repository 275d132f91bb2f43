package notify

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"

	"payouts/rules"
	"payouts/templates"
)

// mailboxMax bounds what the sandbox mailbox pages read.
const mailboxMax = 1000

// MailboxHandlers serve the sandbox mailbox: GET /sandbox/mail, a
// page, and GET /sandbox/mail.json, newest first. Both answer 403 (2960) when sandbox is
// off. Optional filters: to, payoutId, kind, limit (default 100, at most 1000). The admin
// token guards the /sandbox/ prefix (api.adminAuth).
type MailboxHandlers struct {
	Box     Mailbox
	Sandbox bool
}

// Routes serves the mailbox's page and JSON.
func (h MailboxHandlers) Routes(r chi.Router) {
	r.Get("/sandbox/mail", h.Page)
	r.Get("/sandbox/mail.json", h.JSON)
}

func (h MailboxHandlers) read(w http.ResponseWriter, r *http.Request) ([]Mail, bool) {
	if !h.Sandbox {
		writeSandboxOff(w)
		return nil, false
	}
	q := r.URL.Query()
	limit := 100
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > mailboxMax {
			http.Error(w, "limit is a number from 1 to 1000", http.StatusBadRequest)
			return nil, false
		}
		limit = n
	}
	var payoutID int64
	if s := q.Get("payoutId"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			http.Error(w, "payoutId is a number", http.StatusBadRequest)
			return nil, false
		}
		payoutID = n
	}
	raws, err := h.Box.SandboxMails(r.Context(), mailboxMax)
	if err != nil {
		http.Error(w, "the mailbox could not be read", http.StatusInternalServerError)
		return nil, false
	}
	out := []Mail{}
	for _, raw := range raws {
		var m Mail
		if json.Unmarshal(raw, &m) != nil {
			continue
		}
		if (q.Get("to") != "" && m.To != q.Get("to")) || (payoutID != 0 && m.PayoutID != payoutID) ||
			(q.Get("kind") != "" && m.Kind != q.Get("kind")) {
			continue
		}
		out = append(out, m)
		if len(out) == limit {
			break
		}
	}
	return out, true
}

// JSON serves GET /sandbox/mail.json.
func (h MailboxHandlers) JSON(w http.ResponseWriter, r *http.Request) {
	mails, ok := h.read(w, r)
	if !ok {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(mails)
}

// Page serves GET /sandbox/mail.
func (h MailboxHandlers) Page(w http.ResponseWriter, r *http.Request) {
	mails, ok := h.read(w, r)
	if !ok {
		return
	}
	views := make([]templates.SandboxMail, len(mails))
	for i, m := range mails {
		views[i] = templates.SandboxMail{To: m.To, Subject: m.Subject, Text: m.Text, HTML: m.HTML,
			SentAt: m.SentAt.UTC().Format(time.RFC3339), Kind: m.Kind, PayoutID: m.PayoutID}
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'")
	w.Header().Set("Referrer-Policy", "no-referrer")
	templates.SandboxMailbox(views).Render(r.Context(), w)
}

// writeSandboxOff answers like the API does for a sandbox page of a
// server run with --sandbox=false.
func writeSandboxOff(w http.ResponseWriter) {
	msg := "sandbox controls are off: the server runs with --sandbox=false"
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(http.StatusForbidden)
	json.NewEncoder(w).Encode(map[string]any{"title": "Forbidden", "status": http.StatusForbidden, "detail": msg,
		"code": rules.CodeSandboxOff, "message": []string{msg},
		"errors": []map[string]string{{"code": rules.CodeSandboxOff, "message": msg}}})
}
