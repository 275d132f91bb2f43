package bolt_test

import (
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"payouts/rules"
	"payouts/store/bolt"
)

func importPayouts(t *testing.T, db *bolt.DB, n int, country string, status rules.Status) {
	t.Helper()
	var ps []*rules.Payout
	for i := 0; i < n; i++ {
		req := &rules.PayoutRequest{Country: country, Currency: "PEN", OrderID: country + strconv.Itoa(i)}
		p := rules.NewPayout("M1", req, rules.Route{Amount: 100, Channel: rules.ChannelBatch}, time.Now())
		if status != rules.StatusCreated {
			p.Move(status, time.Now(), "", "")
		}
		ps = append(ps, p)
	}
	if err := db.ImportPayouts(ps); err != nil {
		t.Fatal(err)
	}
}

// Listing walks an index newest first, pages with a cursor, and never reads more than a
// bounded number of payouts for one request, even for a filter no index serves.
func TestListPagesAndBoundsItsScan(t *testing.T) {
	db, err := bolt.Open(filepath.Join(t.TempDir(), "p.db"), bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	importPayouts(t, db, 3, "COL", rules.StatusProcessed)
	importPayouts(t, db, 12000, "PER", rules.StatusCreated)

	page, err := db.ListPayouts("M1", rules.ListFilter{Status: rules.StatusProcessed, Limit: 2})
	if err != nil || len(page.Items) != 2 || page.Items[0].ID != 3 || page.NextCursor != 2 {
		t.Fatalf("status page 1: %v %+v", err, page)
	}
	page, _ = db.ListPayouts("M1", rules.ListFilter{Status: rules.StatusProcessed, Limit: 2, Cursor: page.NextCursor})
	if len(page.Items) != 1 || page.Items[0].ID != 1 || page.NextCursor != 0 {
		t.Fatalf("status page 2: %+v", page)
	}
	// country=COL has no index: the scan stops after a bounded number with a cursor.
	var found []int64
	cursor, requests := int64(0), 0
	for {
		page, err := db.ListPayouts("M1", rules.ListFilter{Country: "COL", Limit: 50, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		requests++
		for _, p := range page.Items {
			found = append(found, p.ID)
		}
		if page.NextCursor == 0 {
			break
		}
		cursor = page.NextCursor
	}
	if len(found) != 3 || requests < 3 {
		t.Fatalf("found %v in %d requests, want the 3 COL payouts over several bounded requests", found, requests)
	}
	// orderId is served by its index.
	page, _ = db.ListPayouts("M1", rules.ListFilter{OrderID: "PER11999"})
	if len(page.Items) != 1 || page.Items[0].OrderID != "PER11999" {
		t.Fatalf("by orderId: %+v", page)
	}
}
