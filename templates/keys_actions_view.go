package templates

// The view models of a merchant's API keys and of a payout's actions beyond the sandbox.

// KeyRow is one of a merchant's live API keys: its id, never the key or the secret.
type KeyRow struct {
	ID, Role, Created, Expires string
	Current                    bool
}

// PayoutActions are Cancel (while the payout was not sent to the rail) and, for a card
// payout, a fresh link to its form.
type PayoutActions struct {
	CanCancel             bool
	CancelURL             string
	IsCard, CanOpenForm   bool
	CardFormURL, FormLink string
}
