package api

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"payouts/rules"
)

// CancelFunc cancels a merchant's payout that was not yet sent to the rail.
type CancelFunc func(ctx context.Context, merchantID string, id int64) (*rules.Payout, error)

// registerCancel adds POST /api/v1/{merchantId}/payouts/{id}/cancel: a payout not yet sent
// to the rail ends REJECTED/ERROR with code 2991 (rules.CodeCancelled); a second cancel
// answers the cancelled payout again; a payout already at the bank, or ended, answers 409
// (2990, rules.CodeCancelRefused).
func registerCancel(a huma.API, cancel CancelFunc) {
	huma.Register(a, huma.Operation{
		OperationID: "cancel-payout", Method: http.MethodPost, Path: "/api/v1/{merchantId}/payouts/{id}/cancel",
		Summary: "Cancel a payout before it is sent to the rail",
		Description: "Allowed in CREATED, AUTHORIZED, WAITING_ROUTING and PENDING_BALANCE, and for a card payout " +
			"whose form was not submitted: the payout ends REJECTED/ERROR with error " + rules.CodeCancelled +
			", its reservation released, the merchant notification and the beneficiary email sent as for any " +
			"rejection. Idempotent: cancelling again answers the cancelled payout. From PENDING_BANK on, or " +
			"once the payout ended otherwise, 409 (" + rules.CodeCancelRefused + "). This project's extension.",
		Tags: []string{"Payouts"}, Security: signedSecurity, Errors: []int{401, 404, 409},
	}, func(ctx context.Context, in *GetPayoutInput) (*PayoutDetailOutput, error) {
		p, err := cancel(ctx, merchantFrom(ctx).ID, in.ID)
		if err != nil {
			return nil, err
		}
		return &PayoutDetailOutput{Body: payoutDetailView(p)}, nil
	})
}
