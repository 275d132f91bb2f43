package api

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"payouts/rules"
)

// CardForm is the card form opened for a card payout: its absolute URL (empty when no form
// was opened: the payout already has its card or its outcome), its expiry, the payout as it
// stands and the page itself.
type CardForm struct {
	URL       string
	ExpiresAt time.Time
	Payout    *rules.Payout
	Page      []byte
}

// CardOpener opens (or, for a re-sent orderId still waiting for its card, restarts) the card
// form of a payout the card endpoint accepted. lang is "es" or "en".
type CardOpener func(ctx context.Context, m *rules.Merchant, res rules.CreateResult, lang string) (CardForm, error)

// CardPayoutInput is the card push payment request.
type CardPayoutInput struct {
	MerchantID string `path:"merchantId" doc:"The merchant's id"`
	Accept     string `header:"Accept" doc:"application/json, */* or none (default): the form's URL, for <iframe src>; text/html: the form page, for <iframe srcdoc>"`
	Lang       string `query:"lang" doc:"Language of the form: es (default, es-PE) or en"`
	EmbedJWT   string `query:"embed-jwt" doc:"Accepted for compatibility with the original (default true); embed-jwt=false with proxy-requests=false is refused"`
	Proxy      string `query:"proxy-requests" doc:"Accepted for compatibility with the original (default false)"`
	RawBody    []byte
}

// CardPayoutOutput is the form page or its JSON description.
type CardPayoutOutput struct {
	Status       int
	ContentType  string `header:"Content-Type"`
	CacheControl string `header:"Cache-Control"`
	Replayed     string `header:"Idempotent-Replayed"`
	Location     string `header:"Location"`
	Body         []byte
}

// CardPayoutView is the JSON answer of the card endpoint (wire: the iframe field).
type CardPayoutView struct {
	Iframe    string      `json:"iframe,omitempty" doc:"Absolute URL of the card form, for <iframe src>; absent when no form was opened"`
	ExpiresAt string      `json:"expiresAt,omitempty" doc:"When the form expires (UTC, RFC 3339 with milliseconds)"`
	Payout    PayoutHead  `json:"payout"`
	Output    OutputView  `json:"output"`
	Errors    []ErrorView `json:"errors,omitempty"`
}

