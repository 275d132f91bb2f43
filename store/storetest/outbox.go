package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"payouts/rules"
)

var eventOrders atomic.Int64

// writeEvents stores a new payout of m1 with evs, as the service writes events with the
// change that causes them, and returns the payout's id.
func writeEvents(t *testing.T, s rules.Storage, evs ...rules.Event) int64 {
	t.Helper()
	p := newPayout(m1, "EVT-"+strconv.FormatInt(eventOrders.Add(1), 10), 1000, T0)
	stored, created, err := s.CreatePayout(context.Background(), p, time.Time{}, evs, nil)
	if err != nil || !created {
		t.Fatalf("CreatePayout with events: %v %v", created, err)
	}
	return stored.ID
}

// notification is a merchant notification (the notify lane) of m1 due at next.
func notification(id string, next time.Time) rules.Event {
	return rules.Event{ID: id, Kind: rules.EventMerchantNotification, MerchantID: m1, CreatedAt: T0, NextAt: next}
}

// mail is a beneficiary mail (the mail lane) of m1 due at next.
func mail(id string, next time.Time) rules.Event {
	return rules.Event{ID: id, Kind: rules.EventBeneficiaryMail, MerchantID: m1, CreatedAt: T0, NextAt: next}
}

// dueEvents lists a lane's due events and fails the test on an error.
func dueEvents(t *testing.T, s rules.Storage, lane rules.Lane, now time.Time, limit int) ([]rules.OutboxEntry, time.Time) {
	t.Helper()
	due, next, err := s.DueEvents(context.Background(), lane, now, limit)
	if err != nil {
		t.Fatalf("DueEvents %s at %v: %v", lane, now, err)
	}
	return due, next
}

// sameEvent fails the test when got is not want as written: every field, times by
// instant, Data by its JSON value (an engine may keep JSON in another spacing).
func sameEvent(t *testing.T, what string, got, want rules.Event) {
	t.Helper()
	if !sameJSONValue(got.Data, want.Data) {
		t.Errorf("%s: data %s, want %s", what, got.Data, want.Data)
	}
	got.Data, want.Data = nil, nil
	if g, w := jsonOf(t, got), jsonOf(t, want); g != w {
		t.Errorf("%s:\n got  %s\n want %s", what, g, w)
	}
}

// sameJSONValue compares two JSON texts by value; empty and null are alike.
func sameJSONValue(a, b []byte) bool {
	var va, vb any
	if len(a) > 0 && json.Unmarshal(a, &va) != nil || len(b) > 0 && json.Unmarshal(b, &vb) != nil {
		return string(a) == string(b)
	}
	return reflect.DeepEqual(va, vb)
}

