package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"payouts/rules"
)

// testConcurrency: concurrent callers, split across both handles when the engine has two.
func testConcurrency(t *testing.T, e Engine) {
	if e.Second != nil {
		t.Run("each handle reads what the other wrote", func(t *testing.T) {
			a, b := e.handles(t)
			addMerchants(t, a, m1)
			p := create(t, a, newPayout(m1, "SEEN", 1000, T0), T0)
			fund(t, a, m1, "PER", "PEN", 500)
			if err := a.Sessions(context.Background(), (&clock{t: T0}).Now).Commit("tok", []byte("d"), at(time.Hour)); err != nil {
				t.Fatal(err)
			}
			if got, err := b.Merchant(context.Background(), m1); err != nil || got.ID != m1 {
				t.Errorf("Merchant on the second handle: %+v %v", got, err)
			}
			samePayout(t, "the payout on the second handle", payoutOf(t, b, m1, p.ID), p)
			if bal := balanceOf(t, b, m1, "PER", "PEN"); bal.Balance != 500 {
				t.Errorf("balance on the second handle %+v", bal)
			}
			if data, found, _ := b.Sessions(context.Background(), (&clock{t: T0}).Now).Find("tok"); !found || string(data) != "d" {
				t.Errorf("session on the second handle %q %v", data, found)
			}
			update(t, b, []int64{p.ID}, moveTo(rules.StatusAuthorized, T0, time.Time{}))
			if got := payoutOf(t, a, m1, p.ID); got.Status != rules.StatusAuthorized {
				t.Errorf("the first handle reads %s after the second's write", got.Status)
			}
		})
	}

	t.Run("50 creates of one orderId: one creates, all answer its id", func(t *testing.T) {
		a, b := e.handles(t)
		addMerchants(t, a, m1)
		fund(t, a, m1, "PER", "PEN", 1_000_000)
		type answer struct {
			id      int64
			created bool
			err     error
		}
		answers := make([]answer, 50)
		var wg sync.WaitGroup
		for i := range answers {
			s := a
			if i%2 == 1 {
				s = b
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				p, created, err := s.CreatePayout(context.Background(), newPayout(m1, "SAME", 1000, T0), T0, []rules.Event{mail("same-ev", T0)}, reserveStep(T0, T0))
				answers[i] = answer{created: created, err: err}
				if p != nil {
					answers[i].id = p.ID
				}
			}()
		}
		wg.Wait()
		created := 0
		for _, an := range answers {
			if an.err != nil {
				t.Fatalf("a concurrent create failed: %v", an.err)
			}
			if an.created {
				created++
			}
			if an.id != answers[0].id || an.id <= 0 {
				t.Errorf("answered id %d, another %d", an.id, answers[0].id)
			}
		}
		if created != 1 {
			t.Errorf("%d creates said created, want 1", created)
		}
		if bal := balanceOf(t, a, m1, "PER", "PEN"); bal.Available != 1_000_000-1000 {
			t.Errorf("available %d: the admit step ran %d times", bal.Available, (1_000_000-bal.Available)/1000)
		}
		if n := a.OutboxDepth(context.Background()); n != 1 {
			t.Errorf("outbox depth %d, want the one create's event", n)
		}
		if err := a.CheckAllLedgers(context.Background()); err != nil {
			t.Error(err)
		}
	})

	t.Run("concurrent Due calls hand out disjoint sets", func(t *testing.T) {
		a, b := e.handles(t)
		addMerchants(t, a, m1)
		const n = 60
		ps := make([]*rules.Payout, n)
		for i := range ps {
			ps[i] = newPayout(m1, fmt.Sprintf("D-%02d", i), 1000, T0)
			ps[i].ID = int64(1000 + i)
		}
		if err := a.ImportPayouts(context.Background(), ps); err != nil {
			t.Fatal(err)
		}
		// Queue them all (an import queues nothing).
		var all []int64
		for _, p := range ps {
			all = append(all, p.ID)
		}
		update(t, a, all, func(p *rules.Payout, l rules.Ledger) (time.Time, error) { return T0, nil })
		var mu sync.Mutex
		seen := map[int64]int{}
		var wg sync.WaitGroup
		for i := range 8 {
			s := a
			if i%2 == 1 {
				s = b
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 4 {
					due, err := s.Due(context.Background(), T0, 5)
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					for _, d := range due {
						seen[d.ID]++
					}
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		// What the racing calls left (an engine may skip rows another call is claiming).
		rest, err := a.Due(context.Background(), T0, 2*n)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range rest {
			seen[d.ID]++
		}
		for id, k := range seen {
			if k != 1 {
				t.Errorf("payout %d handed out %d times", id, k)
			}
		}
		if len(seen) != n {
			t.Errorf("%d entries handed out, want all %d", len(seen), n)
		}
	})

	t.Run("concurrent DueEvents calls hand out disjoint sets", func(t *testing.T) {
		a, b := e.handles(t)
		addMerchants(t, a, m1)
		var evs []rules.Event
		for i := range 40 {
			evs = append(evs, notification(fmt.Sprintf("ce-%02d", i), T0))
		}
		writeEvents(t, a, evs...)
		var mu sync.Mutex
		seen := map[uint64]int{}
		var wg sync.WaitGroup
		for i := range 8 {
			s := a
			if i%2 == 1 {
				s = b
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 3 {
					due, _, err := s.DueEvents(context.Background(), rules.LaneNotify, T0, 3)
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					for _, d := range due {
						seen[d.Seq]++
					}
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		rest, _ := dueEvents(t, a, rules.LaneNotify, T0, 100)
		for _, d := range rest {
			seen[d.Seq]++
		}
		for seq, k := range seen {
			if k != 1 {
				t.Errorf("event seq %d handed out %d times", seq, k)
			}
		}
		if len(seen) != 40 {
			t.Errorf("%d events handed out, want 40", len(seen))
		}
	})

	t.Run("concurrent fundings add up", func(t *testing.T) {
		a, b := e.handles(t)
		addMerchants(t, a, m1)
		var wg sync.WaitGroup
		for i := range 40 {
			s := a
			if i%2 == 1 {
				s = b
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := s.Fund(context.Background(), m1, "PER", "PEN", int64(i+1), time.Now()); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		want := int64(40 * 41 / 2)
		if bal := balanceOf(t, b, m1, "PER", "PEN"); bal.Balance != want || bal.Available != want || bal.Funded != want {
			t.Errorf("balance %+v, want %d", bal, want)
		}
	})

	t.Run("one event's sandbox mail from both handles is kept once", func(t *testing.T) {
		a, b := e.handles(t)
		addMerchants(t, a, m1)
		writeEvents(t, a, mail("mail-race", T0))
		var wg sync.WaitGroup
		for i := range 10 {
			s := a
			if i%2 == 1 {
				s = b
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := s.PutSandboxMail(context.Background(), "mail-race", []byte(`{"eventId":"mail-race"}`), T0); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if mails, _ := b.SandboxMails(context.Background(), 10); len(mails) != 1 {
			t.Errorf("%d mails, want 1", len(mails))
		}
		if _, ok, _ := a.WasDelivered(context.Background(), "mail-race"); !ok {
			t.Errorf("the event is not marked delivered")
		}
	})
}
