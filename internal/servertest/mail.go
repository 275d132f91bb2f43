package servertest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// Mail is one mail of the sandbox mailbox (GET /sandbox/mail.json).
type Mail struct {
	To       string    `json:"to"`
	Subject  string    `json:"subject"`
	Text     string    `json:"text"`
	HTML     string    `json:"html"`
	SentAt   time.Time `json:"sentAt"`
	PayoutID int64     `json:"payoutId"`
	Kind     string    `json:"kind"`
}

// Mailbox reads the sandbox mailbox of the server at base with the admin token; query
// filters it ("?kind=cash.otp&payoutId=7").
func Mailbox(t testing.TB, client *http.Client, base, adminToken, query string) []Mail {
	t.Helper()
	code, _, raw := AdminRequest(t, client, base, adminToken, "GET", "/sandbox/mail.json"+query, nil)
	var out []Mail
	if code != 200 || json.Unmarshal(raw, &out) != nil {
		t.Fatalf("GET /sandbox/mail.json%s: %d %s", query, code, raw)
	}
	return out
}

// WaitMails polls the sandbox mailbox until query lists n mails, or fails the test.
func (s *Server) WaitMails(t testing.TB, query string, n int, within time.Duration) []Mail {
	t.Helper()
	var got []Mail
	if !Poll(within, func() bool { got = Mailbox(t, s.HTTP, s.URL, s.AdminToken, query); return len(got) >= n }) {
		t.Fatalf("mailbox %s: %d mails after %v, want %d", query, len(got), within, n)
	}
	return got
}

// ColCashRequest is a Colombia cash payout (a merchant with cashPayouts may send it),
// whose beneficiary is mailed a one-time code.
func ColCashRequest(orderID string) map[string]any {
	return map[string]any{
		"country": "COL", "amount": 5000000, "currency": "COP", "orderId": orderID,
		"beneficiary": map[string]any{"name": "Pedro", "lastName": "Ramírez", "email": "pedro.ramirez@yahoo.com",
			"document": map[string]any{"type": 1, "number": "80123456"}},
		"destination": map[string]any{"bankAccount": map[string]any{"bankCode": "099", "accountType": 3}},
	}
}

// OTPInText finds a cash payout's one-time code in the text of its mail.
var OTPInText = regexp.MustCompile(`Tu código de retiro es: ([0-9]{6})`)

// OtherCode is a one-time code that is not code.
func OtherCode(code string) string {
	n, _ := strconv.Atoi(code)
	return fmt.Sprintf("%06d", (n+1)%1_000_000)
}

// Claim claims the cash payout id with a one-time code, and returns the status and the body.
func (c *Merchant) Claim(t testing.TB, id int64, code string) (int, []byte) {
	t.Helper()
	status, _, raw := c.Do(t, "POST", "payouts/"+strconv.FormatInt(id, 10)+"/claim", map[string]any{"code": code}, "")
	return status, raw
}
