package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"payouts/rules"
)

// testClaims: the claims of the work queues (rules.Storage): an entry Due or DueEvents hands
// out goes to one caller until it is written or its lease ends, across handles too.
func testClaims(t *testing.T, e Engine) {
	for _, two := range []bool{false, true} {
		name := "one handle"
		if two {
			if e.Second == nil {
				continue
			}
			name = "two handles"
		}
		t.Run(name, func(t *testing.T) {
			t.Run("a lifecycle entry is handed out once until written or its lease ends", func(t *testing.T) {
				a, b := e.handles(t)
				if !two {
					b = a
				}
				addMerchants(t, a, m1)
				var all []int64
				for i := range 4 {
					all = append(all, create(t, a, newPayout(m1, fmt.Sprintf("CL-%d", i), 1000, T0), T0).ID)
				}
				first, err := a.Due(context.Background(), T0, 10)
				if err != nil || !slices.Equal(dueIDs(first), all) {
					t.Fatalf("first Due: %v, %v", dueIDs(first), err)
				}
				if again, err := b.Due(context.Background(), at(rules.ClaimLease-time.Second), 10); err != nil || len(again) != 0 {
					t.Fatalf("Due within the lease: %v, %v; want nothing, all claimed", dueIDs(again), err)
				}
				// Written: the entries it queues again are the writer's at once; another
				// instance's once their lease, counted from their due time, ends.
				update(t, a, all[:2], moveTo(rules.StatusAuthorized, T0, at(10*time.Second)))
				if two {
					if got, err := b.Due(context.Background(), at(10*time.Second), 10); err != nil || len(got) != 0 {
						t.Fatalf("another handle's Due after the write: %v, %v; want nothing, the writer's", dueIDs(got), err)
					}
				}
				got, err := a.Due(context.Background(), at(10*time.Second), 10)
				if err != nil || !slices.Equal(dueIDs(got), all[:2]) {
					t.Fatalf("Due after the write: %v, %v; want %v", dueIDs(got), err, all[:2])
				}
				for _, d := range got {
					if d.Status != rules.StatusAuthorized {
						t.Errorf("entry %+v, want the written status", d)
					}
				}
				// The lease of the unwritten ones ends (not that of the ones claimed again).
				late, err := b.Due(context.Background(), at(rules.ClaimLease+time.Second), 10)
				if err != nil || !slices.Equal(dueIDs(late), all[2:]) {
					t.Errorf("Due after the lease: %v, %v; want %v", dueIDs(late), err, all[2:])
				}
				for _, d := range late {
					if d.Status != rules.StatusCreated {
						t.Errorf("entry %+v taken over, want it as queued", d)
					}
				}
			})

			t.Run("an outbox event is handed out once until settled or its lease ends", func(t *testing.T) {
				a, b := e.handles(t)
				if !two {
					b = a
				}
				addMerchants(t, a, m1)
				writeEvents(t, a, notification("c-del", T0), notification("c-resched", T0), notification("c-dead", T0), notification("c-idle", T0))
				first, _ := dueEvents(t, a, rules.LaneNotify, T0, 10)
				if len(first) != 4 {
					t.Fatalf("first DueEvents: %v", eventIDs(first))
				}
				if again, _ := dueEvents(t, b, rules.LaneNotify, at(rules.ClaimLease-time.Second), 10); len(again) != 0 {
					t.Fatalf("DueEvents within the lease: %v", eventIDs(again))
				}
				takeAll := func(uint64, string) bool { return false }
				if again, _, err := b.DueEventsSkipping(context.Background(), rules.LaneNotify, at(time.Second), 10, takeAll); err != nil || len(again) != 0 {
					t.Fatalf("DueEventsSkipping within the lease: %v, %v", eventIDs(again), err)
				}
				byID := map[string]rules.OutboxEntry{}
				for _, d := range first {
					byID[d.ID] = d
				}
				if err := a.EventDelivered(context.Background(), byID["c-del"].Seq, "c-del", at(time.Second)); err != nil {
					t.Fatal(err)
				}
				ev := byID["c-resched"].Event
				ev.Attempts, ev.NextAt = 1, at(2*time.Second)
				if err := a.RescheduleEvent(context.Background(), byID["c-resched"].Seq, ev); err != nil {
					t.Fatal(err)
				}
				if err := a.DeadEvent(context.Background(), byID["c-dead"].Seq, byID["c-dead"].Event); err != nil {
					t.Fatal(err)
				}
				got, _ := dueEvents(t, b, rules.LaneNotify, at(2*time.Second), 10)
				if !slices.Equal(eventIDs(got), []string{"c-resched"}) {
					t.Fatalf("DueEvents after settling: %v, want c-resched alone", eventIDs(got))
				}
				late, _ := dueEvents(t, b, rules.LaneNotify, at(rules.ClaimLease+time.Second), 10)
				if !slices.Equal(eventIDs(late), []string{"c-idle"}) {
					t.Errorf("DueEvents after c-idle's lease: %v, want c-idle (c-resched's lease is newer)", eventIDs(late))
				}
			})
		})
	}
}
