package bolt_test

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"payouts/rules"
	"payouts/store/bolt"
)

// A write that would break the ledger invariant fails whole: money that appears without a
// funding (a REVERSED that was never PROCESSED) or a reservation no payout holds.
func TestLedgerInvariantRefusesAWriteThatBreaksIt(t *testing.T) {
	db := openOutboxDB(t, filepath.Join(t.TempDir(), "p.db"))
	defer db.Close()
	if _, err := db.Fund("m1", "PER", "PEN", 1000, time.Now()); err != nil {
		t.Fatal(err)
	}
	p := &rules.Payout{MerchantID: "m1", OrderID: "L-1", Country: "PER", Currency: "PEN", Amount: 300,
		Stage: rules.StageInProgress, Status: rules.StatusCreated}
	p, _, err := db.CreatePayout(p, time.Time{}, nil, nil) // the stored copy carries the id
	if err != nil {
		t.Fatal(err)
	}
	for name, step := range map[string]rules.Step{
		"minted money": func(p *rules.Payout, l rules.Ledger) (time.Time, error) {
			b, _ := l.Balance("m1", "PER", "PEN")
			b.Balance += 9000
			b.Available += 9000
			b.Reversed += 9000
			return time.Time{}, l.PutBalance("m1", b)
		},
		"a reservation no payout holds": func(p *rules.Payout, l rules.Ledger) (time.Time, error) {
			b, _ := l.Balance("m1", "PER", "PEN")
			b.Available -= 300
			return time.Time{}, l.PutBalance("m1", b)
		},
	} {
		if err := db.UpdatePayouts([]int64{p.ID}, step); !errors.Is(err, bolt.ErrLedger) {
			t.Errorf("%s: %v, want the ledger invariant to refuse it", name, err)
		}
	}
	// The right way: the payout holds what the balance reserves.
	err = db.UpdatePayouts([]int64{p.ID}, func(p *rules.Payout, l rules.Ledger) (time.Time, error) {
		b, _ := l.Balance("m1", "PER", "PEN")
		b.Available -= 300
		p.Reserved = 300
		p.Move(rules.StatusAuthorized, time.Now(), "", "")
		return time.Time{}, l.PutBalance("m1", b)
	})
	if err != nil {
		t.Fatalf("a reservation with its payout: %v", err)
	}
	if bs, _ := db.Balances("m1"); len(bs) != 1 || bs[0].Available != 700 || bs[0].Balance != 1000 {
		t.Errorf("balances %+v, want available 700 of 1000", bs)
	}
	if err := db.CheckAllLedgers(); err != nil {
		t.Error(err)
	}
}

// The create's own transaction (Admit: the reservation written with the create) is held to
// the same invariant: a reservation the new payout does not carry is refused, nothing stored.
func TestLedgerInvariantCoversTheCreate(t *testing.T) {
	db := openOutboxDB(t, filepath.Join(t.TempDir(), "p.db"))
	defer db.Close()
	if _, err := db.Fund("m1", "PER", "PEN", 1000, time.Now()); err != nil {
		t.Fatal(err)
	}
	reserve := func(carry bool) rules.Step {
		return func(p *rules.Payout, l rules.Ledger) (time.Time, error) {
			b, _ := l.Balance("m1", "PER", "PEN")
			b.Available -= p.Amount
			if carry {
				p.Reserved = p.Amount
			}
			p.Move(rules.StatusAuthorized, time.Now(), "", "")
			return time.Now(), l.PutBalance("m1", b)
		}
	}
	bad := &rules.Payout{MerchantID: "m1", OrderID: "C-1", Country: "PER", Currency: "PEN", Amount: 300,
		Stage: rules.StageInProgress, Status: rules.StatusCreated}
	if _, _, err := db.CreatePayout(bad, time.Time{}, nil, reserve(false)); !errors.Is(err, bolt.ErrLedger) {
		t.Fatalf("a create reserving what its payout does not hold: %v, want ErrLedger", err)
	}
	if bs, _ := db.Balances("m1"); bs[0].Available != 1000 {
		t.Fatalf("the refused create changed the balance: %+v", bs)
	}
	good := &rules.Payout{MerchantID: "m1", OrderID: "C-2", Country: "PER", Currency: "PEN", Amount: 300,
		Stage: rules.StageInProgress, Status: rules.StatusCreated}
	if _, _, err := db.CreatePayout(good, time.Time{}, nil, reserve(true)); err != nil {
		t.Fatal(err)
	}
	if err := db.CheckAllLedgers(); err != nil {
		t.Error(err)
	}
}