// registerCard adds the card push payment endpoint and its wire alias.
// The body is checked by the rules (rules.Check on rules.EndpointCard); open starts the form.
func registerCard(a huma.API, svc *rules.Service, open CardOpener) {
	schema := a.OpenAPI().Components.Schemas.Schema(reflect.TypeOf(CardPayoutView{}), true, "CardPayout")
	content := map[string]*huma.MediaType{
		"text/html":        {Schema: &huma.Schema{Type: "string", Description: "The card form page, ready for <iframe srcdoc>"}},
		"application/json": {Schema: schema},
	}
	responses := map[string]*huma.Response{
		"200": {Description: "The card payout was created and its form opened; or the same orderId was re-sent (Idempotent-Replayed: true): " +
			"the form restarted (a new link, the old one dead) while no card was entered, otherwise the payout as it stands", Content: content},
	}
	handler := func(ctx context.Context, in *CardPayoutInput) (*CardPayoutOutput, error) {
		if err := in.checkFlags(); err != nil {
			return nil, err
		}
		m := merchantFrom(ctx)
		res, err := svc.CreatePayout(ctx, m, in.RawBody, rules.EndpointCard)
		if err != nil {
			return nil, err
		}
		lang := "es"
		if in.Lang == "en" {
			lang = "en"
		}
		form, err := open(ctx, m, res, lang)
		if err != nil {
			return nil, err
		}
		// 200 on both paths, created or not, as the original answers.
		out := &CardPayoutOutput{Status: http.StatusOK, CacheControl: "no-store",
			Location: "/api/v1/" + m.ID + "/payouts/" + itoa(res.Payout.ID)}
		if !res.Created {
			out.Replayed = "true"
		}
		if prefersHTML(in.Accept) {
			out.ContentType, out.Body = "text/html; charset=utf-8", form.Page
			return out, nil
		}
		pv := payoutView(form.Payout)
		v := CardPayoutView{Iframe: form.URL, Payout: pv.Payout, Output: pv.Output, Errors: pv.Errors}
		if form.URL != "" {
			v.ExpiresAt = wireTime(form.ExpiresAt)
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		out.ContentType, out.Body = "application/json", b
		return out, nil
	}
	op := func(id, path, summary string) huma.Operation {
		return huma.Operation{
			OperationID: id, Method: http.MethodPost, Path: path, Summary: summary,
			Description: "Peru card push payment (accountType 5): the Peru rules, beneficiary.email (1033), timeoutUrl (1121), " +
				"an https merchantLogo, expirationTime 5–30 minutes (default 15) and the merchant's cardPayouts setting. " +
				"Answers 200 with the form's URL as {\"iframe\": …} (the default, as the original) or, with Accept: text/html, the form page itself. " +
				"The page tells its parent the outcome with postMessage topics mps-payout-finished-ok, -fail and -timeout.",
			Tags:          []string{"Card payouts"},
			DefaultStatus: http.StatusOK,
			MaxBodyBytes:  MaxBody,
			RequestBody:   payoutRequestBody(a, "PayoutRequest"),
			// The rules package checks the body, reporting every error with its code.
			SkipValidateBody: true,
			Security:         signedSecurity,
			Responses:        responses,
			Errors:           []int{400, 401, 409, 413, 429, 503},
		}
	}
	huma.Register(a, op("create-card-payout", "/api/v1/{merchantId}/payouts/card", "Create a card push payment (Peru)"), handler)
	huma.Register(a, op("create-card-payout-alias", "/api-payout-plus-real-time/{merchantId}", "Create a card push payment (Peru, original path)"), handler)
}

// prefersHTML negotiates the card endpoint's answer (by hand: goautoneg, the usual library,
// accepts a type given q=0). JSON is the default, as the original answers {"iframe": …}: no
// Accept, */* or application/json. The page only when the client names text/html (or
// text/*) and ranks it above application/json, or equally but more precisely.
func prefersHTML(accept string) bool {
	jq, js := acceptQ(accept, "application", "json")
	hq, hs := acceptQ(accept, "text", "html")
	return hs >= 2 && hq > 0 && (hq > jq || hq == jq && hs > js)
}

// checkFlags reads the original's query flags: embed-jwt (default true) and proxy-requests
// (default false) are accepted and change nothing here (the form is served by this server
// either way), but the original refuses both false, and so does this.
func (in *CardPayoutInput) checkFlags() error {
	var errs []*rules.Error
	flag := func(name, v string, def bool) bool {
		if v == "" {
			return def
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			errs = append(errs, &rules.Error{Kind: rules.KindInvalid, Code: rules.CodeQueryParam, Field: "query." + name, Value: v, Message: "must be true or false"})
		}
		return b
	}
	embed, proxy := flag("embed-jwt", in.EmbedJWT, true), flag("proxy-requests", in.Proxy, false)
	if len(errs) == 0 && !embed && !proxy {
		errs = append(errs, &rules.Error{Kind: rules.KindInvalid, Code: rules.CodeQueryParam, Field: "query.embed-jwt", Value: in.EmbedJWT,
			Message: "embed-jwt and proxy-requests cannot both be false"})
	}
	if len(errs) > 0 {
		return &rules.Problem{Kind: rules.KindInvalid, Title: "Missing or invalid data", Detail: "invalid query parameters", Errors: errs}
	}
	return nil
}

// acceptQ is the q value of the most specific media range of accept that matches
// typ/sub, and that range's specificity (3 exact, 2 typ/*, 1 */*, 0 none).
func acceptQ(accept, typ, sub string) (float64, int) {
	q, spec := 0.0, 0
	for _, part := range strings.Split(accept, ",") {
		fields := strings.Split(part, ";")
		mr := strings.ToLower(strings.TrimSpace(fields[0]))
		s := 0
		switch mr {
		case typ + "/" + sub:
			s = 3
		case typ + "/*":
			s = 2
		case "*/*":
			s = 1
		}
		if s == 0 || s < spec {
			continue
		}
		pq := 1.0
		for _, f := range fields[1:] {
			k, v, ok := strings.Cut(strings.TrimSpace(f), "=")
			if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
				if x, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && x >= 0 && x <= 1 {
					pq = x
				}
			}
		}
		q, spec = pq, s
	}
	return q, spec
}
