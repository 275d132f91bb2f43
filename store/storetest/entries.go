package storetest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"payouts/rules"
)

// testLedgerEntries: every change of a balance writes its entry in the same write, the
// entries add up to the balance, and they page in order by id.
func testLedgerEntries(t *testing.T, e Engine) {
	t.Run("a lifecycle writes one entry a movement, each payout's as its end says, adding up to the balance", func(t *testing.T) {
		s := e.open(t)
		w := newLifeWorld(t, s)
		w.run(t)
		entries, err := rules.AllEntries(context.Background(), s, w.m.ID, "PER", "PEN")
		if err != nil {
			t.Fatal(err)
		}
		checkEntriesAddUp(t, s, w.m.ID, "PER", "PEN", entries)
		byOrder := map[string][]string{}
		for _, e := range entries {
			byOrder[e.OrderID] = append(byOrder[e.OrderID], fmt.Sprintf("%s %d", e.Type, e.Amount))
			if e.At.IsZero() || e.At.Before(T0) {
				t.Errorf("entry %d at %v, not on the service's clock", e.ID, e.At)
			}
		}
		want := map[string][]string{
			"":             {"funding 10000", "funding 5000"},
			"LW-paid":      {"reservation -2000", "debit -2000"},
			"LW-rejected":  {"reservation -1000", "release 1000"},
			"LW-reversed":  {"reservation -1500", "debit -1500", "reversal 1500"},
			"LW-cancelled": {"reservation -500", "release 500"},
			"LW-waiting":   {"reservation -9000", "debit -9000"},
		}
		for order, w := range want {
			if !slices.Equal(byOrder[order], w) {
				t.Errorf("entries of %q: %v, want %v", order, byOrder[order], w)
			}
		}
		if len(entries) != 13 {
			t.Errorf("%d entries, want 13", len(entries))
		}
		if err := s.CheckAllLedgers(context.Background()); err != nil {
			t.Error(err)
		}
	})

	t.Run("entries page in order with a cursor; another balance has its own", func(t *testing.T) {
		s := e.open(t)
		addMerchants(t, s, m1, m2)
		at := T0.Add(time.Hour)
		for i := range 5 {
			if _, err := s.Fund(context.Background(), m1, "PER", "PEN", int64(100*(i+1)), at); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.Fund(context.Background(), m1, "PER", "PEN", -50, at); err != nil {
			t.Fatal(err)
		}
		fund(t, s, m2, "PER", "PEN", 7)
		var got []string
		after := int64(0)
		for pages := 0; ; pages++ {
			page, err := s.Entries(context.Background(), m1, "PER", "PEN", after, 4)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range page.Items {
				got = append(got, fmt.Sprintf("%d %s %d %d", e.ID, e.Type, e.Amount, e.Balance))
				if !e.At.Equal(at) {
					t.Errorf("entry %d at %v, want the time Fund was given, %v", e.ID, e.At, at)
				}
			}
			if page.Next == 0 {
				if pages != 1 {
					t.Errorf("%d pages of 4 for 6 entries", pages+1)
				}
				break
			}
			after = page.Next
		}
		want := "1 funding 100 100|2 funding 200 300|3 funding 300 600|4 funding 400 1000|5 funding 500 1500|6 withdrawal -50 1450"
		if strings.Join(got, "|") != want {
			t.Errorf("entries\n got  %s\n want %s", strings.Join(got, "|"), want)
		}
		if page, err := s.Entries(context.Background(), m1, "PER", "USD", 0, 10); err != nil || len(page.Items) != 0 || page.Next != 0 {
			t.Errorf("a balance never funded: %+v, %v", page, err)
		}
		if page, err := s.Entries(context.Background(), m2, "PER", "PEN", 0, 10); err != nil || len(page.Items) != 1 || page.Items[0].Amount != 7 {
			t.Errorf("the other merchant's entries: %+v, %v", page, err)
		}
	})

	t.Run("an entry is stamped no earlier than the one before it", func(t *testing.T) {
		s := e.open(t)
		addMerchants(t, s, m1)
		late, early := T0.Add(time.Hour), T0
		if _, err := s.Fund(context.Background(), m1, "PER", "PEN", 10, late); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Fund(context.Background(), m1, "PER", "PEN", 20, early); err != nil { // decided earlier, committed later
			t.Fatal(err)
		}
		p := create(t, s, newPayout(m1, "LATE", 5, T0), time.Time{})
		update(t, s, []int64{p.ID}, reserveStep(T0, time.Time{}))
		entries, err := rules.AllEntries(context.Background(), s, m1, "PER", "PEN")
		if err != nil || len(entries) != 3 {
			t.Fatalf("entries %+v, %v", entries, err)
		}
		for _, e := range entries {
			if !e.At.Equal(late) {
				t.Errorf("entry %d (%s) at %v, want %v: not before the entry before it", e.ID, e.Type, e.At, late)
			}
		}
	})

	t.Run("a write the ledger refuses writes no entry", func(t *testing.T) {
		s := e.open(t)
		addMerchants(t, s, m1)
		fund(t, s, m1, "PER", "PEN", 1000)
		p := create(t, s, newPayout(m1, "LG", 300, T0), T0)
		minted := func(p *rules.Payout, l rules.Ledger) (time.Time, error) {
			b, _ := l.Balance(m1, "PER", "PEN")
			b.Available += 5
			b.Balance += 5
			p.Move(rules.StatusAuthorized, T0, "", "")
			return time.Time{}, l.PutBalance(m1, b)
		}
		if err := s.UpdatePayouts(context.Background(), []int64{p.ID}, minted); err == nil {
			t.Fatal("money minted by a step was stored")
		}
		if _, err := s.Fund(context.Background(), m1, "PER", "PEN", -2000, T0); err == nil {
			t.Fatal("a withdrawal beyond the balance was stored")
		}
		entries, err := rules.AllEntries(context.Background(), s, m1, "PER", "PEN")
		if err != nil || len(entries) != 1 {
			t.Fatalf("entries after two refused writes: %+v, %v", entries, err)
		}
		checkEntriesAddUp(t, s, m1, "PER", "PEN", entries)
	})

	t.Run("Dump and Restore carry the entries, which still add up", func(t *testing.T) {
		s := e.open(t)
		w := newLifeWorld(t, s)
		w.run(t)
		var recs []rules.DumpRecord
		if err := s.Dump(context.Background(), func(r rules.DumpRecord) error { recs = append(recs, r); return nil }); err != nil {
			t.Fatal(err)
		}
		r := e.open(t)
		if err := r.Restore(context.Background(), recs); err != nil {
			t.Fatal(err)
		}
		before, _ := rules.AllEntries(context.Background(), s, w.m.ID, "PER", "PEN")
		after, err := rules.AllEntries(context.Background(), r, w.m.ID, "PER", "PEN")
		if err != nil || len(after) != len(before) {
			t.Fatalf("%d entries restored of %d: %v", len(after), len(before), err)
		}
		checkEntriesAddUp(t, r, w.m.ID, "PER", "PEN", after)
		if err := r.CheckAllLedgers(context.Background()); err != nil {
			t.Error(err)
		}
		fund(t, r, w.m.ID, "PER", "PEN", 1) // the restored store numbers on
		if got, _ := rules.AllEntries(context.Background(), r, w.m.ID, "PER", "PEN"); len(got) != len(before)+1 || got[len(got)-1].ID != int64(len(got)) {
			t.Errorf("after a funding on the restored store: %+v", got[len(got)-1])
		}
	})

	t.Run("a store from before entries existed gets one opening entry a balance", func(t *testing.T) {
		s := e.open(t)
		w := newLifeWorld(t, s)
		w.run(t)
		var recs []rules.DumpRecord // a dump made before entries existed: none of them
		err := s.Dump(context.Background(), func(r rules.DumpRecord) error {
			if r.Kind != rules.DumpLedgerEntry {
				recs = append(recs, r)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		r := e.open(t)
		if err := r.Restore(context.Background(), recs); err != nil {
			t.Fatal(err)
		}
		entries, err := rules.AllEntries(context.Background(), r, w.m.ID, "PER", "PEN")
		if err != nil || len(entries) != 1 || entries[0].Type != rules.EntryOpening {
			t.Fatalf("entries after restoring an old dump: %+v, %v", entries, err)
		}
		checkEntriesAddUp(t, r, w.m.ID, "PER", "PEN", entries)
		fund(t, r, w.m.ID, "PER", "PEN", 1)
		entries, _ = rules.AllEntries(context.Background(), r, w.m.ID, "PER", "PEN")
		checkEntriesAddUp(t, r, w.m.ID, "PER", "PEN", entries)
		if err := r.CheckAllLedgers(context.Background()); err != nil {
			t.Error(err)
		}
	})
}

// checkEntriesAddUp checks a balance's entries from the first: a chain of running figures
// that ends on the balance.
func checkEntriesAddUp(t *testing.T, s rules.Storage, merchantID, country, currency string, entries []rules.Entry) {
	t.Helper()
	last, err := rules.CheckEntryChain(rules.Entry{}, entries)
	if err != nil {
		t.Fatal(err)
	}
	b := balanceOf(t, s, merchantID, country, currency)
	b.Entries = int64(len(entries))
	if err := rules.CheckEntriesEnd(merchantID, b, last); err != nil {
		t.Error(err)
	}
	var sa, sb int64
	for _, e := range entries {
		da, db := e.Deltas()
		sa, sb = sa+da, sb+db
	}
	if sa != b.Available || sb != b.Balance {
		t.Errorf("the entries sum to available %d and balance %d; the balance is %d and %d", sa, sb, b.Available, b.Balance)
	}
}
