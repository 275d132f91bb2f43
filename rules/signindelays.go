package rules

import (
	"sync"
	"time"
)

// SignInDelays slows the guessing of one account's password and second factor from many
// addresses: past its first Free failures in a row (typos), each failure of an account
// doubles the wait before its next attempt is even checked (First, 2×First, 4×First… up to
// Cap), and a success or a quiet Forget after the last wait ended forgets its failures. A
// limit per address alone let an attacker holding a password and several addresses try 20
// codes a minute from each.
//
// An attempt is counted as a failure when it is let through (Attempt), before it is checked,
// and forgotten if it succeeds: attempts sent together cannot all be checked before the first
// failure is counted. The key is the account as typed (EmailKey of the email), known or not,
// so that a wait says nothing of whether the account exists. An attempt refused for its wait
// changes nothing, so a wait ends when it says. The table is in memory and bounded (Max
// accounts); when it fills, forgotten accounts go first, then those still within their free
// failures, then all (a spray of made-up emails cannot push out an account that is being made
// to wait). Safe for concurrent use; the lock guards the table alone.
type SignInDelays struct {
	Free               int
	First, Cap, Forget time.Duration
	Max                int
	Now                func() time.Time

	mu sync.Mutex
	m  map[string]*accountFailures
}

type accountFailures struct {
	n     int
	until time.Time // no attempt is checked before
}

// Sign-in delays of the dashboard: three failures in a row cost nothing, the fourth a second,
// the fifteenth and every one after 15 minutes; a quiet hour forgets them.
const (
	SignInDelayFree   = 3
	SignInDelayFirst  = time.Second
	SignInDelayCap    = 15 * time.Minute
	SignInDelayForget = time.Hour
	SignInDelayMax    = 100_000
)

// NewSignInDelays makes the dashboard's delays on now's clock (real time).
func NewSignInDelays(now func() time.Time) *SignInDelays {
	return &SignInDelays{Free: SignInDelayFree, First: SignInDelayFirst, Cap: SignInDelayCap, Forget: SignInDelayForget,
		Max: SignInDelayMax, Now: now}
}

// Attempt lets an attempt of account be checked, or not. ok: it may be checked, and is
// counted already as the account's failures-th failure in a row, whose wait follows it
// unless Succeeded (or Unchecked) says otherwise. Not ok: the account must wait that much
// longer, and nothing is counted.
func (s *SignInDelays) Attempt(account string) (failures int, wait time.Duration, ok bool) {
	now := s.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.m[account]
	if f != nil && now.Before(f.until) {
		return f.n, f.until.Sub(now), false
	}
	if f == nil || now.Sub(f.until) > s.Forget {
		if f == nil {
			s.makeRoom(now)
		}
		f = &accountFailures{}
		if s.m == nil {
			s.m = map[string]*accountFailures{}
		}
		s.m[account] = f
	}
	f.n++
	if f.n > s.Free {
		wait = s.First
		for i := s.Free + 1; i < f.n && wait < s.Cap; i++ {
			wait *= 2
		}
		wait = min(wait, s.Cap)
	}
	f.until = now.Add(wait) // also when 0: the quiet Forget counts from the last failure
	return f.n, wait, true
}

// Succeeded forgets account's failures: its attempt was right.
func (s *SignInDelays) Succeeded(account string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, account)
}

// Unchecked takes back an attempt that could not be checked (the database out of reach):
// it is not a failure, and the account may try again at once.
func (s *SignInDelays) Unchecked(account string) {
	now := s.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if f := s.m[account]; f != nil {
		f.n--
		f.until = now
		if f.n <= 0 {
			delete(s.m, account)
		}
	}
}

// makeRoom keeps the table under Max before an account is added.
func (s *SignInDelays) makeRoom(now time.Time) {
	if len(s.m) < s.Max {
		return
	}
	for _, drop := range []func(*accountFailures) bool{
		func(f *accountFailures) bool { return now.Sub(f.until) > s.Forget },
		func(f *accountFailures) bool { return f.n <= s.Free },
	} {
		for k, f := range s.m {
			if drop(f) {
				delete(s.m, k)
			}
		}
		if len(s.m) < s.Max {
			return
		}
	}
	s.m = map[string]*accountFailures{}
}
