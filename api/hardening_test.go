package api_test

// The hardening: each limit and defence of a request, through the real handler.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

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
