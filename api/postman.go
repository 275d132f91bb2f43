package api

// The Postman collection: generated from the OpenAPI document when first asked, a
// folder per tag in the document's order, a request per operation (one per example request
// for the creates), and a collection-level pre-request script that signs every merchant call
// with Postman's built-in CryptoJS (require('crypto-js')), so that a developer imports /postman.json, sets apiKey and
// apiSecret, and sends a create as it is.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"

	"github.com/danielgtaylor/huma/v2"
)

// signingScript is the collection's pre-request script: the signature of the apiKey scheme.
var signingScript = []string{
	"// Signs merchant calls as the apiKey security scheme says: header monnet-api-key, query timestamp and",
	"// signature = hex(HMAC-SHA256(apiSecret, METHOD + ':' + path + '?timestamp=' + timestamp + ':' + hex(SHA-256(body)))).",
	"const crypto = require('crypto-js'); // CryptoJS, built into Postman and newman",
	"const path = pm.variables.replaceIn(pm.request.url.getPath());",
	"if (path.startsWith('/api/v1/') && !path.startsWith('/api/v1/notifications/') || path.startsWith('/api-payout-plus-real-time/')) {",
	"  const body = pm.request.body && pm.request.body.mode === 'raw' ? pm.variables.replaceIn(pm.request.body.raw || '') : '';",
	"  const timestamp = String(Date.now());",
	"  const bodyHash = crypto.SHA256(body).toString(crypto.enc.Hex);",
	"  const text = pm.request.method.toUpperCase() + ':' + path + '?timestamp=' + timestamp + ':' + bodyHash;",
	"  const signature = crypto.HmacSHA256(text, pm.variables.get('apiSecret')).toString(crypto.enc.Hex);",
	"  pm.request.url.query.upsert({ key: 'timestamp', value: timestamp });",
	"  pm.request.url.query.upsert({ key: 'signature', value: signature });",
	"  pm.request.headers.upsert({ key: 'monnet-api-key', value: pm.variables.get('apiKey') });",
	"}",
}

// rememberScript keeps what later requests of the folder need (the payout's id and orderId).
var rememberScript = []string{
	"// Remembers the last payout answered, for the requests that name one ({{payoutId}}, {{orderId}}).",
	"let answer = {};",
	"try { answer = pm.response.json(); } catch (e) {}",
	"if (answer && answer.payout && answer.payout.Id) {",
	"  pm.collectionVariables.set('payoutId', String(answer.payout.Id));",
	"  pm.collectionVariables.set('orderId', answer.payout.orderId);",
	"}",
}

// succeeds is the test of the requests that succeed as generated (creates, reads, listings).
var succeeds = []string{"pm.test('answered with a success status', function () { pm.expect(pm.response.code).to.be.within(200, 299); });"}

// operationOrder puts a folder's requests in the order a reader tries them.
var operationOrder = []string{"create-payout", "get-payout", "list-payouts", "cancel-payout", "create-card-payout", "get-balance",
	"integration-token", "peru-beneficiary-lookup", "breb-key-lookup"}

type postmanScript struct {
	Listen string `json:"listen"`
	Script struct {
		Type string   `json:"type"`
		Exec []string `json:"exec"`
	} `json:"script"`
}

func script(listen string, lines []string) postmanScript {
	s := postmanScript{Listen: listen}
	s.Script.Type, s.Script.Exec = "text/javascript", lines
	return s
}

type postmanKV struct {
	Key         string `json:"key"`
	Value       string `json:"value"`
	Description string `json:"description,omitempty"`
	Disabled    bool   `json:"disabled,omitempty"`
}

type postmanItem struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Item        []*postmanItem  `json:"item,omitempty"`
	Request     *postmanReq     `json:"request,omitempty"`
	Event       []postmanScript `json:"event,omitempty"`
}

type postmanReq struct {
	Method string         `json:"method"`
	Header []postmanKV    `json:"header"`
	URL    postmanURL     `json:"url"`
	Body   *postmanBody   `json:"body,omitempty"`
	Auth   map[string]any `json:"auth,omitempty"`
}

type postmanURL struct {
	Raw   string      `json:"raw"`
	Host  []string    `json:"host"`
	Path  []string    `json:"path"`
	Query []postmanKV `json:"query,omitempty"`
}

