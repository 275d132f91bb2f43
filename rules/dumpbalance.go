package rules

import "encoding/json"

// ledgerBalance is a Balance as a dump carries it: with the ledger's running totals, which
// Balance keeps off the wire (json:"-") but a restored store needs to check its ledger.
type ledgerBalance struct {
	Country   string `json:"country"`
	Currency  string `json:"currency"`
	Available int64  `json:"availableBalance"`
	Balance   int64  `json:"balance"`
	Funded    int64  `json:"funded"`
	Processed int64  `json:"processed"`
	Reversed  int64  `json:"reversed"`
}

// dumpedBalanceJSON is DumpedBalance's encoding.
type dumpedBalanceJSON struct {
	MerchantID string        `json:"merchantId"`
	Balance    ledgerBalance `json:"balance"`
}

// MarshalJSON encodes the balance with its ledger totals (funded, processed, reversed).
func (d DumpedBalance) MarshalJSON() ([]byte, error) {
	return json.Marshal(dumpedBalanceJSON{MerchantID: d.MerchantID, Balance: ledgerBalance(d.Balance)})
}

// UnmarshalJSON decodes what MarshalJSON encodes.
func (d *DumpedBalance) UnmarshalJSON(b []byte) error {
	var v dumpedBalanceJSON
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	d.MerchantID, d.Balance = v.MerchantID, Balance(v.Balance)
	return nil
}
