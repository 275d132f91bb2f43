package api_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"payouts/internal/servertest"
)

const (
	tokenPath  = "/ms-authentication-service/authentication/api-integration/token"
	lookupPath = "/ms-payouts-scanning-entities/api/v1/scanning/account-info"
)

// The token endpoint takes userName as well as user, answers a refresh token with its
// lifetime and takes grant_type refresh_token (once per refresh token); a wrong password
// answers the published {"message": "Invalid credentials"} with our code beside.
func TestTokenEndpointSpeaksThePublishedFields(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: e})
		c := s.NewMerchant(t, nil)
		var user struct{ User, Password string }
		if code := s.Admin(t, "POST", "/admin/v1/merchants/"+c.MerchantID+"/integration-user", nil, &user); code != 201 {
			t.Fatalf("integration user: %d", code)
		}
		type answer struct {
			AccessToken      string `json:"access_token"`
			ExpiresIn        int    `json:"expires_in"`
			RefreshToken     string `json:"refresh_token"`
			RefreshExpiresIn int    `json:"refresh_expires_in"`
			TokenType        string `json:"token_type"`
			Message          string `json:"message"`
			Code             string `json:"code"`
			ErrorType        string `json:"errorType"`
		}
		ask := func(body map[string]string) (int, string, answer) {
			t.Helper()
			code, h, raw := s.Send(t, servertest.Scenario{Method: "POST", Path: tokenPath, Body: body})
			var a answer
			if err := json.Unmarshal(raw, &a); err != nil && code != 400 {
				t.Fatalf("token answer %d: %v %s", code, err, raw)
			}
			return code, h.Get("X-Payouts-Error-Type"), a
		}
		lookupWorks := func(tok string) bool {
			code, _, _ := s.Send(t, servertest.Scenario{Method: "POST", Path: lookupPath,
				Body: map[string]any{"request_id": "3f1c2a7e-5b6d-4e8f-9a0b-" + tok[len(tok)-12:], "account_type": "4",
					"account_identifier": "987654321", "country": "PER"},
				Headers: map[string]string{"MID": c.MerchantID, "Authorization": tok}})
			return code != 401
		}

		code, _, byUserName := ask(map[string]string{"userName": user.User, "password": user.Password})
		if code != 200 || byUserName.AccessToken == "" || byUserName.ExpiresIn != 300 || byUserName.TokenType != "Bearer" ||
			byUserName.RefreshToken == "" || byUserName.RefreshExpiresIn != 1800 {
			t.Fatalf("userName: %d %+v", code, byUserName)
		}
		if code, _, a := ask(map[string]string{"user": user.User, "password": user.Password}); code != 200 || a.AccessToken == "" {
			t.Fatalf("user: %d %+v", code, a)
		}

		code, _, renewed := ask(map[string]string{"grant_type": "refresh_token", "refresh_token": byUserName.RefreshToken})
		if code != 200 || renewed.AccessToken == "" || renewed.AccessToken == byUserName.AccessToken || renewed.RefreshToken == byUserName.RefreshToken {
			t.Fatalf("refresh: %d %+v", code, renewed)
		}
		if !lookupWorks(renewed.AccessToken) {
			t.Error("the refreshed access token is refused by the lookup")
		}

		invalid := func(t *testing.T, h http.Header, raw []byte) {
			var a answer
			json.Unmarshal(raw, &a)
			if a.Message != "Invalid credentials" {
				t.Errorf("%s, want the message Invalid credentials", raw)
			}
		}
		s.Run(t, []servertest.Scenario{
			{Name: "a refresh token used twice", Method: "POST", Path: tokenPath, WantStatus: 401, Then: invalid,
				Body: map[string]string{"grant_type": "refresh_token", "refresh_token": byUserName.RefreshToken}},
			{Name: "an access token taken as a refresh token", Method: "POST", Path: tokenPath, WantStatus: 401,
				Body: map[string]string{"grant_type": "refresh_token", "refresh_token": renewed.AccessToken}},
			{Name: "a wrong password", Method: "POST", Path: tokenPath, WantStatus: 401,
				WantHeaders: map[string]string{"X-Payouts-Error-Type": "authentication"}, Then: func(t *testing.T, h http.Header, raw []byte) {
					invalid(t, h, raw)
					var a answer
					json.Unmarshal(raw, &a)
					if a.Code != "1001" || a.ErrorType != "authentication" {
						t.Errorf("%s, want code 1001 of errorType authentication", raw)
					}
				},
				Body: map[string]string{"userName": user.User, "password": "wrong"}},
			{Name: "no user", Method: "POST", Path: tokenPath, WantStatus: 400, Body: map[string]string{"password": user.Password}},
			{Name: "an unknown grant", Method: "POST", Path: tokenPath, WantStatus: 400, Body: map[string]string{"grant_type": "client_credentials"}},
		})

		// Rotating the user ends its refresh tokens too.
		s.Admin(t, "POST", "/admin/v1/merchants/"+c.MerchantID+"/integration-user", nil, &user)
		if code, _, _ := ask(map[string]string{"grant_type": "refresh_token", "refresh_token": renewed.RefreshToken}); code != 401 {
			t.Errorf("a refresh token of a rotated user: %d", code)
		}
	})
}
