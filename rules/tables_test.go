package rules_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"payouts/rules"
)

// What writes to the tables' account changes neither the next account nor the tables the
// validator runs, from which it is made.
func TestTablesAreCopies(t *testing.T) {
	want, err := json.Marshal(rules.Tables()) // a snapshot that shares nothing with the tables
	if err != nil {
		t.Fatal(err)
	}
	got := rules.Tables()
	got.Shape[0].Types[0] = "boolean"
	got.Shape[len(got.Shape)-1].Fields = nil
	got.DummyEmail.Domains[0] = "real.com"
	got.Colombia.Key.Texts[0] = "X"
	got.Colombia.Documents[0].Max = 99
	got.Colombia.WalletDocuments[0] = 9
	got.Colombia.Wallets[0].Bank = "001"
	got.Colombia.AccountRules["013"].Only[0] = 1
	got.Colombia.AccountRules["803"] = rules.AccountLength{}
	got.Peru.Documents[0].Min = 1
	got.Peru.CellphoneOnly["001"] = true
	got.Peru.CCIPrefix["001"] = "001"
	got.Peru.CCIPrefixCode["005"] = "x"
	got.Peru.BankOfCCI["999"] = "001"
	if again, _ := json.Marshal(rules.Tables()); !bytes.Equal(again, want) {
		t.Error("writing to the tables' account changed the next one")
	}
}
