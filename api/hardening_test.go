package api_test

// The hardening: each limit and defence of a request, through the real handler.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"payouts/internal/server"
	"payouts/internal/servertest"
	"payouts/rules"
)

// Unknown merchant paths answer 404 without authentication and without a panic; the admin
// API refuses reserved merchant ids.
func TestReservedMerchantPathsAnswer404AndAreRefusedAsIDs(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: e})
		var cases []servertest.Scenario
		for _, path := range []string{"/api/v1/notifications/balance", "/api/v1/notifications/payouts/1", "/api-payout-plus-real-time/notifications"} {
			for _, method := range []string{"GET", "POST"} {
				cases = append(cases, servertest.Scenario{Name: method + " " + path, Method: method, Path: path, Body: "{}",
					WantStatus: 404, WantCode: rules.CodeNoSuchEndpoint})
			}
		}
		for _, path := range []string{"/api/v1/nosuchmerchant/balance", "/api/v1/nosuchmerchant/payouts/1"} {
			cases = append(cases, servertest.Scenario{Name: "unknown merchant, unsigned: " + path, Path: path, Query: "timestamp=1&signature=00", WantStatus: 401})
		}
		cases = append(cases, servertest.Scenario{Name: "the public key is still served", Path: "/api/v1/notifications/public-key", WantStatus: 200})
		for _, id := range []string{"notifications", "Notifications"} {
			cases = append(cases, servertest.Scenario{Name: "merchant id " + id, Method: "POST", Path: "/admin/v1/merchants", Admin: true,
				Body: map[string]any{"merchantId": id, "name": "Squatter"}, WantStatus: 400, WantCode: rules.CodeReservedMerchantID, WantLocation: "body.merchantId"})
		}
		s.Run(t, cases)
		if strings.Contains(s.Log(), "panic") {
			t.Errorf("the server log has a panic:\n%s", s.Log())
		}
	})
}

// Funding amounts out of range, overflowing balances and withdrawals above the available
// balance are refused with 400/409 and a code, and change nothing.
func TestAdminFundingOverflowAndOverdrawRefused(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: e})
		var m struct{ MerchantID string }
		if code := s.Admin(t, "POST", "/admin/v1/merchants", map[string]any{"name": "Funds"}, &m); code != 201 {
			t.Fatal(code)
		}
		fund := func(name string, amount any, status int, code string) servertest.Scenario {
			return servertest.Scenario{Name: name, Method: "POST", Path: "/admin/v1/merchants/" + m.MerchantID + "/balance", Admin: true,
				Body:       `{"country":"PER","currency":"PEN","amount":` + fmt.Sprint(amount) + `}`,
				WantStatus: status, WantCode: code}
		}
		s.Run(t, []servertest.Scenario{
			fund("fund 500", 500, 200, ""),
			fund("2^63-1", "9223372036854775807", 400, rules.CodeFundAmount),
			fund("-2^63", "-9223372036854775808", 400, rules.CodeFundAmount),
			fund("zero", 0, 400, rules.CodeFundAmount),
			fund("10^15 on top of 500", rules.MaxBalance, 409, rules.CodeBalanceLimit),
			fund("withdraw 501 of 500", -501, 409, rules.CodeWithdrawalTooLarge),
			fund("fund up to exactly 10^15", rules.MaxBalance-500, 200, ""),
			fund("one more above 10^15", 1, 409, rules.CodeBalanceLimit),
			fund("withdraw everything", -rules.MaxBalance, 200, ""),
		})
		if strings.Contains(s.Log(), `"status":500`) {
			t.Errorf("a 500 in the log:\n%s", s.Log())
		}
	})
}

