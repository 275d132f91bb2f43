package storetest

import (
	"context"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"payouts/rules"
)

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// testEventLog: the event log (bodies and attempts kept, listed by cursor and
// filters, pruned), the sandbox inbox and the delivery chaos.
func testEventLog(t *testing.T, e Engine) {
	ev := func(merchant string, payout int64, status string, at time.Time) rules.LoggedEvent {
		id := rules.EventMerchantNotification + ":" + itoa(payout) + ":" + status
		return rules.LoggedEvent{ID: id, MerchantID: merchant, PayoutID: payout, Type: rules.EventType(id),
			Body: []byte(`{"payout":{"Id":"` + itoa(payout) + `"}, "status": "` + status + `"}`), CreatedAt: at}
	}
	failed := rules.DeliveryAttempt{At: T0, Status: 503, Error: "answered 503", Duration: 120 * time.Millisecond}
	ok := rules.DeliveryAttempt{At: T0.Add(2 * time.Second), Status: 200, Duration: 15 * time.Millisecond}

	t.Run("an event keeps its exact body and every attempt; the first delivery sets deliveredAt", func(t *testing.T) {
		s := e.open(t)
		a := ev(m1, 7, "PROCESSED", T0)
		for _, at := range []rules.DeliveryAttempt{failed, ok, {At: T0.Add(time.Minute), Status: 200, Cause: rules.CauseResend}} {
			if err := s.LogAttempt(context.Background(), a, at); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.LoggedEvent(context.Background(), m1, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		if string(got.Body) != string(a.Body) || got.PayoutID != 7 || got.Type != "payout.PROCESSED" || !got.CreatedAt.Equal(T0) || got.Seq <= 0 {
			t.Errorf("record: %+v", got)
		}
		if len(got.Attempts) != 3 || !reflect.DeepEqual(got.Attempts[0], failed) || !reflect.DeepEqual(got.Attempts[1], ok) || got.Attempts[2].Cause != rules.CauseResend {
			t.Errorf("attempts: %+v", got.Attempts)
		}
		if !got.DeliveredAt.Equal(ok.At) {
			t.Errorf("deliveredAt %v, want the first delivery %v", got.DeliveredAt, ok.At)
		}
		if _, err := s.LoggedEvent(context.Background(), m2, a.ID); !errors.Is(err, rules.ErrNotFound) {
			t.Errorf("another merchant's read: %v, want ErrNotFound", err)
		}
		if _, err := s.LoggedEvent(context.Background(), m1, "merchant.notification:8:PROCESSED"); !errors.Is(err, rules.ErrNotFound) {
			t.Errorf("unknown id: %v, want ErrNotFound", err)
		}
	})

	t.Run("a merchant's events list oldest first after a cursor, by type and payout", func(t *testing.T) {
		s := e.open(t)
		evs := []rules.LoggedEvent{ev(m1, 1, "PROCESSED", T0), ev(m2, 2, "PROCESSED", T0), ev(m1, 3, "REJECTED_BANK", T0),
			ev(m1, 4, "PROCESSED", T0), ev(m1, 1, "REVERSED", T0)}
		for _, x := range evs {
			if err := s.LogAttempt(context.Background(), x, ok); err != nil {
				t.Fatal(err)
			}
		}
		ids := func(es []rules.LoggedEvent) []string {
			var out []string
			for _, e := range es {
				out = append(out, e.ID)
			}
			return out
		}
		all, err := s.LoggedEvents(context.Background(), m1, rules.EventQuery{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{evs[0].ID, evs[2].ID, evs[3].ID, evs[4].ID}
		if !reflect.DeepEqual(ids(all), want) {
			t.Fatalf("all: %v, want %v", ids(all), want)
		}
		page, _ := s.LoggedEvents(context.Background(), m1, rules.EventQuery{Limit: 2})
		next, _ := s.LoggedEvents(context.Background(), m1, rules.EventQuery{After: page[len(page)-1].Seq, Limit: 2})
		if got := append(ids(page), ids(next)...); !reflect.DeepEqual(got, want) {
			t.Errorf("two pages: %v, want %v", got, want)
		}
		if got, _ := s.LoggedEvents(context.Background(), m1, rules.EventQuery{Limit: 10, Type: "payout.PROCESSED"}); !reflect.DeepEqual(ids(got), []string{evs[0].ID, evs[3].ID}) {
			t.Errorf("type: %v", ids(got))
		}
		if got, _ := s.LoggedEvents(context.Background(), m1, rules.EventQuery{Limit: 10, PayoutID: 1}); !reflect.DeepEqual(ids(got), []string{evs[0].ID, evs[4].ID}) {
			t.Errorf("payout: %v", ids(got))
		}
		if got, _ := s.LoggedEvents(context.Background(), m1, rules.EventQuery{After: all[len(all)-1].Seq, Limit: 10}); len(got) != 0 {
			t.Errorf("after the last: %v", ids(got))
		}
	})

	t.Run("pruning forgets events and inbox items older than the cutoff", func(t *testing.T) {
		s := e.open(t)
		old, young := ev(m1, 1, "PROCESSED", T0), ev(m1, 2, "PROCESSED", T0.Add(31*24*time.Hour))
		for _, x := range []rules.LoggedEvent{old, young} {
			if err := s.LogAttempt(context.Background(), x, ok); err != nil {
				t.Fatal(err)
			}
		}
		for _, at := range []time.Time{T0, T0.Add(31 * 24 * time.Hour)} {
			if err := s.PutInboxItem(context.Background(), m1, rules.InboxItem{EventID: old.ID, ReceivedAt: at, Headers: map[string]string{}, Body: []byte("{}")}); err != nil {
				t.Fatal(err)
			}
		}
		n, err := s.PruneEventLog(context.Background(), T0.Add(time.Hour))
		if err != nil || n != 2 {
			t.Fatalf("pruned %d, %v; want 2", n, err)
		}
		if _, err := s.LoggedEvent(context.Background(), m1, old.ID); !errors.Is(err, rules.ErrNotFound) {
			t.Errorf("old event still there: %v", err)
		}
		if _, err := s.LoggedEvent(context.Background(), m1, young.ID); err != nil {
			t.Errorf("young event: %v", err)
		}
		if items, _ := s.InboxItems(context.Background(), m1, 10); len(items) != 1 || !items[0].ReceivedAt.Equal(T0.Add(31*24*time.Hour)) {
			t.Errorf("inbox after pruning: %+v", items)
		}
	})

	t.Run("the inbox lists a merchant's items newest first", func(t *testing.T) {
		s := e.open(t)
		if items, err := s.InboxItems(context.Background(), m1, 10); err != nil || len(items) != 0 {
			t.Fatalf("empty inbox: %v %v", items, err)
		}
		for i := range 3 {
			it := rules.InboxItem{EventID: "e" + itoa(int64(i)), ReceivedAt: T0.Add(time.Duration(i) * time.Second),
				Headers: map[string]string{"verification": "sig" + itoa(int64(i))}, Body: []byte(`{"n":` + itoa(int64(i)) + `}`), SignatureValid: i != 1}
			if err := s.PutInboxItem(context.Background(), m1, it); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.PutInboxItem(context.Background(), m2, rules.InboxItem{EventID: "other", ReceivedAt: T0, Headers: map[string]string{}, Body: []byte("{}")}); err != nil {
			t.Fatal(err)
		}
		items, err := s.InboxItems(context.Background(), m1, 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(items) != 2 || items[0].EventID != "e2" || items[1].EventID != "e1" || items[1].SignatureValid || !items[0].SignatureValid ||
			items[0].Headers["verification"] != "sig2" || string(items[0].Body) != `{"n":2}` {
			t.Errorf("inbox: %+v", items)
		}
		if items, _ := s.InboxItems(context.Background(), m2, 10); len(items) != 1 || items[0].EventID != "other" {
			t.Errorf("the other merchant's inbox: %+v", items)
		}
	})

	t.Run("the inbox is newest first by receivedAt, whatever order deliveries at once were stored in", func(t *testing.T) {
		s := e.open(t)
		// e3 and e4 arrived at once and committed in the other order; e1 is older than both.
		for _, i := range []int{1, 4, 3} {
			it := rules.InboxItem{EventID: "e" + itoa(int64(i)), ReceivedAt: T0.Add(time.Duration(i) * time.Millisecond), Headers: map[string]string{}, Body: []byte("{}")}
			if err := s.PutInboxItem(context.Background(), m1, it); err != nil {
				t.Fatal(err)
			}
		}
		for limit, want := range map[int]string{1: "e4", 2: "e4 e3", 3: "e4 e3 e1"} {
			items, err := s.InboxItems(context.Background(), m1, limit)
			var got []string
			for _, it := range items {
				got = append(got, it.EventID)
			}
			if err != nil || strings.Join(got, " ") != want {
				t.Errorf("the first %d: %v %v, want %s", limit, got, err, want)
			}
		}
	})

	t.Run("delivery chaos is off until put, kept per merchant, and ends when deleted", func(t *testing.T) {
		s := e.open(t)
		if _, err := s.DeliveryChaos(context.Background(), m1); !errors.Is(err, rules.ErrNotFound) {
			t.Fatalf("fresh: %v, want ErrNotFound", err)
		}
		c := rules.DeliveryChaos{Duplicate: 0.2, Reorder: true, Delay: 2 * time.Second, FailFirst: 2}
		if err := s.PutDeliveryChaos(context.Background(), m1, c); err != nil {
			t.Fatal(err)
		}
		if got, err := s.DeliveryChaos(context.Background(), m1); err != nil || got != c {
			t.Errorf("got %+v %v, want %+v", got, err, c)
		}
		if _, err := s.DeliveryChaos(context.Background(), m2); !errors.Is(err, rules.ErrNotFound) {
			t.Errorf("another merchant: %v", err)
		}
		if err := s.DeleteDeliveryChaos(context.Background(), m1); err != nil {
			t.Fatal(err)
		}
		if _, err := s.DeliveryChaos(context.Background(), m1); !errors.Is(err, rules.ErrNotFound) {
			t.Errorf("after delete: %v", err)
		}
		if err := s.DeleteDeliveryChaos(context.Background(), m1); err != nil {
			t.Errorf("delete again: %v", err)
		}
	})

	t.Run("the event log, the inbox and the chaos survive Dump and Restore, cursors kept", func(t *testing.T) {
		s := e.open(t)
		a, b := ev(m1, 1, "PROCESSED", T0), ev(m2, 2, "REJECTED_BANK", T0.Add(time.Second))
		for _, x := range []struct {
			e rules.LoggedEvent
			a rules.DeliveryAttempt
		}{{a, failed}, {b, ok}, {a, ok}} {
			if err := s.LogAttempt(context.Background(), x.e, x.a); err != nil {
				t.Fatal(err)
			}
		}
		for i, m := range []string{m2, m1, m1} {
			it := rules.InboxItem{EventID: "e" + itoa(int64(i)), ReceivedAt: T0.Add(time.Duration(i) * time.Second),
				Headers: map[string]string{"verification": "s"}, Body: []byte(`{"i":` + itoa(int64(i)) + `}`), SignatureValid: true}
			if err := s.PutInboxItem(context.Background(), m, it); err != nil {
				t.Fatal(err)
			}
		}
		chaos := rules.DeliveryChaos{Duplicate: 0.5, Delay: time.Second, FailFirst: 1}
		if err := s.PutDeliveryChaos(context.Background(), m1, chaos); err != nil {
			t.Fatal(err)
		}
		recs := dumpOf(t, s)
		n := map[string]int{}
		for _, r := range recs {
			n[r.Kind]++
		}
		if n[rules.DumpLoggedEvent] != 2 || n[rules.DumpInboxItem] != 3 || n[rules.DumpDeliveryChaos] != 1 {
			t.Fatalf("dumped %v", n)
		}
		r := e.open(t)
		if err := r.Restore(context.Background(), recs); err != nil {
			t.Fatalf("Restore: %v", err)
		}
		if again := dumpOf(t, r); !reflect.DeepEqual(again, recs) {
			t.Errorf("the restored store dumps differently")
		}
		before, _ := s.LoggedEvent(context.Background(), m1, a.ID)
		after, err := r.LoggedEvent(context.Background(), m1, a.ID)
		if err != nil || !reflect.DeepEqual(after, before) {
			t.Errorf("restored event %+v %v, want %+v", after, err, before)
		}
		if items, _ := r.InboxItems(context.Background(), m1, 10); len(items) != 2 || items[0].EventID != "e2" {
			t.Errorf("restored inbox: %+v", items)
		}
		if c, err := r.DeliveryChaos(context.Background(), m1); err != nil || c != chaos {
			t.Errorf("restored chaos %+v %v", c, err)
		}
		// The log's numbering goes on after the restored events.
		c := ev(m1, 3, "PROCESSED", T0)
		if err := r.LogAttempt(context.Background(), c, ok); err != nil {
			t.Fatal(err)
		}
		got, _ := r.LoggedEvents(context.Background(), m1, rules.EventQuery{After: before.Seq, Limit: 10})
		if len(got) != 1 || got[0].ID != c.ID || got[0].Seq <= before.Seq {
			t.Errorf("after the restore, the next event: %+v", got)
		}
	})

	t.Run("the feed lists every attempt of a merchant in the order logged, with its event", func(t *testing.T) {
		s := e.open(t)
		a, b := ev(m1, 1, "PROCESSED", T0), ev(m1, 2, "PROCESSED", T0)
		dup := rules.DeliveryAttempt{At: T0.Add(3 * time.Second), Status: 200, Cause: rules.CauseChaosDuplicate}
		for _, x := range []struct {
			e rules.LoggedEvent
			a rules.DeliveryAttempt
		}{{a, failed}, {b, ok}, {ev(m2, 3, "PROCESSED", T0), ok}, {a, ok}, {a, dup}} {
			if err := s.LogAttempt(context.Background(), x.e, x.a); err != nil {
				t.Fatal(err)
			}
		}
		fs, err := s.AttemptsAfter(context.Background(), m1, 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range fs {
			got = append(got, f.Event.ID+"/"+f.Attempt.Cause+"/"+itoa(int64(f.Attempt.Status)))
			if string(f.Event.Body) != string(a.Body) && f.Event.ID == a.ID || f.Event.Attempts != nil {
				t.Errorf("feed event %+v", f.Event)
			}
		}
		want := []string{a.ID + "//503", b.ID + "//200", a.ID + "//200", a.ID + "/chaos-duplicate/200"}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("feed %v, want %v", got, want)
		}
		rest, _ := s.AttemptsAfter(context.Background(), m1, fs[1].Cursor, 10)
		if len(rest) != 2 || rest[0].Cursor != fs[2].Cursor || !reflect.DeepEqual(rest[1].Attempt, dup) {
			t.Errorf("after the second: %+v", rest)
		}
		if two, _ := s.AttemptsAfter(context.Background(), m1, 0, 2); len(two) != 2 {
			t.Errorf("limit 2: %d", len(two))
		}
		if other, _ := s.AttemptsAfter(context.Background(), m2, 0, 10); len(other) != 1 {
			t.Errorf("the other merchant's feed: %+v", other)
		}
		// Pruned events leave the feed.
		if _, err := s.PruneEventLog(context.Background(), T0.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if left, _ := s.AttemptsAfter(context.Background(), m1, 0, 10); len(left) != 0 {
			t.Errorf("after pruning: %+v", left)
		}
	})
}
