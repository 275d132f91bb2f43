package api

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"payouts/rules"
)

// ClaimFunc claims a merchant's Colombia cash payout with its one-time code.
type ClaimFunc func(ctx context.Context, merchantID string, id int64, code string) (*rules.Payout, error)

// ClaimInput is the sandbox cash claim: the code the beneficiary received by email.
type ClaimInput struct {
	MerchantID string `path:"merchantId"`
	ID         int64  `path:"id" doc:"payout.Id"`
	Body       struct {
		Code string `json:"code" pattern:"^[0-9]{6}$" doc:"The 6-digit one-time code emailed to the beneficiary"`
	}
}

// registerClaim adds POST /api/v1/{merchantId}/payouts/{id}/claim: in the sandbox it plays
// the cash office where the beneficiary shows the code.
func registerClaim(a huma.API, sandbox bool, claim ClaimFunc) {
	huma.Register(a, huma.Operation{
		OperationID: "claim-cash-payout", Method: http.MethodPost, Path: "/api/v1/{merchantId}/payouts/{id}/claim",
		Summary: "Claim a Colombia cash payout with its one-time code (sandbox only)",
		Description: `{"code":"123456"}: the right code settles the payout (SUCCESS/PROCESSED). A wrong code answers 401 (2951); ` +
			"after 5 wrong codes the claim is locked (409, 2952); an expired claim answers 409 (2953).",
		Tags: []string{"Sandbox"}, Security: signedSecurity, MaxBodyBytes: MaxBody,
		Errors: []int{400, 401, 403, 404, 409},
	}, func(ctx context.Context, in *ClaimInput) (*PayoutDetailOutput, error) {
		if !sandbox {
			return nil, rules.Errorf(rules.KindForbidden, rules.CodeSandboxOff, "sandbox controls are off: the server runs with --sandbox=false")
		}
		p, err := claim(ctx, merchantFrom(ctx).ID, in.ID, in.Body.Code)
		if err != nil {
			return nil, err
		}
		return &PayoutDetailOutput{Body: payoutDetailView(p)}, nil
	})
}
