package postgres

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/alexedwards/scs/v2"

	"payouts/rules"
)

var (
	_ rules.SessionStore = (*SessionStore)(nil)
	_ scs.IterableStore  = (*SessionStore)(nil)
)

// sessionClock is the sessions' injected clock, moved by the tests.
type sessionClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *sessionClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *sessionClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// The sessions expire by the injected clock: it is far from the database's here.
func TestSessionStoreFindCommitDeleteExpiry(t *testing.T) {
	clock := &sessionClock{t: time.Date(2036, 11, 21, 15, 0, 0, 0, time.UTC)}
	s := openRest(t).Sessions(clock.Now)

	if _, found, err := s.Find("nope"); found || err != nil {
		t.Fatalf("unknown token: found %v err %v", found, err)
	}
	if err := s.Commit("a", []byte("data-a"), clock.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	s.Commit("b", []byte("data-b"), clock.Now().Add(time.Hour))
	b, found, err := s.Find("a")
	if err != nil || !found || string(b) != "data-a" {
		t.Fatalf("find a: %q %v %v", b, found, err)
	}
	b[0] = 'X' // the bytes are the caller's
	s.Commit("c", []byte("more"), clock.Now().Add(time.Hour))
	if again, _, _ := s.Find("a"); string(again) != "data-a" {
		t.Fatalf("stored data changed through a returned slice: %q", again)
	}
	// Commit replaces data and expiry.
	s.Commit("b", []byte("data-b2"), clock.Now().Add(2*time.Hour))
	if got, _, _ := s.Find("b"); string(got) != "data-b2" {
		t.Errorf("replaced: %q", got)
	}
	all, err := s.All()
	if err != nil || len(all) != 3 || string(all["a"]) != "data-a" {
		t.Errorf("all: %v %v", all, err)
	}

	clock.Add(time.Minute) // a expires exactly now
	if _, found, _ := s.Find("a"); found {
		t.Errorf("an expired session is found")
	}
	if all, _ := s.All(); len(all) != 2 {
		t.Errorf("all after expiry: %d sessions", len(all))
	}
	if err := s.Delete("b"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete("b"); err != nil {
		t.Errorf("deleting an unknown token: %v", err)
	}
	if _, found, _ := s.Find("b"); found {
		t.Errorf("a deleted session is found")
	}
}

func TestSessionStoreCleanupAndBindings(t *testing.T) {
	clock := &sessionClock{t: time.Date(2016, 11, 21, 15, 0, 0, 0, time.UTC)}
	s := openRest(t).Sessions(clock.Now)
	s.Commit("short", []byte("1"), clock.Now().Add(time.Minute))
	s.Commit("long", []byte("2"), clock.Now().Add(time.Hour))
	s.BindCardSession(41, "sid-short", clock.Now().Add(time.Minute))
	s.BindCardSession(42, "sid-long", clock.Now().Add(time.Hour))
	if sid, _ := s.CardSession(41); sid != "sid-short" {
		t.Fatalf("binding: %q", sid)
	}
	s.BindCardSession(41, "sid-new", clock.Now().Add(time.Minute))
	if sid, _ := s.CardSession(41); sid != "sid-new" {
		t.Fatalf("rebinding: %q", sid)
	}
	if sid, err := s.CardSession(43); sid != "" || err != nil {
		t.Fatalf("no binding: %q %v", sid, err)
	}
	if n, err := s.Cleanup(); n != 0 || err != nil {
		t.Fatalf("cleanup before any expiry: %d %v", n, err)
	}
	clock.Add(2 * time.Minute)
	if n, err := s.Cleanup(); n != 2 || err != nil {
		t.Fatalf("cleanup: removed %d (%v), want the short session and its binding", n, err)
	}
	if sid, _ := s.CardSession(41); sid != "" {
		t.Errorf("expired binding kept: %q", sid)
	}
	if sid, _ := s.CardSession(42); sid != "sid-long" {
		t.Errorf("live binding lost: %q", sid)
	}
	if _, found, _ := s.Find("long"); !found {
		t.Errorf("live session lost")
	}
	// Cleanup removes the record itself, not only hides it: a later clock rewind cannot
	// bring it back.
	clock.Add(-time.Hour)
	if _, found, _ := s.Find("short"); found {
		t.Errorf("a cleaned session came back")
	}
}

// TestSessionStoreWithSCS uses the store as scs does with tokens from a URL: no cookie.
func TestSessionStoreWithSCS(t *testing.T) {
	clock := &sessionClock{t: time.Now()}
	sm := scs.New()
	sm.Store = openRest(t).Sessions(clock.Now)
	sm.HashTokenInStore = true
	ctx, err := sm.Load(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	sm.Put(ctx, "payout", int64(73))
	sm.SetDeadline(ctx, clock.Now().Add(10*time.Minute))
	token, expiry, err := sm.Commit(ctx)
	if err != nil || token == "" || !expiry.Equal(clock.Now().Add(10*time.Minute).UTC()) {
		t.Fatalf("commit: %q %v %v", token, expiry, err)
	}
	ctx2, err := sm.Load(context.Background(), token)
	if err != nil || sm.GetInt64(ctx2, "payout") != 73 {
		t.Fatalf("load by token: %v %d", err, sm.GetInt64(ctx2, "payout"))
	}
	clock.Add(10 * time.Minute)
	ctx3, _ := sm.Load(context.Background(), token)
	if sm.Exists(ctx3, "payout") {
		t.Errorf("an expired session loads")
	}
}
