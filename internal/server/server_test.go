package server

import (
	"context"
	"errors"
	"net"
	"slices"
	"testing"
	"time"
)

func TestReachableBase(t *testing.T) {
	cases := map[string]string{"0.0.0.0:8080": "http://127.0.0.1:8080", "[::]:9000": "http://127.0.0.1:9000", "127.0.0.1:8080": "http://127.0.0.1:8080"}
	for addr, want := range cases {
		a, _ := net.ResolveTCPAddr("tcp", addr)
		if got := reachableBase(a); got != want {
			t.Errorf("reachableBase(%s) = %s, want %s", addr, got, want)
		}
	}
}

// Run's closers close in reverse order, once; under the drain's deadline one that hangs is
// left running and named, and those after it still close.
func TestClosersUnwindOnceInReverseWithinTheDrain(t *testing.T) {
	var closed []string
	note := func(name string) func(context.Context) error {
		return func(context.Context) error { closed = append(closed, name); return nil }
	}
	var cs closers
	cs.push("", note("listener"))
	cs.push("the database", note("database"))
	cs.push("the requests", note("requests"))
	if abandoned := cs.unwind(context.Background()); abandoned != nil {
		t.Errorf("abandoned %v without a deadline", abandoned)
	}
	cs.unwind(context.Background())
	if want := []string{"requests", "database", "listener"}; !slices.Equal(closed, want) {
		t.Fatalf("closed %v, want %v once", closed, want)
	}

	closed = nil
	hang := make(chan struct{})
	defer close(hang)
	cs.push("", note("listener"))
	cs.push("the database, not closed", func(context.Context) error { <-hang; return nil })
	cs.push("the workers", note("workers"))
	cs.push("requests still running", func(context.Context) error { closed = append(closed, "requests"); return errors.New("deadline") })
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	abandoned := cs.unwind(ctx)
	if want := []string{"requests still running", "the database, not closed"}; !slices.Equal(abandoned, want) {
		t.Errorf("abandoned %v, want %v", abandoned, want)
	}
	if want := []string{"requests", "workers", "listener"}; !slices.Equal(closed, want) {
		t.Errorf("closed %v, want %v", closed, want)
	}
}
