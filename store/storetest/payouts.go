package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"payouts/rules"
)

// testCreatePayout: rules.Store.CreatePayout.
func testCreatePayout(t *testing.T, e Engine) {
	t.Run("stores a copy under a new id and leaves the argument alone", func(t *testing.T) {
		s := e.open(t)
		addMerchants(t, s, m1)
		p := newPayout(m1, "A-1", 1000, T0)
		p.Traceparent = traceparent
		want := *p
		stored, created, err := s.CreatePayout(context.Background(), p, T0, nil, nil)
		if err != nil || !created {
			t.Fatalf("CreatePayout: created %v, %v", created, err)
		}
		if stored.ID <= 0 {
			t.Fatalf("stored id %d", stored.ID)
		}
		if p.ID != 0 || p.Status != rules.StatusCreated {
			t.Errorf("the argument changed: id %d status %s", p.ID, p.Status)
		}
		want.ID = stored.ID
		samePayout(t, "the create's answer", stored, &want)
		samePayout(t, "the payout read back", payoutOf(t, s, m1, stored.ID), &want)
		next := create(t, s, newPayout(m1, "A-2", 1000, at(time.Second)), time.Time{})
		if next.ID <= stored.ID {
			t.Errorf("a later payout got id %d after %d: ids grow", next.ID, stored.ID)
		}
	})

	t.Run("the same orderId again returns the stored payout and writes nothing", func(t *testing.T) {
		s := e.open(t)
		addMerchants(t, s, m1, m2)
		fund(t, s, m1, "PER", "PEN", 10_000)
		first := create(t, s, newPayout(m1, "DUP", 1000, T0), T0)
		depth := s.OutboxDepth(context.Background())
		again := newPayout(m1, "DUP", 2500, at(time.Minute)) // another request with the orderId
		events := []rules.Event{{ID: "dup-ev", Kind: rules.EventBeneficiaryMail, MerchantID: m1, CreatedAt: T0, NextAt: T0}}
		got, created, err := s.CreatePayout(context.Background(), again, at(time.Minute), events, reserveStep(T0, T0))
		if err != nil || created {
			t.Fatalf("second create: created %v, %v; want the replay", created, err)
		}
		samePayout(t, "the replay's answer", got, first)
		if got.Fingerprint == again.Fingerprint {
			t.Errorf("the replay answered the new request's fingerprint: the caller could not see the conflict")
		}
		if n := s.OutboxDepth(context.Background()); n != depth {
			t.Errorf("outbox depth %d after the replay, want %d: its events were written", n, depth)
		}
		if b := balanceOf(t, s, m1, "PER", "PEN"); b.Available != 10_000 {
			t.Errorf("the replay ran its admit step: available %d", b.Available)
		}
		if page, _ := s.ListPayouts(context.Background(), m1, rules.ListFilter{}); len(page.Items) != 1 {
			t.Errorf("%d payouts listed after a replay, want 1", len(page.Items))
		}
		// Another merchant's orderId is its own.
		other := create(t, s, newPayout(m2, "DUP", 1000, T0), T0)
		if other.ID == first.ID {
			t.Errorf("another merchant's DUP got the same id %d", other.ID)
		}
	})

	t.Run("admit runs on the new payout in the create's transaction", func(t *testing.T) {
		s := e.open(t)
		addMerchants(t, s, m1)
		fund(t, s, m1, "PER", "PEN", 10_000)
		p := newPayout(m1, "ADM", 3000, T0)
		withCreate := rules.Event{ID: "otp-1", Kind: rules.EventCashOTP, MerchantID: m1, CreatedAt: T0, NextAt: T0}
		var sawID int64
		admit := func(p *rules.Payout, l rules.Ledger) (time.Time, error) {
			sawID = p.ID
			next, err := reserveStep(T0, at(time.Minute))(p, l)
			if err != nil {
				return next, err
			}
			return next, l.Enqueue(rules.Event{ID: "admit-ev", Kind: rules.EventMerchantNotification, MerchantID: m1,
				PayoutID: p.ID, CreatedAt: T0, NextAt: T0})
		}
		stored, created, err := s.CreatePayout(context.Background(), p, T0, []rules.Event{withCreate}, admit)
		if err != nil || !created {
			t.Fatalf("CreatePayout: %v %v", created, err)
		}
		if sawID != stored.ID {
			t.Errorf("admit saw id %d, the payout got %d", sawID, stored.ID)
		}
		if p.Status != rules.StatusCreated || p.Reserved != 0 {
			t.Errorf("admit changed the caller's payout: %s reserved %d", p.Status, p.Reserved)
		}
		got := payoutOf(t, s, m1, stored.ID)
		if got.Status != rules.StatusAuthorized || got.Reserved != 3000 || len(got.History) != 2 {
			t.Errorf("stored %s reserved %d history %d; want admit's AUTHORIZED with 3000 held", got.Status, got.Reserved, len(got.History))
		}
		samePayout(t, "the create's answer", stored, got)
		if b := balanceOf(t, s, m1, "PER", "PEN"); b.Available != 7000 || b.Balance != 10_000 {
			t.Errorf("balance %+v, want 3000 of 10000 held", b)
		}
		// Queued at admit's answer, not at the create's due.
		if due, _ := s.Due(context.Background(), at(time.Minute-time.Second), 10); len(due) != 0 {
			t.Errorf("due before admit's time: %+v", due)
		}
		due, err := s.Due(context.Background(), at(time.Minute), 10)
		if err != nil || len(due) != 1 || due[0] != (rules.DueEntry{ID: stored.ID, Status: rules.StatusAuthorized}) {
			t.Errorf("due at admit's time: %+v, %v; want the payout as AUTHORIZED", due, err)
		}
		// The create's events carry the new payout's id; admit's are written too.
		evs, err := s.OutboxEvents(context.Background(), 10)
		if err != nil {
			t.Fatal(err)
		}
		if got := sorted(eventIDs(evs)); !slices.Equal(got, []string{"admit-ev", "otp-1"}) {
			t.Fatalf("outbox %v, want the create's and admit's events", got)
		}
		for _, ev := range evs {
			if ev.PayoutID != stored.ID {
				t.Errorf("event %s has payout %d, want %d", ev.ID, ev.PayoutID, stored.ID)
			}
		}
	})

	t.Run("admit answering ErrNoChange stores the payout as given, queued at due", func(t *testing.T) {
		s := e.open(t)
		addMerchants(t, s, m1)
		p := newPayout(m1, "NC", 1000, T0)
		stored, created, err := s.CreatePayout(context.Background(), p, at(time.Second), nil, func(p *rules.Payout, l rules.Ledger) (time.Time, error) {
			p.Move(rules.StatusDenied, T0, "", "")
			return time.Time{}, rules.ErrNoChange
		})
		if err != nil || !created {
			t.Fatal(created, err)
		}
		if got := payoutOf(t, s, m1, stored.ID); got.Status != rules.StatusCreated {
			t.Errorf("stored %s, want CREATED as given", got.Status)
		}
		if due, _ := s.Due(context.Background(), at(time.Second), 10); len(due) != 1 || due[0].Status != rules.StatusCreated {
			t.Errorf("due %+v, want the payout as CREATED at the create's due", due)
		}
	})

	t.Run("a failing admit stores nothing", func(t *testing.T) {
		for _, c := range []struct {
			name  string
			admit rules.Step
			is    error
		}{
			{"an error", func(p *rules.Payout, l rules.Ledger) (time.Time, error) {
				l.Enqueue(rules.Event{ID: "lost", Kind: rules.EventBeneficiaryMail, MerchantID: m1, CreatedAt: T0, NextAt: T0})
				return time.Time{}, errBoom
			}, errBoom},
			{"a reservation the payout does not hold (ledger)", func(p *rules.Payout, l rules.Ledger) (time.Time, error) {
				b, _ := l.Balance(m1, "PER", "PEN")
				b.Available -= p.Amount
				p.Move(rules.StatusAuthorized, T0, "", "")
				return T0, l.PutBalance(m1, b)
			}, rules.ErrLedger},
		} {
			t.Run(c.name, func(t *testing.T) {
				s := e.open(t)
				addMerchants(t, s, m1)
				fund(t, s, m1, "PER", "PEN", 10_000)
				ev := rules.Event{ID: "with-create", Kind: rules.EventBeneficiaryMail, MerchantID: m1, CreatedAt: T0, NextAt: T0}
				_, _, err := s.CreatePayout(context.Background(), newPayout(m1, "F-1", 1000, T0), T0, []rules.Event{ev}, c.admit)
				if !errors.Is(err, c.is) {
					t.Fatalf("CreatePayout: %v, want %v", err, c.is)
				}
				if _, err := s.PayoutByOrder(context.Background(), m1, "F-1"); !isNotFound(err) {
					t.Errorf("the payout was stored: %v", err)
				}
				if n := s.OutboxDepth(context.Background()); n != 0 {
					t.Errorf("outbox depth %d, want 0", n)
				}
				if b := balanceOf(t, s, m1, "PER", "PEN"); b.Available != 10_000 || b.Balance != 10_000 {
					t.Errorf("balance %+v changed", b)
				}
				if due, _ := s.Due(context.Background(), at(time.Hour), 10); len(due) != 0 {
					t.Errorf("queued %+v", due)
				}
				// The orderId stays unused.
				create(t, s, newPayout(m1, "F-1", 1000, T0), time.Time{})
			})
		}
	})

	t.Run("a zero due leaves the payout out of the queue", func(t *testing.T) {
		s := e.open(t)
		addMerchants(t, s, m1)
		create(t, s, newPayout(m1, "Z", 1000, T0), time.Time{})
		if due, _ := s.Due(context.Background(), at(24*time.Hour), 10); len(due) != 0 {
			t.Errorf("due %+v", due)
		}
		if next, err := s.NextDue(context.Background()); err != nil || !next.IsZero() {
			t.Errorf("NextDue %v, %v; want zero", next, err)
		}
	})
}

