package storetest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"payouts/rules"
)

// testQueue: the lifecycle queue (Due, NextDue).
func testQueue(t *testing.T, e Engine) {
	t.Run("Due lists the due entries oldest first with their queued status, not the later ones", func(t *testing.T) {
		s := e.open(t)
		addMerchants(t, s, m1)
		late := create(t, s, newPayout(m1, "Q-late", 1000, T0), at(3*time.Minute))
		early := create(t, s, newPayout(m1, "Q-early", 1000, T0), at(time.Minute))
		mid := create(t, s, newPayout(m1, "Q-mid", 1000, T0), at(2*time.Minute))
		create(t, s, newPayout(m1, "Q-future", 1000, T0), at(time.Hour))
		create(t, s, newPayout(m1, "Q-none", 1000, T0), time.Time{})
		update(t, s, []int64{mid.ID}, moveTo(rules.StatusAuthorized, T0, at(2*time.Minute)))

		if due, err := s.Due(context.Background(), at(time.Minute-time.Nanosecond), 10); err != nil || len(due) != 0 {
			t.Fatalf("before the first due time: %+v, %v", due, err)
		}
		due, err := s.Due(context.Background(), at(3*time.Minute), 10) // due exactly now counts
		if err != nil {
			t.Fatal(err)
		}
		want := []rules.DueEntry{{ID: early.ID, Status: rules.StatusCreated}, {ID: mid.ID, Status: rules.StatusAuthorized},
			{ID: late.ID, Status: rules.StatusCreated}}
		if !slices.Equal(due, want) {
			t.Errorf("Due = %+v, want %+v", due, want)
		}
	})

	t.Run("Due takes up to limit", func(t *testing.T) {
		s := e.open(t)
		addMerchants(t, s, m1)
		var want []int64
		for i := range 5 {
			want = append(want, create(t, s, newPayout(m1, "LIM-"+string(rune('a'+i)), 1000, T0), at(time.Duration(i)*time.Second)).ID)
		}
		first, err := s.Due(context.Background(), at(time.Minute), 2)
		if err != nil || !slices.Equal(dueIDs(first), want[:2]) {
			t.Fatalf("Due limit 2: %v, %v; want %v", dueIDs(first), err, want[:2])
		}
		// The first two are claimed: the rest follow.
		rest, err := s.Due(context.Background(), at(time.Minute), 10)
		if err != nil || !slices.Equal(dueIDs(rest), want[2:]) {
			t.Fatalf("Due after: %v, %v; want %v", dueIDs(rest), err, want[2:])
		}
	})

	t.Run("a paid payout stays queued for its rail's later word (a scripted return)", func(t *testing.T) {
		s := e.open(t)
		addMerchants(t, s, m1)
		p := create(t, s, newPayout(m1, "Q-paid", 1000, T0), time.Time{})
		update(t, s, []int64{p.ID}, moveTo(rules.StatusProcessed, T0, at(72*time.Hour)))
		if next, err := s.NextDue(context.Background()); err != nil || !next.Equal(at(72*time.Hour)) {
			t.Fatalf("NextDue %v, %v; want %v", next, err, at(72*time.Hour))
		}
		due, err := s.Due(context.Background(), at(72*time.Hour), 10)
		if want := []rules.DueEntry{{ID: p.ID, Status: rules.StatusProcessed}}; err != nil || !slices.Equal(due, want) {
			t.Fatalf("Due = %+v, %v; want %+v", due, err, want)
		}
		update(t, s, []int64{p.ID}, moveTo(rules.StatusReversed, at(72*time.Hour), time.Time{}))
		if next, err := s.NextDue(context.Background()); err != nil || !next.IsZero() {
			t.Errorf("after the return: %v, %v; want an empty queue", next, err)
		}
	})

	t.Run("NextDue is the earliest queued time, zero when the queue is empty", func(t *testing.T) {
		s := e.open(t)
		addMerchants(t, s, m1)
		if next, err := s.NextDue(context.Background()); err != nil || !next.IsZero() {
			t.Fatalf("empty store: %v, %v", next, err)
		}
		a := create(t, s, newPayout(m1, "N-a", 1000, T0), at(5*time.Minute))
		b := create(t, s, newPayout(m1, "N-b", 1000, T0), at(2*time.Minute))
		if next, err := s.NextDue(context.Background()); err != nil || !next.Equal(at(2*time.Minute)) {
			t.Fatalf("NextDue %v, %v; want %v", next, err, at(2*time.Minute))
		}
		update(t, s, []int64{b.ID}, moveTo(rules.StatusAuthorized, T0, time.Time{}))
		if next, _ := s.NextDue(context.Background()); !next.Equal(at(5 * time.Minute)) {
			t.Errorf("after unqueueing the earliest: %v, want %v", next, at(5*time.Minute))
		}
		update(t, s, []int64{a.ID}, moveTo(rules.StatusAuthorized, T0, at(30*time.Second)))
		if next, _ := s.NextDue(context.Background()); !next.Equal(at(30 * time.Second)) {
			t.Errorf("after moving one earlier: %v, want %v", next, at(30*time.Second))
		}
		update(t, s, []int64{a.ID}, moveTo(rules.StatusWaitingRouting, T0, time.Time{}))
		if next, _ := s.NextDue(context.Background()); !next.IsZero() {
			t.Errorf("after unqueueing all: %v, want zero", next)
		}
	})
}

