package api_test

// Wire fidelity: what an existing client of the original API sends must work unchanged.

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strconv"
	"testing"
	"time"

	"payouts/internal/server"
	"payouts/internal/servertest"
	"payouts/rules"
	"payouts/rules/merchants"
	"payouts/store"
)

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// PHP clients sign with time() (epoch seconds); the ±5 minute window holds for both units.
func TestSignatureTimestampInSecondsOrMilliseconds(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: e})
		c := s.NewMerchant(t, nil)
		now := time.Now()
		balance := func(name string, ts int64, want int) servertest.Scenario {
			sc := servertest.Scenario{Name: name, Path: "balance", WantStatus: want,
				Request: func() *http.Request { return c.SignedAt("GET", "balance", nil, ts, "") }}
			if want == 401 {
				sc.WantCode = rules.CodeAuthentication
			}
			return sc
		}
		body := []byte(`{"country":"PER","amount":100000,"currency":"PEN","orderId":"SEC-1","beneficiary":{"name":"Ana","lastName":"Quispe","document":{"type":1,"number":"45678912"}},"destination":{"bankAccount":{"bankCode":"002","accountType":2,"accountNumber":"19312345678012"}}}`)
		s.Run(t, []servertest.Scenario{
			balance("seconds", now.Unix(), 200),
			balance("milliseconds", now.UnixMilli(), 200),
			balance("seconds 4 minutes old", now.Add(-4*time.Minute).Unix(), 200),
			balance("seconds 6 minutes old", now.Add(-6*time.Minute).Unix(), 401),
			balance("seconds 6 minutes ahead", now.Add(6*time.Minute).Unix(), 401),
			balance("milliseconds 6 minutes old", now.Add(-6*time.Minute).UnixMilli(), 401),
			{Name: "a POST signed in seconds creates the payout", Method: "POST", Path: "payouts", WantStatus: 201,
				Request: func() *http.Request { return c.SignedAt("POST", "payouts", body, time.Now().Unix(), "") }},
		})
	})
}

// No single-use rule: a byte-identical resend of a signed create is the idempotent replay,
// two different lookups signed in the same millisecond share a signature and are both
// answered, and a resend after a restart is answered too.
func TestResentSignedRequestsAreAnswered(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: e})
		c := s.NewMerchant(t, nil)
		body := []byte(`{"country":"PER","amount":100000,"currency":"PEN","orderId":"RESEND-1","beneficiary":{"name":"Ana","lastName":"Quispe","document":{"type":1,"number":"45678912"}},"destination":{"bankAccount":{"bankCode":"002","accountType":2,"accountNumber":"19312345678012"}}}`)
		ts := time.Now().UnixMilli()
		send := func(r *http.Request) (int, http.Header, []byte) { return servertest.Send(t, c.HTTP, r) }
		code, _, raw := send(c.SignedAt("POST", "payouts", body, ts, ""))
		if code != 201 {
			t.Fatalf("create: %d %s", code, raw)
		}
		first := servertest.DecodePayout(t, raw)
		code, hdr, raw := send(c.SignedAt("POST", "payouts", body, ts, ""))
		if code != 200 || hdr.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("byte-identical resend: %d %q %s, want 200 replayed", code, hdr.Get("Idempotent-Replayed"), raw)
		}
		if again := servertest.DecodePayout(t, raw); again.Payout.ID != first.Payout.ID {
			t.Fatalf("resend answered payout %d, want %d", again.Payout.ID, first.Payout.ID)
		}

		// The query is not signed: both lookups carry the same signature.
		a := c.SignedAt("GET", "payouts", nil, ts, "orderId=RESEND-1")
		b := c.SignedAt("GET", "payouts", nil, ts, "orderId=OTHER")
		if a.URL.Query().Get("signature") != b.URL.Query().Get("signature") {
			t.Fatal("the two lookups should share a signature")
		}
		for _, r := range []*http.Request{a, b} {
			if code, _, raw := send(r); code != 200 {
				t.Fatalf("%s: %d %s", r.URL.RawQuery, code, raw)
			}
		}

		s.Restart(t, nil)
		code, _, raw = send(c.SignedAt("POST", "payouts", body, ts, ""))
		if code != 200 || servertest.DecodePayout(t, raw).Payout.ID != first.Payout.ID {
			t.Fatalf("resend after a restart: %d %s, want 200 with payout %d", code, raw, first.Payout.ID)
		}
	})
}

