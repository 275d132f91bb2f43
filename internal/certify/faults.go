package certify

import (
	"net/http"

	"payouts/api"
	"payouts/rules"
)

// fault is one fault a client session injects: into which request, how, and whether the
// next fault waits for the client's answer to it (a resend, a retry).
type fault struct {
	Name   string
	Said   string // what the report says was done
	create bool   // into a create; else into a read
	awaits bool
	// retryAfter is the Retry-After of a 503 or 429, in seconds.
	retryAfter int
	inject     func(f *fault, w http.ResponseWriter, r *http.Request, next http.Handler, o *observed) bool
}

// Names of the faults, as the report's evidence names them.
const (
	FaultCut            = "create stored, connection cut"
	FaultUnavailable    = "503 with Retry-After"
	FaultRateLimited    = "429 with Retry-After"
	FaultBadSignature   = "401 bad signature"
	FaultSeveralErrors  = "400 with several errors"
	FaultStaleTimestamp = "401 timestamp outside the window"
)

// faultPlan is the order the faults come in: each into the first request it fits once the
// previous one was answered (and, for those that await, resent or retried).
var faultPlan = []fault{
	{Name: FaultCut, create: true, awaits: true,
		Said: "the create was served and its payout stored; then the connection was cut before any answer", inject: cut},
	{Name: FaultUnavailable, create: true, awaits: true, retryAfter: 2,
		Said: "answered 503 (code 1925) with Retry-After: 2 without serving it; nothing was stored", inject: refuse},
	{Name: FaultRateLimited, awaits: true, retryAfter: 1,
		Said: "answered 429 (code 2900) with Retry-After: 1 without serving it", inject: refuse},
	{Name: FaultBadSignature, create: true,
		Said: "answered 401 (code 1001) as if the signature did not match, without serving it; nothing was stored", inject: refuse},
	{Name: FaultSeveralErrors, create: true,
		Said: "answered 400 with two errors (1902 on amount, 1902 on beneficiary.document.type), without serving it; nothing was stored", inject: refuse},
	{Name: FaultStaleTimestamp,
		Said: "answered 401 (code 1001) as if the timestamp were outside the ±5 minute window, without serving it", inject: refuse},
}

// fits: the request is the kind the fault goes into.
func (f *fault) fits(o *observed) bool {
	if f.create {
		return o.isCreate()
	}
	return o.isRead()
}

// resolvedBy: o is the client's answer to the fault injected into first (the next request
// of the same kind), so the next fault may come.
func (f *fault) resolvedBy(first, o *observed) bool {
	return f.fits(o) && o.at.After(first.at)
}

// cut serves the create and, once it was stored (201), cuts the connection with no answer.
// A create the service refused was not stored: it is answered as it was, and not faulted.
func cut(f *fault, w http.ResponseWriter, r *http.Request, next http.Handler, o *observed) bool {
	b := &buffer{header: http.Header{}}
	next.ServeHTTP(b, r)
	if b.status != http.StatusCreated {
		for k, v := range b.header {
			w.Header()[k] = v
		}
		w.WriteHeader(max(b.status, http.StatusOK))
		w.Write(b.body.Bytes())
		return false
	}
	o.status, o.headers, o.answer = b.status, b.header, b.body.Bytes()
	// The server closes the connection without a byte of the answer: what a client sees
	// when a network drops the answer of a request that was done.
	panic(http.ErrAbortHandler)
}

// refuse answers the fault's error without serving the request.
func refuse(f *fault, w http.ResponseWriter, r *http.Request, _ http.Handler, o *observed) bool {
	var p *rules.Problem
	one := func(kind rules.Kind, code, msg string) *rules.Problem {
		return &rules.Problem{Kind: kind, Detail: msg, Errors: []*rules.Error{{Kind: kind, Code: code, Message: msg}}}
	}
	switch f.Name {
	case FaultUnavailable:
		p = one(rules.KindUnavailable, rules.CodeUnavailable, "the service cannot reach its database for now: send the same request again after Retry-After (a create is idempotent on its orderId); injected by the client certification session")
	case FaultRateLimited:
		p = one(rules.KindRateLimited, rules.CodeRateLimited, "rate limit of this merchant exceeded; injected by the client certification session")
	case FaultBadSignature:
		p = one(rules.KindUnauthorized, rules.CodeAuthentication, "the signature does not match, or the API key is not this merchant's; injected by the client certification session: do not send this request again unchanged")
	case FaultStaleTimestamp:
		p = one(rules.KindUnauthorized, rules.CodeAuthentication, "the timestamp is outside the window of ±5 minutes from the server's clock; injected by the client certification session: sign again with your clock's time, never resend the same signed URL")
	case FaultSeveralErrors:
		p = &rules.Problem{Kind: rules.KindInvalid, Title: "Missing or invalid data", Detail: "2 errors in the request; injected by the client certification session",
			Errors: []*rules.Error{
				{Kind: rules.KindInvalid, Code: rules.CodeWrongType, Field: "amount", Message: "must be an integer of minor units (injected)"},
				{Kind: rules.KindInvalid, Code: rules.CodeWrongType, Field: "beneficiary.document.type", Message: "must be a number (injected)"},
			}}
	}
	rec := &recorder{ResponseWriter: w}
	api.WriteProblem(rec, p, f.retryAfter)
	o.status, o.headers, o.answer = rec.status, rec.Header().Clone(), rec.head.Bytes()
	return true
}
