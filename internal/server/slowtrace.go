package server

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"runtime/trace"
	"strings"
	"sync/atomic"
	"time"
)

// slowTraces keeps the last second of the runtime's execution trace in memory (Go's flight
// recorder) and writes it to a file when a request takes longer than a bound. The cause of a
// rare slow request (a collection, the database file's growth, a lock, the disk's fsync) is
// in the moments before it ends: a trace started afterwards, or a minute's trace searched by
// hand, misses it or drowns it. Off unless --slow-trace names a directory: recording costs
// the server a few percent of its CPU.
type slowTraces struct {
	fr   *trace.FlightRecorder
	dir  string
	over time.Duration
	// skip are the routes whose requests last as long as their client follows them (the
	// event stream): their durations say nothing of the server's speed.
	skip map[string]bool
	now  func() time.Time
	log  *slog.Logger

	writing atomic.Bool  // one snapshot at a time: the recorder writes one at a time
	next    atomic.Int64 // unix nanoseconds before which no snapshot is taken
	written atomic.Int64
}

// The recorder's window, and how often and how many snapshots it writes: a window apart, so
// that consecutive files do not repeat each other, and a bounded number per run, so that a
// server slow for an hour does not fill its disk.
const (
	slowTraceWindow   = time.Second
	slowTraceMaxBytes = 16 << 20
	slowTraceMaxFiles = 100
)

// startSlowTraces starts the flight recorder for dir, which it creates (0700).
func startSlowTraces(dir string, over time.Duration, skip []string, now func() time.Time, logger *slog.Logger) (*slowTraces, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("--slow-trace: %w", err)
	}
	fr := trace.NewFlightRecorder(trace.FlightRecorderConfig{MinAge: slowTraceWindow, MaxBytes: slowTraceMaxBytes})
	if err := fr.Start(); err != nil {
		// One recorder per process: a second server in the same process (tests) records nothing.
		return nil, fmt.Errorf("--slow-trace: %w", err)
	}
	logger.Info("slow requests traced", "dir", dir, "over", over.String())
	st := &slowTraces{fr: fr, dir: dir, over: over, skip: map[string]bool{}, now: now, log: logger}
	for _, r := range skip {
		st.skip[r] = true
	}
	return st, nil
}

// observe is told of every finished request; one over the bound has the trace of the window
// before its end written, in the background: the request is answered already, and a
// snapshot takes some milliseconds.
func (s *slowTraces) observe(route string, status int, d time.Duration) {
	if d <= s.over || s.skip[route] {
		return
	}
	at := s.now()
	if at.UnixNano() < s.next.Load() || s.written.Load() >= slowTraceMaxFiles || !s.writing.CompareAndSwap(false, true) {
		return
	}
	s.next.Store(at.Add(slowTraceWindow).UnixNano())
	n := s.written.Add(1)
	go func() {
		defer s.writing.Store(false)
		name := filepath.Join(s.dir, fmt.Sprintf("slow-%s-%s-%dms.trace", at.UTC().Format("20060102T150405.000"),
			fileWord(route), d.Milliseconds()))
		if err := s.write(name); err != nil {
			s.log.Warn("slow request: its trace was not written", "route", route, "duration", d, "err", err)
			return
		}
		s.log.Info("slow request traced", "route", route, "status", status, "duration", d, "file", name)
		if n == slowTraceMaxFiles {
			s.log.Warn("slow requests: the last trace this run writes", "files", n)
		}
	}()
}

func (s *slowTraces) write(name string) error {
	f, err := os.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := s.fr.WriteTo(f); err != nil {
		f.Close()
		os.Remove(name)
		return err
	}
	return f.Close()
}

func (s *slowTraces) stop() { s.fr.Stop() }

var notFileWord = regexp.MustCompile(`[^A-Za-z0-9]+`)

// fileWord makes a route ("POST /api/v1/{merchantId}/payouts") part of a file name
// ("POST-api-v1-merchantId-payouts").
func fileWord(route string) string {
	w := notFileWord.ReplaceAllString(route, "-")
	if len(w) > 60 {
		w = w[:60]
	}
	return strings.Trim(w, "-")
}
