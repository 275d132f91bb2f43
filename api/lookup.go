package api

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"golang.org/x/time/rate"

	"payouts/rules"
)

// LookupPath is the original's Peru beneficiary lookup (wire section 6).
const LookupPath = "/ms-payouts-scanning-entities/api/v1/scanning/account-info"

// LookupPerMinute is the lookups a merchant may make in a minute (RL001 past it).
const LookupPerMinute = 60

// Lookup serves the Peru beneficiary lookup in the original's own shapes: bearer token with
// header MID, its body, its answer and its error codes (VAL001–VAL006, PV002, RL001,
// AUTH001, AUTH002). It is informational: it moves no money.
type Lookup struct {
	Tokens    *Tokens
	Directory rules.Directory // nil with --sandbox=false: this binary has no real directory
	// Seen records a request_id for a merchant and reports whether it was already used.
	Seen func(ctx context.Context, merchantID, requestID string, at time.Time) (bool, error)
	Now  func() time.Time // the service's clock, for "date"
	// RealNow is real time, which the allowance of lookups a minute runs on (nil: time.Now);
	// a sandbox clock moved ahead does not refill it.
	RealNow func() time.Time
	Log     *slog.Logger

	mu      sync.Mutex
	limiter map[string]*rate.Limiter
}

// lookupError is one error of the original's error body.
type lookupError struct {
	Code     string `json:"code"`
	Message  string `json:"message"`
	Location string `json:"location,omitempty"`
}

type lookupErrors struct {
	TraceID string        `json:"traceId"`
	Errors  []lookupError `json:"errors"`
}

// LookupAnswer is the lookup's answer (wire).
type LookupAnswer struct {
	TraceID string `json:"traceId"`
	Data    struct {
		RequestID         string               `json:"requestId"`
		AccountIdentifier string               `json:"accountIdentifier"`
		Entities          []rules.WalletEntity `json:"entities"`
		Date              string               `json:"date"`
	} `json:"data"`
}

var uuidPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

