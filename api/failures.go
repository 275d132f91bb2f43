package api

import "net/http"

// SignInLimiter is a FailureLimiter keyed by the request's client address (the forwarded
// one only through --trusted-proxies), with the allowance of the signed API (about 20
// failures a minute): the dashboard's sign-in uses it.
type SignInLimiter struct{ f *FailureLimiter }

// NewSignInLimiter makes a limiter of failed sign-ins.
func NewSignInLimiter() SignInLimiter { return SignInLimiter{NewFailureLimiter(20)} }

// Blocked reports whether the request's address used up its allowance of failures.
func (l SignInLimiter) Blocked(r *http.Request) bool { return !l.f.Allow(clientAddr(r)) }

// Fail counts a failure of the request's address and reports whether it is now over.
func (l SignInLimiter) Fail(r *http.Request) bool { return !l.f.Fail(clientAddr(r)) }
