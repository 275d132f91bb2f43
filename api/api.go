// Package api is the typed JSON API (huma on chi): signed merchant operations, the admin
// API, and the one mapping of errors to problem+json.
package api

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humachi"
	"github.com/go-chi/chi/v5"

	"payouts/rules"
	"payouts/rules/merchants"
)

// Store is what the API reads and writes besides the service.
type Store interface {
	CreateMerchant(ctx context.Context, m *rules.Merchant, prepare func(*rules.Merchant) error) error
	Merchant(ctx context.Context, id string) (*rules.Merchant, error)
	Merchants(ctx context.Context) ([]*rules.Merchant, error)
	UpdateMerchant(ctx context.Context, id string, fn func(*rules.Merchant) error) (*rules.Merchant, error)
	Balances(ctx context.Context, merchantID string) ([]rules.Balance, error)
	Backup(ctx context.Context, w io.Writer) (int64, error)
	Ping(ctx context.Context) error
}

// Deps are the API's collaborators, assembled by internal/server.
type Deps struct {
	Service    *rules.Service
	Store      Store
	Keys       *Keyring
	Auth       *Authenticator
	Merchants  *merchants.Service // creates merchants and manages their keys
	AdminToken string
	// AdminFailures limits wrong admin tokens per client address; nil makes one.
	AdminFailures *FailureLimiter
	// TrustedProxies are the peers whose X-Forwarded-For/Forwarded name the client.
	TrustedProxies []netip.Prefix
	Sandbox        bool
	// AllowHTTPNotificationURL lets merchants set an http:// notificationUrl (development,
	// with --allow-private-notification-urls); otherwise it must be https://.
	AllowHTTPNotificationURL bool
	Logger                   *slog.Logger
	Observe                  Observer
	// Fund adds to a merchant's balance (and releases held payouts). Required.
	Fund func(ctx context.Context, merchantID, country, currency string, amount int64) (rules.Balance, error)
	// Simulate forces a sandbox outcome. Nil until the lifecycle is wired.
	Simulate func(ctx context.Context, merchantID string, id int64, stage rules.Stage, status rules.Status) (*rules.Payout, error)
	// PublicURL is the server's public base URL, the document's servers entry.
	PublicURL string
	// Now is the service's clock (the sandbox's test clock over real time).
	Now func() time.Time

	// The features below are optional: a nil one leaves its routes out (New lists them all).

	// Users are the dashboard's named users, AuditLog what they and the admin token did.
	Users    *rules.UserAdmin
	AuditLog rules.AuditLog
	// Auditor records the admin API's actions, as the admin token (rules.Audit).
	Auditor *rules.Auditor
	// Batches creates, approves and reads batches.
	Batches *rules.Batches
	// Metrics serves /metrics (behind the admin token).
	Metrics http.Handler
	// Card opens the Peru card push payment's form.
	Card CardOpener
	// Link opens a payout link's page.
	Link LinkOpener
	// Events lists, reads and resends the merchant's notification events, with the inbox
	// and the event stream.
	Events *Events
	// Ledger reads a balance's entries and a day's statement.
	Ledger *Ledger
	// NotificationKeys are the PEM public key and certificate that verify notifications.
	NotificationKeys *NotificationKeys
	// Claim is the cash claim of a Colombia cash payout.
	Claim ClaimFunc
	// Cancel cancels a payout before it is sent.
	Cancel CancelFunc
	// SandboxControls are the test clock, scripted outcomes and the simulated directory.
	SandboxControls *Sandbox
	// Tokens issue the integration tokens that the Bre-B and wallet lookups take.
	Tokens *Tokens
	// Lookup answers the beneficiary lookups over the directory (rules.Directory).
	Lookup *Lookup
	// Pages are the HTML routes beside the API: the card form, the dashboard, the sandbox
	// mailbox. api does not know them; each registers its own on the router.
	Pages []Pages

	// Certifications run and report receiver certifications (sandbox).
	Certifications *Certifications
	// ClientWatch watches the signed requests of merchants in a client certification
	// session and injects its faults (sandbox); nil: no session can exist.
	ClientWatch ClientWatch

	// Tracing spans every request (trace.go); nil: no tracing, at no cost.
	Tracing *Tracing
}

// ClientWatch is two middlewares around the signature check: Outer sees every request to a
// merchant path (a bad signature too), Inner the authenticated ones. Both cost one atomic load
// while no session is open.
type ClientWatch interface {
	Outer(next http.Handler) http.Handler
	Inner(next http.Handler) http.Handler
}