// The published vectors of the original authenticate: merchant 22 holding the published
// secret, the server's clock at the vectors' time. Past authentication the GET finds no
// payout 73 (404) and the POST's Mexican body is refused by the rules (only COL and PER):
// neither is an authentication failure.
func TestPublishedSigningVectorsThroughTheServer(t *testing.T) {
	t.Parallel()
	const secret = "P5yjICOFoE0kmJVMALeBRmoxuWXz0BJKuoSaIXEHTgE="
	creds := merchants.Credentials{APIKey: "pk_published_vector_key", APISecret: secret}
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		vectorTime := time.UnixMilli(1687543238010)
		started := time.Now()
		s := servertest.Start(t, servertest.Setup{Engine: e,
			Options: server.Options{Now: func() time.Time { return vectorTime.Add(time.Since(started)) }},
			Before: func(db rules.Storage, sealer *store.Sealer) {
				if _, _, err := merchants.New(db, sealer).Import(context.Background(), "22", "Vector", rules.DefaultSettings(), creds, time.Now()); err != nil {
					t.Fatal(err)
				}
			}})
		post := `{"country": "MEX","amount": 10,"currency": "MXN","orderId": "CDO_90305","beneficiary": {"name": "testName","lastName": "testLastName","document": {"type": 3,"number": "PEGM9007151H0"},"customerId": "test","userName": "646180110400000007"},"destination": {"bankAccount": {"bankCode": "002","accountType": 1,"clabe": "002123451234534510"}}}`
		var cases []servertest.Scenario
		for _, tc := range []struct {
			method, path, ts, sig, body string
			want                        int // 0: any answer but an authentication failure
		}{
			{"GET", "/api/v1/22/payouts/73", "1687543425203", "14cbc221c52bf588f439f86894ab1ebed9aa4867c2d79a1b159bd94a1df2c0d7", "", 404},
			{"POST", "/api/v1/22/payouts", "1687543238010", "d6895bccdff72b95cb1d134037edadfa87cff1f0a543209efa356c889db97cb9", post, 0},
		} {
			signed := func(sig string) func() *http.Request {
				return func() *http.Request {
					req, _ := http.NewRequest(tc.method, s.URL+tc.path+"?timestamp="+tc.ts+"&signature="+sig, bytes.NewReader([]byte(tc.body)))
					req.Header.Set("monnet-api-key", creds.APIKey)
					req.Header.Set("Content-Type", "application/json")
					return req
				}
			}
			vector := servertest.Scenario{Name: tc.method + " as published", Method: tc.method, Path: tc.path, Request: signed(tc.sig),
				WantStatus: tc.want, Then: func(t *testing.T, _ http.Header, raw []byte) {
					if p := servertest.DecodeProblem(t, raw); p.Code == rules.CodeAuthentication || p.Status >= 500 {
						t.Fatalf("the published vector did not authenticate: %s", raw)
					}
				}}
			if tc.want == 0 {
				vector.WantStatus = 401 // the rules refuse Mexico
				vector.WantCode = "1101"
			}
			// One changed byte of the signature is a 401: the vector, not luck, passed.
			bad := tc.sig[:63] + strconv.Itoa((int(tc.sig[63]-'0')+1)%10)
			cases = append(cases, vector, servertest.Scenario{Name: tc.method + " with a changed signature", Method: tc.method, Path: tc.path,
				Request: signed(bad), WantStatus: 401, WantCode: rules.CodeAuthentication})
		}
		s.Run(t, cases)
	})
}

