package rules

import (
	"context"
	"sync"
	"time"
)

// SignInRefusals counts the dashboard's refused sign-ins, instead of writing an audit entry
// for each: anyone who can reach the sign-in page can send thousands a minute, and an entry
// each (written to disk before the answer) let unauthenticated traffic grow the store
// without bound and slow every other write. What an auditor needs is kept:
//
//   - signin.failure: one entry per address and account a window (a minute), written when
//     the window ends, when the audit log is read (Flush), and at shutdown: how many
//     refusals, from when to when, and why ("reasons": reason → count), with the account's
//     failures in a row and its wait at the last one;
//   - signin.lockout: written at once when a refusal locks someone out: a checked failure
//     that sets the account's wait (who, the failures, the wait), or the first refusal of
//     an address over its allowance in a window (the address's tries in the window so far).
//
// Bounded: a window counts Max (address, account) pairs apart; past them an address's
// further accounts are counted together (account "*"), and past 2×Max all the rest (address
// and account "*"); at most Max lock-outs a window are written, the others counted in their
// pair's entry. So a window writes at most 2×Max+1 failure entries and Max lock-outs,
// however many refusals it had. The counts are in memory: a crash loses the window's
// counts, never a lock-out. Safe for concurrent use; the lock guards the counts alone, and
// entries are written after it is released.
type SignInRefusals struct {
	Auditor *Auditor
	Window  time.Duration
	Max     int

	mu         sync.Mutex
	start      time.Time
	tallies    map[refusalKey]*refusalTally
	order      []refusalKey
	lockouts   int
	addrLocked map[string]bool
	addrTries  map[string]int // the window's refusals of each address, for its first 2×Max
}

// Refused sign-ins are counted a minute at a time, 100 pairs apart.
const (
	SignInRefusalWindow = time.Minute
	SignInRefusalMax    = 100
)

// NewSignInRefusals counts refusals into a's audit log.
func NewSignInRefusals(a *Auditor) *SignInRefusals {
	return &SignInRefusals{Auditor: a, Window: SignInRefusalWindow, Max: SignInRefusalMax}
}

// Refusal is one refused sign-in.
type Refusal struct {
	Actor     Actor // anonymous, or the user whose password or code was wrong
	Addr      string
	UserAgent string
	Method    string // "user" or "admin-token"
	Email     string // as typed ("" for the admin token)
	Account   string // EmailKey of Email
	Why       string
	// AccountFailures and AccountWait are the account's failures in a row and the wait
	// before its next attempt is checked, when known.
	AccountFailures int
	AccountWait     time.Duration
	// LocksAccount: this checked failure set the account's wait. AddressOver: the address
	// is over its allowance.
	LocksAccount, AddressOver bool
}

type refusalKey struct{ addr, account string }

type refusalTally struct {
	first           Refusal
	n               int
	why             map[string]int
	from, to        time.Time
	accountFailures int
	accountWait     time.Duration
	lockouts        int // not written: past the window's Max
}

// Refused counts r, writes its lock-out if it is one, and writes the windows that ended.
func (s *SignInRefusals) Refused(ctx context.Context, r Refusal) {
	if s == nil || s.Auditor == nil || s.Auditor.Log == nil {
		return
	}
	now := s.Auditor.Now()
	s.mu.Lock()
	var ended []pendingEntry
	if !s.start.IsZero() && !now.Before(s.start.Add(s.Window)) {
		ended = s.takeLocked()
	}
	if s.tallies == nil {
		s.start = now.Truncate(s.Window)
		s.tallies, s.addrLocked, s.addrTries = map[refusalKey]*refusalTally{}, map[string]bool{}, map[string]int{}
		s.lockouts = 0
	}
	k := refusalKey{r.Addr, r.Account}
	t := s.tallies[k]
	if t == nil && len(s.tallies) >= s.Max {
		k = refusalKey{r.Addr, "*"}
		if t = s.tallies[k]; t == nil && len(s.tallies) >= 2*s.Max {
			k = refusalKey{"*", "*"}
			t = s.tallies[k]
		}
	}
	if t == nil {
		first := r
		if k.account == "*" {
			first.Email, first.Actor = "*", Actor{Principal: "anonymous", Name: "(several accounts)"}
		}
		if k.addr == "*" {
			first.Addr, first.UserAgent = "*", ""
		}
		t = &refusalTally{first: first, why: map[string]int{}, from: now}
		s.tallies[k] = t
		s.order = append(s.order, k)
	}
	t.n++
	if _, ok := s.addrTries[r.Addr]; ok || len(s.addrTries) < 2*s.Max {
		s.addrTries[r.Addr]++
	}
	if len(t.why) < 8 || t.why[r.Why] > 0 {
		t.why[r.Why]++
	}
	t.to = now
	if r.AccountFailures > 0 || r.AccountWait > 0 {
		t.accountFailures, t.accountWait = r.AccountFailures, r.AccountWait
	}
	var lockout *pendingEntry
	if r.LocksAccount || (r.AddressOver && !s.addrLocked[r.Addr]) {
		if s.lockouts < s.Max {
			s.lockouts++
			detail := map[string]any{"method": r.Method, "why": r.Why, "tries": s.addrTries[r.Addr]}
			if r.Email != "" {
				detail["email"] = r.Email
			}
			if r.LocksAccount {
				detail["lockout"] = "account"
				detail["accountFailures"], detail["accountWait"] = r.AccountFailures, r.AccountWait.String()
			} else {
				detail["lockout"] = "address"
				s.addrLocked[r.Addr] = true
			}
			lockout = &pendingEntry{actor: r.Actor, addr: r.Addr, userAgent: r.UserAgent, action: "signin.lockout", detail: detail}
		} else {
			t.lockouts++
		}
	}
	s.mu.Unlock()
	s.write(ctx, ended)
	if lockout != nil {
		s.write(ctx, []pendingEntry{*lockout})
	}
}

