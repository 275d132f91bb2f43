package rules_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"payouts/rules"
)

// validBody is a request that passes the generic contract; mutate edits its JSON object.
func genericBody(mutate func(m map[string]any)) []byte {
	m := map[string]any{
		"country": "PER", "amount": 100000, "currency": "PEN", "orderId": "ORD-1",
		"beneficiary": map[string]any{"name": "Ana", "lastName": "Quispe",
			"document": map[string]any{"type": 1, "number": "45678912"}},
		"destination": map[string]any{"bankAccount": map[string]any{"bankCode": "002", "accountType": 2, "accountNumber": "19312345678012"}},
	}
	if mutate != nil {
		mutate(m)
	}
	b, _ := json.Marshal(m)
	return b
}

func objAt(m map[string]any, path ...string) map[string]any {
	for _, p := range path {
		m = m[p].(map[string]any)
	}
	return m
}

// Every generic-contract case answers 400 with its code and the field's location.
type decodeCase struct {
	name     string
	body     []byte
	wantCode string
	wantPath string
}

func decodeCases() []decodeCase {
	return []decodeCase{
		{"4.1 body is required", []byte(""), rules.CodeBodyRequired, ""},
		{"4.1 malformed JSON", []byte(`{"country":`), rules.CodeMalformedJSON, ""},
		{"4.1 body must be an object", []byte(`[1,2]`), rules.CodeMalformedJSON, ""},
		{"4.1 trailing data", []byte(`{} {}`), rules.CodeMalformedJSON, ""},
		{"4.1 a stray closing brace after a valid request", append(genericBody(nil), '}'), rules.CodeMalformedJSON, ""},
		{"4.1 a stray closing bracket after a valid request", append(genericBody(nil), ' ', ']'), rules.CodeMalformedJSON, ""},
		{"2.1 country required", genericBody(func(m map[string]any) { delete(m, "country") }), rules.CodeCountryRequired, "country"},
		{"2.1 country is 3 letters", genericBody(func(m map[string]any) { m["country"] = "PE" }), rules.CodeCountryFormat, "country"},
		{"2.1 country is a string", genericBody(func(m map[string]any) { m["country"] = 604 }), rules.CodeWrongType, "country"},
		{"2.1 amount required", genericBody(func(m map[string]any) { delete(m, "amount") }), rules.CodeAmountRequired, "amount"},
		{"2.1 amount is a number", genericBody(func(m map[string]any) { m["amount"] = "100000" }), rules.CodeAmountType, "amount"},
		{"2.1 amount is positive", genericBody(func(m map[string]any) { m["amount"] = -5 }), rules.CodeAmountFormat, "amount"},
		{"2.1 currency required", genericBody(func(m map[string]any) { m["currency"] = nil }), rules.CodeCurrencyRequired, "currency"},
		{"2.1 currency is 3 letters", genericBody(func(m map[string]any) { m["currency"] = "SOLES" }), rules.CodeCurrencyFormat, "currency"},
		{"2.1 orderId required", genericBody(func(m map[string]any) { m["orderId"] = "" }), rules.CodeOrderIDRequired, "orderId"},
		{"2.1 orderId at most 20", genericBody(func(m map[string]any) { m["orderId"] = strings.Repeat("x", 21) }), rules.CodeTooLong, "orderId"},
		{"2.1 description at most 50", genericBody(func(m map[string]any) { m["description"] = strings.Repeat("d", 51) }), rules.CodeTooLong, "description"},
		{"2.1 beneficiary required", genericBody(func(m map[string]any) { delete(m, "beneficiary") }), rules.CodeBeneficiaryRequired, "beneficiary"},
		{"2.1 beneficiary is an object", genericBody(func(m map[string]any) { m["beneficiary"] = "Ana" }), rules.CodeWrongType, "beneficiary"},
		{"2.2 name required", genericBody(func(m map[string]any) { delete(objAt(m, "beneficiary"), "name") }), rules.CodeNameRequired, "beneficiary.name"},
		{"2.2 lastName required", genericBody(func(m map[string]any) { delete(objAt(m, "beneficiary"), "lastName") }), rules.CodeLastNameRequired, "beneficiary.lastName"},
		{"2.2 email is an address", genericBody(func(m map[string]any) { objAt(m, "beneficiary")["email"] = "not-an-email" }), rules.CodeEmailFormat, "beneficiary.email"},
		{"2.2 document required", genericBody(func(m map[string]any) { delete(objAt(m, "beneficiary"), "document") }), rules.CodeDocumentRequired, "beneficiary.document"},
		{"2.2 document.type required", genericBody(func(m map[string]any) { delete(objAt(m, "beneficiary", "document"), "type") }), rules.CodeDocumentTypeRequired, "beneficiary.document.type"},
		{"2.2 document.type is an integer", genericBody(func(m map[string]any) { objAt(m, "beneficiary", "document")["type"] = "1" }), rules.CodeDocumentTypeType, "beneficiary.document.type"},
		{"2.2 document.type has no fraction", genericBody(func(m map[string]any) { objAt(m, "beneficiary", "document")["type"] = 1.5 }), rules.CodeDocumentTypeType, "beneficiary.document.type"},
		{"2.2 document.number required", genericBody(func(m map[string]any) { delete(objAt(m, "beneficiary", "document"), "number") }), rules.CodeDocumentNumRequired, "beneficiary.document.number"},
		{"2.2 document.number is a string", genericBody(func(m map[string]any) { objAt(m, "beneficiary", "document")["number"] = 45678912 }), rules.CodeWrongType, "beneficiary.document.number"},
		{"2.2 address is an object", genericBody(func(m map[string]any) { objAt(m, "beneficiary")["address"] = "Lima" }), rules.CodeWrongType, "beneficiary.address"},
		{"2.2 address has only its fields", genericBody(func(m map[string]any) { objAt(m, "beneficiary")["address"] = map[string]any{"planet": "Earth"} }), rules.CodeUnknownField, "beneficiary.address.planet"},
		{"2.3 destination required", genericBody(func(m map[string]any) { delete(m, "destination") }), rules.CodeDestinationRequired, "destination"},
		{"2.3 bankAccount required", genericBody(func(m map[string]any) { m["destination"] = map[string]any{} }), rules.CodeBankAccountRequired, "destination.bankAccount"},
		{"2.3 accountType is a string or a number", genericBody(func(m map[string]any) { objAt(m, "destination", "bankAccount")["accountType"] = true }), rules.CodeAccountTypeType, "destination.bankAccount.accountType"},
		{"2.3 cci is a string", genericBody(func(m map[string]any) { objAt(m, "destination", "bankAccount")["cci"] = 12 }), rules.CodeCCIType, "destination.bankAccount.cci"},
		{"2.3 bankCode is a string (1115)", genericBody(func(m map[string]any) { objAt(m, "destination", "bankAccount")["bankCode"] = 2 }), rules.CodeBankCodeType, "destination.bankAccount.bankCode"},
		{"2.3 accountNumber is a string or a number (1111)", genericBody(func(m map[string]any) { objAt(m, "destination", "bankAccount")["accountNumber"] = []any{1} }), rules.CodeAccountNumberType, "destination.bankAccount.accountNumber"},
		{"2.3 AdittionalAccountInfo is a string or a number", genericBody(func(m map[string]any) { objAt(m, "destination", "bankAccount")["AdittionalAccountInfo"] = true }), rules.CodeWrongType, "destination.bankAccount.AdittionalAccountInfo"},
		{"2.1 unknown field refused (1035)", genericBody(func(m map[string]any) { m["tip"] = 5 }), rules.CodeUnknownField, "tip"},
		{"2.3 location has only its fields", genericBody(func(m map[string]any) {
			objAt(m, "destination", "bankAccount")["location"] = map[string]any{"lat": "1"}
		}), rules.CodeUnknownField, "destination.bankAccount.location.lat"},
		{"2.6 subMerchantInfo is an object", genericBody(func(m map[string]any) { m["subMerchantInfo"] = []any{} }), rules.CodeWrongType, "subMerchantInfo"},
		{"2.6 subMerchantInfo has only its fields", genericBody(func(m map[string]any) { m["subMerchantInfo"] = map[string]any{"mcc": "1"} }), rules.CodeUnknownField, "subMerchantInfo.mcc"},
		{"2.1 timeoutUrl is a URL", genericBody(func(m map[string]any) { m["timeoutUrl"] = "not a url" }), rules.CodeURLFormat, "timeoutUrl"},
		{"2.1 field names are exact", genericBody(func(m map[string]any) { m["Country"] = "PER" }), rules.CodeUnknownField, "Country"},
	}
}