// testOutbox: rules.OutboxStore and rules.OutboxSkipper.
func testOutbox(t *testing.T, e Engine) {
	t.Run("DueEvents lists a lane's due events, earliest first, with the next due time", func(t *testing.T) {
		s := e.open(t)
		addMerchants(t, s, m1)
		withData := notification("n-a", T0)
		withData.Data = json.RawMessage(`{"status":"PROCESSED","n":1}`)
		withData.Traceparent = traceparent
		pid := writeEvents(t, s, withData, notification("n-later", at(time.Hour)), notification("n-b", at(-time.Minute)),
			mail("m-a", T0), rules.Event{ID: "otp", Kind: rules.EventCashOTP, MerchantID: m1, CreatedAt: T0, NextAt: at(time.Second)},
			notification("tie-1", at(time.Second)), notification("tie-2", at(time.Second)))
		due, next := dueEvents(t, s, rules.LaneNotify, at(time.Second), 10)
		if got := eventIDs(due); !slices.Equal(got, []string{"n-b", "n-a", "tie-1", "tie-2"}) {
			t.Fatalf("notify lane: %v, want n-b n-a tie-1 tie-2 (by due time, then as written)", got)
		}
		if !next.Equal(at(time.Hour)) {
			t.Errorf("next %v, want the later event's %v", next, at(time.Hour))
		}
		want := withData
		want.PayoutID = pid
		sameEvent(t, "listed event", due[1].Event, want)
		seqs := map[uint64]bool{}
		for _, d := range due {
			if seqs[d.Seq] {
				t.Errorf("seq %d twice", d.Seq)
			}
			seqs[d.Seq] = true
		}
		mails, next := dueEvents(t, s, rules.LaneMail, at(time.Second), 10)
		if got := eventIDs(mails); !slices.Equal(got, []string{"m-a", "otp"}) {
			t.Errorf("mail lane: %v, want m-a and the cash code", got)
		}
		if !next.IsZero() {
			t.Errorf("mail lane next %v, want zero: nothing later", next)
		}
	})

	t.Run("DueEvents takes up to limit, earliest first", func(t *testing.T) {
		s := e.open(t)
		addMerchants(t, s, m1)
		writeEvents(t, s, notification("b", T0), notification("a", at(-time.Second)), notification("c", T0))
		if due, _ := dueEvents(t, s, rules.LaneNotify, T0, 1); !slices.Equal(eventIDs(due), []string{"a"}) {
			t.Errorf("limit 1: %v, want a", eventIDs(due))
		}
		if due, _ := dueEvents(t, s, rules.LaneNotify, T0, 10); !slices.Equal(eventIDs(due), []string{"b", "c"}) {
			t.Errorf("after: %v, want b c (a is claimed)", eventIDs(due))
		}
	})

	t.Run("DueEventsSkipping asks skip in order with each merchant and leaves out what it refuses", func(t *testing.T) {
		s := e.open(t)
		addMerchants(t, s, m1, m2)
		other := notification("other", at(time.Second))
		other.MerchantID = m2
		writeEvents(t, s, notification("m1-a", T0), notification("m1-b", at(time.Second)), other, notification("m1-c", at(2*time.Second)))
		var asked []string
		due, _, err := s.DueEventsSkipping(context.Background(), rules.LaneNotify, at(time.Minute), 10, func(seq uint64, merchantID string) bool {
			asked = append(asked, merchantID)
			return merchantID == m1 && len(asked) > 1 // the first of M1 passes, the next are skipped
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := eventIDs(due); !slices.Equal(got, []string{"m1-a", "other"}) {
			t.Errorf("DueEventsSkipping: %v, want m1-a and other", got)
		}
		if !slices.Equal(asked, []string{m1, m1, m2, m1}) {
			t.Errorf("skip asked for %v, want each event's merchant in order", asked)
		}
		// What skip refused was not claimed.
		if due, _ := dueEvents(t, s, rules.LaneNotify, at(time.Minute), 10); !slices.Equal(eventIDs(due), []string{"m1-b", "m1-c"}) {
			t.Errorf("after skipping: %v, want the skipped events", eventIDs(due))
		}
	})

	t.Run("EventDelivered removes the event and its id is never due again", func(t *testing.T) {
		s := e.open(t)
		addMerchants(t, s, m1)
		writeEvents(t, s, notification("x", T0), notification("y", T0))
		writeEvents(t, s, notification("x", T0)) // a second copy of x, written before its delivery
		due, _ := dueEvents(t, s, rules.LaneNotify, T0, 1)
		if len(due) != 1 || due[0].ID != "x" {
			t.Fatalf("due %v", eventIDs(due))
		}
		if err := s.EventDelivered(context.Background(), due[0].Seq, "x", at(time.Second)); err != nil {
			t.Fatal(err)
		}
		if when, ok, err := s.WasDelivered(context.Background(), "x"); err != nil || !ok || !when.Equal(at(time.Second)) {
			t.Errorf("WasDelivered(x) = %v %v %v", when, ok, err)
		}
		if _, ok, err := s.WasDelivered(context.Background(), "y"); err != nil || ok {
			t.Errorf("WasDelivered(y) = %v %v: not delivered", ok, err)
		}
		writeEvents(t, s, notification("x", T0)) // a third copy, written after
		due, _ = dueEvents(t, s, rules.LaneNotify, at(rules.ClaimLease+time.Minute), 10)
		if got := eventIDs(due); !slices.Equal(got, []string{"y"}) {
			t.Errorf("due %v, want y alone: the copies of a delivered id are dropped", got)
		}
		if n := s.OutboxDepth(context.Background()); n != 1 {
			t.Errorf("outbox depth %d, want 1 (y)", n)
		}
		if evs, _ := s.OutboxEvents(context.Background(), 10); !slices.Equal(eventIDs(evs), []string{"y"}) {
			t.Errorf("OutboxEvents %v, want y", eventIDs(evs))
		}
	})

	t.Run("RescheduleEvent writes the new try back, due at its NextAt", func(t *testing.T) {
		s := e.open(t)
		addMerchants(t, s, m1)
		writeEvents(t, s, notification("r", T0))
		due, _ := dueEvents(t, s, rules.LaneNotify, T0, 10)
		ev := due[0].Event
		ev.Attempts, ev.NextAt, ev.LastError = 3, at(8*time.Second), "503 Service Unavailable"
		if err := s.RescheduleEvent(context.Background(), due[0].Seq, ev); err != nil {
			t.Fatal(err)
		}
		if due, next := dueEvents(t, s, rules.LaneNotify, at(7*time.Second), 10); len(due) != 0 || !next.Equal(at(8*time.Second)) {
			t.Errorf("before its NextAt: %v, next %v; want none until %v", eventIDs(due), next, at(8*time.Second))
		}
		due, _ = dueEvents(t, s, rules.LaneNotify, at(8*time.Second), 10)
		if len(due) != 1 {
			t.Fatalf("at its NextAt: %v", eventIDs(due))
		}
		sameEvent(t, "rescheduled", due[0].Event, ev)
		if evs, _ := s.OutboxEvents(context.Background(), 10); len(evs) != 1 || evs[0].Attempts != 3 {
			t.Errorf("OutboxEvents %+v", evs)
		}
		// Rescheduling an event delivered meanwhile leaves it gone.
		if err := s.EventDelivered(context.Background(), due[0].Seq, "r", at(9*time.Second)); err != nil {
			t.Fatal(err)
		}
		ev.Attempts = 4
		if err := s.RescheduleEvent(context.Background(), due[0].Seq, ev); err != nil {
			t.Errorf("RescheduleEvent of a delivered event: %v", err)
		}
		if n := s.OutboxDepth(context.Background()); n != 0 {
			t.Errorf("depth %d: a delivered event came back", n)
		}
		if due, _ := dueEvents(t, s, rules.LaneNotify, at(time.Hour), 10); len(due) != 0 {
			t.Errorf("due %v", eventIDs(due))
		}
	})

	t.Run("DeadEvent moves the event to the dead letters", func(t *testing.T) {
		s := e.open(t)
		addMerchants(t, s, m1)
		writeEvents(t, s, notification("d1", T0), notification("live", T0), notification("d2", at(time.Second)))
		due, _ := dueEvents(t, s, rules.LaneNotify, at(time.Second), 10)
		if len(due) != 3 {
			t.Fatalf("due %v", eventIDs(due))
		}
		for _, d := range []rules.OutboxEntry{due[0], due[2]} {
			ev := d.Event
			ev.Attempts, ev.LastError = 7, "gave up: "+ev.ID
			if err := s.DeadEvent(context.Background(), d.Seq, ev); err != nil {
				t.Fatal(err)
			}
		}
		dead, err := s.DeadEvents(context.Background(), 10)
		if err != nil || !slices.Equal(eventIDs(dead), []string{"d1", "d2"}) {
			t.Fatalf("DeadEvents %v, %v; want d1 d2, oldest first", eventIDs(dead), err)
		}
		if dead[0].Attempts != 7 || dead[0].LastError != "gave up: d1" {
			t.Errorf("dead letter %+v: the event as given to DeadEvent", dead[0])
		}
		if dead, _ := s.DeadEvents(context.Background(), 1); !slices.Equal(eventIDs(dead), []string{"d1"}) {
			t.Errorf("DeadEvents(1) %v", eventIDs(dead))
		}
		if n := s.OutboxDepth(context.Background()); n != 1 {
			t.Errorf("depth %d, want 1: dead letters are not waiting", n)
		}
		if evs, _ := s.OutboxEvents(context.Background(), 10); !slices.Equal(eventIDs(evs), []string{"live"}) {
			t.Errorf("OutboxEvents %v, want live", eventIDs(evs))
		}
		if due, _ := dueEvents(t, s, rules.LaneNotify, at(rules.ClaimLease+time.Hour), 10); !slices.Equal(eventIDs(due), []string{"live"}) {
			t.Errorf("due after the lease %v, want live alone: dead letters are never retried", eventIDs(due))
		}
	})

	t.Run("OutboxEvents lists the pending events as written, up to limit", func(t *testing.T) {
		s := e.open(t)
		addMerchants(t, s, m1)
		writeEvents(t, s, notification("o1", at(time.Hour)), mail("o2", T0))
		writeEvents(t, s, notification("o3", at(-time.Hour)))
		if evs, err := s.OutboxEvents(context.Background(), 10); err != nil || !slices.Equal(eventIDs(evs), []string{"o1", "o2", "o3"}) {
			t.Errorf("OutboxEvents %v, %v", eventIDs(evs), err)
		}
		if evs, _ := s.OutboxEvents(context.Background(), 2); !slices.Equal(eventIDs(evs), []string{"o1", "o2"}) {
			t.Errorf("OutboxEvents(2) %v", eventIDs(evs))
		}
		if n := s.OutboxDepth(context.Background()); n != 3 {
			t.Errorf("depth %d, want 3", n)
		}
	})
}

// testOutboxAdmin: rules.OutboxAdmin but the sandbox mailbox.
func testOutboxAdmin(t *testing.T, e Engine) {
	t.Run("ResendEvent makes a pending or dead event due now, never a delivered one", func(t *testing.T) {
		s := e.open(t)
		addMerchants(t, s, m1)
		writeEvents(t, s, notification("later", at(time.Hour)), notification("dead", T0), notification("sent", T0))
		due, _ := dueEvents(t, s, rules.LaneNotify, T0, 10)
		if len(due) != 2 {
			t.Fatalf("due %v", eventIDs(due))
		}
		byID := map[string]rules.OutboxEntry{}
		for _, d := range due {
			byID[d.ID] = d
		}
		deadEv := byID["dead"].Event
		deadEv.Attempts, deadEv.LastError = 5, "timeout"
		if err := s.DeadEvent(context.Background(), byID["dead"].Seq, deadEv); err != nil {
			t.Fatal(err)
		}
		if err := s.EventDelivered(context.Background(), byID["sent"].Seq, "sent", T0); err != nil {
			t.Fatal(err)
		}

		now := at(time.Minute)
		ev, found, err := s.ResendEvent(context.Background(), "later", now)
		if err != nil || !found || ev.ID != "later" || !ev.NextAt.Equal(now) {
			t.Errorf("ResendEvent(later) = %+v %v %v; want it due now", ev, found, err)
		}
		ev, found, err = s.ResendEvent(context.Background(), "dead", now)
		if err != nil || !found || !ev.NextAt.Equal(now) || !ev.CreatedAt.Equal(now) || ev.Attempts != 5 || ev.LastError != "timeout" {
			t.Errorf("ResendEvent(dead) = %+v %v %v; want it due now, created now, its attempts and error kept", ev, found, err)
		}
		for _, id := range []string{"sent", "unknown"} {
			if _, found, err := s.ResendEvent(context.Background(), id, now); err != nil || found {
				t.Errorf("ResendEvent(%s): found %v, %v; want not found", id, found, err)
			}
		}
		if dead, _ := s.DeadEvents(context.Background(), 10); len(dead) != 0 {
			t.Errorf("still dead: %v", eventIDs(dead))
		}
		due, _ = dueEvents(t, s, rules.LaneNotify, now, 10)
		if got := sorted(eventIDs(due)); !slices.Equal(got, []string{"dead", "later"}) {
			t.Errorf("due after the resends: %v, want dead and later", got)
		}
		if n := s.OutboxDepth(context.Background()); n != 2 {
			t.Errorf("depth %d, want 2", n)
		}
	})

	t.Run("OutboxRecords lists pending, retrying and dead events, newest first", func(t *testing.T) {
		s := e.open(t)
		addMerchants(t, s, m1)
		evs := []rules.Event{notification("r-old", T0), notification("r-retry", T0), mail("r-dead", T0), notification("r-new", T0)}
		for i := range evs {
			evs[i].CreatedAt = at(time.Duration(i) * time.Minute)
		}
		writeEvents(t, s, evs...)
		due, _ := dueEvents(t, s, rules.LaneNotify, T0, 10)
		for _, d := range due {
			if d.ID == "r-retry" {
				ev := d.Event
				ev.Attempts, ev.NextAt = 1, at(time.Hour)
				if err := s.RescheduleEvent(context.Background(), d.Seq, ev); err != nil {
					t.Fatal(err)
				}
			}
		}
		mails, _ := dueEvents(t, s, rules.LaneMail, T0, 10)
		if err := s.DeadEvent(context.Background(), mails[0].Seq, mails[0].Event); err != nil {
			t.Fatal(err)
		}
		recs, err := s.OutboxRecords(context.Background(), 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := eventIDs(recs); !slices.Equal(got, []string{"r-new", "r-dead", "r-retry", "r-old"}) {
			t.Fatalf("OutboxRecords %v, want newest first", got)
		}
		states := map[string]rules.OutboxState{}
		for _, r := range recs {
			states[r.ID] = r.State
		}
		want := map[string]rules.OutboxState{"r-new": rules.OutboxPending, "r-dead": rules.OutboxDead,
			"r-retry": rules.OutboxRetrying, "r-old": rules.OutboxPending}
		if !reflect.DeepEqual(states, want) {
			t.Errorf("states %v, want %v", states, want)
		}
		if recs, _ := s.OutboxRecords(context.Background(), 2, nil); !slices.Equal(eventIDs(recs), []string{"r-new", "r-dead"}) {
			t.Errorf("limit 2: %v", eventIDs(recs))
		}
		keep := func(r rules.OutboxRecord) bool { return r.Kind == rules.EventMerchantNotification }
		if recs, _ := s.OutboxRecords(context.Background(), 10, keep); !slices.Equal(eventIDs(recs), []string{"r-new", "r-retry", "r-old"}) {
			t.Errorf("kept notifications: %v", eventIDs(recs))
		}
	})

	t.Run("DeliveredRecords lists delivered ids, newest delivery first, read from the id", func(t *testing.T) {
		s := e.open(t)
		addMerchants(t, s, m1)
		// Ids as the service writes them, and as it wrote them before (":" between the parts).
		ids := []string{rules.OutcomeEventID(rules.EventMerchantNotification, 41, rules.StatusProcessed), rules.EventBeneficiaryMail + ":42:REJECTED_BANK",
			rules.EventCashOTP + ".00ff", rules.EventMerchantNotification + ":43:REVERSED"}
		kinds := map[string]string{ids[0]: rules.EventMerchantNotification, ids[1]: rules.EventBeneficiaryMail, ids[2]: rules.EventCashOTP, ids[3]: rules.EventMerchantNotification}
		payouts := map[string]int64{ids[0]: 41, ids[1]: 42, ids[3]: 43}
		for _, id := range ids {
			writeEvents(t, s, rules.Event{ID: id, Kind: kinds[id], MerchantID: m1, CreatedAt: T0, NextAt: T0})
		}
		for _, lane := range []rules.Lane{rules.LaneNotify, rules.LaneMail} {
			due, _ := dueEvents(t, s, lane, T0, 10)
			for _, d := range due {
				i := slices.Index(ids, d.ID)
				if err := s.EventDelivered(context.Background(), d.Seq, d.ID, at(time.Duration(i)*time.Minute)); err != nil {
					t.Fatal(err)
				}
			}
		}
		recs, err := s.DeliveredRecords(context.Background(), 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := eventIDs(recs); !slices.Equal(got, []string{ids[3], ids[2], ids[1], ids[0]}) {
			t.Fatalf("DeliveredRecords %v, want newest delivery first", got)
		}
		for _, r := range recs {
			i := slices.Index(ids, r.ID)
			kind, payout := kinds[r.ID], payouts[r.ID]
			if r.State != rules.OutboxDelivered || !r.DeliveredAt.Equal(at(time.Duration(i)*time.Minute)) || r.Kind != kind || r.PayoutID != payout {
				t.Errorf("record %+v: want delivered at +%dm, kind %s, payout %d", r, i, kind, payout)
			}
		}
		if recs, _ := s.DeliveredRecords(context.Background(), 1, nil); !slices.Equal(eventIDs(recs), []string{ids[3]}) {
			t.Errorf("limit 1: %v", eventIDs(recs))
		}
		keep := func(r rules.OutboxRecord) bool { return r.PayoutID == 42 }
		if recs, _ := s.DeliveredRecords(context.Background(), 10, keep); !slices.Equal(eventIDs(recs), []string{ids[1]}) {
			t.Errorf("kept payout 42: %v", eventIDs(recs))
		}
	})

	t.Run("PruneOutbox forgets delivered ids long past and keeps recent ones", func(t *testing.T) {
		s := e.open(t)
		addMerchants(t, s, m1)
		writeEvents(t, s, notification("old", T0), notification("recent", T0))
		due, _ := dueEvents(t, s, rules.LaneNotify, T0, 10)
		if err := s.EventDelivered(context.Background(), due[0].Seq, due[0].ID, at(-60*24*time.Hour)); err != nil {
			t.Fatal(err)
		}
		if err := s.EventDelivered(context.Background(), due[1].Seq, due[1].ID, at(-time.Hour)); err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			if err := s.PutSandboxMail(context.Background(), "", fmt.Appendf(nil, `{"n":%d}`, i), T0); err != nil {
				t.Fatal(err)
			}
		}
		n, err := s.PruneOutbox(context.Background(), T0)
		if err != nil || n != 1 {
			t.Fatalf("PruneOutbox = %d, %v; want the one id delivered 60 days ago", n, err)
		}
		if _, ok, _ := s.WasDelivered(context.Background(), "old"); ok {
			t.Errorf("the old id is kept")
		}
		if _, ok, _ := s.WasDelivered(context.Background(), "recent"); !ok {
			t.Errorf("the recent id is forgotten")
		}
		if mails, _ := s.SandboxMails(context.Background(), 10); len(mails) != 3 {
			t.Errorf("%d mails left, want the 3", len(mails))
		}
	})
}

// testSandboxMail: PutSandboxMail and SandboxMails.
func testSandboxMail(t *testing.T, e Engine) {
	t.Run("a mail of an event is kept exactly once and marks the event delivered", func(t *testing.T) {
		s := e.open(t)
		addMerchants(t, s, m1)
		writeEvents(t, s, mail("ev-1", T0))
		for range 2 {
			if err := s.PutSandboxMail(context.Background(), "ev-1", []byte(`{"eventId":"ev-1"}`), at(time.Second)); err != nil {
				t.Fatal(err)
			}
		}
		if mails, _ := s.SandboxMails(context.Background(), 10); len(mails) != 1 || !sameJSONValue(mails[0], []byte(`{"eventId":"ev-1"}`)) {
			t.Errorf("mails %q, want the one", mails)
		}
		if when, ok, _ := s.WasDelivered(context.Background(), "ev-1"); !ok || !when.Equal(at(time.Second)) {
			t.Errorf("WasDelivered = %v %v", when, ok)
		}
		// The event written with the change is dropped rather than delivered again.
		if due, _ := dueEvents(t, s, rules.LaneMail, at(time.Minute), 10); len(due) != 0 {
			t.Errorf("due %v after its mail was kept", eventIDs(due))
		}
		if n := s.OutboxDepth(context.Background()); n != 0 {
			t.Errorf("depth %d, want 0", n)
		}
	})

	t.Run("an event delivered already writes no mail", func(t *testing.T) {
		s := e.open(t)
		addMerchants(t, s, m1)
		writeEvents(t, s, mail("ev-2", T0))
		due, _ := dueEvents(t, s, rules.LaneMail, T0, 10)
		if err := s.EventDelivered(context.Background(), due[0].Seq, "ev-2", T0); err != nil {
			t.Fatal(err)
		}
		if err := s.PutSandboxMail(context.Background(), "ev-2", []byte(`{"eventId":"ev-2"}`), at(time.Second)); err != nil {
			t.Fatal(err)
		}
		if mails, _ := s.SandboxMails(context.Background(), 10); len(mails) != 0 {
			t.Errorf("mails %q, want none", mails)
		}
		if when, _, _ := s.WasDelivered(context.Background(), "ev-2"); !when.Equal(T0) {
			t.Errorf("delivered at %v, want the first delivery's %v", when, T0)
		}
	})

	t.Run("mails without an event are all kept, newest first", func(t *testing.T) {
		s := e.open(t)
		for i := range 3 {
			if err := s.PutSandboxMail(context.Background(), "", fmt.Appendf(nil, `{"n":%d}`, i), at(time.Duration(i)*time.Second)); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.SandboxMails(context.Background(), 2)
		if err != nil || len(got) != 2 || !sameJSONValue(got[0], []byte(`{"n":2}`)) || !sameJSONValue(got[1], []byte(`{"n":1}`)) {
			t.Errorf("SandboxMails(2) = %q, %v; want n 2 then 1", got, err)
		}
		if all, _ := s.SandboxMails(context.Background(), 10); len(all) != 3 {
			t.Errorf("%d mails, want 3", len(all))
		}
	})
}
