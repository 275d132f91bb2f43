package api

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"

	"github.com/danielgtaylor/huma/v2"

	"payouts/rules"
)

// LinkOpener opens the page of a payout link the link endpoint created (or, replayed, the
// same page again) and answers its absolute URL, in the link's language.
type LinkOpener func(ctx context.Context, m *rules.Merchant, p *rules.Payout) (string, error)

// LinkPayoutInput is the payout link request.
type LinkPayoutInput struct {
	MerchantID string `path:"merchantId" doc:"The merchant's id"`
	RawBody    []byte
}

// LinkPayoutOutput is the created (or replayed) link.
type LinkPayoutOutput struct {
	CacheControl string `header:"Cache-Control"`
	Replayed     string `header:"Idempotent-Replayed"`
	Location     string `header:"Location"`
	Body         LinkPayoutView
}

// LinkPayoutView is the answer of the link endpoint: the payout as created, its link and
// when the link expires.
type LinkPayoutView struct {
	Link      string      `json:"link" doc:"Absolute URL of the link's page, for the beneficiary; it carries its token in the query"`
	ExpiresAt string      `json:"expiresAt" doc:"When the link expires (UTC, RFC 3339 with milliseconds): without a destination by then the payout ends REJECTED/EXPIRED, code 4042"`
	Payout    PayoutHead  `json:"payout"`
	Output    OutputView  `json:"output"`
	Errors    []ErrorView `json:"errors,omitempty"`
}

// LinkView is what GET /payouts/{id} shows of a payout link (this project's extra).
type LinkView struct {
	State               string `json:"state" enum:"waiting,completed,expired,ended" doc:"waiting: for the beneficiary's destination; completed: the beneficiary gave it; expired: not given in time (4042); ended: the payout ended otherwise before (cancelled, no balance, locked)"`
	ExpiresAt           string `json:"expiresAt"`
	AllowedDestinations []int  `json:"allowedDestinations" doc:"The account types the beneficiary may choose"`
	ReturnURL           string `json:"returnUrl,omitempty"`
}

// linkView is the link of a payout link, nil for any other payout.
func linkView(p *rules.Payout) *LinkView {
	if p.Link == nil {
		return nil
	}
	v := &LinkView{ExpiresAt: wireTime(p.SessionExpiresAt), AllowedDestinations: p.Link.Kinds, ReturnURL: p.Link.ReturnURL}
	switch {
	case p.Channel != rules.ChannelLink:
		v.State = "completed"
	case !p.Status.Final():
		v.State = "waiting"
	case p.Status == rules.StatusExpired && hasCode(p, rules.CodeLinkExpired):
		v.State = "expired"
	default:
		v.State = "ended"
	}
	return v
}

func hasCode(p *rules.Payout, code string) bool {
	for _, e := range p.Errors {
		if e.Code == code {
			return true
		}
	}
	return false
}

