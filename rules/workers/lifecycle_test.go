package workers_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"payouts/rules"
	"payouts/rules/workers"
)

// backlogStore is a queue of n due payouts that are never anyone's business but the test's:
// Due hands out up to limit of what is left, UpdatePayouts takes a while and counts how many
// rounds write at once.
type backlogStore struct {
	rules.LifecycleStore // not called
	mu                   sync.Mutex
	left                 int
	next                 int64
	writing, most        atomic.Int32
	rounds               atomic.Int32
}

func (s *backlogStore) DueRead(ctx context.Context, now time.Time, limit int) ([]rules.DueEntry, map[int64]*rules.Payout, error) {
	due, err := s.Due(ctx, now, limit)
	return due, nil, err
}

func (s *backlogStore) Due(ctx context.Context, now time.Time, limit int) ([]rules.DueEntry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var due []rules.DueEntry
	for ; s.left > 0 && len(due) < limit; s.left-- {
		s.next++
		due = append(due, rules.DueEntry{ID: s.next, Status: rules.StatusAuthorized})
	}
	return due, nil
}

func (s *backlogStore) NextDue(ctx context.Context) (time.Time, error) { return time.Time{}, nil }
func (s *backlogStore) PayoutsByID(ctx context.Context, ids []int64) ([]*rules.Payout, error) {
	return nil, nil
}
func (s *backlogStore) UpdatePayouts(ctx context.Context, ids []int64, step rules.Step) error {
	s.rounds.Add(1)
	n := s.writing.Add(1)
	defer s.writing.Add(-1)
	for m := s.most.Load(); n > m && !s.most.CompareAndSwap(m, n); m = s.most.Load() {
	}
	time.Sleep(20 * time.Millisecond) // a round's round trips
	return nil
}

// While a backlog lasts (rounds take full batches), Workers rounds run at once; once it is
// gone, one at a time again. One worker never overlaps itself.
func TestLifecycleWorkersWorkABacklogTogether(t *testing.T) {
	for _, n := range []int{1, 2} {
		s := &backlogStore{left: 20 * 10}
		lc := &workers.Lifecycle{Lifecycle: &rules.Lifecycle{Store: s, Now: time.Now}, BatchSize: 10, Workers: n}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { lc.Run(ctx); close(done) }()
		deadline := time.Now().Add(10 * time.Second)
		for s.rounds.Load() < 20 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
		<-done // Run returns only once its helpers did
		if got := s.rounds.Load(); got < 20 {
			t.Fatalf("workers %d: %d rounds of the backlog of 20", n, got)
		}
		if got := s.most.Load(); int(got) != n {
			t.Errorf("workers %d: at most %d rounds at once, want %d", n, got, n)
		}
	}
}

// kickStore has one payout due at every round, and a create arriving during each round
// when kicks is set (it kicks the lifecycle, as the service does).
type kickStore struct {
	rules.LifecycleStore // not called
	lc                   *workers.Lifecycle
	kicks                bool
	rounds, nextDue      atomic.Int32
}

func (s *kickStore) DueRead(ctx context.Context, now time.Time, limit int) ([]rules.DueEntry, map[int64]*rules.Payout, error) {
	due, err := s.Due(ctx, now, limit)
	return due, nil, err
}

func (s *kickStore) Due(ctx context.Context, now time.Time, limit int) ([]rules.DueEntry, error) {
	return []rules.DueEntry{{ID: int64(s.rounds.Load() + 1), Status: rules.StatusAuthorized}}, nil
}
func (s *kickStore) NextDue(ctx context.Context) (time.Time, error) {
	s.nextDue.Add(1)
	return time.Time{}, nil
}
func (s *kickStore) PayoutsByID(ctx context.Context, ids []int64) ([]*rules.Payout, error) {
	return nil, nil
}
func (s *kickStore) UpdatePayouts(ctx context.Context, ids []int64, step rules.Step) error {
	s.rounds.Add(1)
	if s.kicks {
		s.lc.Kick()
	}
	return nil
}

// A round after which the worker was kicked is followed by the next one after the gather
// window, without asking the store when the next payout is due (a walk of its queue index);
// without a kick the worker asks, to know how long to sleep.
func TestLifecycleKickedDoesNotAskNextDue(t *testing.T) {
	for _, kicks := range []bool{true, false} {
		s := &kickStore{kicks: kicks}
		lc := &workers.Lifecycle{Lifecycle: &rules.Lifecycle{Store: s, Now: time.Now}}
		s.lc = lc
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { lc.Run(ctx); close(done) }()
		want := int32(5)
		if !kicks {
			want = 2 // a second apart
		}
		deadline := time.Now().Add(5 * time.Second)
		for s.rounds.Load() < want && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
		<-done
		switch rounds, asked := s.rounds.Load(), s.nextDue.Load(); {
		case kicks && (rounds < 5 || asked != 0):
			t.Errorf("kicked: %d rounds in 5 s, NextDue asked %d times; want 5 and none", rounds, asked)
		case !kicks && asked == 0:
			t.Errorf("not kicked: %d rounds and NextDue never asked", rounds)
		}
	}
}