type postmanBody struct {
	Mode    string         `json:"mode"`
	Raw     string         `json:"raw"`
	Options map[string]any `json:"options"`
}

// Postman builds the collection from the document; baseURL is the default of {{baseUrl}}.
func Postman(o *huma.OpenAPI, baseURL string) ([]byte, error) {
	folders := map[string]*postmanItem{}
	var order []*postmanItem
	for _, t := range o.Tags {
		f := &postmanItem{Name: t.Name, Description: t.Description}
		folders[t.Name] = f
		order = append(order, f)
	}
	type found struct {
		path, method string
		op           *huma.Operation
	}
	var ops []found
	for path, item := range o.Paths {
		for method, op := range operations(item) {
			ops = append(ops, found{path, method, op})
		}
	}
	rank := func(id string) int {
		for i, x := range operationOrder {
			if x == id {
				return i
			}
		}
		return len(operationOrder)
	}
	sort.Slice(ops, func(i, j int) bool {
		if ri, rj := rank(ops[i].op.OperationID), rank(ops[j].op.OperationID); ri != rj {
			return ri < rj
		}
		return ops[i].op.OperationID < ops[j].op.OperationID
	})
	for _, f := range ops {
		tag := "Other"
		if len(f.op.Tags) > 0 {
			tag = f.op.Tags[0]
		}
		folder := folders[tag]
		if folder == nil {
			folder = &postmanItem{Name: tag}
			folders[tag] = folder
			order = append(order, folder)
		}
		folder.Item = append(folder.Item, postmanRequests(f.path, f.method, f.op)...)
	}
	var items []*postmanItem
	for _, f := range order {
		if len(f.Item) > 0 {
			items = append(items, f)
		}
	}
	coll := map[string]any{
		"info": map[string]any{
			"name":        o.Info.Title,
			"description": "Generated by the server from its OpenAPI document (/openapi.json). Set apiKey and apiSecret (and merchantId) in the collection's variables; the collection's pre-request script signs every merchant call.",
			"schema":      "https://schema.getpostman.com/json/collection/v2.1.0/collection.json",
		},
		"variable": []postmanKV{
			{Key: "baseUrl", Value: strings.TrimSuffix(baseURL, "/"), Description: "The server"},
			{Key: "merchantId", Value: "1", Description: "Your merchant id (1 is the demo merchant)"},
			{Key: "apiKey", Value: "", Description: "Your API key (pk_…)"},
			{Key: "apiSecret", Value: "", Description: "Your API secret: it signs, it is never sent"},
			{Key: "adminToken", Value: "", Description: "The admin API's bearer token (operators only)"},
			{Key: "payoutId", Value: "", Description: "Set by the last answer with a payout"},
			{Key: "orderId", Value: "", Description: "Set by the last answer with a payout"},
			{Key: "accessToken", Value: "", Description: "The token endpoint's access_token, for the beneficiary lookup"},
		},
		"event": []postmanScript{script("prerequest", signingScript), script("test", rememberScript)},
		"item":  items,
	}
	return json.MarshalIndent(coll, "", "  ")
}