// testUpdatePayouts: rules.LifecycleStore.UpdatePayouts.
func testUpdatePayouts(t *testing.T, e Engine) {
	t.Run("moves the status, the indexes and the queue entry together", func(t *testing.T) {
		s := e.open(t)
		addMerchants(t, s, m1)
		p := newPayout(m1, "U-1", 1000, T0)
		p.Traceparent = traceparent
		p = create(t, s, p, T0)
		if due, _ := s.Due(context.Background(), T0, 10); !slices.Equal(dueIDs(due), []int64{p.ID}) {
			t.Fatalf("due %+v", due)
		}
		var seen *rules.Payout
		err := s.UpdatePayouts(context.Background(), []int64{p.ID}, func(q *rules.Payout, l rules.Ledger) (time.Time, error) {
			c := *q
			seen = &c
			return moveTo(rules.StatusAuthorized, at(time.Second), at(time.Minute))(q, l)
		})
		if err != nil {
			t.Fatal(err)
		}
		samePayout(t, "the step's payout", seen, p)
		got := payoutOf(t, s, m1, p.ID)
		if got.Status != rules.StatusAuthorized || got.Stage != rules.StageInProgress || !got.StatusChangedAt.Equal(at(time.Second)) ||
			len(got.History) != 2 || got.History[1].Status != rules.StatusAuthorized {
			t.Errorf("stored %s/%s at %v with history %+v", got.Stage, got.Status, got.StatusChangedAt, got.History)
		}
		if got.Traceparent != traceparent {
			t.Errorf("traceparent %q after the step, want the create's %q", got.Traceparent, traceparent)
		}
		if due, _ := s.Due(context.Background(), at(time.Minute-time.Second), 10); len(due) != 0 {
			t.Errorf("still due at its old time: %+v", due)
		}
		due, _ := s.Due(context.Background(), at(time.Minute), 10)
		if !slices.Equal(due, []rules.DueEntry{{ID: p.ID, Status: rules.StatusAuthorized}}) {
			t.Errorf("due at its new time: %+v, want it as AUTHORIZED", due)
		}
		if ids, _ := s.WithStatus(context.Background(), m1, rules.StatusCreated, 10); len(ids) != 0 {
			t.Errorf("still listed as CREATED: %v", ids)
		}
		if ids, _ := s.WithStatus(context.Background(), m1, rules.StatusAuthorized, 10); !slices.Equal(ids, []int64{p.ID}) {
			t.Errorf("AUTHORIZED: %v", ids)
		}
		// A final status: another stage, out of the queue.
		update(t, s, []int64{p.ID}, moveTo(rules.StatusRejectedBank, at(2*time.Minute), time.Time{}))
		if page, _ := s.ListPayouts(context.Background(), m1, rules.ListFilter{Stage: rules.StageInProgress}); len(page.Items) != 0 {
			t.Errorf("still listed IN_PROGRESS: %v", ids(page.Items))
		}
		if page, _ := s.ListPayouts(context.Background(), m1, rules.ListFilter{Stage: rules.StageRejected}); !slices.Equal(ids(page.Items), []int64{p.ID}) {
			t.Errorf("REJECTED: %v", ids(page.Items))
		}
		if due, _ := s.Due(context.Background(), at(time.Hour), 10); len(due) != 0 {
			t.Errorf("a payout queued at zero is due: %+v", due)
		}
	})

	t.Run("a step may keep its payout: the engine hands it to no later read or step", func(t *testing.T) {
		s := e.open(t)
		addMerchants(t, s, m1)
		p := create(t, s, newPayout(m1, "U-K", 1000, T0), T0)
		ctx := context.Background()
		// Read first, as a lifecycle round does: an engine that keeps what it read for the step
		// that follows must still give the step a payout of its own.
		if _, err := s.PayoutsByID(ctx, []int64{p.ID}); err != nil {
			t.Fatal(err)
		}
		var kept *rules.Payout
		update(t, s, []int64{p.ID}, func(q *rules.Payout, l rules.Ledger) (time.Time, error) {
			kept = q
			return moveTo(rules.StatusAuthorized, at(time.Second), at(time.Minute))(q, l)
		})
		want := kept.Clone()
		samePayout(t, "the kept payout", kept, payoutOf(t, s, m1, p.ID))
		update(t, s, []int64{p.ID}, func(q *rules.Payout, l rules.Ledger) (time.Time, error) {
			if q == kept {
				t.Error("the next step got the payout a step kept")
			}
			return moveTo(rules.StatusRejectedBank, at(2*time.Second), time.Time{})(q, l)
		})
		read, err := s.PayoutsByID(ctx, []int64{p.ID})
		if err != nil || len(read) != 1 || read[0] == kept {
			t.Fatalf("PayoutsByID after the steps: %v, %v (the kept payout handed out again?)", read, err)
		}
		samePayout(t, "the kept payout after the next step", kept, want)
	})

	// A round reads its payouts by id, or with its claim on an engine that reads them there.
	roundReaders := []struct {
		name string
		read func(s rules.Storage, round context.Context, ids []int64) (map[int64]*rules.Payout, error)
	}{
		{"by id", func(s rules.Storage, round context.Context, ids []int64) (map[int64]*rules.Payout, error) {
			ps, err := s.PayoutsByID(round, ids)
			m := map[int64]*rules.Payout{}
			for _, p := range ps {
				m[p.ID] = p
			}
			return m, err
		}},
		{"with the claim", func(s rules.Storage, round context.Context, ids []int64) (map[int64]*rules.Payout, error) {
			_, m, err := s.DueRead(round, at(time.Minute), 10)
			return m, err
		}},
	}
	for _, rr := range roundReaders {
		t.Run("a round's read "+rr.name+" is handed to its step, unless the payout changed meanwhile", func(t *testing.T) {
			s := e.open(t)
			addMerchants(t, s, m1)
			p := create(t, s, newPayout(m1, "U-R", 1000, T0), T0)
			other := create(t, s, newPayout(m1, "U-R2", 1000, T0), T0)
			round := rules.WithRoundReads(context.Background())
			read, err := rr.read(s, round, []int64{p.ID, other.ID})
			if err != nil {
				t.Fatal(err)
			}
			if read == nil {
				t.Skip("this engine reads no payout with its claim")
			}
			if len(read) != 2 {
				t.Fatalf("the round read %d payouts, want 2", len(read))
			}
			// other moves under the round, by a step of another context (an API call, say).
			update(t, s, []int64{other.ID}, moveTo(rules.StatusAuthorized, at(time.Second), time.Time{}))
			got := map[int64]*rules.Payout{}
			err = s.UpdatePayouts(round, []int64{p.ID, other.ID}, func(q *rules.Payout, l rules.Ledger) (time.Time, error) {
				got[q.ID] = q
				return time.Time{}, rules.ErrNoChange
			})
			if err != nil {
				t.Fatal(err)
			}
			if got[p.ID] != read[p.ID] {
				t.Error("the round's step did not get the payout the round read, unchanged since")
			}
			if got[other.ID] == read[other.ID] || got[other.ID].Status != rules.StatusAuthorized {
				t.Errorf("the round's step got the payout as the round read it, not as another step left it: %v", got[other.ID].Status)
			}
			// Handed over once: a step of another context, and a second step of the round,
			// get a payout of their own.
			for _, ctx := range []context.Context{context.Background(), round} {
				err := s.UpdatePayouts(ctx, []int64{p.ID}, func(q *rules.Payout, l rules.Ledger) (time.Time, error) {
					if q == read[p.ID] {
						t.Error("the round's payout handed over twice")
					}
					return time.Time{}, rules.ErrNoChange
				})
				if err != nil {
					t.Fatal(err)
				}
			}
		})
	}

	t.Run("keeps every field a step changes", func(t *testing.T) {
		s := e.open(t)
		addMerchants(t, s, m1)
		p := create(t, s, newPayout(m1, "U-F", 1000, T0), time.Time{})
		var want *rules.Payout
		update(t, s, []int64{p.ID}, func(q *rules.Payout, l rules.Ledger) (time.Time, error) {
			q.Move(rules.StatusWaitingRouting, at(time.Second), "", "routed")
			q.Move(rules.StatusPendingBank, at(2*time.Second), "", "submitted")
			q.Move(rules.StatusRejectedBank, at(3*time.Second), rules.CodeBankRejected, "the bank said no")
			q.RailRef = "SIM-1"
			q.ClaimCodeHash = "0f0f"
			q.ClaimAttempts = 2
			q.Card = &rules.CardRef{Token: "card_x", Brand: "VISA", BIN: "411111", Last4: "1111"}
			q.SessionExpiresAt = at(15 * time.Minute)
			c := *q
			want = &c
			return time.Time{}, nil
		})
		got := payoutOf(t, s, m1, p.ID)
		samePayout(t, "read back", got, want)
		if len(got.Errors) != 1 || got.Errors[0].Code != rules.CodeBankRejected {
			t.Errorf("errors %+v", got.Errors)
		}
	})

	t.Run("a payout link keeps its link, and the destination its beneficiary gives", func(t *testing.T) {
		s := e.open(t)
		addMerchants(t, s, m1)
		np := newPayout(m1, "LINK-1", 1000, T0)
		np.Channel, np.AccountType, np.BankCode = rules.ChannelLink, 0, ""
		np.Link = &rules.Link{Kinds: []int{2, 4}, Minutes: 60, ReturnURL: "https://shop.example/back", Lang: "en"}
		np.SessionExpiresAt = at(time.Hour)
		p := create(t, s, np, time.Time{})
		samePayout(t, "created", payoutOf(t, s, m1, p.ID), p)
		var want *rules.Payout
		update(t, s, []int64{p.ID}, func(q *rules.Payout, l rules.Ledger) (time.Time, error) {
			q.Request.Destination.BankAccount = rules.BankAccount{BankCode: "012", AccountType: "2", AccountNumber: "12345678901"}
			q.Channel, q.AccountType, q.BankCode = rules.ChannelBatch, 2, "012"
			q.Move(rules.StatusWaitingRouting, at(time.Second), "", "destination given")
			want = q.Clone()
			return time.Time{}, nil
		})
		got := payoutOf(t, s, m1, p.ID)
		samePayout(t, "after the destination", got, want)
		if got.Link == nil || got.Link.ReturnURL != "https://shop.example/back" || got.Request.Destination.BankAccount.AccountNumber != "12345678901" {
			t.Errorf("link %+v, destination %+v", got.Link, got.Request.Destination)
		}
	})

	t.Run("ErrNoChange leaves the payout as it was, the others are written", func(t *testing.T) {
		s := e.open(t)
		addMerchants(t, s, m1)
		a := create(t, s, newPayout(m1, "NC-a", 1000, T0), T0)
		b := create(t, s, newPayout(m1, "NC-b", 1000, T0), T0)
		err := s.UpdatePayouts(context.Background(), []int64{a.ID, b.ID}, func(p *rules.Payout, l rules.Ledger) (time.Time, error) {
			p.Move(rules.StatusAuthorized, at(time.Second), "", "")
			if p.ID == a.ID {
				p.Reserved = 12345 // changed, then left alone
				return at(time.Hour), rules.ErrNoChange
			}
			return at(time.Minute), nil
		})
		if err != nil {
			t.Fatal(err)
		}
		samePayout(t, "the payout left alone", payoutOf(t, s, m1, a.ID), a)
		if got := payoutOf(t, s, m1, b.ID); got.Status != rules.StatusAuthorized {
			t.Errorf("the other payout: %s", got.Status)
		}
		due, _ := s.Due(context.Background(), T0, 10)
		if !slices.Equal(due, []rules.DueEntry{{ID: a.ID, Status: rules.StatusCreated}}) {
			t.Errorf("queue at T0: %+v; want the payout left alone where it was", due)
		}
	})

	t.Run("a failing step aborts everything", func(t *testing.T) {
		s := e.open(t)
		addMerchants(t, s, m1)
		fund(t, s, m1, "PER", "PEN", 10_000)
		a := create(t, s, newPayout(m1, "AB-a", 1000, T0), T0)
		b := create(t, s, newPayout(m1, "AB-b", 1000, T0), T0)
		step := func(p *rules.Payout, l rules.Ledger) (time.Time, error) {
			if p.ID == b.ID {
				return time.Time{}, errBoom
			}
			if err := l.Enqueue(rules.Event{ID: "aborted", Kind: rules.EventMerchantNotification, MerchantID: m1,
				PayoutID: p.ID, CreatedAt: T0, NextAt: T0}); err != nil {
				return time.Time{}, err
			}
			return reserveStep(at(time.Second), at(time.Minute))(p, l)
		}
		if err := s.UpdatePayouts(context.Background(), []int64{a.ID, b.ID}, step); !errors.Is(err, errBoom) {
			t.Fatalf("UpdatePayouts: %v, want the step's error", err)
		}
		samePayout(t, "the payout written before the failure", payoutOf(t, s, m1, a.ID), a)
		if bal := balanceOf(t, s, m1, "PER", "PEN"); bal.Available != 10_000 {
			t.Errorf("balance %+v: the aborted reservation stayed", bal)
		}
		if n := s.OutboxDepth(context.Background()); n != 0 {
			t.Errorf("outbox depth %d: the aborted event stayed", n)
		}
		// Both stay queued where they were (a later look: whatever claims the call held).
		due, _ := s.Due(context.Background(), at(rules.ClaimLease+time.Minute), 10)
		if got := sorted(dueIDs(due)); !slices.Equal(got, []int64{a.ID, b.ID}) {
			t.Errorf("queue %v, want both payouts still queued", got)
		}
		for _, d := range due {
			if d.Status != rules.StatusCreated {
				t.Errorf("queued as %s", d.Status)
			}
		}
	})

	t.Run("an id that names no payout is skipped", func(t *testing.T) {
		s := e.open(t)
		addMerchants(t, s, m1)
		p := create(t, s, newPayout(m1, "SK", 1000, T0), T0)
		var stepped []int64
		err := s.UpdatePayouts(context.Background(), []int64{p.ID + 1000, p.ID}, func(q *rules.Payout, l rules.Ledger) (time.Time, error) {
			stepped = append(stepped, q.ID)
			return moveTo(rules.StatusAuthorized, T0, time.Time{})(q, l)
		})
		if err != nil || !slices.Equal(stepped, []int64{p.ID}) {
			t.Errorf("stepped %v, %v; want only %d", stepped, err, p.ID)
		}
	})

	t.Run("a step's events are written with it", func(t *testing.T) {
		s := e.open(t)
		addMerchants(t, s, m1)
		p := create(t, s, newPayout(m1, "EV", 1000, T0), T0)
		update(t, s, []int64{p.ID}, func(q *rules.Payout, l rules.Ledger) (time.Time, error) {
			q.Move(rules.StatusRejectedBank, T0, rules.CodeBankRejected, "no")
			for _, ev := range rules.OutcomeEvents(q, &rules.Merchant{ID: m1, Settings: rules.Settings{EmailNotifications: true,
				NotificationURL: "https://tienda.example/hook"}}, T0) {
				if err := l.Enqueue(ev); err != nil {
					return time.Time{}, err
				}
			}
			return time.Time{}, nil
		})
		evs, err := s.OutboxEvents(context.Background(), 10)
		if err != nil || len(evs) != 2 {
			t.Fatalf("outbox %v, %v", eventIDs(evs), err)
		}
		for _, ev := range evs {
			if ev.PayoutID != p.ID || ev.MerchantID != m1 {
				t.Errorf("event %+v", ev)
			}
		}
	})
}

