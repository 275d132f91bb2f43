package postgres

import (
	"sync"
	"testing"

	"payouts/rules"
	"payouts/store/postgres/pgtest"
)

// Fundings of one balance from two instances at once all add up, the first of them creating
// the balance.
func TestConcurrentFundAcrossInstances(t *testing.T) {
	url := pgtest.Database(t)
	dbs := []*DB{openDB(t, url, Options{}), openDB(t, url, Options{})}
	if bs, err := dbs[0].Balances("m1"); err != nil || bs == nil || len(bs) != 0 {
		t.Fatalf("balances %#v, %v: want none", bs, err)
	}
	const n = 60
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if _, err := dbs[i%2].Fund("m1", "PER", "PEN", 7); err != nil {
				t.Errorf("fund %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	want := rules.Balance{Country: "PER", Currency: "PEN", Available: 7 * n, Balance: 7 * n, Funded: 7 * n}
	if bs, _ := dbs[1].Balances("m1"); len(bs) != 1 || bs[0] != want {
		t.Fatalf("balances %+v, want %+v", bs, want)
	}
	if _, err := dbs[0].Fund("m1", "PER", "PEN", -7*n-1); err == nil {
		t.Error("a withdrawal beyond the available balance went through")
	}
	if b, err := dbs[0].Fund("m1", "PER", "PEN", -7); err != nil || b.Available != 7*n-7 || b.Funded != 7*n-7 {
		t.Errorf("withdrawal: %+v %v", b, err)
	}
	if _, err := dbs[0].Fund("m1", "COL", "COP", 5); err != nil {
		t.Fatal(err)
	}
	if _, err := dbs[0].Fund("m1", "COL", "USD", 5); err != nil {
		t.Fatal(err)
	}
	bs, _ := dbs[0].Balances("m1")
	if len(bs) != 3 || bs[0].Currency != "COP" || bs[1].Currency != "USD" || bs[2].Country != "PER" {
		t.Errorf("balances out of order: %+v", bs)
	}
}