func TestDecodeGenericContract(t *testing.T) {
	for _, tc := range decodeCases() {
		t.Run(tc.name, func(t *testing.T) {
			_, err := rules.DecodePayoutRequest(tc.body)
			var p *rules.Problem
			if !errors.As(err, &p) {
				t.Fatalf("got %v, want a Problem", err)
			}
			if p.Kind != rules.KindInvalid {
				t.Errorf("kind = %v, want KindInvalid (400)", p.Kind)
			}
			for _, e := range p.Errors {
				if e.Code == tc.wantCode && e.Field == tc.wantPath {
					return
				}
			}
			t.Fatalf("no error %s at %q in %v", tc.wantCode, tc.wantPath, p)
		})
	}
}

func TestDecodeReportsEveryErrorAtOnce(t *testing.T) {
	body := genericBody(func(m map[string]any) {
		delete(m, "country")
		m["orderId"] = strings.Repeat("x", 25)
		objAt(m, "beneficiary", "document")["type"] = "DNI"
		m["extra"] = true
	})
	_, err := rules.DecodePayoutRequest(body)
	var p *rules.Problem
	if !errors.As(err, &p) || len(p.Errors) != 4 {
		t.Fatalf("got %v, want 4 errors", err)
	}
}

func TestDecodeAcceptsBothTimeoutURLSpellingsAndTextForms(t *testing.T) {
	req, err := rules.DecodePayoutRequest(genericBody(func(m map[string]any) {
		m["TimeoutURL"] = "https://shop.example/timeout"
		m["expirationTime"] = "10"
		objAt(m, "destination", "bankAccount")["accountType"] = "2"
	}))
	if err != nil {
		t.Fatal(err)
	}
	if req.TimeoutURL != "https://shop.example/timeout" || req.ExpirationTime != "10" || req.Destination.BankAccount.AccountType != "2" {
		t.Fatalf("decoded %+v", req)
	}
}

