package api

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"payouts/rules"
	"payouts/rules/requirements"
)

// RequirementsPath is the signed operation that answers what a destination needs (requirements.For).
const RequirementsPath = "/api/v1/{merchantId}/requirements"

// RequirementsInput is the query of GET requirements: any subset of the destination.
type RequirementsInput struct {
	MerchantID  string `path:"merchantId"`
	Country     string `query:"country" doc:"COL or PER (any when absent)" example:"PER"`
	AccountType string `query:"accountType" doc:"The account type as a payout sends it (Colombia: its text form too)" example:"4"`
	BankCode    string `query:"bankCode" doc:"A bank code of the country's table" example:"037"`
	Currency    string `query:"currency" doc:"COP, PEN or USD" example:"PEN"`
	Endpoint    string `query:"endpoint" doc:"card: the body of POST /payouts/card; absent or payouts: POST /payouts" example:"payouts"`
}

// RequirementsOutput is the JSON Schema.
type RequirementsOutput struct {
	Body requirements.Schema
}

// requirementsExample is a shortened answer, for the OpenAPI document.
var requirementsExample = map[string]any{
	"$schema": requirements.SchemaDialect, "title": "A payout request to Peru, accountType 4, bank 037 that passes the rules for merchant 1",
	"type": "object", "x-payouts-extension": true, "required": []any{"amount", "beneficiary", "country", "currency", "destination", "orderId"},
	"x-required-codes": map[string]any{"amount": rules.CodeAmountRequired, "country": rules.CodeCountryRequired},
	"properties": map[string]any{
		"amount": map[string]any{"type": "number", "allOf": []any{
			map[string]any{"type": "integer", "x-code": rules.CodeAmountNotNumeric},
			map[string]any{"maximum": 300000, "x-code": rules.CodePERAboveLimit}}},
		"destination": map[string]any{"properties": map[string]any{"bankAccount": map[string]any{"properties": map[string]any{
			"bankCode":      map[string]any{"allOf": []any{map[string]any{"enum": []any{"037", nil}, "x-code": rules.CodeBankCode}}},
			"accountNumber": map[string]any{"allOf": []any{map[string]any{"pattern": "^9[0-9]{8}$", "x-code": rules.CodePERCellphone}}},
		}}}},
	},
}

// registerRequirements adds GET requirements (signed; sandbox only: 403 with --sandbox=false).
// now is the service's clock: a Colombia cash claim's last day depends on the day.
func registerRequirements(a huma.API, sandbox bool, now func() time.Time) {
	huma.Register(a, huma.Operation{
		OperationID: "get-requirements", Method: http.MethodGet, Path: RequirementsPath,
		Summary: "What a destination needs: a JSON Schema from the rules (this project's extension, sandbox)",
		Description: "This project's extension, not in the original API (sandbox only). Answers a JSON Schema (2020-12) of a payout body " +
			"that passes the Colombia and Peru rules for the queried destination and this merchant's settings: required fields, " +
			"patterns, lengths, enums (bank codes by channel), amount limits. It is generated from the same tables the validator runs; " +
			"each constraint carries the code the validator answers when it fails (x-code; a missing field's in x-required-codes). " +
			"Any subset of country, accountType, bankCode, currency and endpoint=card; the rest stays open (if/then by value). " +
			"A query naming no country, account type or bank of the tables is 400 (" + rules.CodeRequirementsQuery + "); a destination " +
			"no body can pass for this merchant (cash not enabled, a bank without a channel for that account type) is 400 (" +
			rules.CodeRequirementsNone + ") with the reason. What JSON Schema cannot say (a field that repeats another, an amount written " +
			"150000.00) is left to the validator.",
		Tags: []string{"Sandbox"}, Security: signedSecurity, Errors: []int{400, 401, 403},
		Extensions: map[string]any{"x-payouts-extension": true},
		Responses: map[string]*huma.Response{"200": {Description: "The JSON Schema",
			Content: map[string]*huma.MediaType{"application/json": {Example: requirementsExample}}}},
	}, func(ctx context.Context, in *RequirementsInput) (*RequirementsOutput, error) {
		if !sandbox {
			return nil, sandboxOff()
		}
		q := requirements.Query{Country: in.Country, AccountType: in.AccountType, BankCode: in.BankCode, Currency: in.Currency}
		switch in.Endpoint {
		case "", "payouts":
		case "card":
			q.Endpoint = rules.EndpointCard
		default:
			return nil, &rules.Error{Kind: rules.KindInvalid, Code: rules.CodeRequirementsQuery, Field: "query.endpoint", Value: in.Endpoint,
				Message: "payouts (the default) or card"}
		}
		s, err := requirements.For(q, merchantFrom(ctx), now())
		if err != nil {
			return nil, err
		}
		return &RequirementsOutput{Body: s}, nil
	})
}
