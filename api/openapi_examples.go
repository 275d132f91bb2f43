package api

import (
	"embed"
	"encoding/json"
	"path"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"payouts/rules"
)

// answers are real answers of the server, one per operation and status, captured by the
// end-to-end test TestOpenAPIExamplesAreRealAnswers in internal/e2e (PAYOUTS_UPDATE_EXAMPLES=1 rewrites them):
// examples/<operationId>.<status>.json.
//
//go:embed examples/*.json
var answers embed.FS

// publishedNotification is the original API's published notification (the real vector of
// merchant 234, wire section 3).
const publishedNotification = `{"payout":{"id":"29","country":"MEX","amount":"1","currency":"MXN","orderId":"BJB_fa2d561b-0d72-4c87-ae0e-85abe7b00ad0","merchantId":"234","bankCode":"646","name":"first last"},"output":{"stage":"REJECTED","status":"REJECTED_BANK","statusChangeDateTime":"2024-05-29T13:16:57.267524Z"},"errors":[{"code":"4099","message":"Unknown Error"}]}`

// addExamples gives the payout operations every request of rules/testdata/examples (the card
// ones to the card endpoints), every declared status with a captured answer its example, and
// the webhook the published sample.
func addExamples(o *huma.OpenAPI) {
	for _, item := range o.Paths {
		for _, op := range operations(item) {
			addRequestExamples(op)
			addAnswerExamples(op)
		}
	}
	for _, item := range o.Webhooks {
		if item.Post != nil && item.Post.RequestBody != nil {
			if mt := item.Post.RequestBody.Content["application/json"]; mt != nil && mt.Examples == nil { // the batch webhook has its own
				mt.Examples = map[string]*huma.Example{"published": {
					Summary: "The original API's published notification (merchant 234, a rejection)", Value: json.RawMessage(publishedNotification)}}
			}
		}
	}
}

func addRequestExamples(op *huma.Operation) {
	var card bool
	switch op.OperationID {
	case "create-payout":
	case "create-card-payout", "create-card-payout-alias":
		card = true
	default:
		return
	}
	mt := op.RequestBody.Content["application/json"]
	if mt == nil {
		return
	}
	mt.Examples = map[string]*huma.Example{}
	for _, e := range rules.Examples() {
		if e.Card == card {
			mt.Examples[e.Name] = &huma.Example{Summary: exampleSummary(e.Name), Value: json.RawMessage(e.Body)}
		}
	}
}

// exampleSummary reads a file name such as col-cellphone-realtime as "COL cellphone realtime".
func exampleSummary(name string) string {
	country, rest, _ := strings.Cut(name, "-")
	return strings.ToUpper(country) + " " + strings.ReplaceAll(rest, "-", " ")
}

func addAnswerExamples(op *huma.Operation) {
	for status, r := range op.Responses {
		b, err := answers.ReadFile(path.Join("examples", op.OperationID+"."+status+".json"))
		if err != nil {
			continue
		}
		for ct, mt := range r.Content {
			if !isJSON(ct) {
				continue // the card endpoints' text/html page
			}
			mt.Examples = map[string]*huma.Example{"answer": {Summary: "A real answer of this server", Value: json.RawMessage(b)}}
		}
	}
}