// The fingerprint ignores key order and white space, so a resend is recognised.
func TestFingerprintIsCanonical(t *testing.T) {
	a, err := rules.DecodePayoutRequest([]byte(`{"country":"PER","amount":100000,"currency":"PEN","orderId":"O1","beneficiary":{"name":"A","lastName":"B","document":{"type":1,"number":"45678912"}},"destination":{"bankAccount":{"cci":"00219300123456780123"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := rules.DecodePayoutRequest([]byte(`{ "orderId":"O1", "currency":"PEN", "amount":100000, "country":"PER",
	  "destination":{"bankAccount":{"cci":"00219300123456780123"}}, "beneficiary":{"document":{"number":"45678912","type":1},"lastName":"B","name":"A"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if a.Fingerprint() != b.Fingerprint() {
		t.Fatal("same request, different fingerprints")
	}
	c, _ := rules.DecodePayoutRequest(genericBody(nil))
	if a.Fingerprint() == c.Fingerprint() {
		t.Fatal("different requests, same fingerprint")
	}
}

// BenchmarkDecodePayoutRequest is the create path's decode of a valid body: the generic
// decode for the shape and limits checks, then the typed one.
func BenchmarkDecodePayoutRequest(b *testing.B) {
	body := genericBody(nil)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := rules.DecodePayoutRequest(body); err != nil {
			b.Fatal(err)
		}
	}
}

// A Text string reads as encoding/json reads a string, whether or not it takes the path
// without the decoder (a plain ASCII text).
func TestTextReadsAsAString(t *testing.T) {
	for _, raw := range []string{`"2"`, `""`, `"19312345678012"`, `"a\"b"`, `"a\\b"`, `"\u00e9"`, `"é"`, "\"\xff\"", `"a b"`} {
		var want string
		if err := json.Unmarshal([]byte(raw), &want); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		var got rules.Text
		if err := json.Unmarshal([]byte(raw), &got); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if string(got) != want {
			t.Errorf("%s: Text %q, string %q", raw, got, want)
		}
	}
	for raw, want := range map[string]string{`2`: "2", `null`: ""} {
		var got rules.Text
		if err := json.Unmarshal([]byte(raw), &got); err != nil || string(got) != want {
			t.Errorf("%s: %q, %v; want %q", raw, got, err, want)
		}
	}
}
