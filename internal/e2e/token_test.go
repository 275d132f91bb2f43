package e2e

import (
	"encoding/json"
	"testing"
)

// The token endpoint takes userName as well as user, answers a refresh token
// with its lifetime and takes grant_type refresh_token (once per refresh token); a wrong
// password answers the published {"message": "Invalid credentials"} with our code beside.
func TestTokenEndpointSpeaksThePublishedFields(t *testing.T) {
	t.Parallel()
	s := startServer(t, "")
	c := s.newMerchant(t, nil)
	var user struct{ User, Password string }
	if code := s.admin(t, "POST", "/admin/v1/merchants/"+c.MerchantID+"/integration-user", nil, &user); code != 201 {
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
		code, h, raw := postJSON(t, s.URL+tokenPath, body, nil)
		var a answer
		if err := json.Unmarshal(raw, &a); err != nil && code != 400 {
			t.Fatalf("token answer %d: %v %s", code, err, raw)
		}
		return code, h.Get("X-Payouts-Error-Type"), a
	}
	lookupWorks := func(tok string) bool {
		code, _, _ := postJSON(t, s.URL+lookupPath, map[string]any{"request_id": "3f1c2a7e-5b6d-4e8f-9a0b-" + tok[len(tok)-12:],
			"account_type": "4", "account_identifier": "987654321", "country": "PER"}, map[string]string{"MID": c.MerchantID, "Authorization": tok})
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
	if code, _, a := ask(map[string]string{"grant_type": "refresh_token", "refresh_token": byUserName.RefreshToken}); code != 401 || a.Message != "Invalid credentials" {
		t.Errorf("a refresh token used twice: %d %+v", code, a)
	}
	if code, _, a := ask(map[string]string{"grant_type": "refresh_token", "refresh_token": renewed.AccessToken}); code != 401 {
		t.Errorf("an access token taken as a refresh token: %d %+v", code, a)
	}

	code, header, wrong := ask(map[string]string{"userName": user.User, "password": "wrong"})
	if code != 401 || wrong.Message != "Invalid credentials" || wrong.Code != "1001" || wrong.ErrorType != "authentication" || header != "authentication" {
		t.Errorf("wrong password: %d %+v (header %q)", code, wrong, header)
	}
	if code, _, a := ask(map[string]string{"password": user.Password}); code != 400 {
		t.Errorf("no user: %d %+v", code, a)
	}
	if code, _, a := ask(map[string]string{"grant_type": "client_credentials"}); code != 400 {
		t.Errorf("an unknown grant: %d %+v", code, a)
	}

	// Rotating the user ends its refresh tokens too.
	s.admin(t, "POST", "/admin/v1/merchants/"+c.MerchantID+"/integration-user", nil, &user)
	if code, _, _ := ask(map[string]string{"grant_type": "refresh_token", "refresh_token": renewed.RefreshToken}); code != 401 {
		t.Errorf("a refresh token of a rotated user: %d", code)
	}
}