// registerLink adds the payout link endpoint. The body is checked by the rules
// (rules.ValidateLink); open gives the link's page.
func registerLink(a huma.API, svc *rules.Service, open LinkOpener) {
	a.OpenAPI().Components.Schemas.Schema(reflect.TypeOf(LinkPayoutView{}), true, "LinkPayout")
	huma.Register(a, huma.Operation{
		OperationID: "create-payout-link", Method: http.MethodPost, Path: "/api/v1/{merchantId}/payouts/link",
		Summary: "Create a payout link (the beneficiary gives the destination)",
		Description: "The create body without destination, plus expirationTime (minutes, 5 to 43200, default 10080), " +
			"allowedDestinations (account types the country offers: Colombia 1 current, 2 savings, 4 cellphone, 5 Bre-B key; Peru 1 current, 2 savings, 4 cellphone, 5 VISA card with cardPayouts and a returnUrl), " +
			"returnUrl, merchantLogo and lang (es or en). The payout is created, authorized and its amount reserved; " +
			"the answer holds the link's page for the beneficiary, who chooses a destination there, checked by the country rules as a create is. " +
			"The same orderId with the same body answers the same link (Idempotent-Replayed: true); with another body, 409 and code 2005. " +
			"A link not completed by expiresAt ends the payout REJECTED/EXPIRED with code 4042, its reservation released.",
		Tags:          []string{"Payout links"},
		DefaultStatus: http.StatusOK,
		MaxBodyBytes:  MaxBody,
		RequestBody: &huma.RequestBody{Required: true, Content: map[string]*huma.MediaType{"application/json": {
			Schema: &huma.Schema{Type: "object", Description: "A payout request without destination, with the link's fields",
				Properties: map[string]*huma.Schema{
					"country": {Type: "string"}, "amount": {Type: "integer"}, "currency": {Type: "string"}, "orderId": {Type: "string"},
					"description": {Type: "string"}, "beneficiary": {Ref: "#/components/schemas/Beneficiary"},
					"expirationTime":      {Type: "integer", Minimum: ptr(5.0), Maximum: ptr(43200.0), Default: 10080},
					"allowedDestinations": {Type: "array", Items: &huma.Schema{Type: "integer"}},
					"returnUrl":           {Type: "string", Format: "uri"}, "merchantLogo": {Type: "string", Format: "uri"},
					"lang": {Type: "string", Enum: []any{"es", "en"}},
				}, Required: []string{"country", "amount", "currency", "orderId", "beneficiary"}},
			Examples: map[string]*huma.Example{"col-link": {Summary: "COL link, savings or cellphone, 3 days", Value: map[string]any{
				"country": "COL", "amount": 15000000, "currency": "COP", "orderId": "COL-LINK-0001", "description": "Reembolso",
				"beneficiary":    map[string]any{"name": "Juan", "lastName": "Pérez", "email": "juan.perez@gmail.com", "document": map[string]any{"type": 1, "number": "1020304050"}},
				"expirationTime": 4320, "allowedDestinations": []int{2, 4}, "returnUrl": "https://shop.example/refunds", "lang": "es",
			}}},
		}}},
		// The rules package checks the body, reporting every error with its code.
		SkipValidateBody: true,
		Security:         signedSecurity,
		Extensions:       map[string]any{"x-payouts-extension": true},
		Errors:           []int{400, 401, 409, 413, 429, 503},
	}, func(ctx context.Context, in *LinkPayoutInput) (*LinkPayoutOutput, error) {
		m := merchantFrom(ctx)
		res, err := svc.CreateLink(ctx, m, in.RawBody)
		if err != nil {
			return nil, err
		}
		link, err := open(ctx, m, res.Payout)
		if err != nil {
			return nil, err
		}
		pv := payoutView(res.Payout)
		out := &LinkPayoutOutput{CacheControl: "no-store", Location: "/api/v1/" + m.ID + "/payouts/" + itoa(res.Payout.ID),
			Body: LinkPayoutView{Link: link, ExpiresAt: wireTime(res.Payout.SessionExpiresAt), Payout: pv.Payout, Output: pv.Output, Errors: pv.Errors}}
		if !res.Created {
			out.Replayed = "true"
		}
		return out, nil
	})
	describeLinkEvents(a)
}

// describeLinkEvents adds a payout link's own events to the OpenAPI document's webhooks.
func describeLinkEvents(a huma.API) {
	hooks := a.OpenAPI().Webhooks
	if hooks == nil {
		return
	}
	example := func(typ string, kind int, code string) json.RawMessage {
		b, _ := json.Marshal(rules.LinkNotice{Type: typ, PayoutID: "1", MerchantID: "22", OrderID: "COL-LINK-0001", Country: "COL",
			Amount: "15000000", Currency: "COP", AccountType: kind, Code: code, ExpiresAt: "2026-12-02T00:37:54.826Z", At: "2026-11-29T14:02:11.120Z"})
		return b
	}
	hooks["payout-link-event"] = &huma.PathItem{Post: &huma.Operation{
		OperationID: "payout-link-notification",
		Summary:     "Payout link event: the beneficiary gave a destination, or the link expired unused, POSTed to the merchant's notificationUrl",
		Description: "Sent once per event (event id link.notification.<payout>.SUBMITTED or .EXPIRED, type link.SUBMITTED or link.EXPIRED), " +
			"besides the payout's outcome notification; signed and retried as the payout notifications are, and kept in the event log.",
		Tags:       []string{"Notifications"},
		Extensions: map[string]any{"x-payouts-extension": true},
		Parameters: []*huma.Param{
			{Name: "verification", In: "header", Required: true, Schema: &huma.Schema{Type: "string"}, Description: "base64 signature of merchantId + body"},
			{Name: "Idempotency-Key", In: "header", Required: true, Schema: &huma.Schema{Type: "string"}, Description: "The event id, the same on every copy"},
		},
		RequestBody: &huma.RequestBody{Required: true, Content: map[string]*huma.MediaType{"application/json": {
			Schema: a.OpenAPI().Components.Schemas.Schema(reflect.TypeOf(rules.LinkNotice{}), true, "LinkNotification"),
			Examples: map[string]*huma.Example{
				"submitted": {Summary: "The beneficiary gave a savings account", Value: example("link.SUBMITTED", 2, "")},
				"expired":   {Summary: "The link expired unused", Value: example("link.EXPIRED", 0, rules.CodeLinkExpired)},
			}}}},
		Responses: map[string]*huma.Response{"200": {Description: "Any 2xx marks the notification delivered"}},
	}}
}