// A body that is not JSON is 415; control characters and text that is not UTF-8 are 400
// at their field; free-text fields have length limits; nothing is stored.
func TestInputLimitsMediaTypeControlCharactersUTF8AndLengths(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: e})
		c := s.NewMerchant(t, nil)
		body, _ := json.Marshal(servertest.PerBankRequest("CT-1"))
		cases := []servertest.Scenario{
			{Name: "Content-Type text/plain", Method: "POST", Path: "payouts", As: c, Body: body, Headers: map[string]string{"Content-Type": "text/plain"},
				WantStatus: 415, WantCode: rules.CodeUnsupportedMediaType},
			{Name: "Content-Type of a form", Method: "POST", Path: "payouts", As: c, Body: body,
				Headers: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, WantStatus: 415, WantCode: rules.CodeUnsupportedMediaType},
			{Name: "Content-Type JSON with its charset", Method: "POST", Path: "payouts", As: c, Body: body,
				Headers: map[string]string{"Content-Type": "application/json; charset=utf-8"}, WantStatus: 201},
			{Name: "the admin API with a form body", Method: "POST", Path: "/admin/v1/merchants", Admin: true, Body: "name=x",
				Headers: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, WantStatus: 415},
		}

		long := strings.Repeat("x", rules.MaxTextLength+1)
		edit := func(order string, f func(r map[string]any)) []byte {
			r := servertest.PerBankRequest(order)
			f(r)
			b, _ := json.Marshal(r)
			return b
		}
		ben := func(r map[string]any) map[string]any { return r["beneficiary"].(map[string]any) }
		for _, tc := range []struct {
			name, order string
			body        []byte
			code, loc   string
		}{
			{"NUL in orderId", "NUL\x00A", edit("NUL\x00A", func(map[string]any) {}), rules.CodeControlCharacter, "body.orderId"},
			{"line break in name", "CC-2", edit("CC-2", func(r map[string]any) { ben(r)["name"] = "Ana\nMaría" }), rules.CodeControlCharacter, "body.beneficiary.name"},
			{"C1 control in document", "CC-3", edit("CC-3", func(r map[string]any) {
				ben(r)["document"] = map[string]any{"type": 1, "number": "4567\u00858912"}
			}), rules.CodeControlCharacter, "body.beneficiary.document.number"},
			{"invalid UTF-8 in orderId", "UTF-\xff", bytes.Replace(edit("UTF-X1", func(map[string]any) {}), []byte("UTF-X1"), []byte("UTF-\xff"), 1), rules.CodeControlCharacter, "body.orderId"},
			{"a lone surrogate escape", "SURR", bytes.Replace(edit("SURR-1", func(map[string]any) {}), []byte("SURR-1"), []byte(`SURR-\ud800`), 1), rules.CodeControlCharacter, "body.orderId"},
			{"name over 100", "LEN-1", edit("LEN-1", func(r map[string]any) { ben(r)["name"] = long }), rules.CodeTooLong, "body.beneficiary.name"},
			{"lastName over 100", "LEN-2", edit("LEN-2", func(r map[string]any) { ben(r)["lastName"] = long }), rules.CodeTooLong, "body.beneficiary.lastName"},
			{"customerId over 100", "LEN-3", edit("LEN-3", func(r map[string]any) { ben(r)["customerId"] = long }), rules.CodeTooLong, "body.beneficiary.customerId"},
			{"userName over 100", "LEN-4", edit("LEN-4", func(r map[string]any) { ben(r)["userName"] = long }), rules.CodeTooLong, "body.beneficiary.userName"},
			{"phoneNumber over 100", "LEN-5", edit("LEN-5", func(r map[string]any) { ben(r)["phoneNumber"] = long }), rules.CodeTooLong, "body.beneficiary.phoneNumber"},
			{"address city over 100", "LEN-6", edit("LEN-6", func(r map[string]any) { ben(r)["address"] = map[string]any{"city": long} }), rules.CodeTooLong, "body.beneficiary.address.city"},
			{"subMerchantInfo.url over 100", "LEN-7", edit("LEN-7", func(r map[string]any) {
				r["subMerchantInfo"] = map[string]any{"code": "S1", "name": "Shop", "url": "https://shop.example/" + long}
			}), rules.CodeTooLong, "body.subMerchantInfo.url"},
		} {
			cases = append(cases, servertest.Scenario{Name: tc.name, Method: "POST", Path: "payouts", As: c, Body: tc.body,
				WantStatus: 400, WantCode: tc.code, WantLocation: tc.loc,
				Then: func(t *testing.T, _ http.Header, raw []byte) {
					if p := servertest.DecodeProblem(t, raw); len(p.Errors) != 1 {
						t.Errorf("%+v, want one error", p.Errors)
					}
					if code, _, raw := c.Do(t, "GET", "payouts", nil, "orderId="+url.QueryEscape(tc.order)); code != 200 || !strings.Contains(string(raw), `"items":[]`) {
						t.Errorf("something was stored: %d %s", code, raw)
					}
				}})
		}
		ok := servertest.PerBankRequest("LEN-OK")
		ok["beneficiary"].(map[string]any)["name"] = strings.Repeat("ñ", rules.MaxTextLength)
		cases = append(cases, servertest.Scenario{Name: "exactly 100 characters is fine", Method: "POST", Path: "payouts", As: c, Body: ok, WantStatus: 201})
		s.Run(t, cases)
	})
}

