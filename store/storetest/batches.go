package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"testing"

	"payouts/rules"
)

// newBatch is a DRAFT batch of merchant m with n items (orderIds B1…Bn).
func newBatch(m, batchID string, n int) (*rules.Batch, []rules.BatchItem) {
	b := &rules.Batch{MerchantID: m, BatchID: batchID, Status: rules.BatchDraft, Fingerprint: "fp-" + batchID,
		Items: n, MadeBy: rules.KeyPrincipal("key_maker"), CreatedAt: T0,
		Totals: []rules.BatchTotal{{Currency: "PEN", Items: n, Amount: int64(n) * 1000}}}
	items := make([]rules.BatchItem, n)
	for i := range items {
		o := "B" + strconv.Itoa(i+1)
		items[i] = rules.BatchItem{Seq: i + 1, OrderID: o, Currency: "PEN", Amount: 1000,
			Body: json.RawMessage(`{"orderId":"` + o + `","amount":1000}`)}
	}
	return b, items
}

// testBatches: rules.BatchStore.
func testBatches(t *testing.T, e Engine) {
	t.Run("a batchId is the merchant's once: the second create answers the first batch", func(t *testing.T) {
		s := e.open(t)
		addMerchants(t, s, m1, m2)
		b, items := newBatch(m1, "payroll-1", 3)
		first, created, err := s.CreateBatch(context.Background(), b, items)
		if err != nil || !created || first.ID <= 0 || first.Status != rules.BatchDraft {
			t.Fatalf("CreateBatch: %+v, %v, %v", first, created, err)
		}
		other, _ := newBatch(m1, "payroll-1", 1)
		other.Fingerprint = "another"
		again, created, err := s.CreateBatch(context.Background(), other, nil)
		if err != nil || created || again.ID != first.ID || again.Fingerprint != first.Fingerprint {
			t.Fatalf("the same batchId again: %+v, created %v, %v; want batch %d as stored", again, created, err, first.ID)
		}
		// Another merchant may use the same batchId.
		b2, items2 := newBatch(m2, "payroll-1", 1)
		if got, created, err := s.CreateBatch(context.Background(), b2, items2); err != nil || !created || got.ID == first.ID {
			t.Fatalf("another merchant's batch: %+v, %v, %v", got, created, err)
		}
		got, err := s.Batch(context.Background(), m1, first.ID)
		if err != nil || got.BatchID != "payroll-1" || got.Items != 3 || got.MadeBy != b.MadeBy || !got.CreatedAt.Equal(T0) ||
			len(got.Totals) != 1 || got.Totals[0].Amount != 3000 {
			t.Fatalf("Batch: %+v, %v", got, err)
		}
		if _, err := s.Batch(context.Background(), m2, first.ID); !errors.Is(err, rules.ErrNotFound) {
			t.Errorf("another merchant's read of batch %d: %v, want ErrNotFound", first.ID, err)
		}
		if _, err := s.BatchItems(context.Background(), m2, first.ID, 0, 0); !errors.Is(err, rules.ErrNotFound) {
			t.Errorf("another merchant's items of batch %d: %v, want ErrNotFound", first.ID, err)
		}
	})

	t.Run("items page by seq, and recorded payouts come with their stage and status", func(t *testing.T) {
		s := e.open(t)
		addMerchants(t, s, m1)
		b, items := newBatch(m1, "b", 5)
		stored, _, err := s.CreateBatch(context.Background(), b, items)
		if err != nil {
			t.Fatal(err)
		}
		page, err := s.BatchItems(context.Background(), m1, stored.ID, 2, 2)
		if err != nil || len(page) != 2 || page[0].Seq != 3 || page[1].Seq != 4 || page[0].OrderID != "B3" {
			t.Fatalf("items after 2, limit 2: %+v, %v", page, err)
		}
		var body map[string]any
		if err := json.Unmarshal(page[0].Body, &body); err != nil || body["orderId"] != "B3" {
			t.Fatalf("item body %s: %v", page[0].Body, err)
		}
		p := create(t, s, newPayout(m1, "B1", 1000, T0), T0)
		rec := []rules.BatchItem{items[0], items[1]}
		rec[0].PayoutID = p.ID
		rec[1].Code, rec[1].Message, rec[1].Location = rules.CodeNoBalance, "no balance", "amount"
		if err := s.RecordBatchItems(context.Background(), m1, stored.ID, rec); err != nil {
			t.Fatal(err)
		}
		all, err := s.BatchItems(context.Background(), m1, stored.ID, 0, 0)
		if err != nil || len(all) != 5 {
			t.Fatalf("all items: %d, %v", len(all), err)
		}
		if all[0].PayoutID != p.ID || all[0].Stage != rules.StageInProgress || all[0].Status != rules.StatusCreated || !all[0].Done() {
			t.Errorf("item 1: %+v, want payout %d IN_PROGRESS/CREATED", all[0], p.ID)
		}
		if all[1].Code != rules.CodeNoBalance || all[1].Location != "amount" || !all[1].Done() || !all[1].Final() {
			t.Errorf("item 2: %+v, want refused with %s", all[1], rules.CodeNoBalance)
		}
		if all[2].Done() {
			t.Errorf("item 3 done before it was recorded: %+v", all[2])
		}
		ghost := []rules.BatchItem{{Seq: 99, OrderID: "x", Body: json.RawMessage(`{}`)}}
		if err := s.RecordBatchItems(context.Background(), m1, stored.ID, ghost); err == nil {
			t.Error("recording an item the batch does not have succeeded")
		}
	})

	t.Run("updates move a batch through the runner's queue and write their events with it", func(t *testing.T) {
		s := e.open(t)
		addMerchants(t, s, m1)
		b, items := newBatch(m1, "q", 1)
		stored, _, err := s.CreateBatch(context.Background(), b, items)
		if err != nil {
			t.Fatal(err)
		}
		runnable := func() []int64 {
			t.Helper()
			bs, err := s.RunnableBatches(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			var ids []int64
			for _, b := range bs {
				ids = append(ids, b.ID)
			}
			return ids
		}
		if got := runnable(); len(got) != 0 {
			t.Fatalf("a DRAFT batch is runnable: %v", got)
		}
		wantErr := errors.New("refused")
		if _, err := s.UpdateBatch(context.Background(), m1, stored.ID, func(b *rules.Batch) ([]rules.Event, error) {
			b.Status = rules.BatchApproved
			return nil, wantErr
		}); !errors.Is(err, wantErr) {
			t.Fatalf("a refused update: %v", err)
		}
		if got, _ := s.Batch(context.Background(), m1, stored.ID); got.Status != rules.BatchDraft {
			t.Fatalf("a refused update was written: %s", got.Status)
		}
		for _, st := range []rules.BatchStatus{rules.BatchApproved, rules.BatchProcessing, rules.BatchCompleted} {
			if _, err := s.UpdateBatch(context.Background(), m1, stored.ID, func(b *rules.Batch) ([]rules.Event, error) {
				b.Status = st
				return nil, nil
			}); err != nil {
				t.Fatal(err)
			}
			if got := runnable(); len(got) != 1 || got[0] != stored.ID {
				t.Fatalf("%s: runnable %v, want [%d]", st, got, stored.ID)
			}
		}
		ev := rules.Event{ID: rules.BatchEventID(stored.ID), Kind: rules.EventBatchNotification, MerchantID: m1,
			Data: json.RawMessage(`{"batch":1}`), CreatedAt: T0, NextAt: T0}
		got, err := s.UpdateBatch(context.Background(), m1, stored.ID, func(b *rules.Batch) ([]rules.Event, error) {
			b.NotifiedAt = T0.Add(1)
			return []rules.Event{ev}, nil
		})
		if err != nil || !got.NotifiedAt.Equal(T0.Add(1)) {
			t.Fatalf("notified: %+v, %v", got, err)
		}
		if got := runnable(); len(got) != 0 {
			t.Errorf("a notified batch is still runnable: %v", got)
		}
		due, _, err := s.DueEvents(context.Background(), rules.LaneNotify, T0.Add(rules.ClaimLease), 10)
		var data struct{ Batch int }
		if err != nil || len(due) != 1 || due[0].ID != ev.ID || json.Unmarshal(due[0].Data, &data) != nil || data.Batch != 1 {
			t.Fatalf("the notification in the notify lane: %+v, %v", due, err)
		}
		if _, err := s.UpdateBatch(context.Background(), m1, 999999, func(*rules.Batch) ([]rules.Event, error) { return nil, nil }); !errors.Is(err, rules.ErrNotFound) {
			t.Errorf("update of no batch: %v", err)
		}
	})

	t.Run("lists and used orderIds are the merchant's", func(t *testing.T) {
		s := e.open(t)
		addMerchants(t, s, m1, m2)
		var ids []int64
		for _, name := range []string{"a", "b", "c"} {
			b, items := newBatch(m1, name, 1)
			got, _, err := s.CreateBatch(context.Background(), b, items)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, got.ID)
		}
		if b, items := newBatch(m2, "z", 1); true {
			if _, _, err := s.CreateBatch(context.Background(), b, items); err != nil {
				t.Fatal(err)
			}
		}
		page, err := s.Batches(context.Background(), m1, 0, 2)
		if err != nil || len(page) != 2 || page[0].ID != ids[0] || page[1].ID != ids[1] {
			t.Fatalf("first page: %+v, %v", page, err)
		}
		page, err = s.Batches(context.Background(), m1, ids[1], 2)
		if err != nil || len(page) != 1 || page[0].ID != ids[2] {
			t.Fatalf("second page: %+v, %v", page, err)
		}
		p := create(t, s, newPayout(m1, "USED-1", 1000, T0), T0)
		create(t, s, newPayout(m2, "USED-2", 1000, T0), T0)
		used, err := s.UsedOrderIDs(context.Background(), m1, []string{"USED-1", "USED-2", "FREE"})
		if err != nil || len(used) != 1 || used["USED-1"] != p.ID {
			t.Fatalf("UsedOrderIDs: %v, %v; want only USED-1 → %d", used, err, p.ID)
		}
	})

	t.Run("a dump carries batches with their items, and the numbering goes on after them", func(t *testing.T) {
		s := e.open(t)
		addMerchants(t, s, m1)
		b, items := newBatch(m1, "dumped", 2)
		stored, _, err := s.CreateBatch(context.Background(), b, items)
		if err != nil {
			t.Fatal(err)
		}
		recs := dumpOf(t, s)
		n := 0
		for _, r := range recs {
			if r.Kind == rules.DumpBatch {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("%d batch records, want 1", n)
		}
		r := e.open(t)
		if err := r.Restore(context.Background(), recs); err != nil {
			t.Fatalf("Restore: %v", err)
		}
		got, err := r.Batch(context.Background(), m1, stored.ID)
		if err != nil || got.BatchID != "dumped" || got.Fingerprint != stored.Fingerprint {
			t.Fatalf("restored batch: %+v, %v", got, err)
		}
		its, err := r.BatchItems(context.Background(), m1, stored.ID, 0, 0)
		if err != nil || len(its) != 2 || its[1].OrderID != "B2" {
			t.Fatalf("restored items: %+v, %v", its, err)
		}
		nb, items2 := newBatch(m1, "after", 1)
		next, created, err := r.CreateBatch(context.Background(), nb, items2)
		if err != nil || !created || next.ID <= stored.ID {
			t.Fatalf("a batch after the restore: %+v, %v, %v; want an id above %d", next, created, err, stored.ID)
		}
	})
}