// testLedger: the ledger invariant on every write, and CheckAllLedgers.
func testLedger(t *testing.T, e Engine) {
	t.Run("a step that breaks the invariant is refused whole", func(t *testing.T) {
		for _, c := range []struct {
			name string
			step rules.Step
		}{
			{"minted money", func(p *rules.Payout, l rules.Ledger) (time.Time, error) {
				b, _ := l.Balance(m1, "PER", "PEN")
				b.Balance += 9000
				b.Available += 9000
				b.Reversed += 9000
				p.Move(rules.StatusAuthorized, T0, "", "")
				return time.Time{}, l.PutBalance(m1, b)
			}},
			{"a reservation no payout holds", func(p *rules.Payout, l rules.Ledger) (time.Time, error) {
				b, _ := l.Balance(m1, "PER", "PEN")
				b.Available -= 300
				p.Move(rules.StatusAuthorized, T0, "", "")
				return time.Time{}, l.PutBalance(m1, b)
			}},
			{"a payout holding what the balance does not", func(p *rules.Payout, l rules.Ledger) (time.Time, error) {
				p.Reserved = p.Amount
				p.Move(rules.StatusAuthorized, T0, "", "")
				return time.Time{}, nil
			}},
			{"totals that do not add up", func(p *rules.Payout, l rules.Ledger) (time.Time, error) {
				b, _ := l.Balance(m1, "PER", "PEN")
				b.Funded += 1
				p.Move(rules.StatusAuthorized, T0, "", "")
				return time.Time{}, l.PutBalance(m1, b)
			}},
		} {
			t.Run(c.name, func(t *testing.T) {
				s := e.open(t)
				addMerchants(t, s, m1)
				fund(t, s, m1, "PER", "PEN", 1000)
				p := create(t, s, newPayout(m1, "LG", 300, T0), T0)
				if err := s.UpdatePayouts(context.Background(), []int64{p.ID}, c.step); !errors.Is(err, rules.ErrLedger) {
					t.Fatalf("UpdatePayouts: %v, want ErrLedger", err)
				}
				samePayout(t, "the payout", payoutOf(t, s, m1, p.ID), p)
				if b := balanceOf(t, s, m1, "PER", "PEN"); b != (rules.Balance{Country: "PER", Currency: "PEN", Available: 1000, Balance: 1000, Funded: 1000}) {
					t.Errorf("balance %+v changed", b)
				}
				if err := s.CheckAllLedgers(context.Background()); err != nil {
					t.Errorf("CheckAllLedgers after the refused write: %v", err)
				}
			})
		}
	})

	t.Run("a reservation held by its payout is written", func(t *testing.T) {
		s := e.open(t)
		addMerchants(t, s, m1)
		fund(t, s, m1, "PER", "PEN", 1000)
		p := create(t, s, newPayout(m1, "LG", 300, T0), T0)
		update(t, s, []int64{p.ID}, reserveStep(T0, time.Time{}))
		if b := balanceOf(t, s, m1, "PER", "PEN"); b.Available != 700 || b.Balance != 1000 {
			t.Errorf("balance %+v, want 300 of 1000 held", b)
		}
		if got := payoutOf(t, s, m1, p.ID); got.Reserved != 300 {
			t.Errorf("reserved %d", got.Reserved)
		}
		if err := s.CheckAllLedgers(context.Background()); err != nil {
			t.Error(err)
		}
	})

	t.Run("CheckAllLedgers passes after a lifecycle and finds payouts without their money", func(t *testing.T) {
		s := e.open(t)
		w := newLifeWorld(t, s)
		w.run(t)
		if err := s.CheckAllLedgers(context.Background()); err != nil {
			t.Fatalf("after the lifecycle: %v", err)
		}
		// A settled payout brought in without its money (an import from elsewhere) breaks
		// the tally: either the import refuses it or CheckAllLedgers finds it.
		fund(t, s, "M3", "PER", "PEN", 1000)
		p := newPayout("M3", "ORPHAN", 500, T0)
		p.Move(rules.StatusProcessed, at(time.Second), "", "")
		err := s.ImportPayouts(context.Background(), []*rules.Payout{p})
		if err == nil {
			err = s.CheckAllLedgers(context.Background())
		}
		if !errors.Is(err, rules.ErrLedger) {
			t.Errorf("a PROCESSED payout the balance never paid: %v, want ErrLedger", err)
		}
	})
}