// The notificationUrl must be https (http only with --allow-private-notification-urls);
// allowedOrigins entries must be origins, * refused; on create and on change.
func TestMerchantSettingsNotificationURLAndOriginsChecked(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: e})
		var cases []servertest.Scenario
		for _, tc := range []struct {
			settings map[string]any
			code     string
			loc      string
		}{
			{map[string]any{"notificationUrl": "http://shop.example/hook"}, rules.CodeNotificationURL, "body.settings.notificationUrl"},
			{map[string]any{"notificationUrl": "https://user:pw@shop.example/hook"}, rules.CodeNotificationURL, "body.settings.notificationUrl"},
			{map[string]any{"notificationUrl": "ftp://shop.example"}, rules.CodeNotificationURL, "body.settings.notificationUrl"},
			{map[string]any{"allowedOrigins": []string{"*"}}, rules.CodeAllowedOrigin, "body.settings.allowedOrigins[0]"},
			{map[string]any{"allowedOrigins": []string{"https://shop.example", "https://shop.example/checkout"}}, rules.CodeAllowedOrigin, "body.settings.allowedOrigins[1]"},
			{map[string]any{"allowedOrigins": []string{"https://*.shop.example"}}, rules.CodeAllowedOrigin, "body.settings.allowedOrigins[0]"},
			{map[string]any{"allowedOrigins": []string{"shop.example"}}, rules.CodeAllowedOrigin, "body.settings.allowedOrigins[0]"},
		} {
			cases = append(cases, servertest.Scenario{Name: fmt.Sprint(tc.settings), Method: "POST", Path: "/admin/v1/merchants", Admin: true,
				Body: map[string]any{"name": "Settings", "settings": tc.settings}, WantStatus: 400, WantCode: tc.code, WantLocation: tc.loc})
		}
		s.Run(t, cases)
		var m struct{ MerchantID string }
		if code := s.Admin(t, "POST", "/admin/v1/merchants", map[string]any{"name": "Good", "settings": map[string]any{
			"notificationUrl": "https://shop.example/hook", "allowedOrigins": []string{"https://shop.example", "http://localhost:3000"}}}, &m); code != 201 {
			t.Fatalf("good settings: %d", code)
		}
		s.Run(t, []servertest.Scenario{
			{Name: "PATCH allowedOrigins *", Method: "PATCH", Path: "/admin/v1/merchants/" + m.MerchantID, Admin: true,
				Body: map[string]any{"settings": map[string]any{"allowedOrigins": []string{"*"}}}, WantStatus: 400, WantCode: rules.CodeAllowedOrigin},
			{Name: "a refused PATCH changed no origin", Path: "/admin/v1/merchants/" + m.MerchantID, Admin: true, WantStatus: 200,
				Then: func(t *testing.T, _ http.Header, raw []byte) {
					var got struct {
						Settings struct{ AllowedOrigins []string }
					}
					if json.Unmarshal(raw, &got); len(got.Settings.AllowedOrigins) != 2 {
						t.Errorf("a refused PATCH changed the origins: %v", got.Settings.AllowedOrigins)
					}
				}},
		})
		// With the development flag, http is allowed.
		dev := servertest.Start(t, servertest.Setup{Engine: e, Args: []string{"--allow-private-notification-urls"}})
		dev.Run(t, []servertest.Scenario{{Name: "http notificationUrl with --allow-private-notification-urls", Method: "POST",
			Path: "/admin/v1/merchants", Admin: true, WantStatus: 201,
			Body: map[string]any{"name": "Dev", "settings": map[string]any{"notificationUrl": "http://127.0.0.1:9/hook"}}}})
	})
}