func newUUID() string {
	b := make([]byte, 16)
	rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

func (l *Lookup) allow(merchantID string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.limiter == nil {
		l.limiter = map[string]*rate.Limiter{}
	}
	lim := l.limiter[merchantID]
	if lim == nil {
		lim = rate.NewLimiter(rate.Limit(float64(LookupPerMinute)/60), LookupPerMinute)
		l.limiter[merchantID] = lim
	}
	now := time.Now
	if l.RealNow != nil {
		now = l.RealNow
	}
	return lim.AllowN(now(), 1)
}

func writeLookup(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	b, _ := json.Marshal(v)
	w.Write(b)
}

func (l *Lookup) fail(w http.ResponseWriter, trace string, status int, errs ...lookupError) {
	writeLookup(w, status, lookupErrors{TraceID: trace, Errors: errs})
}

// ServeHTTP answers POST LookupPath.
func (l *Lookup) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	trace := newUUID()
	mid, token := strings.TrimSpace(r.Header.Get("MID")), strings.TrimSpace(r.Header.Get("Authorization"))
	token = strings.TrimPrefix(token, "Bearer ") // the original sends none; a client that adds it still works
	switch {
	case mid == "" || token == "":
		l.fail(w, trace, http.StatusUnauthorized, lookupError{"AUTH001", "the MID and Authorization headers are required (token from the api-integration/token endpoint)", "header.Authorization"})
		return
	case l.Tokens.Check(token) != mid:
		l.fail(w, trace, http.StatusUnauthorized, lookupError{"AUTH002", "the token is invalid, expired, or not of this MID", "header.Authorization"})
		return
	}
	if !l.allow(mid) {
		w.Header().Set("Retry-After", "1")
		l.fail(w, trace, http.StatusTooManyRequests, lookupError{Code: "RL001", Message: "more than " + strconv.Itoa(LookupPerMinute) + " lookups a minute for this merchant"})
		return
	}
	if l.Directory == nil {
		l.fail(w, trace, http.StatusForbidden, lookupError{Code: rules.CodeSandboxOff, Message: "no directory: the server runs with --sandbox=false and no directory connector"})
		return
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, MaxBody+1))
	if err != nil || len(raw) > MaxBody {
		l.fail(w, trace, http.StatusRequestEntityTooLarge, lookupError{Code: rules.CodeBodyTooLarge, Message: "the body is over 64 KiB", Location: "body"})
		return
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(raw, &body); err != nil || body == nil {
		l.fail(w, trace, http.StatusBadRequest, lookupError{"VAL005", "the body must be a JSON object with request_id, account_type, account_identifier and country", "body"})
		return
	}
	str := func(name string) (string, bool, bool) { // value, present, a string (or, for account_type, a number)
		v, ok := body[name]
		if !ok || string(v) == "null" {
			return "", false, true
		}
		var s string
		if json.Unmarshal(v, &s) == nil {
			return s, s != "", true
		}
		var n json.Number
		if name == "account_type" && json.Unmarshal(v, &n) == nil {
			return n.String(), true, true
		}
		return string(v), true, false
	}
	var errs []lookupError
	check := func(name, code, msg string, ok func(string) bool) string {
		v, present, isString := str(name)
		switch {
		case !present:
			errs = append(errs, lookupError{"VAL005", name + " is required", "body." + name})
		case !isString || !ok(v):
			errs = append(errs, lookupError{code, msg, "body." + name})
		}
		return v
	}
	reqID := check("request_id", "VAL006", "request_id must be a UUID", uuidPattern.MatchString)
	check("account_type", "VAL002", `account_type must be "4" (cellphone)`, func(s string) bool { return s == "4" })
	phone := check("account_identifier", "VAL003", "account_identifier must be a Peru cellphone: 9 digits starting with 9", rules.IsPeruCellphone)
	check("country", "VAL004", `country must be "PER"`, func(s string) bool { return s == "PER" })
	if len(errs) > 0 {
		l.fail(w, trace, http.StatusBadRequest, errs...)
		return
	}
	now := l.Now().UTC()
	seen, err := l.Seen(r.Context(), mid, strings.ToLower(reqID), now)
	if err != nil {
		l.internal(w, trace, err)
		return
	}
	if seen {
		l.fail(w, trace, http.StatusBadRequest, lookupError{"VAL001", "request_id was already used by this merchant", "body.request_id"})
		return
	}
	entities, err := l.Directory.PeruEntities(r.Context(), phone)
	if err != nil {
		l.internal(w, trace, err)
		return
	}
	if len(entities) == 0 {
		l.fail(w, trace, http.StatusNotFound, lookupError{Code: "PV002", Message: "no wallet or bank takes payouts at this cellphone", Location: "body.account_identifier"})
		return
	}
	var out LookupAnswer
	out.TraceID = trace
	out.Data.RequestID, out.Data.AccountIdentifier, out.Data.Entities, out.Data.Date = reqID, phone, entities, wireTime(now)
	writeLookup(w, http.StatusOK, out)
}

func (l *Lookup) internal(w http.ResponseWriter, trace string, err error) {
	if l.Log != nil {
		l.Log.Error("beneficiary lookup failed", "traceId", trace, "err", err)
	}
	l.fail(w, trace, http.StatusInternalServerError, lookupError{Code: rules.CodeInternal, Message: "internal error; the server log has the details"})
}

