package rules

import (
	"errors"
	"io"
	"net"
	"strings"
	"syscall"
)

// ErrUnavailable is a storage that cannot be reached for now (answered 503, code 1925, with
// Retry-After): the same request may simply be sent again (a create is idempotent on its
// orderId). An engine wraps its errors with it; Unavailable also recognises the network's
// and the database server's own errors.
var ErrUnavailable = errors.New("storage unavailable")

// UnavailableRetryAfter is the Retry-After, in seconds, of an answer while the storage is
// out of reach.
const UnavailableRetryAfter = 2

// Unavailable reports whether err says the storage is out of reach rather than that the
// request or the data is wrong: ErrUnavailable, a network error (refused, reset, a time-out,
// a connection closed in the middle of an answer), or a database server shutting down,
// starting up or refusing connections (SQLSTATE classes 08 and 57P, 53300).
func Unavailable(err error) bool {
	if err == nil {
		return false
	}
	var netErr net.Error
	var state interface{ SQLState() string }
	// syscall.Errno has net.Error's methods: a full disk (ENOSPC) or an I/O error is not an
	// unreachable database, so a bare errno counts only when it is one of the network's below.
	if errors.As(err, &netErr) {
		if _, bare := netErr.(syscall.Errno); bare {
			netErr = nil
		}
	}
	switch {
	case errors.Is(err, ErrUnavailable), netErr != nil,
		errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return true
	case errors.As(err, &state):
		c := state.SQLState()
		return strings.HasPrefix(c, "08") || strings.HasPrefix(c, "57P") || c == "53300"
	}
	return false
}
