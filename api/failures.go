package api

import "net/http"

// FailureLimiter counts failed sign-ins per client address with the allowance of the signed
// API's failed authentications (about 20 a minute); the dashboard's login uses its own.
type FailureLimiter struct{ l *addrLimiter }

// NewFailureLimiter makes a limiter of failed sign-ins.
func NewFailureLimiter() *FailureLimiter { return &FailureLimiter{newAddrLimiter(20)} }

// Blocked reports whether the request's address used up its allowance of failures.
func (f *FailureLimiter) Blocked(r *http.Request) bool { return f.l.blocked(clientAddr(r)) }

// Fail counts a failure of the request's address and reports whether it is now over.
func (f *FailureLimiter) Fail(r *http.Request) bool { return f.l.fail(clientAddr(r)) }
