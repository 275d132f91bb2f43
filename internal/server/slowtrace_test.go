package server

import (
	"bytes"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSlowTraces: a request over the bound has the recorder's window written to a file named
// after its route and duration; one within the bound, or within a window of the last file,
// writes none.
func TestSlowTraces(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "slow")
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	s, err := startSlowTraces(dir, 25*time.Millisecond, []string{"GET /api/v1/{merchantId}/events/stream"}, func() time.Time { return now }, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer s.stop()
	files := func() []string {
		t.Helper()
		es, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range es {
			names = append(names, e.Name())
		}
		return names
	}
	waitWritten := func() {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for s.writing.Load() {
			if time.Now().After(deadline) {
				t.Fatal("the trace was not written within 30 s")
			}
			time.Sleep(time.Millisecond) // polling the writer's flag: what is awaited is the write
		}
	}

	s.observe("POST /api/v1/{merchantId}/payouts", 200, 25*time.Millisecond)
	s.observe("GET /api/v1/{merchantId}/events/stream", 200, time.Hour)
	waitWritten()
	if got := files(); len(got) != 0 {
		t.Fatalf("a request of exactly the bound, or an event stream that ended, wrote %v", got)
	}
	s.observe("POST /api/v1/{merchantId}/payouts", 200, 40*time.Millisecond)
	waitWritten()
	got := files()
	if len(got) != 1 || got[0] != "slow-20261202T100000.000-POST-api-v1-merchantId-payouts-40ms.trace" {
		t.Fatalf("files %v, want one named after the time, the route and the duration", got)
	}
	raw, err := os.ReadFile(filepath.Join(dir, got[0]))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(raw, []byte("go 1.")) || !strings.Contains(string(raw[:16]), " trace") {
		t.Fatalf("not an execution trace: %q", raw[:min(len(raw), 16)])
	}

	now = now.Add(slowTraceWindow / 2)
	s.observe("GET /api/v1/{merchantId}/payouts/{id}", 200, time.Second)
	waitWritten()
	if got := files(); len(got) != 1 {
		t.Fatalf("a slow request within the window of the last file wrote another: %v", got)
	}
	now = now.Add(slowTraceWindow)
	s.observe("GET /api/v1/{merchantId}/payouts/{id}", 200, time.Second)
	waitWritten()
	if got := files(); len(got) != 2 {
		t.Fatalf("a slow request a window later wrote no file: %v", got)
	}
}