// Pages register HTML routes on the router (web/ implements them).
type Pages interface {
	Routes(r chi.Router)
}

// NotificationKeys are the PEM files merchants verify notifications with.
type NotificationKeys struct {
	PublicKey, Certificate []byte
}

// New builds the whole HTTP handler: middleware, the huma API with its OpenAPI document and
// docs, health checks, the merchant and admin operations.
func New(d Deps) (http.Handler, huma.API) {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	baseLogger.Store(d.Logger)
	r := chi.NewRouter()
	r.Use(serverRequestID)
	r.Use(nosniff)
	r.Use(clientAddrMiddleware(d.TrustedProxies))
	r.Use(accessLog(d.Logger, d.Observe, d.Tracing))
	r.Use(recoverer)
	r.Use(jsonBodies)
	if d.ClientWatch != nil {
		r.Use(d.ClientWatch.Outer)
	}
	r.Use(d.Auth.Middleware)
	if d.ClientWatch != nil {
		r.Use(d.ClientWatch.Inner)
	}
	if d.AdminFailures == nil {
		d.AdminFailures = NewFailureLimiter(AuthFailuresPerMinute)
	}
	r.Use(adminAuth(d.AdminToken, d.AdminFailures, d.Auditor))

	cfg := huma.DefaultConfig("payouts", "1.0.0")
	cfg.Formats = map[string]huma.Format{"application/json": jsonFormat, "json": jsonFormat}
	cfg.Info.Description = "Payouts to bank accounts, wallets, Bre-B keys, cash and VISA cards in Colombia and Peru. " +
		"Every /api/v1/{merchantId} call is signed: header monnet-api-key, query timestamp and signature (see the README). " +
		"A 401 is one of two things, told apart by the body's errorType and the header X-Payouts-Error-Type: " +
		"validation (the request breaks a country rule or the merchant's configuration, answered 401 as the original does: fix the data) " +
		"or authentication (code 1001: the API key, timestamp or signature; the message says which part)."
	cfg.CreateHooks = nil // no "$schema" links in bodies: wire compatibility
	cfg.OpenAPIPath = "/openapi"
	cfg.DocsPath = "" // huma's page loads its script from a CDN: the dashboard serves /docs from embedded assets
	cfg.Components.SecuritySchemes = map[string]*huma.SecurityScheme{
		"apiKey": {Type: "apiKey", In: "header", Name: "monnet-api-key"},
		"admin":  {Type: "http", Scheme: "bearer"},
	}
	a := humachi.New(r, cfg)
	// One body limit for every operation, the one a 413 states (huma's default is 1 MiB):
	// huma hands each operation here before it serves it, and its handler reads the limit
	// from the operation given.
	a.OpenAPI().OnAddOperation = append(a.OpenAPI().OnAddOperation, func(_ *huma.OpenAPI, op *huma.Operation) {
		if op.OperationID == "create-batch" {
			return // a batch's own limit (rules.MaxBatchBody), the one larger body
		}
		if op.MaxBodyBytes > MaxBody || op.MaxBodyBytes == 0 {
			op.MaxBodyBytes = MaxBody
		}
	})

	// Unknown paths and methods answer in the same problem+json as everything else.
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		writeProblem(w, problemOf(rules.KindNotFound, rules.CodeNoSuchEndpoint, "no such endpoint: "+r.URL.Path))
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		p := problemOf(rules.KindNotFound, rules.CodeMethodNotAllowed, r.Method+" is not allowed on "+r.URL.Path)
		p.Status, p.Title = http.StatusMethodNotAllowed, http.StatusText(http.StatusMethodNotAllowed)
		writeProblem(w, p)
	})
	r.Get("/healthz", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok\n")) })
	r.Get("/readyz", func(w http.ResponseWriter, r *http.Request) {
		if err := d.Store.Ping(r.Context()); err != nil {
			http.Error(w, "database not ready", http.StatusServiceUnavailable)
			return
		}
		if h, ok := d.Store.(rules.WriterHealth); ok {
			if why := h.WriterStalled(); why != "" {
				http.Error(w, "not ready: "+why, http.StatusServiceUnavailable)
				return
			}
		}
		w.Write([]byte("ready\n"))
	})

	register(r, a, d)
	finishDocument(a, d.PublicURL)
	// huma's /openapi.json made the document's JSON once per server (and twice for two first
	// requests at once): this one once per process for servers of the same document.
	r.Get("/openapi.json", documentHandler(a.OpenAPI()))
	// huma serves /openapi-3.0.json from its own downgrade: this one also moves what 3.0 lacks,
	// made at the first request.
	downgraded := sync.OnceValues(func() ([]byte, error) { return Downgrade30(a.OpenAPI()) })
	r.Get("/openapi-3.0.json", func(w http.ResponseWriter, r *http.Request) {
		b, err := downgraded()
		if err != nil {
			writeProblem(w, internalProblem())
			return
		}
		w.Header().Set("Content-Type", "application/openapi+json")
		w.Write(b)
	})
	r.Get("/postman.json", postmanHandler(a.OpenAPI(), d.PublicURL))
	return r, a
}

