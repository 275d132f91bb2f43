// Command latproxy is a TCP proxy that delays every chunk of bytes, in each direction, by a
// fixed time, so that a database on this machine answers as one on another machine would (a
// round trip costs 2×delay, plus about 0.1 ms for the proxy's own two hops: at 250us, pgbench
// measures 0.67 ms a select 1 against 0.03 ms direct). Order is kept; throughput is not
// limited.
//
//	latproxy -listen 127.0.0.1:6543 -to 127.0.0.1:5432 -delay 250us
package main

import (
	"flag"
	"io"
	"log"
	"net"
	"runtime"
	"syscall"
	"time"
)

type chunk struct {
	at   time.Time
	data []byte
}

// waitUntil returns at t, within the thread's timer slack. A Go timer shorter
// than a millisecond fires after a millisecond or more when the process is otherwise idle (the
// runtime's poller waits in whole milliseconds), which turned a 250 µs delay into 1–2 ms; a
// nanosleep system call blocks this goroutine's thread on a high-resolution timer instead,
// and spends no processor time while it waits.
func waitUntil(t time.Time) {
	d := time.Until(t)
	if d <= 0 {
		return
	}
	ts := syscall.NsecToTimespec(int64(d))
	for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
	}
}

func pipe(dst, src net.Conn, delay time.Duration) {
	q := make(chan chunk, 4096)
	go func() {
		defer close(q)
		for {
			buf := make([]byte, 64<<10)
			n, err := src.Read(buf)
			if n > 0 {
				q <- chunk{time.Now().Add(delay), buf[:n]}
			}
			if err != nil {
				return
			}
		}
	}()
	// this goroutine waits on its own thread, with the timer slack at 1 µs (PR_SET_TIMERSLACK)
	runtime.LockOSThread()
	syscall.RawSyscall(syscall.SYS_PRCTL, 29 /* PR_SET_TIMERSLACK */, 1000, 0)
	for c := range q {
		waitUntil(c.at)
		if _, err := dst.Write(c.data); err != nil {
			break
		}
	}
	if tc, ok := dst.(*net.TCPConn); ok {
		tc.CloseWrite()
	}
	io.Copy(io.Discard, src)
}

func main() {
	listen := flag.String("listen", "127.0.0.1:6543", "address to listen on")
	to := flag.String("to", "127.0.0.1:5432", "address to forward to")
	delay := flag.Duration("delay", 250*time.Microsecond, "one-way delay added to each direction")
	flag.Parse()
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			log.Fatal(err)
		}
		go func(c net.Conn) {
			defer c.Close()
			u, err := net.Dial("tcp", *to)
			if err != nil {
				return
			}
			defer u.Close()
			done := make(chan struct{})
			go func() { pipe(u, c, *delay); close(done) }()
			pipe(c, u, *delay)
			<-done
		}(c)
	}
}
