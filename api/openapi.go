package api

// The OpenAPI document is the contract: what huma derives from the Go types is
// completed here, once every operation is registered, with what the types cannot say — the
// signature, the statuses the middleware answers, the fields the rules read as text or
// number, the servers and the order of the sections. The end-to-end tests check every answer
// against the served document (contract_test.go), so a status answered here and not declared
// fails them.

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"

	"github.com/danielgtaylor/huma/v2"
)

// StringToSign is the signing scheme as the document states it (README, Signing requests;
// rules.Signature).
const StringToSign = "METHOD + \":\" + path + \"?timestamp=\" + timestamp + \":\" + hex(SHA-256(body))"

const apiKeyDoc = "The merchant's API key in header `monnet-api-key` (`X-Api-Key` is accepted too), and two query " +
	"parameters on every call: `timestamp` (epoch milliseconds, or seconds; within ±5 minutes of the server's clock) and " +
	"`signature` = lower-case hex of HMAC-SHA256(apiSecret, " + StringToSign + "), where METHOD is upper case, path is the " +
	"request path without its query (e.g. `/api/v1/1/payouts`), timestamp is exactly the text sent in the query, and the " +
	"body's SHA-256 is of the raw bytes sent (for a GET, of the empty body: `e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855`). " +
	"Example: secret `s3cr3t`, `GET /api/v1/1/payouts/7` at 1700000000000 signs the text " +
	"`GET:/api/v1/1/payouts/7?timestamp=1700000000000:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855`. " +
	"Any failure answers 401 (code 1001); past 20 failures a minute from one address with one key, 429 with Retry-After."

// tagOrder is the order a reader needs: what merchants call most, first.
var tagOrder = []*huma.Tag{
	{Name: "Payouts", Description: "Create, read, list and cancel payouts. Every call is signed (security scheme apiKey)."},
	{Name: "Card payouts", Description: "Peru card push payments: the answer is the URL of a card form for the beneficiary."},
	{Name: "Balance", Description: "The merchant's balances per country and currency."},
	{Name: "Lookup", Description: "Who can be paid where: the original's Peru beneficiary lookup (with its token endpoint) and Bre-B keys. Moves no money."},
	{Name: "Events", Description: "The merchant's notifications, kept 30 days with the exact body sent and every attempt: list, read, resend, follow (this project's extension)."},
	{Name: "Certification", Description: "Certify the merchant's notification receiver: every outcome, forgeries, duplicates and reordering sent to it, graded, with a signed report (sandbox only; this project's extension)."},
	{Name: "Sandbox", Description: "Controls of the simulated rails (sandbox only): forced outcomes, scripted rules, the clock, the directory."},
	{Name: "Admin", Description: "The operator's API (admin bearer token): merchants, keys, funding."},
	{Name: "Users", Description: "The dashboard's named users and the audit log (admin bearer token; this project's extension)."},
	{Name: "Notifications", Description: "What this server POSTs to a merchant's notificationUrl (a webhook: the merchant serves it)."},
}

// finishDocument completes the document; publicURL is the server's public base URL.
func finishDocument(a huma.API, publicURL string) {
	o := a.OpenAPI()
	if publicURL != "" {
		o.Servers = []*huma.Server{{URL: strings.TrimSuffix(publicURL, "/"), Description: "This server"}}
	}
	o.Tags = tagOrder
	o.Components.SecuritySchemes = map[string]*huma.SecurityScheme{
		"apiKey": {Type: "apiKey", In: "header", Name: "monnet-api-key", Description: apiKeyDoc},
		"xApiKey": {Type: "apiKey", In: "header", Name: "X-Api-Key",
			Description: "The API key in header `X-Api-Key` instead of `monnet-api-key`, signed the same way (see apiKey)."},
		"admin": {Type: "http", Scheme: "bearer",
			Description: "The operator's admin token (`--admin-token`, or generated on first start): `Authorization: Bearer <token>`."},
		"integrationToken": {Type: "http", Scheme: "bearer",
			Description: "The access token of the token endpoint: `Authorization: Bearer <access_token>`, with header `MID`."},
		"integrationTokenRaw": {Type: "apiKey", In: "header", Name: "Authorization",
			Description: "The access token as the original sends it, without `Bearer `: `Authorization: <access_token>`, with header `MID`."},
	}
	fixSchemas(o)
	for path, item := range o.Paths {
		for method, op := range operations(item) {
			finishOperation(o, path, method, op)
		}
	}
	addExamples(o)
	for _, item := range o.Webhooks {
		if item.Post != nil {
			item.Post.Security = []map[string][]string{} // the merchant's server is called: it checks header verification
			item.Post.Description += " No security scheme: this server calls the merchant's; the merchant checks header verification."
		}
	}
}