// describeLookup documents the lookup in the OpenAPI document (it is served by chi, in the
// original's own error shape rather than problem+json).
func describeLookup(a huma.API) {
	reg := a.OpenAPI().Components.Schemas
	reg.Schema(reflect.TypeOf(lookupErrors{}), true, "LookupErrors")
	str := &huma.Schema{Type: "string"}
	a.OpenAPI().AddOperation(&huma.Operation{
		OperationID: "peru-beneficiary-lookup", Method: http.MethodPost, Path: LookupPath,
		Summary: "Which wallets and banks take payouts at a Peru cellphone (the original's lookup; moves no money)",
		Description: "Headers `MID` (the merchant id) and `Authorization: <token>` (no `Bearer`; from the token endpoint). " +
			"Errors `{\"traceId\",\"errors\":[{\"code\",\"message\",\"location\"}]}`: AUTH001 (401) header missing, AUTH002 (401) token " +
			"invalid, expired or of another MID, RL001 (429) over 60 a minute per merchant, VAL005 (400) a field missing, VAL006 " +
			"request_id not a UUID, VAL002 account_type not \"4\", VAL003 account_identifier not a Peru cellphone, VAL004 country not " +
			"PER, VAL001 request_id already used, PV002 (404) no entity. In the sandbox the entities come from the simulated " +
			"directory (README, Sandbox).",
		Tags:     []string{"Lookup"},
		Security: []map[string][]string{{"integrationToken": {}}, {"integrationTokenRaw": {}}},
		Parameters: []*huma.Param{
			{Name: "MID", In: "header", Required: true, Schema: str, Description: "The merchant id the token was issued for"},
		},
		RequestBody: &huma.RequestBody{Required: true, Content: map[string]*huma.MediaType{"application/json": {Schema: &huma.Schema{
			Type: "object", Required: []string{"request_id", "account_type", "account_identifier", "country"},
			Properties: map[string]*huma.Schema{"request_id": {Type: "string", Format: "uuid"}, "account_type": {Type: "string", Enum: []any{"4"}},
				"account_identifier": {Type: "string", Pattern: "^9[0-9]{8}$"}, "country": {Type: "string", Enum: []any{"PER"}}}}}}},
		Responses: map[string]*huma.Response{
			"200": {Description: "The entities", Content: map[string]*huma.MediaType{"application/json": {Schema: reg.Schema(reflect.TypeOf(LookupAnswer{}), true, "LookupAnswer")}}},
			"400": lookupFailure("VAL001–VAL006"), "401": lookupFailure("AUTH001, AUTH002"), "404": lookupFailure("PV002"),
			"429": lookupFailure("RL001"), "500": lookupFailure("Internal error"),
		},
	})
}

// lookupFailure is an error answer of the lookup, in the original's shape (not problem+json).
func lookupFailure(desc string) *huma.Response {
	return &huma.Response{Description: desc, Content: map[string]*huma.MediaType{"application/json": {
		Schema: &huma.Schema{Ref: "#/components/schemas/LookupErrors"}}}}
}

// BreBKeyView is the Bre-B key lookup's answer: the holder's name masked.
type BreBKeyView struct {
	Key         string `json:"key"`
	HolderName  string `json:"holderName" doc:"Masked: the first two letters of each word"`
	BankCode    string `json:"bankCode"`
	AccountType string `json:"accountType" enum:"SAVINGS,CURRENT"`
}

// registerBreBLookup adds GET /api/v1/{merchantId}/breb/keys/{key} (signed): this project's
// extension, over the same directory as the rail. dir nil: sandbox off (403).
func registerBreBLookup(a huma.API, dir rules.Directory) {
	type keyIn struct {
		MerchantID string `path:"merchantId"`
		Key        string `path:"key" doc:"A Bre-B key: phone, national id, email or @alias (URL-escaped)"`
	}
	type keyOut struct {
		Body BreBKeyView
	}
	huma.Register(a, huma.Operation{
		OperationID: "breb-key-lookup", Method: http.MethodGet, Path: "/api/v1/{merchantId}/breb/keys/{key}",
		Summary: "Who holds a Colombia Bre-B key (this project's extension)",
		Description: "This project's extension, not in the original API: the holder's masked name, bank code and account type " +
			"from the directory, or 404 (" + rules.CodeBreBKeyUnknown + "). A Bre-B payout to a key the directory does not know is " +
			"rejected by the simulated bank (REJECTED_BANK, " + rules.CodeDirectoryUnavailable + "). Moves no money.",
		Tags: []string{"Lookup"}, Security: signedSecurity, Errors: []int{401, 403, 404},
		Extensions: map[string]any{"x-payouts-extension": true},
	}, func(ctx context.Context, in *keyIn) (*keyOut, error) {
		if dir == nil {
			return nil, sandboxOff()
		}
		if code, why := rules.BreBKeyProblem(in.Key); why != "" {
			return nil, &rules.Error{Kind: rules.KindRejected, Code: code, Field: "path.key", Value: in.Key, Message: why}
		}
		h, err := dir.BreBKey(ctx, in.Key)
		if err != nil {
			return nil, err
		}
		if h == nil {
			return nil, &rules.Error{Kind: rules.KindNotFound, Code: rules.CodeBreBKeyUnknown, Field: "path.key", Value: in.Key,
				Message: "the directory knows no such Bre-B key"}
		}
		return &keyOut{Body: BreBKeyView{Key: in.Key, HolderName: rules.MaskName(h.HolderName), BankCode: h.BankCode, AccountType: h.AccountType}}, nil
	})
}
