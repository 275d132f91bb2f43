package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"payouts/rules"
)

// dumped is what populate wrote, to check a dump and a restored store against.
type dumped struct {
	queued, rejected, card, processed *rules.Payout // queued is due at T0+1m; the others are not queued
	numbered                          string        // the merchant created without an id
	pendingMail, retrying             rules.Event
}

// populate writes at least one record of every dump kind, through rules.Storage.
func populate(t *testing.T, s rules.Storage) dumped {
	t.Helper()
	var d dumped
	addMerchants(t, s, m1, m2)
	numbered := &rules.Merchant{Name: "Numerada", CreatedAt: T0, SealedSecret: []byte("sealed")}
	if err := s.CreateMerchant(context.Background(), numbered, nil); err != nil {
		t.Fatal(err)
	}
	d.numbered = numbered.ID
	fund(t, s, m1, "PER", "PEN", 10_000)
	fund(t, s, m2, "COL", "COP", 5000)

	var err error
	d.queued, _, err = s.CreatePayout(context.Background(), newPayout(m1, "DUMP-queued", 1000, T0), T0,
		[]rules.Event{notification("n-pending", T0)}, reserveStep(T0, at(time.Minute)))
	if err != nil {
		t.Fatal(err)
	}
	d.rejected = create(t, s, newPayout(m1, "DUMP-rejected", 700, at(time.Second)), T0)
	update(t, s, []int64{d.rejected.ID}, func(p *rules.Payout, l rules.Ledger) (time.Time, error) {
		p.Move(rules.StatusRejectedBank, at(2*time.Second), rules.CodeBankRejected, "rejected by the bank")
		d.pendingMail = mail("m-pending", at(time.Hour))
		d.pendingMail.Data = json.RawMessage(`{"to":"ana.rojas@correo.pe"}`)
		for _, ev := range []rules.Event{notification("n-dead", T0), notification("n-sent", T0), notification("n-retry", T0), d.pendingMail} {
			ev.PayoutID = p.ID
			if err := l.Enqueue(ev); err != nil {
				return time.Time{}, err
			}
		}
		return time.Time{}, nil
	})
	d.rejected = payoutOf(t, s, m1, d.rejected.ID)
	card := newPayoutTo(m2, "DUMP-card", 500, at(3*time.Second), "COL", account)
	card.Channel = rules.ChannelCard
	card.SessionExpiresAt = at(15 * time.Minute)
	d.card = create(t, s, card, time.Time{})
	update(t, s, []int64{d.card.ID}, func(p *rules.Payout, l rules.Ledger) (time.Time, error) {
		p.Card = &rules.CardRef{Token: "card_tok", Brand: "VISA", BIN: "411111", Last4: "1111"}
		return time.Time{}, nil
	})
	d.card = payoutOf(t, s, m2, d.card.ID)
	d.processed = create(t, s, newPayout(m1, "DUMP-processed", 2000, at(4*time.Second)), time.Time{})
	update(t, s, []int64{d.processed.ID}, reserveStep(at(5*time.Second), time.Time{}))
	update(t, s, []int64{d.processed.ID}, func(p *rules.Payout, l rules.Ledger) (time.Time, error) {
		b, err := l.Balance(p.MerchantID, p.Country, p.Currency)
		if err != nil {
			return time.Time{}, err
		}
		b.Balance -= p.Reserved
		b.Processed += p.Reserved
		p.Reserved = 0
		p.Move(rules.StatusProcessed, at(6*time.Second), "", "")
		return time.Time{}, l.PutBalance(p.MerchantID, b)
	})
	d.processed = payoutOf(t, s, m1, d.processed.ID)
	d.queued = payoutOf(t, s, m1, d.queued.ID)

	// The outbox: one pending, one retrying, one dead, one delivered, a mail-lane event
	// with data (all written above), and the sandbox mailbox.
	d.pendingMail, _ = findEvent(t, s, "m-pending")
	due, _ := dueEvents(t, s, rules.LaneNotify, T0, 10)
	for _, e := range due {
		var err error
		switch e.ID {
		case "n-dead":
			ev := e.Event
			ev.Attempts, ev.LastError = 9, "410 Gone"
			err = s.DeadEvent(context.Background(), e.Seq, ev)
		case "n-sent":
			err = s.EventDelivered(context.Background(), e.Seq, "n-sent", at(time.Minute))
		case "n-retry":
			d.retrying = e.Event
			d.retrying.Attempts, d.retrying.NextAt, d.retrying.LastError = 2, at(20*time.Second), "503"
			err = s.RescheduleEvent(context.Background(), e.Seq, d.retrying)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PutSandboxMail(context.Background(), "mail-ev", []byte(`{"eventId":"mail-ev","to":"ana.rojas@correo.pe"}`), at(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := s.PutSandboxMail(context.Background(), "", []byte(`{"note":"no event"}`), at(3*time.Minute)); err != nil {
		t.Fatal(err)
	}

	// Cards, sessions and the sandbox's records.
	if err := s.PutCard(context.Background(), m2, 1, "45678912", d.card.ID, *d.card.Card, []byte("sealed-pan"), true); err != nil {
		t.Fatal(err)
	}
	if err := s.PutCard(context.Background(), m1, 1, "11111111", d.queued.ID, rules.CardRef{Token: "once", Brand: "VISA", BIN: "400000", Last4: "0002"}, []byte("sealed-once"), false); err != nil {
		t.Fatal(err)
	}
	sessions := s.Sessions(context.Background(), (&clock{t: T0}).Now)
	if err := sessions.Commit("tok-1", []byte("session-data"), at(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := sessions.BindCardSession(d.card.ID, "sid-1", at(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := s.PutSandboxClockOffset(context.Background(), 90*time.Minute); err != nil {
		t.Fatal(err)
	}
	lo := int64(10)
	if err := s.PutSandboxRules(context.Background(), m1, []rules.ScriptRule{{Match: rules.ScriptMatch{AmountMin: &lo},
		Outcome: rules.ScriptOutcome{Stage: rules.StageRejected, Status: rules.StatusDenied, Code: rules.CodeDenied}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutDirectoryEntry(context.Background(), "PER", "987654321", rules.DirectoryEntry{Entities: []rules.WalletEntity{{EntityBrand: "Plin", Status: rules.EntityAvailable}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutDirectoryEntry(context.Background(), "COL", "@ana", rules.DirectoryEntry{Absent: true}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutIntegrationUser(context.Background(), &rules.IntegrationUser{User: "ana", MerchantID: m1, PasswordHash: "hash", CreatedAt: T0}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SeenLookupRequest(context.Background(), m1, "req-1", T0); err != nil {
		t.Fatal(err)
	}
	return d
}

// findEvent finds a pending event by id.
func findEvent(t *testing.T, s rules.Storage, id string) (rules.Event, bool) {
	t.Helper()
	evs, err := s.OutboxEvents(context.Background(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		if ev.ID == id {
			return ev, true
		}
	}
	return rules.Event{}, false
}

// dumpOf dumps a store and fails the test on an error.
func dumpOf(t *testing.T, s rules.Storage) []rules.DumpRecord {
	t.Helper()
	var recs []rules.DumpRecord
	err := s.Dump(context.Background(), func(r rules.DumpRecord) error {
		r.Value = append(json.RawMessage(nil), r.Value...)
		recs = append(recs, r)
		return nil
	})
	if err != nil {
		t.Fatalf("Dump: %v", err)
	}
	return recs
}

// byKind groups a dump's canonical values by kind, each kind's values sorted.
func byKind(t *testing.T, recs []rules.DumpRecord) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, r := range recs {
		out[r.Kind] = append(out[r.Kind], canonical(t, r))
	}
	for _, vs := range out {
		slices.Sort(vs)
	}
	return out
}

// decode reads a record's value into its shape.
func decode[V any](t *testing.T, r rules.DumpRecord) V {
	t.Helper()
	var v V
	if err := json.Unmarshal(r.Value, &v); err != nil {
		t.Fatalf("a %s record does not decode into %T: %v (%s)", r.Kind, v, err, r.Value)
	}
	return v
}

// canonical is a record's value decoded into its shape and encoded again with its times
// in UTC and its JSON data by value, so that two engines' (or two dumps') records compare
// as text.
func canonical(t *testing.T, r rules.DumpRecord) string {
	t.Helper()
	var v any
	switch r.Kind {
	case rules.DumpMerchant:
		m := decode[rules.Merchant](t, r)
		v = normalize(&m)
	case rules.DumpBalance:
		v = decode[rules.DumpedBalance](t, r)
	case rules.DumpPayout:
		p := decode[rules.DumpedPayout](t, r)
		v = struct {
			P   any
			Due time.Time
		}{normalize(p.Payout), p.Due.UTC()}
	case rules.DumpEvent:
		e := decode[rules.DumpedEvent](t, r)
		data := e.Event.Data
		e.Event.Data = nil
		v = struct {
			E    any
			Data any
			Dead bool
		}{normalize(e.Event), jsonValue(data), e.Dead}
	case rules.DumpDelivered:
		d := decode[rules.DumpedDelivery](t, r)
		d.At = d.At.UTC()
		v = d
	case rules.DumpMail:
		m := decode[rules.DumpedMail](t, r)
		v = struct {
			EventID string
			Raw     any
			At      time.Time
		}{m.EventID, jsonValue(m.Raw), m.At.UTC()}
	case rules.DumpCard:
		v = decode[rules.DumpedCard](t, r)
	case rules.DumpSession:
		s := decode[rules.DumpedSession](t, r)
		s.Expiry = s.Expiry.UTC()
		v = s
	case rules.DumpCardSession:
		s := decode[rules.DumpedCardSession](t, r)
		s.Expiry = s.Expiry.UTC()
		v = s
	case rules.DumpClock:
		v = decode[rules.DumpedClock](t, r)
	case rules.DumpScripts:
		v = decode[rules.DumpedScripts](t, r)
	case rules.DumpDirectory:
		v = decode[rules.DumpedDirectoryEntry](t, r)
	case rules.DumpLedgerEntry:
		e := decode[rules.DumpedLedgerEntry](t, r)
		e.Entry.At = e.Entry.At.UTC()
		v = e
	case rules.DumpIntegrationUser:
		u := decode[rules.IntegrationUser](t, r)
		u.CreatedAt = u.CreatedAt.UTC()
		v = u
	default:
		t.Fatalf("a record of an unknown kind %q", r.Kind)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// jsonValue is a JSON text's value (nil for none; the text itself if it is not JSON).
func jsonValue(raw []byte) any {
	if len(raw) == 0 {
		return nil
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	return v
}

// testDumpRestore: Dump and Restore.
func testDumpRestore(t *testing.T, e Engine) {
	t.Run("Dump gives every record, kind by kind in rules.DumpKinds order", func(t *testing.T) {
		s := e.open(t)
		d := populate(t, s)
		recs := dumpOf(t, s)
		last := -1
		for _, r := range recs {
			i := slices.Index(rules.DumpKinds, r.Kind)
			if i < 0 {
				t.Fatalf("a record of an unknown kind %q", r.Kind)
			}
			if i < last {
				t.Fatalf("a %s record after a %s record: not in rules.DumpKinds order", r.Kind, rules.DumpKinds[last])
			}
			last = i
		}
		got := map[string]int{}
		for _, r := range recs {
			got[r.Kind]++
		}
		want := map[string]int{rules.DumpMerchant: 3, rules.DumpBalance: 2, rules.DumpPayout: 4,
			rules.DumpEvent:     4,                                       // n-pending, n-retry, m-pending; n-dead
			rules.DumpDelivered: 2, rules.DumpMail: 2, rules.DumpCard: 3, // on file, and two payouts'
			rules.DumpSession: 1, rules.DumpCardSession: 1, rules.DumpClock: 1, rules.DumpScripts: 1,
			rules.DumpDirectory: 2, rules.DumpIntegrationUser: 1,
			rules.DumpLedgerEntry: 5} // M1: funding, two reservations, a debit; M2: funding
		for _, k := range rules.DumpKinds {
			if got[k] != want[k] {
				t.Errorf("%d %s records, want %d", got[k], k, want[k])
			}
		}
		checkDumpContents(t, s, d, recs)
	})

	t.Run("every kind of rules.DumpKinds is dumped and restored", func(t *testing.T) {
		ctx := context.Background()
		s := e.open(t)
		populate(t, s)
		// populate leaves out the later features' kinds: one record of each. A new kind in
		// rules.DumpKinds needs a record here, so that every engine is shown to carry it.
		u := &rules.User{ID: "u_1", Name: "Ana", Email: "ana@example.com", Role: rules.RoleOperator, Status: rules.UserActive,
			CreatedAt: T0, UpdatedAt: T0}
		if err := s.CreateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
		auditEntries(t, s, 1)
		logged := rules.LoggedEvent{ID: rules.EventMerchantNotification + ":1:PROCESSED", MerchantID: m1, PayoutID: 1,
			Type: rules.EventType(rules.EventMerchantNotification + ":1:PROCESSED"), Body: []byte(`{}`), CreatedAt: T0}
		if err := s.LogAttempt(ctx, logged, rules.DeliveryAttempt{At: T0, Status: 200}); err != nil {
			t.Fatal(err)
		}
		if err := s.PutInboxItem(ctx, m1, rules.InboxItem{EventID: "e1", ReceivedAt: T0, Body: []byte(`{}`)}); err != nil {
			t.Fatal(err)
		}
		if err := s.PutDeliveryChaos(ctx, m1, rules.DeliveryChaos{FailFirst: 1}); err != nil {
			t.Fatal(err)
		}
		b, items := newBatch(m1, "every-kind", 1)
		if _, _, err := s.CreateBatch(ctx, b, items); err != nil {
			t.Fatal(err)
		}
		recs := dumpOf(t, s)
		r := e.open(t)
		if err := r.Restore(ctx, recs); err != nil {
			t.Fatalf("Restore: %v", err)
		}
		// Each kind's own test compares the records; here each kind is there, and comes back.
		count := func(recs []rules.DumpRecord) map[string]int {
			n := map[string]int{}
			for _, r := range recs {
				n[r.Kind]++
			}
			return n
		}
		want, got := count(recs), count(dumpOf(t, r))
		for _, k := range rules.DumpKinds {
			if want[k] == 0 {
				t.Errorf("no %s record dumped", k)
			}
			if got[k] != want[k] {
				t.Errorf("%s: %d records after the restore, %d before", k, got[k], want[k])
			}
		}
	})

	t.Run("Restore into an empty store gives the same dump and a working store", func(t *testing.T) {
		s := e.open(t)
		d := populate(t, s)
		recs := dumpOf(t, s)
		r := e.open(t)
		if err := r.Restore(context.Background(), recs); err != nil {
			t.Fatalf("Restore: %v", err)
		}
		want, got := byKind(t, recs), byKind(t, dumpOf(t, r))
		for _, k := range rules.DumpKinds {
			if len(got[k]) != len(want[k]) {
				t.Errorf("%s: %d records after the restore, %d before", k, len(got[k]), len(want[k]))
				continue
			}
			for i := range want[k] {
				if got[k][i] != want[k][i] {
					t.Errorf("%s record differs after the restore:\n got  %s\n want %s", k, got[k][i], want[k][i])
				}
			}
		}
		checkRestored(t, s, r, d)
	})

	t.Run("Restore refuses a store that holds merchants or payouts", func(t *testing.T) {
		src := e.open(t)
		populate(t, src)
		recs := dumpOf(t, src)
		for _, c := range []struct {
			name string
			fill func(t *testing.T, s rules.Storage)
		}{
			{"a merchant", func(t *testing.T, s rules.Storage) { addMerchants(t, s, "other") }},
			{"a payout", func(t *testing.T, s rules.Storage) { create(t, s, newPayout("other", "O-1", 100, T0), T0) }},
		} {
			t.Run(c.name, func(t *testing.T) {
				s := e.open(t)
				c.fill(t, s)
				before := byKind(t, dumpOf(t, s))
				if err := s.Restore(context.Background(), recs); err == nil {
					t.Fatalf("Restore into a store with %s succeeded", c.name)
				}
				after := byKind(t, dumpOf(t, s))
				if fmt.Sprint(after) != fmt.Sprint(before) {
					t.Errorf("the refused restore changed the store:\n before %v\n after  %v", before, after)
				}
			})
		}
	})

	t.Run("Restore refuses a record of an unknown kind and writes nothing", func(t *testing.T) {
		s := e.open(t)
		recs := []rules.DumpRecord{
			{Kind: rules.DumpMerchant, Value: json.RawMessage(`{"id":"M9","name":"Nueve"}`)},
			{Kind: "no-such-kind", Value: json.RawMessage(`{}`)},
		}
		if err := s.Restore(context.Background(), recs); err == nil {
			t.Fatal("Restore of an unknown kind succeeded")
		}
		if ms, _ := s.Merchants(context.Background()); len(ms) != 0 {
			t.Errorf("the refused restore wrote %d merchants", len(ms))
		}
	})

	t.Run("an empty store dumps no merchants or payouts and restores into another", func(t *testing.T) {
		s := e.open(t)
		recs := dumpOf(t, s)
		for _, r := range recs {
			if r.Kind == rules.DumpMerchant || r.Kind == rules.DumpPayout {
				t.Errorf("an empty store dumped a %s", r.Kind)
			}
		}
		if err := e.open(t).Restore(context.Background(), recs); err != nil {
			t.Errorf("Restore of an empty dump: %v", err)
		}
	})
}

// checkDumpContents checks what the records say against what populate wrote.
func checkDumpContents(t *testing.T, s rules.Storage, d dumped, recs []rules.DumpRecord) {
	t.Helper()
	balances := map[string]rules.Balance{}
	for _, r := range recs {
		switch r.Kind {
		case rules.DumpBalance:
			b := decode[rules.DumpedBalance](t, r)
			balances[b.MerchantID+" "+b.Balance.Country] = b.Balance
		case rules.DumpPayout:
			p := decode[rules.DumpedPayout](t, r)
			want := map[int64]*rules.Payout{d.queued.ID: d.queued, d.rejected.ID: d.rejected, d.card.ID: d.card, d.processed.ID: d.processed}[p.Payout.ID]
			if want == nil {
				t.Errorf("dumped an unknown payout %d", p.Payout.ID)
				continue
			}
			samePayout(t, "dumped payout", p.Payout, want)
			wantDue := time.Time{}
			if want == d.queued {
				wantDue = at(time.Minute)
			}
			if !p.Due.Equal(wantDue) {
				t.Errorf("payout %d dumped due %v, want %v", p.Payout.ID, p.Due, wantDue)
			}
		case rules.DumpEvent:
			ev := decode[rules.DumpedEvent](t, r)
			if ev.Dead != (ev.Event.ID == "n-dead") {
				t.Errorf("event %s dumped dead=%v", ev.Event.ID, ev.Dead)
			}
			switch ev.Event.ID {
			case "n-retry":
				sameEvent(t, "dumped retrying event", ev.Event, d.retrying)
			case "m-pending":
				sameEvent(t, "dumped pending event", ev.Event, d.pendingMail)
			}
		case rules.DumpDelivered:
			dl := decode[rules.DumpedDelivery](t, r)
			want := map[string]time.Time{"n-sent": at(time.Minute), "mail-ev": at(2 * time.Minute)}[dl.ID]
			if !dl.At.Equal(want) {
				t.Errorf("delivered %s at %v, want %v", dl.ID, dl.At, want)
			}
		case rules.DumpMail:
			m := decode[rules.DumpedMail](t, r)
			want := map[string]struct {
				at  time.Time
				raw string
			}{"mail-ev": {at(2 * time.Minute), `{"eventId":"mail-ev","to":"ana.rojas@correo.pe"}`}, "": {at(3 * time.Minute), `{"note":"no event"}`}}[m.EventID]
			if !m.At.Equal(want.at) || !sameJSONValue(m.Raw, []byte(want.raw)) {
				t.Errorf("mail of event %q at %v: %s; want it at %v: %s", m.EventID, m.At, m.Raw, want.at, want.raw)
			}
		case rules.DumpCard:
			c := decode[rules.DumpedCard](t, r)
			switch {
			case c.PayoutID == 0 && (c.MerchantID != m2 || c.DocType != 1 || c.DocNumber != "45678912" || c.Ref.Token != "card_tok" || string(c.Sealed) != "sealed-pan"):
				t.Errorf("card on file %+v", c)
			case c.PayoutID == d.queued.ID && (c.Ref.Token != "once" || string(c.Sealed) != "sealed-once" || c.OnFile):
				t.Errorf("one-time card %+v", c)
			}
		case rules.DumpClock:
			if c := decode[rules.DumpedClock](t, r); c.Offset != 90*time.Minute {
				t.Errorf("clock %+v", c)
			}
		}
	}
	// The balances keep their ledger totals.
	for _, m := range []string{m1, m2} {
		bs, _ := s.Balances(context.Background(), m)
		for _, b := range bs {
			if got := balances[m+" "+b.Country]; got != b {
				t.Errorf("dumped balance of %s %+v, stored %+v", m, got, b)
			}
		}
	}
}

// checkRestored checks that the restored store r answers as the dumped store s did, through
// every index the restore had to rebuild.
func checkRestored(t *testing.T, s, r rules.Storage, d dumped) {
	t.Helper()
	for _, p := range []*rules.Payout{d.queued, d.rejected, d.card, d.processed} {
		samePayout(t, "restored payout", payoutOf(t, r, p.MerchantID, p.ID), p)
		if got, err := r.PayoutByOrder(context.Background(), p.MerchantID, p.OrderID); err != nil || got.ID != p.ID {
			t.Errorf("PayoutByOrder %s: %v %v", p.OrderID, got, err)
		}
		page, err := r.ListPayouts(context.Background(), p.MerchantID, rules.ListFilter{Status: p.Status})
		if err != nil || !slices.Contains(ids(page.Items), p.ID) {
			t.Errorf("ListPayouts by %s: %v %v", p.Status, ids(page.Items), err)
		}
		page, err = r.ListPayouts(context.Background(), p.MerchantID, rules.ListFilter{Stage: p.Stage})
		if err != nil || !slices.Contains(ids(page.Items), p.ID) {
			t.Errorf("ListPayouts by %s: %v %v", p.Stage, ids(page.Items), err)
		}
	}
	if page, _ := r.ListPayouts(context.Background(), m1, rules.ListFilter{}); !slices.Equal(ids(page.Items), []int64{d.processed.ID, d.rejected.ID, d.queued.ID}) {
		t.Errorf("M1's payouts %v", ids(page.Items))
	}
	if _, created, err := r.CreatePayout(context.Background(), newPayout(m1, d.queued.OrderID, 1000, T0), T0, nil, nil); err != nil || created {
		t.Errorf("a create with a restored orderId: created %v, %v; want the replay", created, err)
	}
	// The queue.
	if next, _ := r.NextDue(context.Background()); !next.Equal(at(time.Minute)) {
		t.Errorf("NextDue %v, want %v", next, at(time.Minute))
	}
	due, _ := r.Due(context.Background(), at(time.Minute), 10)
	if !slices.Equal(due, []rules.DueEntry{{ID: d.queued.ID, Status: rules.StatusAuthorized}}) {
		t.Errorf("due %+v", due)
	}
	// The outbox.
	notify, _ := dueEvents(t, r, rules.LaneNotify, T0, 10)
	if !slices.Equal(eventIDs(notify), []string{"n-pending"}) {
		t.Errorf("notify lane due now: %v", eventIDs(notify))
	}
	if retry, _ := dueEvents(t, r, rules.LaneNotify, at(20*time.Second), 10); len(retry) != 1 { // n-pending is claimed
		t.Errorf("the retrying event: %v", eventIDs(retry))
	} else {
		sameEvent(t, "restored retrying event", retry[0].Event, d.retrying)
	}
	if mails, _ := dueEvents(t, r, rules.LaneMail, at(time.Hour), 10); len(mails) != 1 {
		t.Errorf("mail lane: %v", eventIDs(mails))
	} else {
		sameEvent(t, "restored mail event", mails[0].Event, d.pendingMail)
	}
	if dead, _ := r.DeadEvents(context.Background(), 10); !slices.Equal(eventIDs(dead), []string{"n-dead"}) || dead[0].LastError != "410 Gone" {
		t.Errorf("dead letters %+v", dead)
	}
	for id, when := range map[string]time.Time{"n-sent": at(time.Minute), "mail-ev": at(2 * time.Minute)} {
		if got, ok, _ := r.WasDelivered(context.Background(), id); !ok || !got.Equal(when) {
			t.Errorf("WasDelivered(%s) = %v %v", id, got, ok)
		}
	}
	if n := r.OutboxDepth(context.Background()); n != 3 {
		t.Errorf("outbox depth %d, want 3", n)
	}
	want, _ := s.SandboxMails(context.Background(), 10)
	if got, _ := r.SandboxMails(context.Background(), 10); len(got) != len(want) || len(got) != 2 || !sameJSONValue(got[0], want[0]) || !sameJSONValue(got[1], want[1]) {
		t.Errorf("mailbox %q, want %q", got, want)
	}
	if err := r.PutSandboxMail(context.Background(), "mail-ev", []byte(`{"again":true}`), at(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got, _ := r.SandboxMails(context.Background(), 10); len(got) != 2 {
		t.Errorf("a restored delivered event took a second mail")
	}
	// Cards, sessions, the sandbox.
	if ref, ok, _ := r.SavedCard(context.Background(), m2, 1, "45678912"); !ok || ref != *d.card.Card {
		t.Errorf("card on file %+v %v", ref, ok)
	}
	if ref, sealed, err := r.PayoutCard(context.Background(), d.card.ID, d.card.Card.Token); err != nil || ref != *d.card.Card || string(sealed) != "sealed-pan" {
		t.Errorf("PayoutCard(card) %+v %q %v", ref, sealed, err)
	}
	if ref, sealed, err := r.PayoutCard(context.Background(), d.queued.ID, "once"); err != nil || ref.Token != "once" || string(sealed) != "sealed-once" {
		t.Errorf("PayoutCard(queued) %+v %q %v", ref, sealed, err)
	}
	if _, ok, _ := r.SavedCard(context.Background(), m1, 1, "11111111"); ok {
		t.Errorf("a one-time card is on file after the restore")
	}
	sessions := r.Sessions(context.Background(), (&clock{t: T0}).Now)
	if data, found, _ := sessions.Find("tok-1"); !found || string(data) != "session-data" {
		t.Errorf("session %q %v", data, found)
	}
	if sid, _ := sessions.CardSession(d.card.ID); sid != "sid-1" {
		t.Errorf("card session %q", sid)
	}
	if n, _ := r.Sessions(context.Background(), (&clock{t: at(2 * time.Hour)}).Now).Cleanup(); n != 2 {
		t.Errorf("Cleanup after the expiry removed %d, want the session and the binding", n)
	}
	if off, _ := r.SandboxClockOffset(context.Background()); off != 90*time.Minute {
		t.Errorf("clock offset %v", off)
	}
	if rs, _ := r.SandboxRules(context.Background(), m1); len(rs) != 1 || rs[0].Outcome.Status != rules.StatusDenied || *rs[0].Match.AmountMin != 10 {
		t.Errorf("rules %s", jsonOf(t, rs))
	}
	if e, err := r.DirectoryEntry(context.Background(), "PER", "987654321"); err != nil || len(e.Entities) != 1 || e.Entities[0].EntityBrand != "Plin" {
		t.Errorf("PER entry %+v %v", e, err)
	}
	if e, err := r.DirectoryEntry(context.Background(), "COL", "@ana"); err != nil || !e.Absent {
		t.Errorf("COL entry %+v %v", e, err)
	}
	if u, err := r.IntegrationUserOf(context.Background(), m1); err != nil || u.User != "ana" || u.PasswordHash != "hash" {
		t.Errorf("IntegrationUserOf %+v %v", u, err)
	}
	if u, err := r.IntegrationUser(context.Background(), "ana"); err != nil || u.MerchantID != m1 {
		t.Errorf("IntegrationUser %+v %v", u, err)
	}
	// The money and the numbering.
	for _, m := range []string{m1, m2} {
		want, _ := s.Balances(context.Background(), m)
		got, _ := r.Balances(context.Background(), m)
		if jsonOf(t, sortBalances(got)) != jsonOf(t, sortBalances(want)) || len(got) != 1 || got[0] != want[0] {
			t.Errorf("balances of %s %+v, want %+v", m, got, want)
		}
	}
	if err := r.CheckAllLedgers(context.Background()); err != nil {
		t.Errorf("CheckAllLedgers after the restore: %v", err)
	}
	maxID := max(d.queued.ID, d.rejected.ID, d.card.ID, d.processed.ID)
	if p := create(t, r, newPayout(m1, "AFTER-RESTORE", 100, T0), time.Time{}); p.ID <= maxID {
		t.Errorf("a payout created after the restore got id %d, want above %d", p.ID, maxID)
	}
	m := &rules.Merchant{Name: "Nueva", CreatedAt: T0}
	if err := r.CreateMerchant(context.Background(), m, nil); err != nil || m.ID == d.numbered || m.ID == m1 || m.ID == m2 {
		t.Errorf("a merchant numbered after the restore: %q, %v", m.ID, err)
	}
	if got, _ := r.Merchant(context.Background(), d.numbered); got == nil || got.Name != "Numerada" {
		t.Errorf("the numbered merchant became %+v", got)
	}
}

func sortBalances(bs []rules.Balance) []rules.Balance {
	slices.SortFunc(bs, func(a, b rules.Balance) int { return strings.Compare(a.Country+a.Currency, b.Country+b.Currency) })
	return bs
}
