package api_test

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"payouts/api"
	"payouts/rules"
)

// The published real notification of the original (merchant 234).
const publishedNotification = `{"payout":{"id":"29","country":"MEX","amount":"1","currency":"MXN","orderId":"BJB_fa2d561b-0d72-4c87-ae0e-85abe7b00ad0","merchantId":"234","bankCode":"646","name":"…"},"output":{"stage":"REJECTED","status":"REJECTED_BANK","statusChangeDateTime":"2024-05-29T13:16:57.267524Z"},"errors":[{"code":"4099","message":"Unknown Error"}]}`

// The published body parses into our notification type and comes back byte for byte: same
// names, same types (id and amount strings), same order.
func TestNotificationRoundTripsThePublishedVector(t *testing.T) {
	var n api.Notification
	if err := json.Unmarshal([]byte(publishedNotification), &n); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(n)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != publishedNotification {
		t.Fatalf("round trip:\n got %s\nwant %s", out, publishedNotification)
	}
}

// Our body for a rejected payout has every field of the published one, with the same JSON
// types, and nothing of the success-only fields.
func TestNotificationOfARejectedPayoutHasThePublishedFields(t *testing.T) {
	at := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	p := &rules.Payout{ID: 29, MerchantID: "234", OrderID: "ORD-29", Country: "PER", Currency: "PEN", Amount: 100,
		BankCode: "002", Stage: rules.StageInProgress, Status: rules.StatusPendingBank, StatusChangedAt: at}
	p.Request.Beneficiary = rules.Beneficiary{Name: "Ana", LastName: "Quispe", Email: "ana@example.pe"}
	p.Request.Destination.BankAccount.AccountNumber = "19312345679999"
	p.Move(rules.StatusRejectedBank, at, "4001", "the beneficiary is not the account owner")
	ours, err := api.NotificationJSON(p)
	if err != nil {
		t.Fatal(err)
	}
	var a, b map[string]any
	json.Unmarshal([]byte(publishedNotification), &a)
	json.Unmarshal(ours, &b)
	for _, part := range []string{"payout", "output"} {
		pub, got := a[part].(map[string]any), b[part].(map[string]any)
		for k, v := range pub {
			if reflect.TypeOf(got[k]) != reflect.TypeOf(v) {
				t.Errorf("%s.%s: ours %#v, the published %#v", part, k, got[k], v)
			}
		}
	}
	errs, _ := b["errors"].([]any)
	if len(errs) != 1 || errs[0].(map[string]any)["code"] != "4001" {
		t.Errorf("errors: %s", ours)
	}
	want := `{"id":"29","country":"PER","amount":"100","currency":"PEN","orderId":"ORD-29","merchantId":"234","bankCode":"002","accountNumber":"**********9999","name":"Ana Quispe","customerEmail":"ana@example.pe"}`
	if got, _ := json.Marshal(b["payout"]); len(got) != len(want) {
		t.Errorf("payout: got %s, want %s", got, want)
	}
	if _, ok := b["output"].(map[string]any)["authorizationCode"]; ok {
		t.Errorf("a rejection carries an authorizationCode: %s", ours)
	}
}