// register adds every route of the service: this is the one list of them. A nil
// dependency leaves its feature's routes out.
func register(r chi.Router, a huma.API, d Deps) {
	r.Get("/admin/v1/backup", BackupHandler(d.Store))
	registerPayouts(a, d)
	describeNotification(a)
	registerAdmin(a, d)
	registerKeys(a, d)
	registerMerchantList(a, d)
	registerUsers(a, d)
	if d.Batches != nil {
		registerBatches(a, d)
	}
	if d.Metrics != nil {
		r.Handle("/metrics", d.Metrics)
	}
	if d.Card != nil {
		registerCard(a, d.Service, d.Card)
	}
	if d.Link != nil {
		registerLink(a, d.Service, d.Link)
	}
	if d.Events != nil {
		registerEvents(r, a, *d.Events)
	}
	if d.Ledger != nil {
		registerLedger(a, *d.Ledger)
	}
	if k := d.NotificationKeys; k != nil {
		r.Get("/api/v1/notifications/public-key", pemHandler(k.PublicKey))
		r.Get("/api/v1/notifications/certificate", pemHandler(k.Certificate))
	}
	if d.Claim != nil {
		registerClaim(a, d.Sandbox, d.Claim)
	}
	if d.Cancel != nil {
		registerCancel(a, d.Cancel)
	}
	if d.SandboxControls != nil {
		registerSandbox(a, *d.SandboxControls)
	}
	if d.Tokens != nil {
		registerTokens(a, d.Tokens, d.Store.Merchant)
	}
	if d.Lookup != nil {
		registerBreBLookup(a, d.Lookup.Directory)
		r.Post(LookupPath, d.Lookup.ServeHTTP)
		describeLookup(a)
	}
	if d.Certifications != nil {
		registerCertifications(a, *d.Certifications)
		registerClientCertifications(a, *d.Certifications)
	}
	if d.Now != nil {
		registerRequirements(a, d.Sandbox, d.Now)
	}
	for _, p := range d.Pages {
		p.Routes(r)
	}
}

// pemHandler serves a public PEM document (the notifications' public key or certificate),
// without authentication.
func pemHandler(pemBytes []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-pem-file")
		w.Header().Set("Cache-Control", "public, max-age=3600")
		w.Write(pemBytes)
	}
}

// payoutRequestBody documents the create body; the handler reads it raw so that the rules
// package reports every generic error with its code, not huma's validator.
func payoutRequestBody(a huma.API, name string) *huma.RequestBody {
	s := a.OpenAPI().Components.Schemas.Schema(reflect.TypeOf(rules.PayoutRequest{}), true, name)
	return &huma.RequestBody{Required: true, Description: "The payout request",
		Content: map[string]*huma.MediaType{"application/json": {Schema: s}}}
}

var signedSecurity = []map[string][]string{{"apiKey": {}}}

// CreatePayoutInput is the create request.
type CreatePayoutInput struct {
	MerchantID string `path:"merchantId" doc:"The merchant's id"`
	RawBody    []byte
}

// CreatePayoutOutput is 201 with the new payout, or 200 with the same payout on a replay.
type CreatePayoutOutput struct {
	Status   int
	Replayed string `header:"Idempotent-Replayed"`
	Location string `header:"Location"`
	Body     PayoutView
}

// GetPayoutInput names one payout.
type GetPayoutInput struct {
	MerchantID string `path:"merchantId"`
	ID         int64  `path:"id" doc:"payout.Id"`
}

// PayoutDetailOutput is one payout.
type PayoutDetailOutput struct {
	Body PayoutDetailView
}

