package rules_test

import (
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"payouts/rules"
)

// sqlStateError is a database server's error as a driver reports it.
type sqlStateError string

func (e sqlStateError) Error() string    { return "server error " + string(e) }
func (e sqlStateError) SQLState() string { return string(e) }

func TestUnavailableTellsAnOutageFromABadRequest(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"wrapped ErrUnavailable", fmt.Errorf("store: x: %w", rules.ErrUnavailable), true},
		{"connection refused", fmt.Errorf("connect: %w", refused), true},
		{"connection reset", fmt.Errorf("read: %w", syscall.ECONNRESET), true},
		{"an answer cut short", fmt.Errorf("receive: %w", io.ErrUnexpectedEOF), true},
		{"08006 connection failure", sqlStateError("08006"), true},
		{"57P01 admin shutdown", sqlStateError("57P01"), true},
		{"57P03 cannot connect now", sqlStateError("57P03"), true},
		{"53300 too many connections", sqlStateError("53300"), true},
		{"23505 unique violation", sqlStateError("23505"), false},
		{"not found", rules.ErrNotFound, false},
		{"the ledger", rules.ErrLedger, false},
		{"any other", errors.New("boom"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := rules.Unavailable(tc.err); got != tc.want {
				t.Errorf("Unavailable(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}

func TestUnavailableIsNotAFullDisk(t *testing.T) {
	for _, err := range []error{
		fmt.Errorf("write payouts.db: %w", syscall.ENOSPC),
		fmt.Errorf("read payouts.db: %w", syscall.EIO),
	} {
		if rules.Unavailable(err) {
			t.Errorf("Unavailable(%v) = true: a storage failure on this machine is not a database out of reach", err)
		}
	}
	if !rules.Unavailable(fmt.Errorf("dial: %w", syscall.ECONNREFUSED)) {
		t.Error("a refused connection is unavailable")
	}
}
