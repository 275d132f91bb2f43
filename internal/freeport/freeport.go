// Package freeport hands out TCP ports of 127.0.0.1 to give a process that binds them
// itself: a server or a test peer started with the port in its flags or configuration.
//
// A port is free when handed out, and one process is never handed the same port twice. The
// kernel gives a port it has just freed to the next bind of port 0 now and then (about one
// group of five asks in six hundred held a repeat on the machines here), so two ports asked
// for together, such as an ACME server's directory and management ports, would otherwise
// now and then be one, and the second process to bind it would fail.
package freeport

import (
	"net"
	"strconv"
	"sync"
	"syscall"
)

// given is every port handed out by this process.
var given sync.Map

// Port is a port of 127.0.0.1 that nothing listened on a moment ago and that this process
// was not handed before.
func Port() (int, error) {
	for {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		if _, repeat := given.LoadOrStore(port, true); !repeat {
			return port, nil
		}
	}
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
