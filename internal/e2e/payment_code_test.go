package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"
)

// The success notification carries payout.paymentCode where the original
// does: a Colombia cash payout's claim code, the rail's reference otherwise; never on a
// rejection.
func TestSuccessNotificationCarriesPaymentCode(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	got := map[string]map[string]any{} // orderId → body
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var n map[string]any
		if json.Unmarshal(raw, &n) == nil {
			if p, ok := n["payout"].(map[string]any); ok {
				mu.Lock()
				got[p["orderId"].(string)] = n
				mu.Unlock()
			}
		}
	}))
	defer recv.Close()
	s := startServer(t, "", "--allow-private-notification-urls")
	c := s.newMerchant(t, map[string]any{"cashPayouts": true, "emailNotifications": true, "notificationUrl": recv.URL + "/hook"})
	notified := func(order string) map[string]any {
		t.Helper()
		var n map[string]any
		waitFor(t, "the notification of "+order, 20*time.Second, func() bool {
			mu.Lock()
			defer mu.Unlock()
			n = got[order]
			return n != nil
		})
		return n
	}

	cash := c.create(t, colCashRequest("PCODE-CASH"))
	mails := s.waitMails(t, "?kind=cash.otp&payoutId="+strconv.FormatInt(cash.Payout.ID, 10), 1, 10*time.Second)
	m := otpInText.FindStringSubmatch(mails[0].Text)
	if m == nil {
		t.Fatalf("no code in the OTP mail:\n%s", mails[0].Text)
	}
	if status, raw := claim(t, c, cash.Payout.ID, m[1]); status != 200 {
		t.Fatalf("claim: %d %s", status, raw)
	}
	n := notified("PCODE-CASH")
	if pc := n["payout"].(map[string]any)["paymentCode"]; pc != m[1] {
		t.Errorf("cash payout: paymentCode %v, want the claim code %s", pc, m[1])
	}

	bank := c.create(t, perBankRequest("PCODE-BANK"))
	c.waitStage(t, bank.Payout.ID, "SUCCESS", 10*time.Second)
	n = notified("PCODE-BANK")
	pc, _ := n["payout"].(map[string]any)["paymentCode"].(string)
	if ref, _ := n["output"].(map[string]any)["authorizationCode"].(string); pc == "" || pc != ref {
		t.Errorf("bank payout: paymentCode %q, want the rail's reference %q", pc, ref)
	}

	rej := perBankRequest("PCODE-REJ")
	rej["destination"].(map[string]any)["bankAccount"] = map[string]any{"bankCode": "003", "accountType": 2, "accountNumber": "1231234569999"}
	bad := c.create(t, rej)
	c.waitStage(t, bad.Payout.ID, "REJECTED", 10*time.Second)
	if _, ok := notified("PCODE-REJ")["payout"].(map[string]any)["paymentCode"]; ok {
		t.Error("a rejection carries a paymentCode")
	}
}
