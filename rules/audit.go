package rules

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"
)

// The audit log: every state-changing action of the admin API and the
// dashboard, who did it, when and from where, appended and never changed. Record is the one
// way in; the signed merchant API's payout creates are not audited (a payout records itself).

// AuditEntry is one action.
type AuditEntry struct {
	ID         int64     `json:"id"`
	At         time.Time `json:"at"`
	Principal  string    `json:"principal"` // "admin-token:<fingerprint>" or "user:<id>:<version>"
	ActorName  string    `json:"actorName"`
	Action     string    `json:"action"` // dotted: "merchant.create", "user.disable", "signin.failure", ...
	Target     string    `json:"target,omitempty"`
	MerchantID string    `json:"merchantId,omitempty"` // the merchant the action touched, for merchant users' view
	// Detail is a small JSON object: never a secret, never card data.
	Detail     json.RawMessage `json:"detail,omitempty"`
	RemoteAddr string          `json:"remoteAddr,omitempty"`
	UserAgent  string          `json:"userAgent,omitempty"`
}

// AuditFilter selects entries, newest first.
type AuditFilter struct {
	// Actor is a principal, a principal's prefix ("user:u_1"), or an actor's name
	// (case-insensitive).
	Actor string
	// Action is an action, or its first part ("user" selects "user.create" and the others).
	Action     string
	MerchantID string    // only entries about this merchant
	From, To   time.Time // At in [From, To); zero: unbounded
	Before     int64     // only entries with a smaller id (the next page's cursor); 0: from the newest
	Limit      int       // 1–1000; 0 is 100
}

// AuditPage is one page of entries, newest first; Next is the Before of the next page, 0 at
// the end.
type AuditPage struct {
	Entries []AuditEntry `json:"entries"`
	Next    int64        `json:"next,omitempty"`
}

// PageLimit is the filter's limit within bounds.
func (f AuditFilter) PageLimit() int {
	switch {
	case f.Limit <= 0:
		return 100
	case f.Limit > 1000:
		return 1000
	}
	return f.Limit
}

// Match says whether an entry passes the filter (all but Before and Limit); the engines
// that filter in their query do the same.
func (f AuditFilter) Match(e *AuditEntry) bool {
	if f.Actor != "" && e.Principal != f.Actor && !strings.HasPrefix(e.Principal, f.Actor+":") && !strings.EqualFold(e.ActorName, f.Actor) {
		return false
	}
	if f.Action != "" && e.Action != f.Action && !strings.HasPrefix(e.Action, f.Action+".") {
		return false
	}
	if f.MerchantID != "" && e.MerchantID != f.MerchantID {
		return false
	}
	if !f.From.IsZero() && e.At.Before(f.From) {
		return false
	}
	if !f.To.IsZero() && !e.At.Before(f.To) {
		return false
	}
	return true
}

// AuditLog keeps the audit entries.
type AuditLog interface {
	// AppendAudit stores e under the next id (set on e).
	AppendAudit(ctx context.Context, e *AuditEntry) error
	AuditEntries(ctx context.Context, f AuditFilter) (AuditPage, error)
}

// Auditor writes audit entries.
type Auditor struct {
	Log AuditLog
	Now func() time.Time
	// Logger has the entries that could not be written (the action itself is done).
	Logger *slog.Logger
}

// Record writes one entry for actor's action, from the request's address and user agent.
// detail is marshalled to JSON (nil: none).
func (a *Auditor) Record(ctx context.Context, actor Actor, remoteAddr, userAgent, action, target, merchantID string, detail any) error {
	e := &AuditEntry{At: a.Now().UTC(), Principal: actor.Principal, ActorName: actor.Name, Action: action, Target: target,
		MerchantID: merchantID, RemoteAddr: remoteAddr, UserAgent: truncateUTF8(userAgent, 256)}
	if detail != nil {
		raw, err := json.Marshal(detail)
		if err != nil {
			return err
		}
		if string(raw) != "null" && string(raw) != "{}" {
			e.Detail = raw
		}
	}
	err := a.Log.AppendAudit(ctx, e)
	if err != nil && a.Logger != nil {
		a.Logger.Error("audit entry not written", "action", action, "target", target, "principal", actor.Principal, "err", err)
	}
	return err
}

type auditScope struct {
	a                     *Auditor
	actor                 Actor
	remoteAddr, userAgent string
}

type auditKey struct{}

// WithAudit carries who acts, and from where, to the Audit calls of a request.
func WithAudit(ctx context.Context, a *Auditor, actor Actor, remoteAddr, userAgent string) context.Context {
	return context.WithValue(ctx, auditKey{}, &auditScope{a: a, actor: actor, remoteAddr: remoteAddr, userAgent: userAgent})
}

// Audit records an action of the request's actor (WithAudit); without one it records
// nothing. It is called where the action is decided, once it is done: a failure to write
// the entry is logged, and does not undo the action.
func Audit(ctx context.Context, action, target, merchantID string, detail any) {
	s, ok := ctx.Value(auditKey{}).(*auditScope)
	if !ok || s.a == nil || s.a.Log == nil {
		return
	}
	s.a.Record(ctx, s.actor, s.remoteAddr, s.userAgent, action, target, merchantID, detail)
}

func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}
