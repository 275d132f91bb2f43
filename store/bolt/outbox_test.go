package bolt_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"payouts/rules"
	"payouts/rules/workers"
	"payouts/store/bolt"
)

var outboxT0 = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

func openOutboxDB(t *testing.T, path string) *bolt.DB {
	t.Helper()
	db, err := bolt.Open(path, bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

var outboxOrders atomic.Int64

// writeEvents stores a payout with its events, as the service does.
func writeEvents(t *testing.T, db *bolt.DB, evs ...rules.Event) int64 {
	t.Helper()
	p := &rules.Payout{MerchantID: "m1", OrderID: fmt.Sprintf("O-%d", outboxOrders.Add(1)), Status: rules.StatusCreated}
	stored, created, err := db.CreatePayout(context.Background(), p, time.Time{}, evs, nil)
	if err != nil || !created {
		t.Fatalf("CreatePayout: %v %v", created, err)
	}
	return stored.ID
}

func outboxEvent(id string, next time.Time) rules.Event {
	return rules.Event{ID: id, Kind: rules.EventMerchantNotification, MerchantID: "m1", CreatedAt: outboxT0, NextAt: next}
}

func TestOutboxDueEventsByDueTimeWithTheNextTime(t *testing.T) {
	db := openOutboxDB(t, filepath.Join(t.TempDir(), "p.db"))
	defer db.Close(context.Background())
	pid := writeEvents(t, db, outboxEvent("a", outboxT0), outboxEvent("later", outboxT0.Add(time.Hour)), outboxEvent("b", outboxT0.Add(-time.Minute)))
	due, _, err := db.DueEvents(context.Background(), rules.LaneNotify, outboxT0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(due) != 1 || due[0].ID != "b" || due[0].PayoutID != pid {
		t.Fatalf("limit 1 gave %+v; want b (due earliest), with the payout id", due)
	}
	// b is claimed by the first call: the next one lists the rest.
	due, next, err := db.DueEvents(context.Background(), rules.LaneNotify, outboxT0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(due) != 1 || due[0].ID != "a" {
		t.Fatalf("due %+v; want a alone, b being claimed", due)
	}
	if !next.Equal(outboxT0.Add(time.Hour)) {
		t.Errorf("next %v, want the later event's NextAt", next)
	}
	if n := db.OutboxDepth(context.Background()); n != 3 {
		t.Errorf("depth %d, want 3", n)
	}
}

func TestOutboxDeliveredIDDropsEveryLaterCopy(t *testing.T) {
	db := openOutboxDB(t, filepath.Join(t.TempDir(), "p.db"))
	defer db.Close(context.Background())
	writeEvents(t, db, outboxEvent("x", outboxT0))
	due, _, _ := db.DueEvents(context.Background(), rules.LaneNotify, outboxT0, 10)
	if err := db.EventDelivered(context.Background(), due[0].Seq, "x", outboxT0); err != nil {
		t.Fatal(err)
	}
	writeEvents(t, db, outboxEvent("x", outboxT0)) // the same event written again
	if due, _, _ := db.DueEvents(context.Background(), rules.LaneNotify, outboxT0, 10); len(due) != 0 {
		t.Fatalf("a delivered event id is due again: %+v", due)
	}
	if n := db.OutboxDepth(context.Background()); n != 0 {
		t.Errorf("depth %d after dropping the copy, want 0", n)
	}
	if at, ok, err := db.WasDelivered(context.Background(), "x"); !ok || err != nil || !at.Equal(outboxT0) {
		t.Errorf("WasDelivered = %v %v %v", at, ok, err)
	}
}

func TestOutboxRescheduleAndDeadLettersSurviveReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.db")
	db := openOutboxDB(t, path)
	writeEvents(t, db, outboxEvent("retry", outboxT0), outboxEvent("dead", outboxT0))
	due, _, _ := db.DueEvents(context.Background(), rules.LaneNotify, outboxT0, 10)
	r := due[0].Event
	r.Attempts, r.NextAt, r.LastError = 3, outboxT0.Add(8*time.Second), "503"
	if err := db.RescheduleEvent(context.Background(), due[0].Seq, r); err != nil {
		t.Fatal(err)
	}
	if err := db.DeadEvent(context.Background(), due[1].Seq, due[1].Event); err != nil {
		t.Fatal(err)
	}
	db.Close(context.Background())

	db = openOutboxDB(t, path)
	defer db.Close(context.Background())
	if due, next, _ := db.DueEvents(context.Background(), rules.LaneNotify, outboxT0, 10); len(due) != 0 || !next.Equal(outboxT0.Add(8*time.Second)) {
		t.Fatalf("after reopen: due %+v next %v; want nothing due until +8s", due, next)
	}
	due, _, _ = db.DueEvents(context.Background(), rules.LaneNotify, outboxT0.Add(8*time.Second), 10)
	if len(due) != 1 || due[0].ID != "retry" || due[0].Attempts != 3 || due[0].LastError != "503" {
		t.Fatalf("after reopen: %+v; want the rescheduled event with its attempts", due)
	}
	dead, err := db.DeadEvents(context.Background(), 10)
	if err != nil || len(dead) != 1 || dead[0].ID != "dead" {
		t.Errorf("dead letters %+v %v", dead, err)
	}
}

// The dispatcher on bbolt across a restart: a failed try is rescheduled in the file, the
// next process delivers it once, and nothing delivers it again.
func TestOutboxDispatcherAcrossRestartDeliversOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.db")
	now := outboxT0
	clock := func() time.Time { return now }
	var calls, delivered atomic.Int32
	down := true
	deliver := rules.DelivererFunc(func(ctx context.Context, ev rules.Event) error {
		calls.Add(1)
		if down {
			return errors.New("connection refused")
		}
		delivered.Add(1)
		return nil
	})
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	dispatcher := func(db *bolt.DB) *workers.Dispatcher {
		return &workers.Dispatcher{Store: db, Now: clock, Log: quiet, Rand: func() float64 { return 0.5 },
			Deliverers: map[string]rules.Deliverer{rules.EventMerchantNotification: deliver}}
	}

	db := openOutboxDB(t, path)
	writeEvents(t, db, outboxEvent("n1", outboxT0))
	dispatcher(db).RunOnce(context.Background())
	db.Close(context.Background()) // the server stops while the event waits for its retry

	down = false
	db = openOutboxDB(t, path)
	defer db.Close(context.Background())
	d := dispatcher(db)
	d.RunOnce(context.Background())
	if calls.Load() != 1 {
		t.Fatalf("tried again before its backoff after the restart")
	}
	now = now.Add(2 * time.Second)
	for range 3 {
		d.RunOnce(context.Background())
	}
	if calls.Load() != 2 || delivered.Load() != 1 {
		t.Errorf("calls %d, delivered %d; want 2 and exactly 1", calls.Load(), delivered.Load())
	}
	if db.OutboxDepth(context.Background()) != 0 {
		t.Errorf("outbox depth %d, want 0", db.OutboxDepth(context.Background()))
	}
}

func TestSandboxMailboxListsNewestFirst(t *testing.T) {
	db := openOutboxDB(t, filepath.Join(t.TempDir(), "p.db"))
	defer db.Close(context.Background())
	for i := range 3 {
		if err := db.PutSandboxMail(context.Background(), "", fmt.Appendf(nil, `{"n":%d}`, i), outboxT0); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.PutSandboxMail(context.Background(), "", []byte("not json"), outboxT0); err == nil {
		t.Errorf("kept a mail that is not JSON")
	}
	got, err := db.SandboxMails(context.Background(), 2)
	if err != nil || len(got) != 2 || string(got[0]) != `{"n":2}` || string(got[1]) != `{"n":1}` {
		t.Errorf("SandboxMails(2) = %q, %v; want n 2 then 1", got, err)
	}
}

func TestPruneOutboxForgetsOldDeliveredIDsAndOldMail(t *testing.T) {
	t.Parallel()
	db := openOutboxDB(t, filepath.Join(t.TempDir(), "p.db"))
	defer db.Close(context.Background())
	writeEvents(t, db, outboxEvent("old", outboxT0), outboxEvent("new", outboxT0))
	due, _, _ := db.DueEvents(context.Background(), rules.LaneNotify, outboxT0, 10)
	if len(due) != 2 {
		t.Fatalf("due %d", len(due))
	}
	if err := db.EventDelivered(context.Background(), due[0].Seq, "old", outboxT0.Add(-8*24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := db.EventDelivered(context.Background(), due[1].Seq, "new", outboxT0); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < bolt.KeepSandboxMails+3; i++ {
		if err := db.PutSandboxMail(context.Background(), "", []byte(fmt.Sprintf(`{"n":%d}`, i)), outboxT0); err != nil {
			t.Fatal(err)
		}
	}
	n, err := db.PruneOutbox(context.Background(), outboxT0)
	if err != nil || n != 4 {
		t.Fatalf("pruned %d (%v), want 1 id and 3 mails", n, err)
	}
	if _, ok, _ := db.WasDelivered(context.Background(), "old"); ok {
		t.Error("an id delivered 8 days ago was kept")
	}
	if _, ok, _ := db.WasDelivered(context.Background(), "new"); !ok {
		t.Error("an id delivered now was forgotten")
	}
	mails, _ := db.SandboxMails(context.Background(), 1)
	if string(mails[0]) != fmt.Sprintf(`{"n":%d}`, bolt.KeepSandboxMails+2) {
		t.Errorf("newest mail %s", mails[0])
	}
}

// A sandbox mail and its event's delivered mark are one transaction: the same event's mail
// written again (a retry after a crash between the mail and EventDelivered) is not kept,
// and the outbox drops the event as delivered.
func TestSandboxMailOfAnEventIsKeptExactlyOnce(t *testing.T) {
	db := openOutboxDB(t, filepath.Join(t.TempDir(), "p.db"))
	defer db.Close(context.Background())
	writeEvents(t, db, outboxEvent("ev-1", outboxT0))
	for range 2 {
		if err := db.PutSandboxMail(context.Background(), "ev-1", []byte(`{"eventId":"ev-1"}`), outboxT0); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := db.SandboxMails(context.Background(), 10); len(got) != 1 {
		t.Errorf("%d mails for one event, want 1", len(got))
	}
	if _, ok, _ := db.WasDelivered(context.Background(), "ev-1"); !ok {
		t.Errorf("the mail did not mark its event delivered")
	}
	// The crash came before EventDelivered: the event is still in the outbox, and is dropped.
	if due, _, _ := db.DueEvents(context.Background(), rules.LaneNotify, outboxT0, 10); len(due) != 0 {
		t.Errorf("due %d events after their mail was kept, want 0", len(due))
	}
	if db.OutboxDepth(context.Background()) != 0 {
		t.Errorf("outbox depth %d, want 0", db.OutboxDepth(context.Background()))
	}
}

// The due-time index keeps each event's merchant, so that a dispatcher can skip the events
// of a merchant that used its share of the workers without hiding another's.
func TestDueEventsSkippingLeavesOutAMerchantsEvents(t *testing.T) {
	db := openOutboxDB(t, filepath.Join(t.TempDir(), "p.db"))
	defer db.Close(context.Background())
	var evs []rules.Event
	for i := range 5 {
		evs = append(evs, outboxEvent(fmt.Sprintf("slow-%d", i), outboxT0))
	}
	other := outboxEvent("other", outboxT0)
	other.MerchantID = "m2"
	writeEvents(t, db, append(evs, other)...)
	due, _, err := db.DueEventsSkipping(context.Background(), rules.LaneNotify, outboxT0, 2, func(seq uint64, merchantID string) bool { return merchantID == "m1" })
	if err != nil || len(due) != 1 || due[0].ID != "other" {
		t.Errorf("DueEventsSkipping = %v, %v; want only the other merchant's event", due, err)
	}
}