// Failed authentications count per (client address, API key presented); a correctly
// signed request is never refused for anyone's failures; the address comes from
// X-Forwarded-For only through --trusted-proxies.
func TestAuthFailuresCountPerAddressAndKeyBehindTrustedProxies(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		// The allowance a minute is counted on a held clock: the failures below fall in one
		// minute however slowly a busy machine sends them.
		clock := &servertest.Clock{}
		clock.Hold()
		s := servertest.Start(t, servertest.Setup{Engine: e, Options: server.Options{Now: clock.Now}, Args: []string{"--trusted-proxies", "127.0.0.1/32"}})
		a := s.NewMerchant(t, nil)
		b := s.NewMerchant(t, nil)
		badA := a.With(func(c *servertest.Merchant) { c.Secret = "not the secret" })
		badB := b.With(func(c *servertest.Merchant) { c.Secret = "not the secret" })
		fromX := map[string]string{"X-Forwarded-For": "203.0.113.7"}

		statuses := map[int]int{}
		for i := 0; i < 25; i++ {
			statuses[statusWith(t, badA, fromX)]++
		}
		if statuses[401] != 20 || statuses[429] != 5 {
			t.Errorf("25 wrong signatures answered %v, want 20 × 401 then 5 × 429", statuses)
		}
		// The same client and key, correctly signed: served.
		if code := statusWith(t, a, fromX); code != 200 {
			t.Errorf("a correctly signed request after the failures: %d, want 200", code)
		}
		// Another merchant behind the same proxy and client address: its own count.
		if code := statusWith(t, badB, fromX); code != 401 {
			t.Errorf("another API key from the same address: %d, want 401", code)
		}
		// Another client behind the proxy, same key: its own count.
		if code := statusWith(t, badA, map[string]string{"X-Forwarded-For": "203.0.113.8"}); code != 401 {
			t.Errorf("another client address (X-Forwarded-For) with the same key: %d, want 401", code)
		}
		if code := statusWith(t, badA, map[string]string{"Forwarded": `for="203.0.113.7:5000"`}); code != 429 {
			t.Errorf("the blocked client named by Forwarded: %d, want 429", code)
		}

		// A server that does not trust the peer ignores the headers: rotating them does not
		// escape the count.
		s2 := servertest.Start(t, servertest.Setup{Engine: e, Options: server.Options{Now: clock.Now}, Args: []string{"--trusted-proxies", "10.0.0.0/8"}})
		c := s2.NewMerchant(t, nil)
		bad := c.With(func(c *servertest.Merchant) { c.Secret = "not the secret" })
		last := 0
		for i := 0; i < 21; i++ {
			last = statusWith(t, bad, map[string]string{"X-Forwarded-For": "198.51.100." + strconv.Itoa(i)})
		}
		if last != 429 {
			t.Errorf("21st failure with spoofed X-Forwarded-For from an untrusted peer: %d, want 429", last)
		}
	})
}

