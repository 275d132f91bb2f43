// Package freeport hands out TCP ports of 127.0.0.1 to give a process that binds them
// itself: a server or a test peer started with the port in its flags or configuration.
//
// A port is free when handed out, and one process is never handed the same port twice. The
// kernel gives a port it has just freed to the next bind of port 0 now and then (about one
// group of five asks in six hundred held a repeat on the machines here), so two ports asked
// for together, such as an ACME server's directory and management ports, would otherwise
// now and then be one, and the second process to bind it would fail.
//
// Ports are chosen below the kernel's ephemeral range, never by binding port 0. A port in
// that range is also the local port the kernel picks for an outgoing connection: a test
// that connects to PostgreSQL many times while a server starts could have one of its
// connections take the server's port in the moment between its hand-out and the server's
// bind, and the server would fail with "address already in use".
package freeport

import (
	"errors"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// given is every port handed out by this process.
var given sync.Map

// Port is a port of 127.0.0.1 that nothing listened on a moment ago, that this process
// was not handed before, and that the kernel never gives an outgoing connection.
func Port() (int, error) {
	lo, hi := ports()
	for range 4 * (hi - lo) {
		port := lo + rand.IntN(hi-lo)
		if _, repeat := given.LoadOrStore(port, true); repeat {
			continue
		}
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			// In use (another process, or a server of this one): it stays in given, as it
			// is no better later.
			continue
		}
		ln.Close()
		return port, nil
	}
	return 0, errors.New("freeport: no free port below the ephemeral range")
}

// ports is the range Port chooses from, [lo, hi): up to 16,384 ports just below the
// ephemeral range, and above the well-known ports and the registered ones most used
// (PostgreSQL's 5432, 8080).
func ports() (lo, hi int) {
	// 32768 where the range cannot be read: the low end of Linux's default, under the
	// 49152 of macOS and the BSDs.
	hi = 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil {
				hi = n
			}
		}
	}
	lo = max(hi-16384, 10000)
	if hi-lo < 1024 {
		// An ephemeral range that starts this low leaves nothing below it worth searching.
		lo, hi = 10000, 11024
	}
	return lo, hi
}

// Addr is "127.0.0.1:port" for a Port.
func Addr() (string, error) {
	port, err := Port()
	if err != nil {
		return "", err
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), nil
}

// Refusing is an address of 127.0.0.1 that refuses every connection until release is called.
// Its port is bound and never listens: a port only closed could be taken at once by the next
// server to bind port 0, in this process or another, and a connection meant to be refused
// would reach that server instead.
func Refusing() (addr string, release func(), err error) {
	// Under ForkLock, as the net package makes sockets where SOCK_CLOEXEC is missing
	// (macOS): no process started meanwhile inherits the socket.
	syscall.ForkLock.RLock()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(fd)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return "", nil, err
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		syscall.Close(fd)
		return "", nil, err
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		syscall.Close(fd)
		return "", nil, err
	}
	port := sa.(*syscall.SockaddrInet4).Port
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), func() { syscall.Close(fd) }, nil
}
