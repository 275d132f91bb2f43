package sandbox_test

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"payouts/rules"
	"payouts/rules/sandbox"
)

// heldClockStore keeps the clock as a store would, one change at a time, and holds each
// change's answer until the test lets it go: answers come back in the order the test picks.
type heldClockStore struct {
	mu      sync.Mutex // the test store's own transaction
	st      rules.ClockState
	written chan held // each change, once written
}

// held is a change written and not yet answered: closing release answers it.
type held struct {
	st      rules.ClockState
	release chan struct{}
}

func (s *heldClockStore) SandboxClockOffset(ctx context.Context) (time.Duration, error) {
	st, err := s.SandboxClock(ctx)
	return st.Offset, err
}

func (s *heldClockStore) SandboxClock(context.Context) (rules.ClockState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st, nil
}

func (s *heldClockStore) PutSandboxClockOffset(ctx context.Context, off time.Duration) error {
	_, err := s.ChangeSandboxClock(ctx, func(time.Duration) (time.Duration, error) { return off, nil })
	return err
}

func (s *heldClockStore) ChangeSandboxClock(_ context.Context, change func(time.Duration) (time.Duration, error)) (rules.ClockState, error) {
	s.mu.Lock()
	off, err := change(s.st.Offset)
	if err != nil {
		s.mu.Unlock()
		return rules.ClockState{}, err
	}
	s.st = rules.ClockState{Offset: off, Gen: s.st.Gen + 1}
	h := held{st: s.st, release: make(chan struct{})}
	s.mu.Unlock()
	s.written <- h
	<-h.release
	return h.st, nil
}

// Changes whose answers come back in the other order than they were written leave the
// clock at the later one: an advance answered late never moves it back, nor undoes a reset
// written after it, and a Sync that read the store before a change is not taken over it.
func TestClockNeverMovesBackOnAnswersOutOfOrder(t *testing.T) {
	real := time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC)
	s := &heldClockStore{written: make(chan held)}
	c, err := sandbox.NewClock(context.Background(), func() time.Time { return real }, s)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	start := func(f func(context.Context) error) held {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f(context.Background()); err != nil {
				t.Error(err)
			}
		}()
		return <-s.written
	}
	advance := func(d time.Duration) func(context.Context) error {
		return func(ctx context.Context) error { return c.Advance(ctx, d) }
	}
	first := start(advance(time.Hour))  // written first: 1h
	second := start(advance(time.Hour)) // written second: 2h
	close(second.release)
	for c.Offset() != 2*time.Hour {
		runtime.Gosched()
	}
	stale, _ := s.SandboxClock(context.Background())
	close(first.release)
	wg.Wait()
	if first.st.Offset != time.Hour || second.st.Offset != 2*time.Hour || c.Offset() != 2*time.Hour {
		t.Fatalf("written %v then %v, answered in the other order: the clock at %v, want 2h", first.st.Offset, second.st.Offset, c.Offset())
	}
	late := start(advance(time.Hour)) // 3h
	reset := start(c.Reset)           // 0, written after it
	close(reset.release)
	for c.Offset() != 0 {
		runtime.Gosched()
	}
	close(late.release)
	wg.Wait()
	if late.st.Offset != 3*time.Hour || reset.st.Offset != 0 || c.Offset() != 0 {
		t.Fatalf("an advance to %v answered after a reset written after it: the clock at %v, want 0", late.st.Offset, c.Offset())
	}
	// A Sync that read the store before those changes is older than them.
	s.mu.Lock()
	now := s.st
	s.st = stale
	s.mu.Unlock()
	if err := c.Sync(context.Background()); err != nil || c.Offset() != 0 {
		t.Fatalf("a stale read of %v synced: the clock at %v (%v), want 0", stale.Offset, c.Offset(), err)
	}
	s.mu.Lock()
	s.st = now
	s.mu.Unlock()
	if !c.Now().Equal(real) {
		t.Errorf("Now %v, want real time", c.Now())
	}
}
