package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"payouts/internal/server"
	"payouts/internal/servertest"
	"payouts/rules"
)

type lookupAnswer struct {
	TraceID string `json:"traceId"`
	Data    struct {
		RequestID         string `json:"requestId"`
		AccountIdentifier string `json:"accountIdentifier"`
		Entities          []struct {
			EntityBrand string `json:"entityBrand"`
			Status      string `json:"status"`
		} `json:"entities"`
		Date string `json:"date"`
	} `json:"data"`
	Errors []struct {
		Code     string `json:"code"`
		Message  string `json:"message"`
		Location string `json:"location"`
	} `json:"errors"`
}

// The original's bearer scheme and Peru lookup: an integration user (password hashed,
// rotated), its 5-minute token, each directory case, an admin's entry, every published
// error code, and the limit of 60 lookups a minute per merchant.
func TestTokenAndPeruBeneficiaryLookup(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		// The allowance a minute is counted on a held clock: the 61 lookups below fall in one
		// minute however slowly a busy machine sends them.
		clock := &servertest.Clock{}
		clock.Hold()
		s := servertest.Start(t, servertest.Setup{Engine: e, Options: server.Options{Now: clock.Now}})
		c := s.NewMerchant(t, nil)
		other := s.NewMerchant(t, nil)
		var user struct{ MerchantID, User, Password string }
		if code := s.Admin(t, "POST", "/admin/v1/merchants/"+c.MerchantID+"/integration-user", nil, &user); code != 201 || user.Password == "" {
			t.Fatalf("integration user: %d %+v", code, user)
		}
		if code, _, raw := s.RawAdmin(t, "GET", "/admin/v1/merchants/"+c.MerchantID+"/integration-user", nil); code != 200 || bytes.Contains(raw, []byte(user.Password)) {
			t.Fatalf("GET integration user: %d %s", code, raw)
		}
		if bytes.Contains(s.Stored(t), []byte(user.Password)) {
			t.Fatal("the password is in the database in plain text")
		}

		token := func(u, pw string) (int, string, []byte) {
			code, _, raw := s.Send(t, servertest.Scenario{Method: "POST", Path: tokenPath, Body: map[string]string{"user": u, "password": pw}})
			var tok struct {
				AccessToken string `json:"access_token"`
				ExpiresIn   int    `json:"expires_in"`
				TokenType   string `json:"token_type"`
			}
			json.Unmarshal(raw, &tok)
			if code == 200 && (tok.ExpiresIn != 300 || tok.TokenType != "Bearer" || tok.AccessToken == "") {
				t.Fatalf("token answer: %s", raw)
			}
			return code, tok.AccessToken, raw
		}
		if code, _, raw := token(user.User, "wrong"); code != 401 || !bytes.Contains(raw, []byte(`"code":"`+rules.CodeAuthentication+`"`)) {
			t.Fatalf("wrong password: %d %s", code, raw)
		}
		code, tok, raw := token(user.User, user.Password)
		if code != 200 {
			t.Fatalf("token: %d %s", code, raw)
		}

		n := 0
		lookup := func(mid, auth string, body any) (int, lookupAnswer) {
			t.Helper()
			h := map[string]string{}
			if mid != "" {
				h["MID"] = mid
			}
			if auth != "" {
				h["Authorization"] = auth
			}
			code, _, raw := s.Send(t, servertest.Scenario{Method: "POST", Path: lookupPath, Body: body, Headers: h})
			var a lookupAnswer
			if err := json.Unmarshal(raw, &a); err != nil || a.TraceID == "" {
				t.Fatalf("lookup answer: %d %s", code, raw)
			}
			return code, a
		}
		req := func(phone string) map[string]any {
			n++
			return map[string]any{"request_id": fmt.Sprintf("3f1c2a7e-5b6d-4e8f-9a0b-%012d", n), "account_type": "4",
				"account_identifier": phone, "country": "PER"}
		}
		entities := func(a lookupAnswer) string {
			out := ""
			for _, e := range a.Data.Entities {
				out += e.EntityBrand + ":" + e.Status + " "
			}
			return out
		}
		for _, tc := range []struct{ phone, want string }{
			{"987654321", "Yape:AVAILABLE Plin:AVAILABLE "},
			{"987654322", "Yape:AVAILABLE Interbank:NOT_AVAILABLE "},
			{"987654323", "Plin:AVAILABLE "},
			{"987654324", "Yape:NOT_AVAILABLE "},
			{"987654325", "BBVA:AVAILABLE Interbank:AVAILABLE Scotiabank:NOT_AVAILABLE "},
			{"987654326", "Yape:AVAILABLE "},
		} {
			body := req(tc.phone)
			code, a := lookup(c.MerchantID, tok, body)
			if code != 200 || entities(a) != tc.want || a.Data.RequestID != body["request_id"] || a.Data.AccountIdentifier != tc.phone || a.Data.Date == "" {
				t.Errorf("lookup %s: %d %+v, want %s", tc.phone, code, a, tc.want)
			}
		}
		if code, a := lookup(c.MerchantID, tok, req("987654320")); code != 404 || len(a.Errors) != 1 || a.Errors[0].Code != "PV002" {
			t.Errorf("ending 0: %d %+v, want 404 PV002", code, a)
		}
		// An admin's entry wins, both ways.
		if code := s.Admin(t, "PUT", "/admin/v1/sandbox/directory/PER/987654320", map[string]any{"entities": []any{map[string]any{"entityBrand": "Tunki", "status": "AVAILABLE"}}}, nil); code != 200 {
			t.Fatalf("put entry: %d", code)
		}
		s.Admin(t, "PUT", "/admin/v1/sandbox/directory/PER/987654321", map[string]any{"entities": []any{}}, nil)
		if code, a := lookup(c.MerchantID, tok, req("987654320")); code != 200 || entities(a) != "Tunki:AVAILABLE " {
			t.Errorf("admin entry: %d %+v", code, a)
		}
		if code, a := lookup(c.MerchantID, tok, req("987654321")); code != 404 || a.Errors[0].Code != "PV002" {
			t.Errorf("admin entry with none: %d %+v", code, a)
		}
		if code, _, raw := s.RawAdmin(t, "PUT", "/admin/v1/sandbox/directory/PER/12345", map[string]any{"entities": []any{map[string]any{"entityBrand": "", "status": "MAYBE"}}}); code != 400 ||
			servertest.DecodeProblem(t, raw).Code != rules.CodeDirectoryEntry || len(servertest.DecodeProblem(t, raw).Errors) != 3 {
			t.Errorf("invalid entry: %d %s", code, raw)
		}

		// Every published error code.
		dup := req("987654326")
		lookup(c.MerchantID, tok, dup)
		cases := []struct {
			name, mid, auth string
			body            any
			status          int
			want            []string
		}{
			{"no token", c.MerchantID, "", req("987654326"), 401, []string{"AUTH001"}},
			{"no MID", "", tok, req("987654326"), 401, []string{"AUTH001"}},
			{"unknown token", c.MerchantID, "tk_nothing", req("987654326"), 401, []string{"AUTH002"}},
			{"another merchant's MID", other.MerchantID, tok, req("987654326"), 401, []string{"AUTH002"}},
			{"duplicated request_id", c.MerchantID, tok, dup, 400, []string{"VAL001"}},
			{"every field wrong", c.MerchantID, tok, map[string]any{"request_id": "123", "account_type": "2", "account_identifier": "87654321", "country": "COL"}, 400,
				[]string{"VAL006", "VAL002", "VAL003", "VAL004"}},
			{"missing fields", c.MerchantID, tok, map[string]any{"account_type": 4}, 400, []string{"VAL005", "VAL005", "VAL005"}},
			{"not JSON", c.MerchantID, tok, "{", 400, []string{"VAL005"}},
		}
		for _, tc := range cases {
			code, a := lookup(tc.mid, tc.auth, tc.body)
			var got []string
			for _, e := range a.Errors {
				got = append(got, e.Code)
				if e.Location == "" {
					t.Errorf("%s: error %s without a location", tc.name, e.Code)
				}
			}
			if code != tc.status || fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("%s: %d %v, want %d %v", tc.name, code, got, tc.status, tc.want)
			}
		}

		// Rotation ends the old password and the old token.
		var rotated struct{ User, Password string }
		s.Admin(t, "POST", "/admin/v1/merchants/"+c.MerchantID+"/integration-user", nil, &rotated)
		if code, a := lookup(c.MerchantID, tok, req("987654326")); code != 401 || a.Errors[0].Code != "AUTH002" {
			t.Errorf("token after rotation: %d %+v", code, a)
		}
		if code, _, _ := token(user.User, user.Password); code != 401 {
			t.Errorf("old password after rotation: %d", code)
		}
		_, tok, _ = token(rotated.User, rotated.Password)

		// 60 a minute per merchant, then RL001; the lookups so far count too.
		limited := 0
		for i := 0; i < 61; i++ {
			if code, a := lookup(c.MerchantID, tok, req("987654326")); code == 429 {
				if a.Errors[0].Code != "RL001" {
					t.Fatalf("limit: %+v", a)
				}
				limited++
			}
		}
		if limited == 0 {
			t.Fatal("more than 60 lookups in a minute were all answered")
		}
	})
}