// Flush writes the counts of the windows that ended; all: also the current window's so far
// (it goes on counting from zero). It answers the entries written: a worker calls it from
// time to time, the audit log's readers (all) before they read, and the server at shutdown.
func (s *SignInRefusals) Flush(ctx context.Context, all bool) (int, error) {
	if s == nil || s.Auditor == nil || s.Auditor.Log == nil {
		return 0, nil
	}
	now := s.Auditor.Now()
	s.mu.Lock()
	var out []pendingEntry
	if !s.start.IsZero() && (all || !now.Before(s.start.Add(s.Window))) {
		start, addrLocked, addrTries, lockouts := s.start, s.addrLocked, s.addrTries, s.lockouts
		out = s.takeLocked()
		if now.Before(start.Add(s.Window)) { // the window goes on: its lock-outs and tries so far stay counted
			s.start, s.tallies, s.addrLocked, s.addrTries, s.lockouts = start, map[refusalKey]*refusalTally{}, addrLocked, addrTries, lockouts
		}
	}
	s.mu.Unlock()
	return len(out), s.write(ctx, out)
}

// takeLocked empties the window into its entries.
func (s *SignInRefusals) takeLocked() []pendingEntry {
	out := make([]pendingEntry, 0, len(s.order))
	for _, k := range s.order {
		t := s.tallies[k]
		detail := map[string]any{"method": t.first.Method, "count": t.n, "reasons": t.why,
			"from": t.from.UTC().Format(time.RFC3339Nano), "to": t.to.UTC().Format(time.RFC3339Nano)}
		if t.first.Email != "" {
			detail["email"] = t.first.Email
		}
		if t.accountFailures > 0 || t.accountWait > 0 {
			detail["accountFailures"], detail["accountWait"] = t.accountFailures, t.accountWait.String()
		}
		if t.lockouts > 0 {
			detail["lockoutsNotWritten"] = t.lockouts
		}
		out = append(out, pendingEntry{actor: t.first.Actor, addr: t.first.Addr, userAgent: t.first.UserAgent, action: "signin.failure", detail: detail})
	}
	s.start, s.tallies, s.order, s.addrLocked, s.addrTries, s.lockouts = time.Time{}, nil, nil, nil, nil, 0
	return out
}

type pendingEntry struct {
	actor           Actor
	addr, userAgent string
	action          string
	detail          map[string]any
}

func (s *SignInRefusals) write(ctx context.Context, entries []pendingEntry) error {
	var first error
	for _, e := range entries {
		if err := s.Auditor.Record(ctx, e.actor, e.addr, e.userAgent, e.action, "dashboard", e.actor.MerchantID, e.detail); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// FlushingAuditLog is an audit log whose readers see every refusal counted so far: each read
// first writes the counts of the current window.
type FlushingAuditLog struct {
	AuditLog
	Refusals *SignInRefusals
}

func (l FlushingAuditLog) AuditEntries(ctx context.Context, f AuditFilter) (AuditPage, error) {
	l.Refusals.Flush(ctx, true)
	return l.AuditLog.AuditEntries(ctx, f)
}
