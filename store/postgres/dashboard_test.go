package postgres

import (
	"context"
	"fmt"
	"testing"
	"time"

	"payouts/rules"
)

func TestSandboxMailboxListsNewestFirst(t *testing.T) {
	db := openRest(t)
	for i := range 3 {
		if err := db.PutSandboxMail(context.Background(), "", fmt.Appendf(nil, `{"n":%d}`, i), restT0); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.PutSandboxMail(context.Background(), "", []byte("not json"), restT0); err == nil {
		t.Errorf("kept a mail that is not JSON")
	}
	got, err := db.SandboxMails(context.Background(), 2)
	if err != nil || len(got) != 2 || string(got[0]) != `{"n":2}` || string(got[1]) != `{"n":1}` {
		t.Errorf("SandboxMails(2) = %q, %v; want n 2 then 1", got, err)
	}
}

// A sandbox mail and its event's delivered mark are one transaction: the same event's mail
// written again (a retry after a crash between the mail and EventDelivered) is not kept,
// and the outbox drops the event as delivered.
func TestSandboxMailOfAnEventIsKeptExactlyOnce(t *testing.T) {
	db := openRest(t)
	restEnqueue(t, db, restEvent("ev-1", restT0))
	for range 2 {
		if err := db.PutSandboxMail(context.Background(), "ev-1", []byte(`{"eventId":"ev-1"}`), restT0); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := db.SandboxMails(context.Background(), 10); len(got) != 1 {
		t.Errorf("%d mails for one event, want 1", len(got))
	}
	if _, ok, _ := db.WasDelivered(context.Background(), "ev-1"); !ok {
		t.Errorf("the mail did not mark its event delivered")
	}
	if due, _, _ := db.DueEvents(context.Background(), rules.LaneNotify, restT0, 10); len(due) != 0 {
		t.Errorf("due %d events after their mail was kept, want 0", len(due))
	}
	if db.OutboxDepth(context.Background()) != 0 {
		t.Errorf("outbox depth %d, want 0", db.OutboxDepth(context.Background()))
	}
}

func TestPruneOutboxForgetsOldDeliveredIDsAndOldMail(t *testing.T) {
	db := openRest(t)
	restEnqueue(t, db, restEvent("old", restT0), restEvent("new", restT0))
	due, _, _ := db.DueEvents(context.Background(), rules.LaneNotify, restT0, 10)
	if len(due) != 2 {
		t.Fatalf("due %d", len(due))
	}
	if err := db.EventDelivered(context.Background(), due[0].Seq, "old", restT0.Add(-8*24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := db.EventDelivered(context.Background(), due[1].Seq, "new", restT0); err != nil {
		t.Fatal(err)
	}
	restSQL(t, db, `INSERT INTO sandbox_mail (raw, at)
		SELECT convert_to(format('{"n":%s}', n), 'UTF8'), $1 FROM generate_series(0, $2) n`, restT0, KeepSandboxMails+1)
	if err := db.PutSandboxMail(context.Background(), "", fmt.Appendf(nil, `{"n":%d}`, KeepSandboxMails+2), restT0); err != nil {
		t.Fatal(err)
	}
	n, err := db.PruneOutbox(context.Background(), restT0)
	if err != nil || n != 4 {
		t.Fatalf("pruned %d (%v), want 1 id and 3 mails", n, err)
	}
	if _, ok, _ := db.WasDelivered(context.Background(), "old"); ok {
		t.Error("an id delivered 8 days ago was kept")
	}
	if _, ok, _ := db.WasDelivered(context.Background(), "new"); !ok {
		t.Error("an id delivered now was forgotten")
	}
	mails, _ := db.SandboxMails(context.Background(), KeepSandboxMails+10)
	if len(mails) != KeepSandboxMails || string(mails[0]) != fmt.Sprintf(`{"n":%d}`, KeepSandboxMails+2) ||
		string(mails[len(mails)-1]) != `{"n":3}` {
		t.Errorf("%d mails kept, newest %s, oldest %s", len(mails), mails[0], mails[len(mails)-1])
	}
	if n, err := db.PruneOutbox(context.Background(), restT0); n != 0 || err != nil {
		t.Errorf("second prune removed %d (%v)", n, err)
	}
}

func TestResendEventRevivesADeadLetterWithTheSameID(t *testing.T) {
	db := openRest(t)
	restEnqueue(t, db, restEvent("dead", restT0), restEvent("waiting", restT0.Add(time.Hour)), restEvent("sent", restT0))
	due, _, _ := db.DueEvents(context.Background(), rules.LaneNotify, restT0, 10)
	dead := due[0].Event
	dead.Attempts, dead.LastError = 9, "410 Gone"
	if err := db.DeadEvent(context.Background(), due[0].Seq, dead); err != nil {
		t.Fatal(err)
	}
	if err := db.EventDelivered(context.Background(), due[1].Seq, "sent", restT0); err != nil {
		t.Fatal(err)
	}
	now := restT0.Add(48 * time.Hour)
	ev, found, err := db.ResendEvent(context.Background(), "dead", now)
	if err != nil || !found || ev.ID != "dead" || ev.Attempts != 9 || ev.LastError != "410 Gone" ||
		!ev.CreatedAt.Equal(now) || !ev.NextAt.Equal(now) {
		t.Fatalf("resend dead: %+v %v %v; want it back with its attempts, created and due now", ev, found, err)
	}
	if letters, _ := db.DeadEvents(context.Background(), 10); len(letters) != 0 {
		t.Errorf("the revived letter is still dead: %+v", letters)
	}
	ev, found, err = db.ResendEvent(context.Background(), "waiting", now)
	if err != nil || !found || !ev.NextAt.Equal(now) || !ev.CreatedAt.Equal(restT0) {
		t.Fatalf("resend waiting: %+v %v %v; want due now, created as it was", ev, found, err)
	}
	for _, id := range []string{"sent", "unknown"} {
		if _, found, err := db.ResendEvent(context.Background(), id, now); found || err != nil {
			t.Errorf("resend %s: found %v err %v", id, found, err)
		}
	}
	due, _, _ = db.DueEvents(context.Background(), rules.LaneNotify, now, 10)
	if len(due) != 2 || due[0].ID != "dead" || due[1].ID != "waiting" {
		t.Errorf("due after the resends: %+v", due)
	}
}

func TestOutboxRecordsAndDeliveredRecords(t *testing.T) {
	db := openRest(t)
	older, newer, dead := restEvent("n:1:PROCESSED", restT0), restEvent("n:2:PROCESSED", restT0), restEvent("n:3:DENIED", restT0)
	older.CreatedAt, newer.CreatedAt, dead.CreatedAt = restT0.Add(-time.Hour), restT0, restT0.Add(-time.Minute)
	restEnqueue(t, db, older, newer, dead, restEvent("merchant.notification:42:PROCESSED", restT0))
	due, _, _ := db.DueEvents(context.Background(), rules.LaneNotify, restT0, 10)
	if err := db.DeadEvent(context.Background(), due[2].Seq, due[2].Event); err != nil {
		t.Fatal(err)
	}
	retry := due[0].Event
	retry.Attempts = 1
	if err := db.RescheduleEvent(context.Background(), due[0].Seq, retry); err != nil {
		t.Fatal(err)
	}
	if err := db.EventDelivered(context.Background(), due[3].Seq, due[3].ID, restT0); err != nil {
		t.Fatal(err)
	}
	recs, err := db.OutboxRecords(context.Background(), 10, nil)
	if err != nil || len(recs) != 3 {
		t.Fatalf("records %+v %v", recs, err)
	}
	want := []struct {
		id    string
		state rules.OutboxState
	}{{"n:2:PROCESSED", rules.OutboxPending}, {"n:3:DENIED", rules.OutboxDead}, {"n:1:PROCESSED", rules.OutboxRetrying}}
	for i, w := range want {
		if recs[i].ID != w.id || recs[i].State != w.state {
			t.Errorf("record %d: %s %s, want %s %s", i, recs[i].ID, recs[i].State, w.id, w.state)
		}
	}
	onlyDead := func(r rules.OutboxRecord) bool { return r.State == rules.OutboxDead }
	if recs, _ := db.OutboxRecords(context.Background(), 10, onlyDead); len(recs) != 1 || recs[0].ID != "n:3:DENIED" {
		t.Errorf("dead records %+v", recs)
	}
	if recs, _ := db.OutboxRecords(context.Background(), 1, nil); len(recs) != 1 || recs[0].ID != "n:2:PROCESSED" {
		t.Errorf("limit 1: %+v", recs)
	}
	sent, err := db.DeliveredRecords(context.Background(), 10, nil)
	if err != nil || len(sent) != 1 || sent[0].PayoutID != 42 || sent[0].Kind != rules.EventMerchantNotification ||
		sent[0].State != rules.OutboxDelivered || !sent[0].DeliveredAt.Equal(restT0) {
		t.Errorf("delivered records %+v %v", sent, err)
	}
}
