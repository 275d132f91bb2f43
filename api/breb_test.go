package api_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"payouts/internal/servertest"
	"payouts/rules"
)

func colKeyRequest(orderID, key string) map[string]any {
	return map[string]any{
		"country": "COL", "amount": 8000000, "currency": "COP", "orderId": orderID,
		"beneficiary": map[string]any{"name": "Andrea", "lastName": "Martínez", "document": map[string]any{"type": 1, "number": "1032456789"}},
		"destination": map[string]any{"bankAccount": map[string]any{"accountType": 5, "accountNumber": key}},
	}
}

// Bre-B key lookup (signed, our extension) over the simulated directory, and the rail: a key
// the directory does not know is rejected 4027 instead of succeeding.
func TestBreBKeyLookupAndUnknownKeyRejected(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: e})
		c := s.NewMerchant(t, map[string]any{"realTimeKey": true})
		var view struct {
			Key, HolderName, BankCode, AccountType string
		}
		code, _, raw := c.Do(t, "GET", "breb/keys/@andreamartinez", nil, "")
		json.Unmarshal(raw, &view)
		if code != 200 || view.Key != "@andreamartinez" || view.BankCode == "" || (view.AccountType != "SAVINGS" && view.AccountType != "CURRENT") ||
			view.HolderName == "" || !bytes.Contains([]byte(view.HolderName), []byte("*")) {
			t.Fatalf("known key: %d %s", code, raw)
		}
		for _, key := range []string{"3001234027", "@unknownperson"} {
			code, _, raw = c.Do(t, "GET", "breb/keys/"+key, nil, "")
			if p := servertest.DecodeProblem(t, raw); code != 404 || p.Code != rules.CodeBreBKeyUnknown || p.Errors[0].Location != "path.key" {
				t.Fatalf("unknown key %s: %d %s", key, code, raw)
			}
		}
		if code, _, raw = c.Do(t, "GET", "breb/keys/ab", nil, ""); code != 401 || servertest.DecodeProblem(t, raw).Code != rules.CodeBreBKeyLength {
			t.Fatalf("malformed key: %d %s", code, raw)
		}
		// An admin's entry: a holder for an unknown key, and a known key made absent.
		if code := s.Admin(t, "PUT", "/admin/v1/sandbox/directory/COL/@unknownperson",
			map[string]any{"holderName": "Luisa Gómez", "bankCode": "007", "accountType": "CURRENT"}, nil); code != 200 {
			t.Fatalf("put COL entry: %d", code)
		}
		code, _, raw = c.Do(t, "GET", "breb/keys/@unknownperson", nil, "")
		json.Unmarshal(raw, &view)
		if code != 200 || view.HolderName != "Lu*** Gó***" || view.BankCode != "007" || view.AccountType != "CURRENT" {
			t.Fatalf("admin's key: %d %s", code, raw)
		}
		s.Admin(t, "PUT", "/admin/v1/sandbox/directory/COL/@gonekey", map[string]any{"absent": true}, nil)
		if code, _, raw := s.RawAdmin(t, "PUT", "/admin/v1/sandbox/directory/COL/@x", map[string]any{"holderName": "A", "bankCode": "040", "accountType": "OTHER"}); code != 400 ||
			len(servertest.DecodeProblem(t, raw).Errors) != 4 {
			t.Fatalf("invalid COL entry: %d %s", code, raw)
		}

		known := c.Create(t, colKeyRequest("BREB-KNOWN", "@andreamartinez"))
		unknown := c.Create(t, colKeyRequest("BREB-UNKNOWN", "3001234027"))
		gone := c.Create(t, colKeyRequest("BREB-GONE", "@gonekey"))
		added := c.Create(t, colKeyRequest("BREB-ADDED", "@unknownperson"))
		c.WaitStage(t, known.Payout.ID, "SUCCESS", 5*time.Second)
		c.WaitStage(t, added.Payout.ID, "SUCCESS", 5*time.Second)
		for _, p := range []servertest.Payout{unknown, gone} {
			got := c.WaitStage(t, p.Payout.ID, "REJECTED", 5*time.Second)
			if got.Output.Status != "REJECTED_BANK" || len(got.Errors) != 1 || got.Errors[0].Code != rules.CodeDirectoryUnavailable {
				t.Fatalf("unknown key %s: %+v", p.Payout.OrderID, got)
			}
		}
		if avail, total := c.Balance(t, "COP"); avail != total || total != 100_000_000_000-2*8000000 {
			t.Fatalf("COP after two paid and two rejected: %d/%d", avail, total)
		}

		// The OpenAPI marks the lookup as our extension.
		_, _, full := s.Send(t, servertest.Scenario{Path: "/openapi.json"})
		var doc struct {
			Paths map[string]map[string]map[string]any `json:"paths"`
		}
		json.Unmarshal(full, &doc)
		if op := doc.Paths["/api/v1/{merchantId}/breb/keys/{key}"]["get"]; op["x-payouts-extension"] != true {
			t.Fatalf("the Bre-B lookup is not marked as an extension: %v", op)
		}
		if doc.Paths[lookupPath]["post"] == nil || doc.Paths[tokenPath]["post"] == nil {
			t.Fatal("the lookup or the token endpoint is missing from the OpenAPI document")
		}
	})
}