// Key rotation. A new pair is issued; the old one keeps working for the grace
// period, then stops, or is revoked at once; the list shows the keys, never a secret.
func TestAPIKeyRotationWithGraceListAndRevoke(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		clock := &servertest.Clock{}
		s := servertest.Start(t, servertest.Setup{Engine: e, Options: server.Options{Now: clock.Now}})
		old := s.NewMerchant(t, nil)
		keys := "/admin/v1/merchants/" + old.MerchantID + "/keys"
		type rotated struct {
			KeyID, APIKey, APISecret string
			Keys                     []struct {
				KeyID     string
				Current   bool
				ExpiresAt *string
			}
		}
		var r rotated
		if code := s.Admin(t, "POST", keys, map[string]any{}, &r); code != 201 || r.APIKey == "" || r.APISecret == "" {
			t.Fatalf("rotate: %d %+v", code, r)
		}
		fresh := old.With(func(c *servertest.Merchant) { c.Key, c.Secret = r.APIKey, r.APISecret })
		if code := statusWith(t, old, nil); code != 200 {
			t.Errorf("the old key during its grace period: %d, want 200", code)
		}
		if code := statusWith(t, fresh, nil); code != 200 {
			t.Errorf("the new key: %d, want 200", code)
		}
		// The new key with the old secret (or the reverse) is not a key pair.
		if code := statusWith(t, old.With(func(c *servertest.Merchant) { c.Key = r.APIKey }), nil); code != 401 {
			t.Errorf("new key, old secret: %d, want 401", code)
		}
		_, _, raw := s.RawAdmin(t, "GET", keys, nil)
		for _, secret := range []string{old.Key, old.Secret, r.APIKey, r.APISecret, "sealed", "Hash"} {
			if strings.Contains(string(raw), secret) {
				t.Errorf("the key list shows %q: %s", secret, raw)
			}
		}
		var list []struct {
			KeyID     string
			Current   bool
			ExpiresAt *string
		}
		json.Unmarshal(raw, &list)
		if len(list) != 2 || !list[0].Current || list[0].KeyID != r.KeyID || list[1].Current || list[1].ExpiresAt == nil {
			t.Fatalf("keys: %s; want the current one and the old one with its expiry", raw)
		}
		if exp, _ := time.Parse(time.RFC3339, *list[1].ExpiresAt); time.Until(exp) < 23*time.Hour || time.Until(exp) > 25*time.Hour {
			t.Errorf("the old key expires at %s, want in 24 h", *list[1].ExpiresAt)
		}

		if code, p := adminProblem(t, s, "DELETE", keys+"/"+r.KeyID, nil); code != 409 || p.Code != rules.CodeWrongState {
			t.Errorf("revoking the current key: %d %s, want 409 %s", code, p.Code, rules.CodeWrongState)
		}
		if code, p := adminProblem(t, s, "DELETE", keys+"/key_000000000000", nil); code != 404 || p.Code != rules.CodeAPIKeyNotFound {
			t.Errorf("revoking an unknown key: %d %s, want 404 %s", code, p.Code, rules.CodeAPIKeyNotFound)
		}
		if code, _ := adminProblem(t, s, "DELETE", keys+"/"+list[1].KeyID, nil); code != 204 {
			t.Errorf("revoking the old key: %d, want 204", code)
		}
		if code := statusWith(t, old, nil); code != 401 {
			t.Errorf("the revoked key: %d, want 401", code)
		}
		if code := statusWith(t, fresh, nil); code != 200 {
			t.Errorf("the current key after the revocation: %d, want 200", code)
		}

		// A grace of one second: the replaced key stops by itself. The clock stands still from
		// here, so that "within its grace" never depends on how fast a busy machine answers.
		clock.Hold()
		var r2 rotated
		if code := s.Admin(t, "POST", keys, map[string]any{"graceSeconds": 1}, &r2); code != 201 {
			t.Fatal(code)
		}
		if code := statusWith(t, fresh, nil); code != 200 {
			t.Errorf("the replaced key within its 1 s grace: %d, want 200", code)
		}
		clock.Advance(1100 * time.Millisecond)
		if code := statusWith(t, fresh, nil); code != 401 {
			t.Errorf("the replaced key after its grace: %d, want 401", code)
		}
		// graceSeconds 0: the replaced key stops at once.
		newest := fresh.With(func(c *servertest.Merchant) { c.Key, c.Secret = r2.APIKey, r2.APISecret })
		var r3 rotated
		if code := s.Admin(t, "POST", keys, map[string]any{"graceSeconds": 0}, &r3); code != 201 {
			t.Fatal(code)
		}
		if code := statusWith(t, newest, nil); code != 401 {
			t.Errorf("the key replaced with graceSeconds 0: %d, want 401", code)
		}
		if code := statusWith(t, newest.With(func(c *servertest.Merchant) { c.Key, c.Secret = r3.APIKey, r3.APISecret }), nil); code != 200 {
			t.Errorf("the newest key: %d, want 200", code)
		}
	})
}

