package api_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"payouts/internal/servertest"
)

// The success notification carries payout.paymentCode where the original does: a
// Colombia cash payout's claim code, the rail's reference otherwise; never on a rejection.
func TestSuccessNotificationCarriesPaymentCode(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
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
		s := servertest.Start(t, servertest.Setup{Engine: e, Args: []string{"--allow-private-notification-urls"}})
		c := s.NewMerchant(t, map[string]any{"cashPayouts": true, "emailNotifications": true, "notificationUrl": recv.URL + "/hook"})
		notified := func(order string) map[string]any {
			t.Helper()
			var n map[string]any
			servertest.Eventually(t, 20*time.Second, "the notification of "+order, func() bool {
				mu.Lock()
				defer mu.Unlock()
				n = got[order]
				return n != nil
			})
			return n
		}

		cash := c.Create(t, map[string]any{
			"country": "COL", "amount": 5000000, "currency": "COP", "orderId": "PCODE-CASH",
			"beneficiary": map[string]any{"name": "Pedro", "lastName": "Ramírez", "email": "pedro.ramirez@yahoo.com",
				"document": map[string]any{"type": 1, "number": "80123456"}},
			"destination": map[string]any{"bankAccount": map[string]any{"bankCode": "099", "accountType": 3}},
		})
		var mails []struct{ Text string }
		servertest.Eventually(t, 10*time.Second, "the cash payout's code mailed", func() bool {
			s.Admin(t, "GET", "/sandbox/mail.json?kind=cash.otp&payoutId="+strconv.FormatInt(cash.Payout.ID, 10), nil, &mails)
			return len(mails) > 0
		})
		m := regexp.MustCompile(`Tu código de retiro es: ([0-9]{6})`).FindStringSubmatch(mails[0].Text)
		if m == nil {
			t.Fatalf("no code in the OTP mail:\n%s", mails[0].Text)
		}
		if status, _, raw := c.Do(t, "POST", "payouts/"+itoa(cash.Payout.ID)+"/claim", map[string]any{"code": m[1]}, ""); status != 200 {
			t.Fatalf("claim: %d %s", status, raw)
		}
		n := notified("PCODE-CASH")
		if pc := n["payout"].(map[string]any)["paymentCode"]; pc != m[1] {
			t.Errorf("cash payout: paymentCode %v, want the claim code %s", pc, m[1])
		}

		bank := c.Create(t, servertest.PerBankRequest("PCODE-BANK"))
		c.WaitStage(t, bank.Payout.ID, "SUCCESS", 10*time.Second)
		n = notified("PCODE-BANK")
		pc, _ := n["payout"].(map[string]any)["paymentCode"].(string)
		if ref, _ := n["output"].(map[string]any)["authorizationCode"].(string); pc == "" || pc != ref {
			t.Errorf("bank payout: paymentCode %q, want the rail's reference %q", pc, ref)
		}

		rej := servertest.PerBankRequest("PCODE-REJ")
		rej["destination"].(map[string]any)["bankAccount"] = map[string]any{"bankCode": "003", "accountType": 2, "accountNumber": "1231234569999"}
		bad := c.Create(t, rej)
		c.WaitStage(t, bad.Payout.ID, "REJECTED", 10*time.Second)
		if _, ok := notified("PCODE-REJ")["payout"].(map[string]any)["paymentCode"]; ok {
			t.Error("a rejection carries a paymentCode")
		}
	})
}