// testReadPayouts: Payout, PayoutByOrder, PayoutsByID, WithStatus.
func testReadPayouts(t *testing.T, e Engine) {
	s := e.open(t)
	addMerchants(t, s, m1, m2)
	a := create(t, s, newPayout(m1, "R-A", 1000, T0), time.Time{})
	b := create(t, s, newPayout(m1, "R-B", 2000, at(time.Second)), time.Time{})
	c := create(t, s, newPayout(m1, "R-C", 3000, at(2*time.Second)), time.Time{})
	other := create(t, s, newPayout(m2, "R-A", 4000, at(3*time.Second)), time.Time{})
	update(t, s, []int64{a.ID, c.ID}, moveTo(rules.StatusAuthorized, at(time.Minute), time.Time{}))

	t.Run("a key no request can store (NUL, invalid UTF-8) finds nothing", func(t *testing.T) {
		for _, bad := range []string{"R-A\x00", "R-\xff"} {
			if _, err := s.PayoutByOrder(context.Background(), m1, bad); !errors.Is(err, rules.ErrNotFound) {
				t.Errorf("PayoutByOrder(%q): %v, want ErrNotFound", bad, err)
			}
			if page, err := s.ListPayouts(context.Background(), m1, rules.ListFilter{OrderID: bad}); err != nil || len(page.Items) != 0 {
				t.Errorf("ListPayouts(orderId %q): %v %v, want nothing", bad, page.Items, err)
			}
			if _, err := s.Merchant(context.Background(), m1+bad); !errors.Is(err, rules.ErrNotFound) {
				t.Errorf("Merchant(%q): %v, want ErrNotFound", m1+bad, err)
			}
		}
	})

	t.Run("Payout is the merchant's own, ErrNotFound otherwise", func(t *testing.T) {
		if got := payoutOf(t, s, m1, b.ID); got.Amount != 2000 || got.OrderID != "R-B" {
			t.Errorf("Payout %d: %+v", b.ID, got)
		}
		for _, q := range []struct {
			merchant string
			id       int64
		}{{m2, a.ID}, {m1, other.ID}, {m1, other.ID + 1000}, {m1, 0}, {m1, -1}, {"nobody", a.ID}} {
			if _, err := s.Payout(context.Background(), q.merchant, q.id); !isNotFound(err) {
				t.Errorf("Payout(%s, %d): %v, want ErrNotFound", q.merchant, q.id, err)
			}
		}
	})

	t.Run("PayoutByOrder finds the merchant's orderId only", func(t *testing.T) {
		got, err := s.PayoutByOrder(context.Background(), m1, "R-A")
		if err != nil || got.ID != a.ID || got.Status != rules.StatusAuthorized {
			t.Errorf("PayoutByOrder M1 R-A: %+v, %v", got, err)
		}
		if got, err := s.PayoutByOrder(context.Background(), m2, "R-A"); err != nil || got.ID != other.ID {
			t.Errorf("PayoutByOrder M2 R-A: %+v, %v", got, err)
		}
		if _, err := s.PayoutByOrder(context.Background(), m2, "R-B"); !isNotFound(err) {
			t.Errorf("another merchant's orderId: %v, want ErrNotFound", err)
		}
		if _, err := s.PayoutByOrder(context.Background(), m1, "R-Z"); !isNotFound(err) {
			t.Errorf("unknown orderId: %v, want ErrNotFound", err)
		}
	})

	t.Run("PayoutsByID reads the payouts there are and skips the rest", func(t *testing.T) {
		ps, err := s.PayoutsByID(context.Background(), []int64{c.ID, other.ID + 1000, a.ID, other.ID})
		if err != nil {
			t.Fatal(err)
		}
		if got := sorted(ids(ps)); !slices.Equal(got, sorted([]int64{a.ID, c.ID, other.ID})) {
			t.Fatalf("PayoutsByID gave %v", got)
		}
		for _, p := range ps {
			samePayout(t, fmt.Sprintf("payout %d", p.ID), p, payoutOf(t, s, p.MerchantID, p.ID))
		}
		if ps, err := s.PayoutsByID(context.Background(), nil); err != nil || len(ps) != 0 {
			t.Errorf("PayoutsByID(nil): %v, %v", ps, err)
		}
	})

	t.Run("WithStatus lists a merchant's ids in one status, oldest first, up to limit", func(t *testing.T) {
		got, err := s.WithStatus(context.Background(), m1, rules.StatusAuthorized, 10)
		if err != nil || !slices.Equal(got, []int64{a.ID, c.ID}) {
			t.Errorf("AUTHORIZED: %v, %v; want %v", got, err, []int64{a.ID, c.ID})
		}
		if got, _ := s.WithStatus(context.Background(), m1, rules.StatusAuthorized, 1); !slices.Equal(got, []int64{a.ID}) {
			t.Errorf("limit 1: %v", got)
		}
		if got, _ := s.WithStatus(context.Background(), m1, rules.StatusCreated, 10); !slices.Equal(got, []int64{b.ID}) {
			t.Errorf("CREATED: %v, want [%d]", got, b.ID)
		}
		if got, _ := s.WithStatus(context.Background(), m2, rules.StatusAuthorized, 10); len(got) != 0 {
			t.Errorf("another merchant's: %v", got)
		}
	})
}

