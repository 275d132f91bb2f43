package api

import "net/http"

// SignInLimiter is a FailureLimiter keyed by the request's client address (the forwarded
// one only through --trusted-proxies): the dashboard's sign-in counts its failures in the
// admin API's limiter (Deps.AdminFailures), so that a guesser gets one allowance for the
// admin token, not one on each door.
type SignInLimiter struct{ f *FailureLimiter }

// NewSignInLimiter counts failed sign-ins in f, the admin API's failures.
func NewSignInLimiter(f *FailureLimiter) SignInLimiter { return SignInLimiter{f} }

// ClientAddr is the request's client address as the API resolves it (a trusted proxy's
// forwarded one, else the peer): the dashboard's audit entries name it.
func ClientAddr(r *http.Request) string { return clientAddr(r) }

// Blocked reports whether the request's address used up its allowance of failures.
func (l SignInLimiter) Blocked(r *http.Request) bool { return !l.f.Allow(clientAddr(r)) }

// Fail counts a failure of the request's address and reports whether it is now over.
func (l SignInLimiter) Fail(r *http.Request) bool { return !l.f.Fail(clientAddr(r)) }