func operations(item *huma.PathItem) map[string]*huma.Operation {
	out := map[string]*huma.Operation{}
	for m, op := range map[string]*huma.Operation{http.MethodGet: item.Get, http.MethodPost: item.Post, http.MethodPut: item.Put,
		http.MethodPatch: item.Patch, http.MethodDelete: item.Delete} {
		if op != nil {
			out[m] = op
		}
	}
	return out
}

func hasScheme(op *huma.Operation, name string) bool {
	for _, req := range op.Security {
		if _, ok := req[name]; ok {
			return true
		}
	}
	return false
}

// finishOperation declares what the middleware answers before any handler runs (api.New's
// chain: jsonBodies 415, the signature 401/429 and its body read 400/413, the admin token
// 401/429) and drops huma's 422 and catch-all default, which this API never answers.
func finishOperation(o *huma.OpenAPI, path, method string, op *huma.Operation) {
	if op.Responses == nil {
		op.Responses = map[string]*huma.Response{}
	}
	delete(op.Responses, "422")
	if op.RequestBody != nil && op.RequestBody.Content["application/json"] != nil {
		delete(op.RequestBody.Content, "application/octet-stream") // huma's RawBody: the body is JSON all the same
	}
	delete(op.Responses, "default")
	statuses := []int{http.StatusInternalServerError}
	hasBody := op.RequestBody != nil
	switch {
	case hasScheme(op, "apiKey"):
		op.Security = []map[string][]string{{"apiKey": {}}, {"xApiKey": {}}}
		// 404: a merchantId the API reserves (contract: "notifications") names no merchant's path.
		statuses = append(statuses, 401, 404, 429)
		if method != http.MethodGet && method != http.MethodHead {
			// A key whose role does not allow the operation (403, 2913): only GETs are
			// open to every role.
			statuses = append(statuses, http.StatusForbidden)
		}
		if hasBody {
			statuses = append(statuses, 400, 413)
		}
		op.Parameters = append(op.Parameters,
			&huma.Param{Name: "timestamp", In: "query", Required: true, Schema: &huma.Schema{Type: "string", Pattern: "^[0-9]{10,13}$"},
				Description: "Epoch milliseconds (or seconds) when the request was signed; within ±5 minutes of the server's clock.",
				Example:     "1700000000000"},
			&huma.Param{Name: "signature", In: "query", Required: true, Schema: &huma.Schema{Type: "string", Pattern: "^[0-9a-f]{64}$"},
				Description: "hex(HMAC-SHA256(apiSecret, " + StringToSign + ")): see the apiKey security scheme.",
				Example:     "6f1c3a0e5f9d2b7c8a4e1d0f3b6a9c2e5d8f1a4b7c0e3d6f9a2b5c8e1f4a7d0c"})
	case hasScheme(op, "admin"):
		statuses = append(statuses, 401, 429)
		if hasBody {
			statuses = append(statuses, 400)
		}
	}
	if hasBody && method != http.MethodGet && (strings.HasPrefix(path, "/api/v1/") || strings.HasPrefix(path, "/api-payout-plus-real-time/") || strings.HasPrefix(path, "/admin/v1/")) {
		statuses = append(statuses, http.StatusUnsupportedMediaType)
	}
	if r := op.Responses["201"]; op.OperationID == "create-payout" && r != nil && op.Responses["200"] == nil {
		replay := *r
		replay.Description = "The same request again (idempotent on orderId): the same payout, with Idempotent-Replayed: true"
		// Its own media types: sharing the 201's, the two statuses showed whichever answer
		// example was added last, a different one from one server to the next.
		replay.Content = make(map[string]*huma.MediaType, len(r.Content))
		for ct, mt := range r.Content {
			c := *mt
			replay.Content[ct] = &c
		}
		op.Responses["200"] = &replay
	}
	if hasBody {
		statuses = append(statuses, http.StatusRequestEntityTooLarge) // every operation reads at most 64 KiB
	}
	if op.OperationID == "event-stream" {
		statuses = append(statuses, http.StatusForbidden) // sandbox only
	}
	if op.OperationID == "integration-token" {
		op.Security = []map[string][]string{} // the integration user's credentials are the body
		op.Description += " No security scheme: the integration user's credentials are the body."
		// Wrong credentials answer the original's {"message": "Invalid credentials"}, not a Problem.
		op.Responses["401"] = &huma.Response{Description: "Wrong credentials, or a refresh token unknown, used or expired",
			Headers: map[string]*huma.Param{ErrorTypeHeader: {Description: "authentication", Schema: &huma.Schema{Type: "string"}}},
			Content: map[string]*huma.MediaType{"application/problem+json": {
				Schema: o.Components.Schemas.Schema(reflect.TypeOf(credentialsProblem{}), true, "CredentialsProblem")}}}
		statuses = append(statuses, 400, 429)
	}
	for _, s := range statuses {
		declareProblem(o, op, s)
	}
}