// postmanRequests is the operation as Postman requests: one per named request example.
func postmanRequests(path, method string, op *huma.Operation) []*postmanItem {
	var names []string
	var bodies []string
	if op.RequestBody != nil {
		if mt := op.RequestBody.Content["application/json"]; mt != nil {
			for name := range mt.Examples {
				names = append(names, name)
			}
			sort.Strings(names)
			for _, n := range names {
				b, _ := json.MarshalIndent(mt.Examples[n].Value, "", "  ")
				bodies = append(bodies, string(b))
			}
			if len(names) == 0 {
				names, bodies = []string{""}, []string{"{}"}
			}
		}
	}
	if len(names) == 0 {
		names, bodies = []string{""}, []string{""}
	}
	var out []*postmanItem
	for i, name := range names {
		req := &postmanReq{Method: method, Header: []postmanKV{}, URL: postmanPath(path)}
		for _, p := range op.Parameters {
			switch {
			case p.In == "path" && paramExample(p) != "" && p.Name != "merchantId" && p.Name != "id":
				// A path parameter no collection variable stands for: its example.
				req.URL = postmanPathExample(req.URL, p.Name, paramExample(p))
			case p.In == "query" && p.Required && paramExample(p) != "" && p.Name != "timestamp" && p.Name != "signature":
				req.URL.Query = append(req.URL.Query, postmanKV{Key: p.Name, Value: paramExample(p), Description: p.Description})
			case p.In == "query" && p.Name != "timestamp" && p.Name != "signature":
				v := "{{" + p.Name + "}}"
				if p.Name != "orderId" {
					v = ""
				}
				req.URL.Query = append(req.URL.Query, postmanKV{Key: p.Name, Value: v, Description: p.Description, Disabled: p.Name != "orderId"})
			case p.In == "header" && p.Name == "MID":
				req.Header = append(req.Header, postmanKV{Key: "MID", Value: "{{merchantId}}"})
			}
		}
		if len(req.URL.Query) > 0 {
			req.URL.Raw += "?" + queryRaw(req.URL.Query)
		}
		if bodies[i] != "" {
			req.Header = append(req.Header, postmanKV{Key: "Content-Type", Value: "application/json"})
			req.Body = &postmanBody{Mode: "raw", Raw: bodies[i], Options: map[string]any{"raw": map[string]any{"language": "json"}}}
		}
		switch {
		case hasScheme(op, "admin"):
			req.Auth = map[string]any{"type": "bearer", "bearer": []postmanKV{{Key: "token", Value: "{{adminToken}}"}}}
		case hasScheme(op, "integrationToken"):
			req.Header = append(req.Header, postmanKV{Key: "Authorization", Value: "{{accessToken}}"})
		}
		title := op.Summary
		if name != "" {
			title += ": " + exampleSummary(name)
		}
		item := &postmanItem{Name: title, Description: op.Description, Request: req}
		switch op.OperationID {
		case "create-payout", "get-payout", "list-payouts", "get-balance", "list-balance-transactions", "get-statement":
			item.Event = []postmanScript{script("test", succeeds)}
		}
		out = append(out, item)
	}
	return out
}

func queryRaw(q []postmanKV) string {
	var parts []string
	for _, kv := range q {
		if !kv.Disabled {
			parts = append(parts, kv.Key+"="+kv.Value)
		}
	}
	return strings.Join(parts, "&")
}

// paramExample is a parameter's example (huma keeps a field's in its schema), or "".
func paramExample(p *huma.Param) string {
	switch {
	case p.Example != nil:
		return fmt.Sprint(p.Example)
	case p.Schema != nil && len(p.Schema.Examples) > 0:
		return fmt.Sprint(p.Schema.Examples[0])
	}
	return ""
}

// postmanPathExample puts value in place of the path's {{name}}.
func postmanPathExample(u postmanURL, name, value string) postmanURL {
	for i, seg := range u.Path {
		if seg == "{{"+name+"}}" {
			u.Path[i] = value
		}
	}
	u.Raw = "{{baseUrl}}/" + strings.Join(u.Path, "/")
	return u
}

// postmanPath turns /api/v1/{merchantId}/payouts/{id} into {{baseUrl}}/api/v1/{{merchantId}}/payouts/{{payoutId}}.
func postmanPath(path string) postmanURL {
	u := postmanURL{Host: []string{"{{baseUrl}}"}}
	for _, seg := range strings.Split(strings.Trim(path, "/"), "/") {
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
			name := strings.Trim(seg, "{}")
			switch {
			case name == "id" && strings.HasPrefix(path, "/admin/v1/merchants/"):
				name = "merchantId"
			case name == "id" && strings.Contains(path, "/payouts/"):
				name = "payoutId"
			}
			seg = "{{" + name + "}}"
		}
		u.Path = append(u.Path, seg)
	}
	u.Raw = "{{baseUrl}}/" + strings.Join(u.Path, "/")
	return u
}

// postmanHandler serves the collection, built once from the finished document.
func postmanHandler(o *huma.OpenAPI, baseURL string) http.HandlerFunc {
	var once sync.Once
	var body []byte
	var err error
	return func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { body, err = Postman(o, baseURL) })
		if err != nil {
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Disposition", `attachment; filename="payouts.postman_collection.json"`)
		w.Write(body)
	}
}
