package e2e

// The OpenAPI document's answer examples are real answers of this server: this
// test sends one request per documented operation and status it can provoke, and checks that
// api/examples holds an answer of the same shape (the same fields, recursively) as the one it
// got. PAYOUTS_UPDATE_EXAMPLES=1 rewrites the files from the answers.

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"payouts/rules"
)

func TestOpenAPIExamplesAreRealAnswers(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("every operation of the document, answered")
	}
	s := startServer(t, "")
	c := s.newMerchant(t, map[string]any{"cardPayouts": true, "cashPayouts": true, "realTimePhoneAccount": true, "realTimeKey": true})
	got := map[string][]byte{} // "<operationId>.<status>" → answer
	keep := func(op string, want, code int, raw []byte) {
		t.Helper()
		if code != want {
			t.Fatalf("%s: got %d, want %d: %s", op, code, want, raw)
		}
		got[op+"."+strconv.Itoa(code)] = raw
	}
	examples := map[string][]byte{}
	for _, e := range rules.Examples() {
		examples[e.Name] = e.Body
	}
	col := examples["col-bank-account"]

	code, _, raw := c.do(t, "POST", "payouts", col, "")
	keep("create-payout", 201, code, raw)
	id := decodePayout(t, raw).Payout.ID
	code, _, raw = c.do(t, "POST", "payouts", col, "")
	keep("create-payout", 200, code, raw)
	code, _, raw = c.do(t, "POST", "payouts", `{"country":"COL","currency":"COP","orderId":"NO-AMOUNT"}`, "")
	keep("create-payout", 400, code, raw)
	var rule map[string]any
	json.Unmarshal(col, &rule)
	orderID, _ := rule["orderId"].(string)
	rule["orderId"], rule["amount"] = "COL-DECIMALS", 5000050
	code, _, raw = c.do(t, "POST", "payouts", rule, "")
	keep("create-payout", 401, code, raw)
	rule["orderId"], rule["amount"] = orderID, 7000000
	code, _, raw = c.do(t, "POST", "payouts", rule, "")
	keep("create-payout", 409, code, raw)
	code, _, raw = c.do(t, "POST", "payouts", `{"country":"COL","amount":`+strings.Repeat("1", 70*1024)+`}`, "")
	keep("create-payout", 413, code, raw)
	req := c.request("POST", "payouts", col, "")
	req.Header.Set("Content-Type", "text/plain")
	code, raw = sendRaw(t, req)
	keep("create-payout", 415, code, raw)
	// A path under a merchantId the API reserves names no merchant's endpoint.
	code, _, raw = c.do(t, "POST", "/api/v1/notifications/payouts", col, "")
	keep("create-payout", 404, code, raw)
	// Past the merchant's rate limit (--rate-limit 0.01: one request, then none for 100 s).
	limited := startServer(t, "", "--rate-limit", "0.01")
	lc := limited.newMerchant(t, nil)
	if code, _, raw := lc.do(t, "POST", "payouts", col, ""); code != 201 {
		t.Fatalf("the rate-limited server's first create: %d %s", code, raw)
	}
	code, _, raw = lc.do(t, "POST", "payouts", col, "")
	keep("create-payout", 429, code, raw)

	code, _, raw = c.do(t, "GET", "payouts/"+strconv.FormatInt(id, 10), nil, "")
	keep("get-payout", 200, code, raw)
	code, _, raw = c.do(t, "GET", "payouts/999999", nil, "")
	keep("get-payout", 404, code, raw)
	code, _, raw = c.with(func(m *merchantClient) { m.Secret = "wrong" }).do(t, "GET", "payouts/"+strconv.FormatInt(id, 10), nil, "")
	keep("get-payout", 401, code, raw)
	code, _, raw = c.do(t, "GET", "payouts", nil, "orderId="+orderID)
	keep("list-payouts", 200, code, raw)
	code, _, raw = c.do(t, "GET", "payouts", nil, "from=yesterday")
	keep("list-payouts", 400, code, raw)
	code, _, raw = c.do(t, "GET", "balance", nil, "")
	keep("get-balance", 200, code, raw)
	code, _, raw = c.do(t, "GET", "balance/transactions", nil, "currency=COP&limit=2")
	keep("list-balance-transactions", 200, code, raw)
	code, _, raw = c.do(t, "GET", "balance/transactions", nil, "currency=EUR")
	keep("list-balance-transactions", 400, code, raw)
	code, _, raw = c.do(t, "GET", "statements/COP/"+time.Now().In(rules.StatementZone).Format(time.DateOnly), nil, "")
	keep("get-statement", 200, code, raw)
	code, _, raw = c.do(t, "GET", "statements/COP/2026-02-30", nil, "")
	keep("get-statement", 400, code, raw)

	code, _, raw = c.do(t, "POST", "payouts/card", examples["per-card"], "")
	keep("create-card-payout", 200, code, raw)
	code, _, raw = c.do(t, "POST", "payouts/link", linkRequest("COL-LINK-0001"), "")
	keep("create-payout-link", 200, code, raw)
	badLink := linkRequest("COL-LINK-BAD")
	badLink["expirationTime"] = 43201
	code, _, raw = c.do(t, "POST", "payouts/link", badLink, "")
	keep("create-payout-link", 400, code, raw)
	otherLink := linkRequest("COL-LINK-0001")
	otherLink["expirationTime"] = 120
	code, _, raw = c.do(t, "POST", "payouts/link", otherLink, "")
	keep("create-payout-link", 409, code, raw)

	code, _, raw = s.rawAdmin(t, "GET", "/admin/v1/merchants/"+c.MerchantID, nil)
	keep("admin-get-merchant", 200, code, raw)
	code, _, raw = s.rawAdmin(t, "GET", "/admin/v1/merchants/nobody", nil)
	keep("admin-get-merchant", 404, code, raw)
	code, _, raw = s.rawAdmin(t, "POST", "/admin/v1/merchants/"+c.MerchantID+"/balance", map[string]any{"country": "PER", "currency": "PEN", "amount": 100000})
	keep("admin-fund-balance", 200, code, raw)
	code, _, raw = s.rawAdmin(t, "POST", "/admin/v1/merchants/"+c.MerchantID+"/balance", map[string]any{"country": "PER", "currency": "PEN", "amount": -1_000_000_000_000})
	keep("admin-fund-balance", 409, code, raw)
	code, _, raw = s.rawAdmin(t, "GET", "/admin/v1/merchants/"+c.MerchantID+"/keys", nil)
	keep("admin-list-keys", 200, code, raw)

	code, _, raw = s.rawAdmin(t, "POST", "/admin/v1/merchants", map[string]any{"merchantId": "tienda-lima", "name": "Tienda Lima"})
	keep("admin-create-merchant", 201, code, raw)
	code, _, raw = s.rawAdmin(t, "POST", "/admin/v1/merchants", map[string]any{"merchantId": "tienda-lima", "name": "Tienda Lima"})
	keep("admin-create-merchant", 409, code, raw)
	code, _, raw = s.rawAdmin(t, "PATCH", "/admin/v1/merchants/tienda-lima", map[string]any{"name": "Tienda Lima SAC"})
	keep("admin-update-merchant", 200, code, raw)
	code, _, raw = s.rawAdmin(t, "POST", "/admin/v1/merchants/tienda-lima/keys", map[string]any{"graceSeconds": 3600})
	keep("admin-rotate-key", 201, code, raw)
	code, _, raw = s.rawAdmin(t, "GET", "/admin/v1/sandbox/clock", nil)
	keep("sandbox-get-clock", 200, code, raw)
	code, _, raw = s.rawAdmin(t, "POST", "/admin/v1/merchants/"+c.MerchantID+"/integration-user", map[string]any{})
	keep("admin-put-integration-user", 201, code, raw)
	var user struct{ User, Password string }
	json.Unmarshal(raw, &user)
	code, _, raw = s.rawAdmin(t, "POST", "/ms-authentication-service/authentication/api-integration/token", map[string]any{"user": user.User, "password": user.Password})
	keep("integration-token", 200, code, raw)
	code, _, raw = s.rawAdmin(t, "POST", "/ms-authentication-service/authentication/api-integration/token", map[string]any{"user": user.User, "password": "wrong"})
	keep("integration-token", 401, code, raw)
	code, _, raw = c.do(t, "GET", "breb/keys/@anamaria", nil, "")
	keep("breb-key-lookup", 200, code, raw)
	code, _, raw = c.do(t, "GET", "breb/keys/@unknownholder", nil, "")
	keep("breb-key-lookup", 404, code, raw)
	code, _, raw = s.rawAdmin(t, "GET", "/api/v1/"+c.MerchantID+"/balance", nil)
	keep("get-balance", 401, code, raw)
	keepBatchExamples(t, s, c, keep) // batches and key roles (batch_test.go)

	// The dashboard's named users and the audit log.
	code, _, raw = s.rawAdmin(t, "POST", "/admin/v1/users", map[string]any{"name": "Ana Rojas", "email": "ana.rojas@tiendalima.pe", "role": "maker", "merchantId": "tienda-lima"})
	keep("admin-create-user", 201, code, raw)
	var newUser struct{ ID string }
	json.Unmarshal(raw, &newUser)
	code, _, raw = s.rawAdmin(t, "POST", "/admin/v1/users", map[string]any{"name": "", "email": "ana.rojas", "role": "operator", "merchantId": "tienda-lima"})
	keep("admin-create-user", 400, code, raw)
	code, _, raw = s.rawAdmin(t, "POST", "/admin/v1/users", map[string]any{"name": "Ana R.", "email": "ANA.ROJAS@tiendalima.pe", "role": "viewer", "merchantId": "tienda-lima"})
	keep("admin-create-user", 409, code, raw)
	code, _, raw = s.rawAdmin(t, "GET", "/admin/v1/users", nil)
	keep("admin-list-users", 200, code, raw)
	code, _, raw = s.rawAdmin(t, "GET", "/admin/v1/users/"+newUser.ID, nil)
	keep("admin-get-user", 200, code, raw)
	code, _, raw = s.rawAdmin(t, "GET", "/admin/v1/users/u_0000000000000000", nil)
	keep("admin-get-user", 404, code, raw)
	code, _, raw = s.rawAdmin(t, "POST", "/admin/v1/users/"+newUser.ID+"/reset", nil)
	keep("admin-reset-user", 200, code, raw)
	code, _, raw = s.rawAdmin(t, "POST", "/admin/v1/users/"+newUser.ID+"/disable", nil)
	keep("admin-disable-user", 200, code, raw)
	code, _, raw = s.rawAdmin(t, "POST", "/admin/v1/users/"+newUser.ID+"/reset", nil)
	keep("admin-reset-user", 409, code, raw)
	code, _, raw = s.rawAdmin(t, "POST", "/admin/v1/users/"+newUser.ID+"/enable", nil)
	keep("admin-enable-user", 200, code, raw)
	code, _, raw = s.rawAdmin(t, "GET", "/admin/v1/audit?action=user&limit=2", nil)
	keep("admin-audit-log", 200, code, raw)
	code, _, raw = s.rawAdmin(t, "GET", "/admin/v1/audit?from=yesterday", nil)
	keep("admin-audit-log", 400, code, raw)

	// Receiver certification: a run against a receiver that answers 200 to everything.
	cs := startServer(t, "", "--allow-private-notification-urls")
	cc := cs.newMerchant(t, nil)
	lax := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer lax.Close()
	code, _, raw = cc.do(t, "POST", "certifications/receiver", map[string]string{"url": lax.URL + "/payouts/notifications"}, "")
	keep("start-receiver-certification", 202, code, raw)
	var run struct{ RunID, State string }
	json.Unmarshal(raw, &run)
	code, _, raw = cc.do(t, "POST", "certifications/receiver", map[string]string{"url": "ftp://shop.example/notifications"}, "")
	keep("start-receiver-certification", 400, code, raw)
	waitFor(t, "the certification run done", time.Minute, func() bool {
		code, _, raw = cc.do(t, "GET", "certifications/receiver/"+run.RunID, nil, "")
		json.Unmarshal(raw, &run)
		return run.State == "done"
	})
	keep("get-receiver-certification", 200, code, raw)
	code, _, raw = cc.do(t, "GET", "certifications/receiver/cr_000000000000", nil, "")
	keep("get-receiver-certification", 404, code, raw)

	dir := repoPath("api", "examples")
	if os.Getenv("PAYOUTS_UPDATE_EXAMPLES") != "" {
		old, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		for _, f := range old {
			os.Remove(f)
		}
		for name, raw := range got {
			var v any
			if err := json.Unmarshal(raw, &v); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			b, _ := json.MarshalIndent(v, "", "  ")
			if err := os.WriteFile(filepath.Join(dir, name+".json"), append(b, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	var names []string
	for name := range got {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		committed, err := os.ReadFile(filepath.Join(dir, name+".json"))
		if err != nil {
			t.Errorf("%s: no committed example (PAYOUTS_UPDATE_EXAMPLES=1 go test ./internal/e2e -run TestOpenAPIExamplesAreRealAnswers): %v", name, err)
			continue
		}
		if a, b := jsonShape(t, committed), jsonShape(t, got[name]); !reflect.DeepEqual(a, b) {
			t.Errorf("%s: the committed example has fields %v, the server answers %v (PAYOUTS_UPDATE_EXAMPLES=1 to rewrite)", name, a, b)
		}
	}
	// The served document carries them.
	resp, err := http.Get(s.URL + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		Paths map[string]map[string]struct {
			OperationID string `json:"operationId"`
			Responses   map[string]struct {
				Content map[string]struct {
					Examples map[string]any `json:"examples"`
				} `json:"content"`
			} `json:"responses"`
		} `json:"paths"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	served := map[string]bool{}
	for _, item := range doc.Paths {
		for _, op := range item {
			for status, r := range op.Responses {
				for _, mt := range r.Content {
					if mt.Examples["answer"] != nil {
						served[op.OperationID+"."+status] = true
					}
				}
			}
		}
	}
	for _, name := range names {
		if !served[name] {
			t.Errorf("%s: the served document has no answer example", name)
		}
	}
}

func sendRaw(t *testing.T, req *http.Request) (int, []byte) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}

// jsonShape lists the paths of a JSON value's object fields, sorted; what arrays hold is left
// out (a payout's history grows while the test runs), and so are the values.
func jsonShape(t *testing.T, raw []byte) []string {
	t.Helper()
	var v any
	if err := json.NewDecoder(bytes.NewReader(raw)).Decode(&v); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	var out []string
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		if m, ok := v.(map[string]any); ok {
			for k, x := range m {
				out = append(out, prefix+"."+k)
				walk(prefix+"."+k, x)
			}
		}
	}
	walk("", v)
	sort.Strings(out)
	return out
}

// The 3.0 rendition and the Postman collection are served, generated from the document, with
// the servers of --public-url and a collection that signs (.ci/run runs generated clients
// and newman against them).
func TestOpenAPIRenditionsAndPostmanCollection(t *testing.T) {
	t.Parallel()
	s := startServer(t, "", "--public-url", "https://payouts.example.com/")
	get := func(path string, out any) {
		t.Helper()
		resp, err := http.Get(s.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d", path, resp.StatusCode)
		}
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
	}
	type document struct {
		OpenAPI  string `json:"openapi"`
		Servers  []struct{ URL string }
		Tags     []struct{ Name string }
		Webhooks map[string]any `json:"webhooks"`
		XHooks   map[string]any `json:"x-webhooks"`
		Paths    map[string]any `json:"paths"`
	}
	var d31, d30 document
	get("/openapi.json", &d31)
	get("/openapi-3.0.json", &d30)
	if d31.OpenAPI != "3.1.0" || d30.OpenAPI != "3.0.3" {
		t.Errorf("versions %q and %q, want 3.1.0 and 3.0.3", d31.OpenAPI, d30.OpenAPI)
	}
	for _, d := range []document{d31, d30} {
		if len(d.Servers) != 1 || d.Servers[0].URL != "https://payouts.example.com" {
			t.Errorf("servers %v, want the --public-url", d.Servers)
		}
		if len(d.Tags) == 0 || d.Tags[0].Name != "Payouts" {
			t.Errorf("tags %v: Payouts must come first", d.Tags)
		}
		if len(d.Paths) != len(d31.Paths) {
			t.Errorf("%d paths in one rendition, %d in the other", len(d.Paths), len(d31.Paths))
		}
	}
	if d31.Webhooks == nil || d30.Webhooks != nil || d30.XHooks == nil {
		t.Errorf("the webhook belongs in webhooks (3.1) and x-webhooks (3.0)")
	}

	var coll struct {
		Info     struct{ Schema string }
		Variable []struct{ Key, Value string }
		Event    []struct {
			Listen string
			Script struct{ Exec []string }
		}
		Item []struct {
			Name string
			Item []struct {
				Name    string
				Request struct {
					Method string
					URL    struct{ Raw string }
					Body   *struct{ Raw string }
				}
			}
		}
	}
	get("/postman.json", &coll)
	if !strings.Contains(coll.Info.Schema, "v2.1.0") {
		t.Errorf("collection schema %q", coll.Info.Schema)
	}
	vars := map[string]string{}
	for _, v := range coll.Variable {
		vars[v.Key] = v.Value
	}
	for _, k := range []string{"apiKey", "apiSecret", "merchantId"} {
		if _, ok := vars[k]; !ok {
			t.Errorf("no collection variable %s", k)
		}
	}
	if vars["baseUrl"] != "https://payouts.example.com" {
		t.Errorf("baseUrl %q, want the --public-url", vars["baseUrl"])
	}
	var pre string
	for _, e := range coll.Event {
		if e.Listen == "prerequest" {
			pre = strings.Join(e.Script.Exec, "\n")
		}
	}
	for _, want := range []string{"require('crypto-js')", "HmacSHA256", "'?timestamp='", "monnet-api-key", "pm.variables.get('apiSecret')"} {
		if !strings.Contains(pre, want) {
			t.Errorf("the pre-request script lacks %s:\n%s", want, pre)
		}
	}
	if len(coll.Item) == 0 || coll.Item[0].Name != "Payouts" {
		t.Fatalf("the first folder must be Payouts")
	}
	creates := 0
	for _, it := range coll.Item[0].Item {
		if it.Request.Method == "POST" && strings.HasSuffix(it.Request.URL.Raw, "/api/v1/{{merchantId}}/payouts") && it.Request.Body != nil {
			var req rules.PayoutRequest
			if err := json.Unmarshal([]byte(it.Request.Body.Raw), &req); err != nil || req.OrderID == "" {
				t.Errorf("%s: body %v %.80s", it.Name, err, it.Request.Body.Raw)
			}
			creates++
		}
	}
	want := 0
	for _, e := range rules.Examples() {
		if !e.Card {
			want++
		}
	}
	if creates != want {
		t.Errorf("%d create requests in the Payouts folder, want one per example (%d)", creates, want)
	}
}

// The string to sign that the document and the collection's script state is the server's
// (the script runs for real under newman in CI).
func TestDocumentedStringToSignIsTheServers(t *testing.T) {
	t.Parallel()
	method, path, ts, body := "POST", "/api/v1/1/payouts", int64(1700000000000), []byte(`{"a":1}`)
	sum := sha256.Sum256(body)
	text := method + ":" + path + "?timestamp=" + strconv.FormatInt(ts, 10) + ":" + hex.EncodeToString(sum[:])
	mac := hmac.New(sha256.New, []byte("secret"))
	mac.Write([]byte(text))
	if got, want := hex.EncodeToString(mac.Sum(nil)), rules.Signature("secret", method, path, ts, body); got != want {
		t.Errorf("the documented string to sign gives %s, the server %s", got, want)
	}
}