// declareProblem adds status to op as a problem+json answer unless op declares it already.
func declareProblem(o *huma.OpenAPI, op *huma.Operation, status int) {
	key := itoa(int64(status))
	if _, ok := op.Responses[key]; ok {
		return
	}
	r := &huma.Response{Description: http.StatusText(status), Content: map[string]*huma.MediaType{
		"application/problem+json": {Schema: &huma.Schema{Ref: "#/components/schemas/Problem"}}}}
	if status == http.StatusTooManyRequests {
		r.Headers = map[string]*huma.Param{"Retry-After": {Description: "Seconds to wait", Schema: &huma.Schema{Type: "string"}}}
	}
	op.Responses[key] = r
}

// fixSchemas says what the Go types cannot: amount is an integer of minor units on the
// wire (json.Number in Go, so that the rules report a bad one with its code), and the
// fields the specification lets be a string or a number (rules.Text) are either.
func fixSchemas(o *huma.OpenAPI) {
	schemas := o.Components.Schemas.Map()
	textOrNumber := func(s *huma.Schema) {
		*s = huma.Schema{Description: s.Description, OneOf: []*huma.Schema{{Type: "string"}, {Type: "integer", Format: "int64"}}}
	}
	// A merchant created with "settings": null gets the defaults.
	if body := schemas["CreateInBody"]; body != nil && body.Properties["settings"] != nil {
		s := body.Properties["settings"]
		body.Properties["settings"] = &huma.Schema{Description: s.Description, AnyOf: []*huma.Schema{s, {Type: "null"}}}
	}
	if req := schemas["PayoutRequest"]; req != nil {
		if s := req.Properties["amount"]; s != nil {
			s.Type, s.Format, s.Examples = "integer", "int64", []any{100000}
			s.Minimum = ptr(1.0)
		}
		if s := req.Properties["expirationTime"]; s != nil {
			textOrNumber(s)
		}
	}
	if ba := schemas["BankAccount"]; ba != nil {
		for _, name := range []string{"accountType", "accountNumber", "AdittionalAccountInfo"} {
			if s := ba.Properties[name]; s != nil {
				textOrNumber(s)
			}
		}
	}
}

func ptr[T any](v T) *T { return &v }

// Downgrade30 is the document as OpenAPI 3.0.3, for generators that read no 3.1 (oapi-codegen,
// many others): huma's downgrade, then what it leaves of 3.1 — the webhooks (kept as
// x-webhooks) and the {"type":"null"} alternatives (nullable: true).
func Downgrade30(o *huma.OpenAPI) ([]byte, error) {
	b, err := o.Downgrade()
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	if w, ok := doc["webhooks"]; ok {
		doc["x-webhooks"] = w
		delete(doc, "webhooks")
	}
	components, _ := doc["components"].(map[string]any)
	schemas, _ := components["schemas"].(map[string]any)
	nullable30(doc, schemas)
	return json.Marshal(doc)
}

func nullable30(v any, schemas map[string]any) {
	switch v := v.(type) {
	case map[string]any:
		for _, k := range []string{"anyOf", "oneOf"} {
			alts, ok := v[k].([]any)
			if !ok {
				continue
			}
			var keep []any
			for _, a := range alts {
				if m, ok := a.(map[string]any); ok && m["type"] == "null" && len(m) == 1 {
					v["nullable"] = true
					continue
				}
				keep = append(keep, a)
			}
			if len(keep) == 1 && v["nullable"] == true {
				// {"anyOf":[X,null]} is {"allOf":[X],"nullable":true} in 3.0.
				delete(v, k)
				v["allOf"] = keep
				if ref, ok := keep[0].(map[string]any)["$ref"].(string); ok && v["type"] == nil {
					// 3.0 wants the type beside nullable: the referenced schema's.
					if target, ok := schemas[strings.TrimPrefix(ref, "#/components/schemas/")].(map[string]any); ok {
						v["type"] = target["type"]
					}
				}
				continue
			}
			v[k] = keep
		}
		if ref, ok := v["$ref"]; ok && len(v) > 1 {
			// 3.0 ignores a $ref's siblings (a description): the reference goes into allOf.
			delete(v, "$ref")
			v["allOf"] = []any{map[string]any{"$ref": ref}}
		}
		for _, x := range v {
			nullable30(x, schemas)
		}
	case []any:
		for _, x := range v {
			nullable30(x, schemas)
		}
	}
}
