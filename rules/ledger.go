package rules

// MaxBalance bounds every balance and every funding, in minor units (10^15: ten trillion
// in units with two decimals), so that no sum of balances and amounts can overflow int64.
const MaxBalance int64 = 1_000_000_000_000_000

// CheckFunding refuses a funding amount that is zero or beyond MaxBalance either way.
func CheckFunding(amount int64) error {
	if amount == 0 || amount > MaxBalance || amount < -MaxBalance {
		return &Error{Kind: KindInvalid, Code: CodeFundAmount, Field: "amount", Value: amount,
			Message: "must be non-zero and at most 10^15 minor units either way"}
	}
	return nil
}

// ApplyFunding adds a funding (negative: a withdrawal) to a balance, or says why it cannot:
// a withdrawal takes only what is available, and no balance goes above MaxBalance.
func ApplyFunding(b Balance, amount int64) (Balance, error) {
	if err := CheckFunding(amount); err != nil {
		return b, err
	}
	if amount < 0 && b.Available+amount < 0 {
		return b, Errorf(KindConflict, CodeWithdrawalTooLarge, "the withdrawal of %d is larger than the available balance %d", -amount, b.Available)
	}
	if amount > 0 && b.Balance > MaxBalance-amount {
		return b, Errorf(KindConflict, CodeBalanceLimit, "the balance would go above %d minor units", MaxBalance)
	}
	b.Balance += amount
	b.Available += amount
	b.Funded += amount
	return b, nil
}
