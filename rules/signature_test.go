package rules_test

import (
	"testing"

	"payouts/rules"
)

// The published test vector of contract section 2 (wire).
func TestSignaturePublishedVector(t *testing.T) {
	got := rules.Signature("P5yjICOFoE0kmJVMALeBRmoxuWXz0BJKuoSaIXEHTgE=", "GET", "/api/v1/22/payouts/73", 1687543425203, nil)
	want := "14cbc221c52bf588f439f86894ab1ebed9aa4867c2d79a1b159bd94a1df2c0d7"
	if got != want {
		t.Fatalf("Signature = %s, want %s", got, want)
	}
	if got := rules.SignatureOfHash("P5yjICOFoE0kmJVMALeBRmoxuWXz0BJKuoSaIXEHTgE=", "GET", "/api/v1/22/payouts/73", 1687543425203, rules.EmptyBodyHash); got != want {
		t.Fatalf("SignatureOfHash = %s, want %s", got, want)
	}
}