// The sandbox cannot mint money. REVERSED only follows PROCESSED: on a payout that
// waits for balance or for the bank it is 409 (2050) and changes nothing; on a processed
// payout it returns the money. The ledger is checked after the test (servertest).
func TestSimulateReversedOnlyAfterProcessedAndTheLedgerHolds(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		// The rails take an hour: the first payout stays reserved at the bank while the test
		// looks at the balance, however slowly it gets there.
		s := servertest.Start(t, servertest.Setup{Engine: e, Args: []string{"--sandbox-delay", "1h", "--sandbox-batch-delay", "1h"}})
		var m struct{ MerchantID, APIKey, APISecret string }
		if code := s.Admin(t, "POST", "/admin/v1/merchants", map[string]any{"name": "No money", "settings": map[string]any{"pendingOnNoBalance": true}}, &m); code != 201 {
			t.Fatal(code)
		}
		c := &servertest.Merchant{Base: s.URL, MerchantID: m.MerchantID, Key: m.APIKey, Secret: m.APISecret, HTTP: s.HTTP}
		simulate := func(id int64, body map[string]any) (int, []byte) {
			code, _, raw := c.Do(t, "POST", "payouts/"+strconv.FormatInt(id, 10)+"/simulate", body, "")
			return code, raw
		}
		reversed := map[string]any{"stage": "REJECTED", "status": "REVERSED"}

		// No balance: the payout waits as PENDING_BALANCE, and cannot be "returned".
		held := c.Create(t, servertest.PerBankRequest("MINT-1")).Payout.ID
		c.WaitStage(t, held, "PENDING", 5*time.Second)
		if code, raw := simulate(held, reversed); code != 409 || servertest.DecodeProblem(t, raw).Code != rules.CodeWrongState {
			t.Errorf("REVERSED on PENDING_BALANCE: %d %s, want 409 %s", code, raw, rules.CodeWrongState)
		}
		if a, b := c.Balance(t, "PEN"); a != 0 || b != 0 {
			t.Errorf("balance after the refused simulate: available %d, balance %d; want 0 and 0", a, b)
		}

		// Funded: the payout is released to the bank and stays PENDING_BANK (account …9997).
		if code := s.Admin(t, "POST", "/admin/v1/merchants/"+m.MerchantID+"/balance", map[string]any{"country": "PER", "currency": "PEN", "amount": 500000}, nil); code != 200 {
			t.Fatal(code)
		}
		r := servertest.PerBankRequest("MINT-2")
		r["destination"] = map[string]any{"bankAccount": map[string]any{"bankCode": "003", "accountType": 2, "accountNumber": "1231234569997"}}
		atBank := c.Create(t, r).Payout.ID
		servertest.Eventually(t, 5*time.Second, "the payout at the bank", func() bool {
			code, _, raw := c.Do(t, "GET", "payouts/"+strconv.FormatInt(atBank, 10), nil, "")
			return code == 200 && servertest.DecodePayout(t, raw).Output.Status == "PENDING_BANK"
		})
		if code, raw := simulate(atBank, reversed); code != 409 || servertest.DecodeProblem(t, raw).Code != rules.CodeWrongState {
			t.Errorf("REVERSED on PENDING_BANK: %d %s, want 409 %s", code, raw, rules.CodeWrongState)
		}
		// Both payouts (100000 each) are reserved now.
		if a, b := c.Balance(t, "PEN"); a != 300000 || b != 500000 {
			t.Errorf("balance with two reservations: available %d, balance %d; want 300000 and 500000", a, b)
		}
		// SUCCESS, then REVERSED: the money leaves, then comes back.
		if code, raw := simulate(atBank, map[string]any{"stage": "SUCCESS"}); code != 200 {
			t.Fatalf("SUCCESS: %d %s", code, raw)
		}
		if a, b := c.Balance(t, "PEN"); a != 300000 || b != 400000 {
			t.Errorf("after PROCESSED: available %d, balance %d; want 300000 and 400000", a, b)
		}
		if code, raw := simulate(atBank, reversed); code != 200 || servertest.DecodePayout(t, raw).Output.Status != "REVERSED" {
			t.Errorf("REVERSED on PROCESSED: %d %s, want 200 REVERSED", code, raw)
		}
		if a, b := c.Balance(t, "PEN"); a != 400000 || b != 500000 {
			t.Errorf("after REVERSED: available %d, balance %d; want 400000 and 500000", a, b)
		}
		if code, _ := simulate(atBank, reversed); code != 409 {
			t.Errorf("REVERSED twice: %d, want 409", code)
		}
	})
}

