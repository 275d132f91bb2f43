package rules

import (
	"encoding/json"
	"strings"
	"testing"
)

// A dumped balance keeps the ledger's totals, which a Balance keeps off the wire.
func TestDumpedBalanceKeepsTheLedgerTotals(t *testing.T) {
	d := DumpedBalance{MerchantID: "7", Balance: Balance{Country: "PER", Currency: "PEN", Available: 50, Balance: 80,
		Funded: 100, Processed: 30, Reversed: 10}}
	raw, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"funded":100`) {
		t.Errorf("encoded %s without the totals", raw)
	}
	var back DumpedBalance
	if err := json.Unmarshal(raw, &back); err != nil || back != d {
		t.Errorf("decoded %+v (%v), want %+v", back, err, d)
	}
	if wire, _ := json.Marshal(d.Balance); strings.Contains(string(wire), "funded") {
		t.Errorf("a Balance on the wire shows its totals: %s", wire)
	}
}
