package rules_test

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"payouts/rules"
)

const vectorSecret = "P5yjICOFoE0kmJVMALeBRmoxuWXz0BJKuoSaIXEHTgE="

// The published GET test vector.
func TestSignaturePublishedVector(t *testing.T) {
	got := rules.Signature(vectorSecret, "GET", "/api/v1/22/payouts/73", 1687543425203, nil)
	want := "14cbc221c52bf588f439f86894ab1ebed9aa4867c2d79a1b159bd94a1df2c0d7"
	if got != want {
		t.Fatalf("Signature = %s, want %s", got, want)
	}
	if got := rules.SignatureOfHash(vectorSecret, "GET", "/api/v1/22/payouts/73", 1687543425203, rules.EmptyBodyHash); got != want {
		t.Fatalf("SignatureOfHash = %s, want %s", got, want)
	}
}

// The published POST test vector: the body's exact bytes, its hash and
// the signature.
func TestSignaturePublishedPOSTVector(t *testing.T) {
	body := []byte(`{"country": "MEX","amount": 10,"currency": "MXN","orderId": "CDO_90305","beneficiary": {"name": "testName","lastName": "testLastName","document": {"type": 3,"number": "PEGM9007151H0"},"customerId": "test","userName": "646180110400000007"},"destination": {"bankAccount": {"bankCode": "002","accountType": 1,"clabe": "002123451234534510"}}}`)
	sum := sha256.Sum256(body)
	if got, want := hex.EncodeToString(sum[:]), "7c7b333e31a0f1f9fab0222a97e0366e8327749732132d17934f51d6738e4c2e"; got != want {
		t.Fatalf("body hash = %s, want %s", got, want)
	}
	want := "d6895bccdff72b95cb1d134037edadfa87cff1f0a543209efa356c889db97cb9"
	if got := rules.Signature(vectorSecret, "POST", "/api/v1/22/payouts", 1687543238010, body); got != want {
		t.Fatalf("Signature = %s, want %s", got, want)
	}
}

// A SignatureKey signs as Signature does, each time: its HMAC is reset between signatures,
// and its buffer reused for longer and shorter paths.
func TestSignatureKeyReusesItsHMAC(t *testing.T) {
	k := rules.NewSignatureKey(vectorSecret)
	for i, c := range []struct {
		method, path string
		body         string
	}{
		{"GET", "/api/v1/22/payouts/73", ""},
		{"POST", "/api/v1/22/payouts", `{"orderId":"o-1"}`},
		{"GET", "/api/v1/22/payouts/73", ""},
		{"GET", "/api/v1/22/payouts?orderId=" + string(make([]byte, 300)), ""},
		{"POST", "/p", "x"},
	} {
		for range 2 {
			got := k.MAC(c.method, c.path, 1687543425203+int64(i), []byte(c.body))
			want := rules.Signature(vectorSecret, c.method, c.path, 1687543425203+int64(i), []byte(c.body))
			if hex.EncodeToString(got[:]) != want {
				t.Fatalf("%d: MAC %x, Signature %s", i, got, want)
			}
		}
	}
	if got := rules.NewSignatureKey("another").MAC("GET", "/p", 1, nil); hex.EncodeToString(got[:]) == rules.Signature(vectorSecret, "GET", "/p", 1, nil) {
		t.Fatal("two secrets, one signature")
	}
}