// GET /payouts/{id} and the listing answer the original's nested shape: the request as
// sent, accountType a string, account numbers masked, errors at the top level when
// rejected; this project's extras under names of their own.
func TestGetPayoutInTheOriginalsShape(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: e})
		c := s.NewMerchant(t, map[string]any{"psp": true})
		req := servertest.PerBankRequest("SHAPE-1")
		req["description"] = "Premio de marzo"
		b := req["beneficiary"].(map[string]any)
		b["customerId"], b["userName"], b["phoneNumber"] = "C-77", "ana.q", "987654321"
		b["address"] = map[string]any{"street": "Av. Arequipa", "houseNumber": "1200", "city": "Lima", "country": "PER"}
		ba := req["destination"].(map[string]any)["bankAccount"].(map[string]any)
		ba["bankCode"], ba["accountNumber"] = "003", "1231234569997" // held at PENDING_BANK until simulated
		ba["location"] = map[string]any{"city": "Lima"}
		req["subMerchantInfo"] = map[string]any{"code": "SM-1", "name": "Tienda Uno", "url": "https://tienda.example"}
		code, _, raw := c.Do(t, "POST", "payouts", req, "")
		if code != 201 {
			t.Fatalf("create: %d %s", code, raw)
		}
		id := servertest.DecodePayout(t, raw).Payout.ID
		c.WaitStage(t, id, "IN_PROGRESS", time.Second)
		code, _, raw = c.Do(t, "POST", "payouts/"+itoa(id)+"/simulate", map[string]any{"stage": "REJECTED", "status": "REJECTED_BANK"}, "")
		if code != 200 {
			t.Fatalf("simulate: %d %s", code, raw)
		}

		code, _, raw = c.Do(t, "GET", "payouts/"+itoa(id), nil, "")
		if code != 200 {
			t.Fatalf("get: %d %s", code, raw)
		}
		var got map[string]any
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatal(err)
		}
		at := func(path ...string) any {
			var v any = got
			for _, k := range path {
				m, _ := v.(map[string]any)
				v = m[k]
			}
			return v
		}
		want := []struct {
			path []string
			want any
		}{
			{[]string{"payout", "Id"}, float64(id)},
			{[]string{"payout", "country"}, "PER"},
			{[]string{"payout", "amount"}, float64(100000)},
			{[]string{"payout", "currency"}, "PEN"},
			{[]string{"payout", "orderId"}, "SHAPE-1"},
			{[]string{"payout", "description"}, "Premio de marzo"},
			{[]string{"payout", "beneficiary", "customerId"}, "C-77"},
			{[]string{"payout", "beneficiary", "userName"}, "ana.q"},
			{[]string{"payout", "beneficiary", "name"}, "Ana"},
			{[]string{"payout", "beneficiary", "lastName"}, "Quispe"},
			{[]string{"payout", "beneficiary", "email"}, "ana.quispe@gmail.com"},
			{[]string{"payout", "beneficiary", "phoneNumber"}, "987654321"},
			{[]string{"payout", "beneficiary", "document", "type"}, float64(1)},
			{[]string{"payout", "beneficiary", "document", "number"}, "45678912"},
			{[]string{"payout", "beneficiary", "address", "street"}, "Av. Arequipa"},
			{[]string{"payout", "beneficiary", "address", "city"}, "Lima"},
			{[]string{"payout", "destination", "bankAccount", "bankCode"}, "003"},
			{[]string{"payout", "destination", "bankAccount", "accountType"}, "2"},
			{[]string{"payout", "destination", "bankAccount", "accountNumber"}, "*********9997"},
			{[]string{"payout", "destination", "bankAccount", "location", "city"}, "Lima"},
			{[]string{"payout", "subMerchantInfo", "code"}, "SM-1"},
			{[]string{"payout", "subMerchantInfo", "name"}, "Tienda Uno"},
			{[]string{"payout", "subMerchantInfo", "url"}, "https://tienda.example"},
			{[]string{"output", "stage"}, "REJECTED"},
			{[]string{"output", "status"}, "REJECTED_BANK"},
			{[]string{"channel"}, "BATCH"},
		}
		for _, w := range want {
			if g := at(w.path...); g != w.want {
				t.Errorf("%v = %#v, want %#v", w.path, g, w.want)
			}
		}
		if _, err := time.Parse(time.RFC3339Nano, at("output", "statusChangeDateTime").(string)); err != nil {
			t.Errorf("statusChangeDateTime: %v", err)
		}
		errs, _ := got["errors"].([]any)
		if len(errs) != 1 || errs[0].(map[string]any)["code"] == "" || errs[0].(map[string]any)["message"] == nil {
			t.Errorf("errors = %v, want one {code, message} at the top level", got["errors"])
		}
		if hist, _ := got["history"].([]any); len(hist) < 2 {
			t.Errorf("history = %v", got["history"])
		}
		if bytes.Contains(raw, []byte("1231234569997")) {
			t.Errorf("the account number is echoed in full: %s", raw)
		}

		// A list item is the same document.
		code, _, list := c.Do(t, "GET", "payouts", nil, "orderId=SHAPE-1")
		var page struct{ Items []json.RawMessage }
		if json.Unmarshal(list, &page); code != 200 || len(page.Items) != 1 {
			t.Fatalf("list: %d %s", code, list)
		}
		var item map[string]any
		json.Unmarshal(page.Items[0], &item)
		if !reflect.DeepEqual(item, got) {
			t.Errorf("list item differs from GET:\n%s\n%s", page.Items[0], raw)
		}

		// The OpenAPI document shows the nested shape.
		s.Run(t, []servertest.Scenario{{Name: "the OpenAPI document shows the nested shape", Path: "/openapi.json", WantStatus: 200,
			WantContains: []string{`"PayoutDetail"`, `"BankAccountView"`, `"Notification"`}}})
	})
}
