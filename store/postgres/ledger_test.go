package postgres

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"payouts/rules"
	"payouts/store/postgres/pgtest"
)

// Fundings of one balance from two instances at once all add up, the first of them creating
// the balance; reading a balance never written creates none (as in store/bolt).
func TestConcurrentFundAcrossInstances(t *testing.T) {
	url := pgtest.Database(t)
	dbs := []*DB{openDB(t, url, Options{}), openDB(t, url, Options{})}
	if _, _, err := dbs[0].CreatePayout(context.Background(), newPayout("NO-FUNDS", 300), time.Time{}, nil, reserve); err != nil {
		t.Fatal(err)
	}
	if bs, err := dbs[0].Balances(context.Background(), "m1"); err != nil || bs == nil || len(bs) != 0 {
		t.Fatalf("balances %#v, %v after a read only: want none", bs, err)
	}
	const n = 60
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if _, err := dbs[i%2].Fund(context.Background(), "m1", "PER", "PEN", 7, time.Now()); err != nil {
				t.Errorf("fund %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	want := rules.Balance{Country: "PER", Currency: "PEN", Available: 7 * n, Balance: 7 * n, Funded: 7 * n}
	if bs, _ := dbs[1].Balances(context.Background(), "m1"); len(bs) != 1 || bs[0] != want {
		t.Fatalf("balances %+v, want %+v", bs, want)
	}
	if _, err := dbs[0].Fund(context.Background(), "m1", "PER", "PEN", -7*n-1, time.Now()); err == nil {
		t.Error("a withdrawal beyond the available balance went through")
	}
	if b, err := dbs[0].Fund(context.Background(), "m1", "PER", "PEN", -7, time.Now()); err != nil || b.Available != 7*n-7 || b.Funded != 7*n-7 {
		t.Errorf("withdrawal: %+v %v", b, err)
	}
	if _, err := dbs[0].Fund(context.Background(), "m1", "COL", "COP", 5, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := dbs[0].Fund(context.Background(), "m1", "COL", "USD", 5, time.Now()); err != nil {
		t.Fatal(err)
	}
	bs, _ := dbs[0].Balances(context.Background(), "m1")
	if len(bs) != 3 || bs[0].Currency != "COP" || bs[1].Currency != "USD" || bs[2].Country != "PER" {
		t.Errorf("balances out of order: %+v", bs)
	}
}

// settle is a lifecycle step to a final status, with its ledger entries: PROCESSED pays what
// was reserved, REVERSED returns it, a rejection releases the reservation.
func settle(status rules.Status) rules.Step {
	return func(p *rules.Payout, l rules.Ledger) (time.Time, error) {
		b, err := l.Balance(p.MerchantID, p.Country, p.Currency)
		if err != nil {
			return time.Time{}, err
		}
		switch status {
		case rules.StatusProcessed:
			b.Balance -= p.Amount
			b.Processed += p.Amount
		case rules.StatusReversed:
			b.Balance += p.Amount
			b.Available += p.Amount
			b.Reversed += p.Amount
		default:
			b.Available += p.Reserved
		}
		p.Reserved = 0
		p.Move(status, time.Now(), "", "")
		return time.Time{}, l.PutBalance(p.MerchantID, b)
	}
}

// After a lifecycle (reservations at create, payouts processed, reversed, rejected, one
// still open), the ledger checks from scratch; a balance changed behind its back does not.
func TestCheckAllLedgersAfterALifecycle(t *testing.T) {
	db := newDB(t)
	if _, err := db.Fund(context.Background(), "m1", "PER", "PEN", 10_000, time.Now()); err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, order := range []string{"P-1", "P-2", "P-3", "P-4"} {
		ids = append(ids, create(t, db, newPayout(order, 1000), time.Time{}, reserve).ID)
	}
	for _, s := range []struct {
		ids    []int64
		status rules.Status
	}{
		{ids[:2], rules.StatusProcessed},
		{ids[1:2], rules.StatusReversed},
		{ids[2:3], rules.StatusRejectedBank},
	} {
		if err := db.UpdatePayouts(context.Background(), s.ids, settle(s.status)); err != nil {
			t.Fatalf("%s: %v", s.status, err)
		}
	}
	want := rules.Balance{Country: "PER", Currency: "PEN", Available: 8000, Balance: 9000, Funded: 10_000, Processed: 2000, Reversed: 1000}
	if bs, _ := db.Balances(context.Background(), "m1"); len(bs) != 1 || bs[0] != want {
		t.Fatalf("balances %+v, want %+v", bs, want)
	}
	if err := db.CheckAllLedgers(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := db.pool.Exec(context.Background(), `UPDATE balances SET available = available - 1`); err != nil {
		t.Fatal(err)
	}
	if err := db.CheckAllLedgers(context.Background()); !errors.Is(err, rules.ErrLedger) {
		t.Fatalf("a tampered balance: %v, want ErrLedger", err)
	}
}