// Every answer of the API says X-Content-Type-Options: nosniff, errors included: a browser
// never takes a problem, a CSV or a document for another type than it says.
func TestAPIAnswersCarryNosniff(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: e})
		c := s.NewMerchant(t, map[string]any{})
		wrong := c.With(func(c *servertest.Merchant) { c.Secret = "bm90IHRoZSBzZWNyZXQgb2YgdGhpcyBtZXJjaGFudCE=" })
		check := func(what string, code int, h http.Header) {
			t.Helper()
			if got := h.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("%s (%d): X-Content-Type-Options %q, want nosniff", what, code, got)
			}
		}
		code, h, _ := c.Do(t, "POST", "payouts", servertest.PerBankRequest("nosniff-1"), "")
		check("a create", code, h)
		code, h, _ = c.Do(t, "POST", "payouts", map[string]any{"amount": "no"}, "")
		check("a refused body", code, h)
		code, h, _ = wrong.Do(t, "GET", "balance", nil, "")
		check("a wrong signature", code, h)
		code, h, _ = s.RawAdmin(t, "GET", "/admin/v1/merchants", nil)
		check("an admin list", code, h)
		nosniff := map[string]string{"X-Content-Type-Options": "nosniff"}
		s.Run(t, []servertest.Scenario{
			{Name: "no such endpoint", Path: "/no/such/endpoint", WantStatus: 404, WantHeaders: nosniff},
			{Name: "a method not allowed", Method: "DELETE", Path: "/healthz", WantStatus: 405, WantHeaders: nosniff},
			{Name: "the admin API without its token", Path: "/admin/v1/merchants", WantStatus: 401, WantHeaders: nosniff},
			{Name: "the document", Path: "/openapi.json", WantStatus: 200, WantHeaders: nosniff},
			{Name: "health", Path: "/healthz", WantStatus: 200, WantHeaders: nosniff},
		})
	})
}

// statusWith sends a GET of the balance signed by c with extra headers and says its status.
func statusWith(t *testing.T, c *servertest.Merchant, headers map[string]string) int {
	t.Helper()
	req := c.Request("GET", "balance", nil, "")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	code, _, _ := servertest.Send(t, c.HTTP, req)
	return code
}

// adminProblem calls the admin API of s and returns the status and the problem body.
func adminProblem(t *testing.T, s *servertest.Server, method, path string, body any) (int, servertest.Problem) {
	t.Helper()
	code, _, raw := s.RawAdmin(t, method, path, body)
	var p servertest.Problem
	if code >= 300 {
		p = servertest.DecodeProblem(t, raw)
	}
	return code, p
}

// Wrong admin tokens are limited like signatures (429 past 20 a minute per address); the
// right token still works.
func TestAdminTokenFailuresLimited(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		clock := &servertest.Clock{} // held: the failures fall in one minute however slow the machine
		clock.Hold()
		s := servertest.Start(t, servertest.Setup{Engine: e, Options: server.Options{Now: clock.Now}})
		statuses := map[int]int{}
		for i := 0; i < 25; i++ {
			code, hdr, _ := s.Send(t, servertest.Scenario{Path: "/admin/v1/merchants/1",
				Headers: map[string]string{"Authorization": "Bearer wrong-token-" + strconv.Itoa(i)}})
			statuses[code]++
			if code == 429 && hdr.Get("Retry-After") == "" {
				t.Errorf("429 without Retry-After")
			}
		}
		if statuses[401] != 20 || statuses[429] != 5 {
			t.Errorf("25 wrong admin tokens answered %v, want 20 × 401 then 5 × 429", statuses)
		}
		s.Run(t, []servertest.Scenario{{Name: "the right admin token after the failures is served", Path: "/admin/v1/merchants/none", Admin: true,
			WantStatus: 404}})
	})
}