// ListPayoutsInput filters the listing.
type ListPayoutsInput struct {
	MerchantID string `path:"merchantId"`
	Stage      string `query:"stage" enum:"IN_PROGRESS,PENDING,SUCCESS,REJECTED" doc:"Only this stage"`
	Status     string `query:"status" doc:"Only this status"`
	Country    string `query:"country" enum:"COL,PER"`
	OrderID    string `query:"orderId" doc:"The page holding this one payout, or none"`
	From       string `query:"from" doc:"Created at or after (RFC 3339)"`
	To         string `query:"to" doc:"Created before (RFC 3339)"`
	Limit      int    `query:"limit" minimum:"1" maximum:"200" default:"50"`
	Cursor     string `query:"cursor" doc:"nextCursor of the previous page"`
}

// ListPayoutsOutput is one page.
type ListPayoutsOutput struct {
	Body struct {
		Items      []PayoutDetailView `json:"items"`
		NextCursor *string            `json:"nextCursor"`
	}
}

// BalanceOutput lists the merchant's balances (wire shape).
type BalanceOutput struct {
	Body []rules.Balance
}

// SimulateInput forces an outcome in the sandbox.
type SimulateInput struct {
	MerchantID string `path:"merchantId"`
	ID         int64  `path:"id"`
	Body       struct {
		Stage  string `json:"stage" enum:"SUCCESS,REJECTED"`
		Status string `json:"status,omitempty" doc:"For REJECTED: REJECTED_BANK (default), DENIED, REVERSED, ERROR…"`
	}
}

func registerPayouts(a huma.API, d Deps) {
	huma.Register(a, huma.Operation{
		OperationID: "create-payout", Method: http.MethodPost, Path: "/api/v1/{merchantId}/payouts",
		Summary:       "Create a payout",
		Description:   "Checks the generic contract (400) and the Colombia and Peru rules (401), then creates the payout; a 401 of the rules carries errorType validation, a failed signature errorType authentication. Idempotent on orderId: the same request again answers 200 with the same payout; another request with that orderId answers 409 (2005).",
		Tags:          []string{"Payouts"},
		DefaultStatus: http.StatusCreated,
		MaxBodyBytes:  MaxBody,
		RequestBody:   payoutRequestBody(a, "PayoutRequest"),
		// The rules package checks the body, reporting every error with its code.
		SkipValidateBody: true,
		Security:         signedSecurity,
		Errors:           []int{400, 401, 409, 413, 429, 503},
	}, func(ctx context.Context, in *CreatePayoutInput) (*CreatePayoutOutput, error) {
		m := merchantFrom(ctx)
		res, err := d.Service.CreatePayout(ctx, m, in.RawBody, rules.EndpointPayouts)
		if err != nil {
			return nil, err
		}
		if d.Tracing != nil {
			notePayout(ctx, res.Payout.ID)
		}
		out := &CreatePayoutOutput{Status: http.StatusCreated, Body: payoutView(res.Payout),
			Location: "/api/v1/" + m.ID + "/payouts/" + itoa(res.Payout.ID)}
		if !res.Created {
			out.Status, out.Replayed = http.StatusOK, "true"
		}
		return out, nil
	})

	huma.Register(a, huma.Operation{
		OperationID: "get-payout", Method: http.MethodGet, Path: "/api/v1/{merchantId}/payouts/{id}",
		Summary: "Get a payout", Tags: []string{"Payouts"}, Security: signedSecurity, Errors: []int{401, 404, 429, 503},
	}, func(ctx context.Context, in *GetPayoutInput) (*PayoutDetailOutput, error) {
		p, err := d.Service.Payout(ctx, merchantFrom(ctx).ID, in.ID)
		if err != nil {
			return nil, err
		}
		return &PayoutDetailOutput{Body: payoutDetailView(p)}, nil
	})

	huma.Register(a, huma.Operation{
		OperationID: "list-payouts", Method: http.MethodGet, Path: "/api/v1/{merchantId}/payouts",
		Summary: "List payouts, newest first", Tags: []string{"Payouts"}, Security: signedSecurity, Errors: []int{400, 401, 429, 503},
	}, func(ctx context.Context, in *ListPayoutsInput) (*ListPayoutsOutput, error) {
		f, err := in.filter()
		if err != nil {
			return nil, err
		}
		page, err := d.Service.ListPayouts(ctx, merchantFrom(ctx).ID, f)
		if err != nil {
			return nil, err
		}
		out := &ListPayoutsOutput{}
		out.Body.Items = make([]PayoutDetailView, 0, len(page.Items))
		for _, p := range page.Items {
			out.Body.Items = append(out.Body.Items, payoutDetailView(p))
		}
		if page.NextCursor > 0 {
			c := itoa(page.NextCursor)
			out.Body.NextCursor = &c
		}
		return out, nil
	})

	huma.Register(a, huma.Operation{
		OperationID: "get-balance", Method: http.MethodGet, Path: "/api/v1/{merchantId}/balance",
		Summary: "The merchant's balances", Tags: []string{"Balance"}, Security: signedSecurity, Errors: []int{401, 503},
	}, func(ctx context.Context, in *struct {
		MerchantID string `path:"merchantId"`
	}) (*BalanceOutput, error) {
		b, err := d.Store.Balances(ctx, merchantFrom(ctx).ID)
		if err != nil {
			return nil, err
		}
		return &BalanceOutput{Body: b}, nil
	})

	huma.Register(a, huma.Operation{
		OperationID: "simulate-payout", Method: http.MethodPost, Path: "/api/v1/{merchantId}/payouts/{id}/simulate",
		Summary:     "Force a payout's outcome (sandbox only)",
		Description: `{"stage":"SUCCESS"} or {"stage":"REJECTED","status":"REJECTED_BANK"}; REVERSED returns a processed payout.`,
		Tags:        []string{"Sandbox"}, Security: signedSecurity, Errors: []int{400, 401, 403, 404, 409},
	}, func(ctx context.Context, in *SimulateInput) (*PayoutDetailOutput, error) {
		if !d.Sandbox || d.Simulate == nil {
			return nil, rules.Errorf(rules.KindForbidden, rules.CodeSandboxOff, "sandbox controls are off: the server runs with --sandbox=false")
		}
		status := rules.Status(in.Body.Status)
		switch {
		case in.Body.Stage == string(rules.StageSuccess):
			status = rules.StatusProcessed
		case status == "":
			status = rules.StatusRejectedBank
		case rules.StageOf(status) != rules.StageRejected || !knownStatus(status):
			return nil, &rules.Error{Kind: rules.KindInvalid, Code: rules.CodeWrongType, Field: "status", Value: in.Body.Status,
				Message: "must be a status of the REJECTED stage"}
		}
		p, err := d.Simulate(ctx, merchantFrom(ctx).ID, in.ID, rules.StageOf(status), status)
		if err != nil {
			return nil, err
		}
		return &PayoutDetailOutput{Body: payoutDetailView(p)}, nil
	})
}

