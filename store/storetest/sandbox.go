package storetest

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"payouts/rules"
	"payouts/rules/sandbox"
)

// testSandbox: the sandbox's records (clock offset, scripted rules, directory entries,
// integration users, lookup request ids).
func testSandbox(t *testing.T, e Engine) {
	t.Run("the clock offset is zero until put, then what was put", func(t *testing.T) {
		s := e.open(t)
		if off, err := s.SandboxClockOffset(context.Background()); err != nil || off != 0 {
			t.Fatalf("fresh store: %v %v", off, err)
		}
		for _, off := range []time.Duration{90 * time.Minute, 8 * 24 * time.Hour, 0} {
			if err := s.PutSandboxClockOffset(context.Background(), off); err != nil {
				t.Fatal(err)
			}
			if got, err := s.SandboxClockOffset(context.Background()); err != nil || got != off {
				t.Errorf("after putting %v: %v %v", off, got, err)
			}
		}
	})

	t.Run("concurrent clock changes on both handles add up, each under its own generation", func(t *testing.T) {
		a, b := e.handles(t)
		const n = 16
		states := make([]rules.ClockState, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range states {
			s := a
			if i%2 == 1 {
				s = b
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				st, err := s.ChangeSandboxClock(context.Background(), func(cur time.Duration) (time.Duration, error) { return cur + time.Minute, nil })
				if err != nil {
					t.Error(err)
				}
				states[i] = st
			}()
		}
		close(start)
		wg.Wait()
		seen := map[int64]bool{}
		for _, st := range states {
			// Each change read what the one before it wrote: its generation says which it was.
			if st.Gen < 1 || st.Gen > n || seen[st.Gen] || st.Offset != time.Duration(st.Gen)*time.Minute {
				t.Errorf("a change answered %+v; want generations 1 to %d, each its own, at as many minutes", st, n)
			}
			seen[st.Gen] = true
		}
		for _, s := range []rules.Storage{a, b} {
			if st, err := s.SandboxClock(context.Background()); err != nil || st != (rules.ClockState{Offset: n * time.Minute, Gen: n}) {
				t.Errorf("kept after %d advances of a minute: %+v %v", n, st, err)
			}
		}
		refused := errors.New("too far")
		if _, err := b.ChangeSandboxClock(context.Background(), func(time.Duration) (time.Duration, error) { return 0, refused }); !errors.Is(err, refused) {
			t.Errorf("a refused change answered %v, want its own error", err)
		}
		if st, _ := a.SandboxClock(context.Background()); st != (rules.ClockState{Offset: n * time.Minute, Gen: n}) {
			t.Errorf("a refused change wrote %+v", st)
		}
	})

	t.Run("concurrent advances of the sandbox clock on two instances add up, and neither clock goes back", func(t *testing.T) {
		a, b := e.handles(t)
		real := func() time.Time { return T0 }
		var clocks [2]*sandbox.Clock
		for i, s := range []rules.Storage{a, b} {
			c, err := sandbox.NewClock(context.Background(), real, s)
			if err != nil {
				t.Fatal(err)
			}
			clocks[i] = c
		}
		const n = 12
		done := make(chan struct{})
		var watched sync.WaitGroup
		for _, c := range clocks {
			watched.Add(1)
			go func() {
				defer watched.Done()
				last := c.Offset()
				for {
					select {
					case <-done:
						return
					default:
					}
					if off := c.Offset(); off < last {
						t.Errorf("a clock went back from %v to %v", last, off)
						return
					} else {
						last = off
					}
					runtime.Gosched()
				}
			}()
		}
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := clocks[i%2].Advance(context.Background(), time.Hour); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		close(done)
		watched.Wait()
		for i, c := range clocks {
			if err := c.Sync(context.Background()); err != nil {
				t.Fatal(err)
			}
			if c.Offset() != n*time.Hour {
				t.Errorf("instance %d's clock after %d advances of an hour and a sync: %v", i, n, c.Offset())
			}
		}
		if err := clocks[1].Reset(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := clocks[0].Sync(context.Background()); err != nil || clocks[0].Offset() != 0 || clocks[1].Offset() != 0 {
			t.Errorf("after a reset: %v and %v (%v)", clocks[0].Offset(), clocks[1].Offset(), err)
		}
		if err := clocks[0].Advance(context.Background(), sandbox.MaxClockOffset+time.Hour); err == nil {
			t.Error("an advance beyond the bound was taken")
		}
		if off, _ := b.SandboxClockOffset(context.Background()); off != 0 {
			t.Errorf("a refused advance kept %v", off)
		}
	})

	t.Run("script rules are kept per merchant, in order, replaced whole, timelines too", func(t *testing.T) {
		s := e.open(t)
		if rs, err := s.SandboxRules(context.Background(), m1); err != nil || len(rs) != 0 {
			t.Fatalf("no rules yet: %+v %v", rs, err)
		}
		lo, secs := int64(100), int64(45)
		rs := []rules.ScriptRule{
			{Match: rules.ScriptMatch{AccountSuffix: "1234", Country: "PER", AmountMin: &lo},
				Outcome: rules.ScriptOutcome{Stage: rules.StageRejected, Status: rules.StatusDenied, Code: rules.CodeDenied, AfterSeconds: &secs}},
			{Match: rules.ScriptMatch{}, Outcome: rules.ScriptOutcome{Stage: rules.StageSuccess, Status: rules.StatusProcessed,
				Then: []rules.ScriptStep{{Status: rules.StatusReversed, Code: rules.CodeAccountNotFound, AfterSeconds: 3 * 86400}}}},
		}
		if err := s.PutSandboxRules(context.Background(), m1, rs); err != nil {
			t.Fatal(err)
		}
		got, err := s.SandboxRules(context.Background(), m1)
		if err != nil || jsonOf(t, got) != jsonOf(t, rs) {
			t.Errorf("SandboxRules(M1) = %s, %v; want %s", jsonOf(t, got), err, jsonOf(t, rs))
		}
		if other, _ := s.SandboxRules(context.Background(), m2); len(other) != 0 {
			t.Errorf("another merchant's rules: %+v", other)
		}
		if err := s.PutSandboxRules(context.Background(), m1, rs[1:]); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.SandboxRules(context.Background(), m1); jsonOf(t, got) != jsonOf(t, rs[1:]) {
			t.Errorf("after replacing: %s", jsonOf(t, got))
		}
		if err := s.PutSandboxRules(context.Background(), m1, nil); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.SandboxRules(context.Background(), m1); len(got) != 0 {
			t.Errorf("after clearing: %+v", got)
		}
	})

	t.Run("directory entries by country and id: put, replace, delete", func(t *testing.T) {
		s := e.open(t)
		if _, err := s.DirectoryEntry(context.Background(), "PER", "987654321"); !isNotFound(err) {
			t.Fatalf("no entry yet: %v, want ErrNotFound", err)
		}
		peru := rules.DirectoryEntry{Entities: []rules.WalletEntity{{EntityBrand: "Yape", Status: rules.EntityAvailable}}}
		key := rules.DirectoryEntry{HolderName: "Ana Rojas", BankCode: "1007", AccountType: "SAVINGS"}
		if err := s.PutDirectoryEntry(context.Background(), "PER", "987654321", peru); err != nil {
			t.Fatal(err)
		}
		if err := s.PutDirectoryEntry(context.Background(), "COL", "@ana", key); err != nil {
			t.Fatal(err)
		}
		if got, err := s.DirectoryEntry(context.Background(), "PER", "987654321"); err != nil || jsonOf(t, got) != jsonOf(t, peru) {
			t.Errorf("PER entry %+v %v", got, err)
		}
		if got, err := s.DirectoryEntry(context.Background(), "COL", "@ana"); err != nil || jsonOf(t, got) != jsonOf(t, key) {
			t.Errorf("COL entry %+v %v", got, err)
		}
		if _, err := s.DirectoryEntry(context.Background(), "COL", "987654321"); !isNotFound(err) {
			t.Errorf("the PER id in COL: %v, want ErrNotFound", err)
		}
		none := rules.DirectoryEntry{Entities: []rules.WalletEntity{}, Absent: true}
		if err := s.PutDirectoryEntry(context.Background(), "PER", "987654321", none); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.DirectoryEntry(context.Background(), "PER", "987654321"); got == nil || !got.Absent || len(got.Entities) != 0 {
			t.Errorf("replaced entry %+v", got)
		}
		if err := s.DeleteDirectoryEntry(context.Background(), "PER", "987654321"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.DirectoryEntry(context.Background(), "PER", "987654321"); !isNotFound(err) {
			t.Errorf("a deleted entry: %v", err)
		}
		if err := s.DeleteDirectoryEntry(context.Background(), "PER", "000"); err != nil {
			t.Errorf("deleting an unknown entry: %v", err)
		}
	})

	t.Run("an integration user is its merchant's only one; a name is one merchant's", func(t *testing.T) {
		s := e.open(t)
		if _, err := s.IntegrationUser(context.Background(), "ana"); !isNotFound(err) {
			t.Fatalf("no user yet: %v", err)
		}
		if _, err := s.IntegrationUserOf(context.Background(), m1); !isNotFound(err) {
			t.Fatalf("no user of M1 yet: %v", err)
		}
		u1 := &rules.IntegrationUser{User: "ana", MerchantID: m1, PasswordHash: "h1", CreatedAt: T0}
		if err := s.PutIntegrationUser(context.Background(), u1); err != nil {
			t.Fatal(err)
		}
		for _, got := range []func() (*rules.IntegrationUser, error){
			func() (*rules.IntegrationUser, error) { return s.IntegrationUser(context.Background(), "ana") },
			func() (*rules.IntegrationUser, error) { return s.IntegrationUserOf(context.Background(), m1) },
		} {
			u, err := got()
			if err != nil || u.User != "ana" || u.MerchantID != m1 || u.PasswordHash != "h1" || !u.CreatedAt.Equal(T0) {
				t.Errorf("read back %+v, %v", u, err)
			}
		}
		// Rotating replaces the merchant's user.
		u2 := &rules.IntegrationUser{User: "ana2", MerchantID: m1, PasswordHash: "h2", CreatedAt: at(time.Hour)}
		if err := s.PutIntegrationUser(context.Background(), u2); err != nil {
			t.Fatal(err)
		}
		if _, err := s.IntegrationUser(context.Background(), "ana"); !isNotFound(err) {
			t.Errorf("the replaced user still signs in: %v", err)
		}
		if u, err := s.IntegrationUserOf(context.Background(), m1); err != nil || u.User != "ana2" {
			t.Errorf("IntegrationUserOf(M1) = %+v, %v; want ana2", u, err)
		}
		// The same name and merchant again: a new password.
		u2.PasswordHash = "h3"
		if err := s.PutIntegrationUser(context.Background(), u2); err != nil {
			t.Fatal(err)
		}
		if u, _ := s.IntegrationUser(context.Background(), "ana2"); u == nil || u.PasswordHash != "h3" {
			t.Errorf("after a new password: %+v", u)
		}
		// Another merchant cannot take the name.
		err := s.PutIntegrationUser(context.Background(), &rules.IntegrationUser{User: "ana2", MerchantID: m2, PasswordHash: "x", CreatedAt: T0})
		if !errors.Is(err, rules.ErrExists) {
			t.Errorf("another merchant's name: %v, want ErrExists", err)
		}
		if _, err := s.IntegrationUserOf(context.Background(), m2); !isNotFound(err) {
			t.Errorf("the refused user was kept: %v", err)
		}
		if u, _ := s.IntegrationUser(context.Background(), "ana2"); u == nil || u.MerchantID != m1 {
			t.Errorf("the name changed hands: %+v", u)
		}
	})

	t.Run("lookup request ids are seen once per merchant until pruned", func(t *testing.T) {
		s := e.open(t)
		if seen, err := s.SeenLookupRequest(context.Background(), m1, "req-1", T0); err != nil || seen {
			t.Fatalf("first: %v %v", seen, err)
		}
		if seen, _ := s.SeenLookupRequest(context.Background(), m1, "req-1", at(time.Second)); !seen {
			t.Errorf("the same id again is not seen")
		}
		if seen, _ := s.SeenLookupRequest(context.Background(), m2, "req-1", T0); seen {
			t.Errorf("another merchant's id is seen")
		}
		if seen, _ := s.SeenLookupRequest(context.Background(), m1, "req-2", at(2*time.Hour)); seen {
			t.Errorf("a new id is seen")
		}
		n, err := s.PruneLookupRequests(context.Background(), at(time.Hour))
		if err != nil || n != 2 {
			t.Fatalf("PruneLookupRequests = %d, %v; want the two ids recorded at T0", n, err)
		}
		if seen, _ := s.SeenLookupRequest(context.Background(), m1, "req-1", at(3*time.Hour)); seen {
			t.Errorf("a pruned id is still seen")
		}
		if seen, _ := s.SeenLookupRequest(context.Background(), m1, "req-2", at(3*time.Hour)); !seen {
			t.Errorf("an id after the cutoff was pruned")
		}
	})
}
