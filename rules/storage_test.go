package rules_test

import (
	"encoding/json"
	"testing"

	"payouts/rules"
)

// A dumped balance keeps its ledger totals, which Balance's own JSON leaves out.
func TestDumpedBalanceKeepsTheLedgerTotals(t *testing.T) {
	want := rules.DumpedBalance{MerchantID: "M1", Balance: rules.Balance{Country: "PER", Currency: "PEN",
		Available: 700, Balance: 900, Funded: 1500, Processed: 800, Reversed: 200}}
	raw, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	var got rules.DumpedBalance
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("round trip through %s gave %+v, want %+v", raw, got, want)
	}
}