func knownStatus(s rules.Status) bool {
	for _, x := range rules.Statuses {
		if x == s {
			return true
		}
	}
	return false
}

func (in *ListPayoutsInput) filter() (rules.ListFilter, error) {
	f := rules.ListFilter{Stage: rules.Stage(in.Stage), Country: in.Country, OrderID: in.OrderID, Limit: in.Limit}
	var errs []*rules.Error
	bad := func(name, msg string, v any) {
		errs = append(errs, &rules.Error{Kind: rules.KindInvalid, Code: rules.CodeQueryParam, Field: "query." + name, Message: msg, Value: v})
	}
	if in.Status != "" {
		if !knownStatus(rules.Status(in.Status)) {
			bad("status", "unknown status", in.Status)
		}
		f.Status = rules.Status(in.Status)
	}
	parse := func(name, v string) time.Time {
		if v == "" {
			return time.Time{}
		}
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			bad(name, "must be an RFC 3339 time", v)
		}
		return t
	}
	f.From, f.To = parse("from", in.From), parse("to", in.To)
	if in.Cursor != "" {
		n, ok := parseID(in.Cursor)
		if !ok {
			bad("cursor", "not a cursor of this API", in.Cursor)
		}
		f.Cursor = n
	}
	if len(errs) > 0 {
		return f, &rules.Problem{Kind: rules.KindInvalid, Title: "Missing or invalid data", Detail: "invalid query parameters", Errors: errs}
	}
	return f, nil
}

func parseID(s string) (int64, bool) {
	var n int64
	if s == "" || len(s) > 18 || strings.TrimLeft(s, "0123456789") != "" {
		return 0, false
	}
	for _, c := range s {
		n = n*10 + int64(c-'0')
	}
	return n, n > 0
}
