package rules

import (
	"errors"
	"strings"
)

// Why a delivery failed reaches the merchant (the event log's attempts, the dashboard's
// deliveries) as a class — name not found, connection refused, timed out, TLS, HTTP status
// N — never as the network error itself, which names the service's resolver, its addresses
// or its mail server ("lookup x on 10.255.255.53:53: no such host"). The full error goes to
// the server's own log only.

// The classes of a delivery that did not reach its receiver.
const (
	FailureNameNotFound   = "name not found"
	FailureNameLookup     = "name lookup failed"
	FailureRefused        = "connection refused"
	FailureReset          = "connection reset"
	FailureUnreachable    = "network unreachable"
	FailureTimedOut       = "timed out"
	FailureTLS            = "TLS handshake failed"
	FailureTLSUntrusted   = "TLS: certificate not trusted"
	FailureTLSName        = "TLS: certificate for another name"
	FailureTLSExpired     = "TLS: certificate expired or not yet valid"
	FailureNotPublic      = "not a public address (private, loopback, link-local or unspecified)"
	FailureShuttingDown   = "cancelled: the service was stopping"
	FailureConnection     = "connection failed"
	failureInsideService  = "the attempt failed inside the service (its log has the cause)"
	legacyNotificationURL = "POST to the notificationUrl of merchant "
	legacySandboxInbox    = "the sandbox inbox of merchant "
	legacySMTP            = "smtp "
)

// DeliveryFailure is a failed delivery in its two forms: Public, what the merchant reads,
// and Err, the full error for the server's log (nil when Public says it all). Error() is
// both, so that whatever logs the error logs all of it.
type DeliveryFailure struct {
	Public string
	Err    error
}

func (f *DeliveryFailure) Error() string {
	if f.Err == nil {
		return f.Public
	}
	return f.Public + ": " + f.Err.Error()
}

func (f *DeliveryFailure) Unwrap() error { return f.Err }

// PublicDeliveryError is what a merchant may read of a failed attempt: a DeliveryFailure's
// Public, a Permanent failure's own words (the service's sentences: the payout is gone, the
// address is malformed), and otherwise a sentence that points to the server's log — an
// error of another kind may be the store's or the resolver's, with their addresses.
func PublicDeliveryError(err error) string {
	var f *DeliveryFailure
	switch {
	case err == nil:
		return ""
	case errors.As(err, &f):
		return f.Public
	case IsPermanent(err):
		return err.Error()
	}
	return failureInsideService
}

// PublicAttemptError is what a merchant reads of a stored attempt's error (or an event's last
// error). What the service stores now is already public; an error stored before it kept the
// network's own words ("POST to the notificationUrl of merchant 7: dial tcp: lookup … on
// 10.255.255.53:53: no such host"), and is shown as its class.
func PublicAttemptError(stored string) string {
	switch {
	case strings.HasPrefix(stored, legacyNotificationURL):
		merchant, raw, _ := strings.Cut(stored[len(legacyNotificationURL):], ": ")
		return "the notificationUrl of merchant " + merchant + " could not be reached: " + legacyFailureClass(raw)
	case strings.HasPrefix(stored, legacySandboxInbox):
		merchant, _, _ := strings.Cut(stored[len(legacySandboxInbox):], ": ")
		return "the sandbox inbox of merchant " + merchant + " could not keep it"
	case strings.HasPrefix(stored, legacySMTP) && strings.Contains(stored, ": "):
		_, raw, _ := strings.Cut(stored, ": ")
		return "the mail server could not be reached: " + legacyFailureClass(raw)
	}
	return stored
}

// legacyFailureClass reads the class of a network error from its text (Go's wording).
func legacyFailureClass(raw string) string {
	for _, c := range []struct{ in, class string }{
		{"no such host", FailureNameNotFound},
		{"private, loopback, link-local", FailureNotPublic},
		{"connection refused", FailureRefused},
		{"connection reset", FailureReset},
		{"network is unreachable", FailureUnreachable},
		{"no route to host", FailureUnreachable},
		{"timeout", FailureTimedOut},
		{"deadline exceeded", FailureTimedOut},
		{"certificate signed by unknown authority", FailureTLSUntrusted},
		{"certificate is valid for", FailureTLSName},
		{"certificate has expired or is not yet valid", FailureTLSExpired},
		{"tls:", FailureTLS},
		{"x509:", FailureTLS},
		{"lookup ", FailureNameLookup},
		{"context canceled", FailureShuttingDown},
	} {
		if strings.Contains(raw, c.in) {
			return c.class
		}
	}
	return FailureConnection
}
