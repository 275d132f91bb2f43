package main

// The OpenAPI document's answer examples are real answers of this server (issue 22): this
// test sends one request per documented operation and status it can provoke, and checks that
// api/examples holds an answer of the same shape (the same fields, recursively) as the one it
// got. PAYOUTS_UPDATE_EXAMPLES=1 rewrites the files from the answers.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"payouts/rules"
)

func TestOpenAPIExamplesAreRealAnswers(t *testing.T) {
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

	code, _, raw = c.do(t, "POST", "payouts/card", examples["per-card"], "")
	keep("create-card-payout", 200, code, raw)

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

	dir := filepath.Join("api", "examples")
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
			t.Errorf("%s: no committed example (PAYOUTS_UPDATE_EXAMPLES=1 go test -run TestOpenAPIExamplesAreRealAnswers .): %v", name, err)
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

// jsonShape lists the paths of a JSON value's fields (array items as []), sorted.
func jsonShape(t *testing.T, raw []byte) []string {
	t.Helper()
	var v any
	if err := json.NewDecoder(bytes.NewReader(raw)).Decode(&v); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	seen := map[string]bool{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				seen[prefix+"."+k] = true
				walk(prefix+"."+k, x)
			}
		case []any:
			for _, x := range v {
				walk(prefix+"[]", x)
			}
		default:
			seen[prefix+":"+fmt.Sprintf("%T", v)] = true
		}
	}
	walk("", v)
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