// testListPayouts: ListPayouts's filters, limit and cursor.
func testListPayouts(t *testing.T, e Engine) {
	s := e.open(t)
	addMerchants(t, s, m1, m2)
	// Eight payouts of M1, a minute apart: PER and COL, in several statuses; two of M2.
	type spec struct {
		order   string
		country string
		status  rules.Status
	}
	specs := []spec{
		{"L-0", "PER", rules.StatusCreated}, {"L-1", "COL", rules.StatusAuthorized}, {"L-2", "PER", rules.StatusProcessed},
		{"L-3", "PER", rules.StatusAuthorized}, {"L-4", "COL", rules.StatusRejectedBank}, {"L-5", "PER", rules.StatusPendingBalance},
		{"L-6", "COL", rules.StatusProcessed}, {"L-7", "PER", rules.StatusCreated},
	}
	var all []*rules.Payout // oldest first
	for i, sp := range specs {
		p := create(t, s, newPayoutTo(m1, sp.order, 1000, at(time.Duration(i)*time.Minute), sp.country, account), time.Time{})
		if sp.status != rules.StatusCreated {
			update(t, s, []int64{p.ID}, moveTo(sp.status, at(time.Duration(i)*time.Minute+time.Second), time.Time{}))
		}
		all = append(all, payoutOf(t, s, m1, p.ID))
	}
	create(t, s, newPayout(m2, "L-0", 1000, T0), time.Time{})
	create(t, s, newPayout(m2, "X-1", 1000, T0), time.Time{})
	newestFirst := func(keep func(p *rules.Payout) bool) []int64 {
		var out []int64
		for i := len(all) - 1; i >= 0; i-- {
			if keep(all[i]) {
				out = append(out, all[i].ID)
			}
		}
		return out
	}

	for _, c := range []struct {
		name string
		f    rules.ListFilter
		keep func(p *rules.Payout) bool
	}{
		{"no filter: every payout of the merchant, newest first", rules.ListFilter{},
			func(*rules.Payout) bool { return true }},
		{"by stage", rules.ListFilter{Stage: rules.StageSuccess},
			func(p *rules.Payout) bool { return p.Stage == rules.StageSuccess }},
		{"by status", rules.ListFilter{Status: rules.StatusAuthorized},
			func(p *rules.Payout) bool { return p.Status == rules.StatusAuthorized }},
		{"by stage and status that agree", rules.ListFilter{Stage: rules.StageInProgress, Status: rules.StatusCreated},
			func(p *rules.Payout) bool { return p.Status == rules.StatusCreated }},
		{"by stage and status that disagree", rules.ListFilter{Stage: rules.StageRejected, Status: rules.StatusCreated},
			func(p *rules.Payout) bool { return false }},
		{"by country", rules.ListFilter{Country: "COL"},
			func(p *rules.Payout) bool { return p.Country == "COL" }},
		{"by orderId", rules.ListFilter{OrderID: "L-3"},
			func(p *rules.Payout) bool { return p.OrderID == "L-3" }},
		{"by an orderId of another merchant", rules.ListFilter{OrderID: "X-1"},
			func(p *rules.Payout) bool { return false }},
		{"by orderId and a status it does not have", rules.ListFilter{OrderID: "L-3", Status: rules.StatusCreated},
			func(p *rules.Payout) bool { return false }},
		{"created from (inclusive)", rules.ListFilter{From: at(5 * time.Minute)},
			func(p *rules.Payout) bool { return !p.CreatedAt.Before(at(5 * time.Minute)) }},
		{"created to (exclusive)", rules.ListFilter{To: at(2 * time.Minute)},
			func(p *rules.Payout) bool { return p.CreatedAt.Before(at(2 * time.Minute)) }},
		{"from, to, country and stage together", rules.ListFilter{From: at(time.Minute), To: at(7 * time.Minute), Country: "PER", Stage: rules.StageInProgress},
			func(p *rules.Payout) bool {
				return !p.CreatedAt.Before(at(time.Minute)) && p.CreatedAt.Before(at(7*time.Minute)) && p.Country == "PER" && p.Stage == rules.StageInProgress
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			page, err := s.ListPayouts(context.Background(), m1, c.f)
			if err != nil {
				t.Fatal(err)
			}
			want := newestFirst(c.keep)
			if got := ids(page.Items); !slices.Equal(got, want) {
				t.Errorf("listed %v, want %v", got, want)
			}
			if page.NextCursor != 0 {
				t.Errorf("next cursor %d on a page that holds everything", page.NextCursor)
			}
			for _, p := range page.Items {
				if p.MerchantID != m1 {
					t.Errorf("listed another merchant's payout %d", p.ID)
				}
			}
		})
	}

	t.Run("the listed payouts are the stored ones", func(t *testing.T) {
		page, _ := s.ListPayouts(context.Background(), m1, rules.ListFilter{Limit: 100})
		for _, p := range page.Items {
			samePayout(t, fmt.Sprintf("listed %d", p.ID), p, payoutOf(t, s, m1, p.ID))
		}
	})

	t.Run("limit and cursor page through newest first", func(t *testing.T) {
		for _, c := range []struct {
			f    rules.ListFilter
			keep func(p *rules.Payout) bool
		}{
			{rules.ListFilter{Limit: 3}, func(*rules.Payout) bool { return true }},
			{rules.ListFilter{Limit: 1}, func(*rules.Payout) bool { return true }},
			{rules.ListFilter{Limit: 4}, func(*rules.Payout) bool { return true }}, // exactly two pages
			{rules.ListFilter{Limit: 1, Status: rules.StatusProcessed}, func(p *rules.Payout) bool { return p.Status == rules.StatusProcessed }},
			{rules.ListFilter{Limit: 2, Country: "PER"}, func(p *rules.Payout) bool { return p.Country == "PER" }},
			{rules.ListFilter{Limit: 2, Stage: rules.StageInProgress}, func(p *rules.Payout) bool { return p.Stage == rules.StageInProgress }},
		} {
			var got []int64
			f := c.f
			for pages := 0; ; pages++ {
				if pages > len(all) {
					t.Fatalf("%+v: more pages than payouts", c.f)
				}
				page, err := s.ListPayouts(context.Background(), m1, f)
				if err != nil {
					t.Fatal(err)
				}
				if len(page.Items) > f.Limit {
					t.Fatalf("%+v: %d items on a page", f, len(page.Items))
				}
				if len(page.Items) == 0 && pages > 0 {
					t.Errorf("%+v: a cursor led to an empty page", f)
				}
				got = append(got, ids(page.Items)...)
				if page.NextCursor == 0 {
					break
				}
				f.Cursor = page.NextCursor
			}
			if want := newestFirst(c.keep); !slices.Equal(got, want) {
				t.Errorf("%+v: pages gave %v, want %v", c.f, got, want)
			}
		}
	})

	t.Run("a cursor lists the payouts below it", func(t *testing.T) {
		cursor := all[5].ID
		page, err := s.ListPayouts(context.Background(), m1, rules.ListFilter{Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		want := newestFirst(func(p *rules.Payout) bool { return p.ID < cursor })
		if got := ids(page.Items); !slices.Equal(got, want) {
			t.Errorf("below %d: %v, want %v", cursor, got, want)
		}
	})

	t.Run("a merchant without payouts lists none", func(t *testing.T) {
		page, err := s.ListPayouts(context.Background(), "nobody", rules.ListFilter{})
		if err != nil || len(page.Items) != 0 || page.NextCursor != 0 {
			t.Errorf("ListPayouts(nobody) = %+v, %v", page, err)
		}
	})

	t.Run("walks an index newest first and reads at most rules.ListMaxScan payouts a request", func(t *testing.T) {
		s := e.open(t)
		importMany := func(n int, country string, status rules.Status, from time.Time) {
			t.Helper()
			ps := make([]*rules.Payout, 0, n)
			for i := range n {
				req := &rules.PayoutRequest{Country: country, Currency: "PEN", OrderID: country + strconv.Itoa(i)}
				p := rules.NewPayout(m1, req, rules.Route{Amount: 100, Channel: rules.ChannelBatch}, from.Add(time.Duration(i)*time.Millisecond))
				if status != rules.StatusCreated {
					p.Move(status, from, "", "")
				}
				ps = append(ps, p)
			}
			if err := s.ImportPayouts(context.Background(), ps); err != nil {
				t.Fatal(err)
			}
		}
		n := 2*rules.ListMaxScan + 2000
		importMany(3, "COL", rules.StatusProcessed, T0)
		importMany(n, "PER", rules.StatusCreated, at(time.Minute))

		page, err := s.ListPayouts(context.Background(), m1, rules.ListFilter{Status: rules.StatusProcessed, Limit: 2})
		if err != nil || len(page.Items) != 2 || page.Items[0].ID != 3 || page.NextCursor != 2 {
			t.Fatalf("status page 1: %v %+v", err, page)
		}
		page, _ = s.ListPayouts(context.Background(), m1, rules.ListFilter{Status: rules.StatusProcessed, Limit: 2, Cursor: page.NextCursor})
		if len(page.Items) != 1 || page.Items[0].ID != 1 || page.NextCursor != 0 {
			t.Fatalf("status page 2: %+v", page)
		}
		// country has no index: each request stops after ListMaxScan payouts, with a cursor
		// past the last one read.
		var found, cursors []int64
		cursor := int64(0)
		for {
			page, err := s.ListPayouts(context.Background(), m1, rules.ListFilter{Country: "COL", Limit: 50, Cursor: cursor})
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range page.Items {
				found = append(found, p.ID)
			}
			if page.NextCursor == 0 {
				break
			}
			cursor = page.NextCursor
			cursors = append(cursors, cursor)
		}
		last := int64(n + 3)
		want := []int64{last - rules.ListMaxScan + 1, last - 2*rules.ListMaxScan + 1}
		if !slices.Equal(found, []int64{3, 2, 1}) || !slices.Equal(cursors, want) {
			t.Fatalf("found %v with cursors %v, want the 3 COL payouts after cursors %v", found, cursors, want)
		}
		order := "PER" + strconv.Itoa(n-1)
		page, _ = s.ListPayouts(context.Background(), m1, rules.ListFilter{OrderID: order})
		if len(page.Items) != 1 || page.Items[0].OrderID != order {
			t.Fatalf("by orderId: %+v", page)
		}
		if page, _ = s.ListPayouts(context.Background(), m1, rules.ListFilter{OrderID: order, Cursor: page.Items[0].ID}); len(page.Items) != 0 {
			t.Fatalf("by orderId below its own id: %+v", page)
		}
		// Created from: the walk stops at the first older payout, with no cursor.
		page, _ = s.ListPayouts(context.Background(), m1, rules.ListFilter{From: at(time.Minute + time.Duration(n-10)*time.Millisecond), Limit: 50})
		if len(page.Items) != 10 || page.Items[0].ID != last || page.NextCursor != 0 {
			t.Fatalf("from: %d items, cursor %d", len(page.Items), page.NextCursor)
		}
		page, _ = s.ListPayouts(context.Background(), m1, rules.ListFilter{To: at(time.Second), Stage: rules.StageSuccess, Limit: 2})
		if len(page.Items) != 2 || page.Items[0].ID != 3 || page.NextCursor != 2 {
			t.Fatalf("to and stage: %+v", page)
		}
	})
}
