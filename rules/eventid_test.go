package rules_test

import (
	"bytes"
	"crypto/rand"
	"net/url"
	"testing"
	"time"

	"payouts/rules"
)

// Every id the service gives a new event goes into a URL path as it is: a client that
// percent-encodes the path sends the same bytes as one that does not.
func TestNewEventIDsNeedNoEncodingInAPath(t *testing.T) {
	now := time.Date(2026, 11, 25, 5, 0, 0, 0, time.UTC)
	p := &rules.Payout{ID: 1042, MerchantID: "m1", Status: rules.StatusRejectedBank}
	p.Request.Beneficiary.Email = "ana@example.pe"
	m := &rules.Merchant{ID: "m1", Settings: rules.Settings{EmailNotifications: true, NotificationURL: "https://m.example/hook"}}
	ids := []string{rules.BatchEventID(7)}
	for _, ev := range rules.OutcomeEvents(p, m, now) {
		ids = append(ids, ev.ID)
	}
	otp, err := rules.CashOTPEvent(&rules.Payout{MerchantID: "m1"}, rand.Reader, func(c []byte, _ string) []byte { return bytes.Clone(c) }, now)
	if err != nil {
		t.Fatal(err)
	}
	ids = append(ids, otp.ID)
	if len(ids) != 4 {
		t.Fatalf("ids %q, want a batch's, an email's, a notification's and a cash code's", ids)
	}
	for _, id := range ids {
		if url.PathEscape(id) != id || encodeURIComponent(id) != id {
			t.Errorf("the event id %q changes when a client encodes it", id)
		}
	}
	if got := rules.OutcomeEventID(rules.EventMerchantNotification, 1042, rules.StatusProcessed); got != "merchant.notification.1042.PROCESSED" {
		t.Errorf("a notification's id is %q", got)
	}
}

// encodeURIComponent is what JavaScript clients (openapi-fetch among them) do to a path
// parameter: everything but letters, digits and - _ . ! ~ * ' ( ) is percent-encoded.
func encodeURIComponent(s string) string {
	var b []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || bytes.IndexByte([]byte("-_.!~*'()"), c) >= 0 {
			b = append(b, c)
			continue
		}
		b = append(b, '%', "0123456789ABCDEF"[c>>4], "0123456789ABCDEF"[c&15])
	}
	return string(b)
}

// Ids of both forms, the ":" ones written before and the "." ones written now, read the same.
func TestEventIDsOfBothFormsRead(t *testing.T) {
	at := time.Date(2026, 11, 25, 5, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		id, typ, kind string
		payout        int64
	}{
		{"merchant.notification.1042.PROCESSED", "payout.PROCESSED", rules.EventMerchantNotification, 1042},
		{"merchant.notification:1042:PROCESSED", "payout.PROCESSED", rules.EventMerchantNotification, 1042},
		{"batch.notification.b7.COMPLETED", "batch.COMPLETED", rules.EventBatchNotification, 0},
		{"batch.notification:b7:COMPLETED", "batch.COMPLETED", rules.EventBatchNotification, 0},
		{"beneficiary.mail.42.REJECTED_BANK", "payout.REJECTED_BANK", rules.EventBeneficiaryMail, 42},
		{"beneficiary.mail:42:REJECTED_BANK", "payout.REJECTED_BANK", rules.EventBeneficiaryMail, 42},
		{"cash.otp.00ff", "payout", rules.EventCashOTP, 0},
		{"cash.otp:00ff", "payout", rules.EventCashOTP, 0},
	} {
		if got := rules.EventType(tc.id); got != tc.typ {
			t.Errorf("EventType(%q) = %q, want %q", tc.id, got, tc.typ)
		}
		if r := rules.DeliveredRecord(tc.id, at); r.Kind != tc.kind || r.PayoutID != tc.payout || r.ID != tc.id {
			t.Errorf("DeliveredRecord(%q) = kind %q payout %d, want %q %d", tc.id, r.Kind, r.PayoutID, tc.kind, tc.payout)
		}
	}
}
