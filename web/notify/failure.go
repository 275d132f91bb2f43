package notify

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/textproto"
	"os"
	"strconv"
	"strings"
	"syscall"

	gomail "github.com/wneessen/go-mail"

	"payouts/rules"
)

// failureClass names the class of a failed connection (rules.Failure…) from the error's
// type, never from its text: the text is for the server's log, with the addresses in it.
func failureClass(err error) string {
	var dns *net.DNSError
	var unknownCA x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	var record tls.RecordHeaderError
	var alert tls.AlertError
	var netErr net.Error
	switch {
	case errors.Is(err, ErrPrivateAddress):
		return rules.FailureNotPublic
	case errors.As(err, &dns):
		switch {
		case dns.IsNotFound:
			return rules.FailureNameNotFound
		case dns.IsTimeout:
			return rules.FailureTimedOut
		}
		return rules.FailureNameLookup
	case errors.Is(err, syscall.ECONNREFUSED):
		return rules.FailureRefused
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return rules.FailureReset
	case errors.Is(err, syscall.ENETUNREACH), errors.Is(err, syscall.EHOSTUNREACH):
		return rules.FailureUnreachable
	case errors.As(err, &unknownCA):
		return rules.FailureTLSUntrusted
	case errors.As(err, &hostname):
		return rules.FailureTLSName
	case errors.As(err, &invalid) && invalid.Reason == x509.Expired:
		return rules.FailureTLSExpired
	case errors.As(err, &verify), errors.As(err, &invalid), errors.As(err, &record), errors.As(err, &alert):
		return rules.FailureTLS
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded),
		errors.As(err, &netErr) && netErr.Timeout():
		return rules.FailureTimedOut
	case errors.Is(err, context.Canceled):
		return rules.FailureShuttingDown
	case strings.HasPrefix(err.Error(), "tls: "):
		// crypto/tls reports most handshake failures as plain errors ("tls: handshake
		// failure", "tls: first record does not look like a TLS handshake").
		return rules.FailureTLS
	}
	return rules.FailureConnection
}

// unreached is a delivery that did not reach what (the notificationUrl of merchant 7, the
// mail server): its class for the merchant, the whole error for the log.
func unreached(what string, err error) error {
	return &rules.DeliveryFailure{Public: what + " could not be reached: " + failureClass(err), Err: err}
}

// smtpFailure is a failed SMTP send: the mail server's reply code when it answered one (a
// refusal), the class of the connection's failure otherwise.
func smtpFailure(err error) error {
	var send *gomail.SendError
	var reply *textproto.Error
	code := 0
	switch {
	case errors.As(err, &send) && send.ErrorCode() > 0:
		code = send.ErrorCode()
	case errors.As(err, &reply):
		code = reply.Code
	}
	if code > 0 {
		return &rules.DeliveryFailure{Public: "the mail server refused it: SMTP " + strconv.Itoa(code), Err: err}
	}
	return unreached("the mail server", err)
}
