package rules

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

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

// FundingCurrencies are the balances a merchant can hold: the currencies each country pays
// out in.
var FundingCurrencies = map[string][]string{"COL": {"COP"}, "PER": {"PEN", "USD"}}

// CheckFundingOf is the one check of a funding, whoever asks (the admin API, the dashboard,
// the CLI through the lifecycle's Fund): a currency of the country, and an amount
// CheckFunding takes.
func CheckFundingOf(country, currency string, amount int64) error {
	cs, ok := FundingCurrencies[country]
	if !ok {
		return &Error{Kind: KindInvalid, Code: CodeFundCurrency, Field: "country", Value: country, Message: "must be COL or PER"}
	}
	if !slices.Contains(cs, currency) {
		return &Error{Kind: KindInvalid, Code: CodeFundCurrency, Field: "currency", Value: currency,
			Message: fmt.Sprintf("a %s balance is in %s", country, strings.Join(cs, " or "))}
	}
	return CheckFunding(amount)
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

// ErrLedger is the ledger invariant failing (CheckBalanceChange): the write that would break it is
// refused whole, by every storage engine.
var ErrLedger = errors.New("ledger invariant broken")

// CheckBalanceTotals checks what holds of any balance on its own:
//
//	balance = funded − processed + reversed, none of them negative, reversed ≤ processed,
//	0 ≤ available.
func CheckBalanceTotals(merchantID string, b Balance) error {
	if b.Funded-b.Processed+b.Reversed != b.Balance || b.Processed < 0 || b.Reversed < 0 || b.Reversed > b.Processed {
		return fmt.Errorf("%w: merchant %s %s/%s: balance %d, funded %d − processed %d + reversed %d",
			ErrLedger, merchantID, b.Country, b.Currency, b.Balance, b.Funded, b.Processed, b.Reversed)
	}
	if b.Available < 0 {
		return fmt.Errorf("%w: merchant %s %s/%s: available %d", ErrLedger, merchantID, b.Country, b.Currency, b.Available)
	}
	return nil
}

// CheckBalanceChange is the ledger invariant for one balance a write transaction changed,
// checked on the change so that its cost does not grow with the open payouts: the totals
// hold absolutely, and what the balance holds back (balance − available) moved by exactly
// reservedDelta, the change in the reservations of the payouts the transaction wrote. Every
// earlier write held the invariant, so available = balance − reserved(open payouts) holds
// after this one too; LedgerTally checks it from scratch.
func CheckBalanceChange(merchantID string, before, after Balance, reservedDelta int64) error {
	if err := CheckBalanceTotals(merchantID, after); err != nil {
		return err
	}
	held, heldBefore := after.Balance-after.Available, before.Balance-before.Available
	if held-heldBefore != reservedDelta {
		return fmt.Errorf("%w: merchant %s %s/%s: held back %d → %d, but the payouts' reservations moved by %d",
			ErrLedger, merchantID, after.Country, after.Currency, heldBefore, held, reservedDelta)
	}
	return nil
}

// LedgerTally checks the ledger from scratch: fed every payout (AddPayout), it checks each
// stored balance (CheckBalance) against them: available = balance − what the open payouts
// reserve, processed is the sum of the payouts that reached PROCESSED, reversed of those
// returned, and no payout is REVERSED without having been PROCESSED.
type LedgerTally struct {
	sums map[[3]string]*ledgerSums
}

type ledgerSums struct{ reserved, processed, reversed int64 }

func (t *LedgerTally) at(merchantID, country, currency string) *ledgerSums {
	if t.sums == nil {
		t.sums = map[[3]string]*ledgerSums{}
	}
	k := [3]string{merchantID, country, currency}
	if t.sums[k] == nil {
		t.sums[k] = &ledgerSums{}
	}
	return t.sums[k]
}

// AddPayout counts one stored payout.
func (t *LedgerTally) AddPayout(p *Payout) error {
	s := t.at(p.MerchantID, p.Country, p.Currency)
	if p.Stage == StageInProgress || p.Stage == StagePending {
		s.reserved += p.Reserved
	}
	processed := false
	for _, h := range p.History {
		if h.Status == StatusProcessed {
			processed = true
		}
	}
	if processed {
		s.processed += p.Amount
	}
	if p.Status == StatusReversed {
		if !processed {
			return fmt.Errorf("%w: payout %d is REVERSED without having been PROCESSED", ErrLedger, p.ID)
		}
		s.reversed += p.Amount
	}
	return nil
}

// CheckBalance checks one stored balance against the payouts counted.
func (t *LedgerTally) CheckBalance(merchantID string, b Balance) error {
	if err := CheckBalanceTotals(merchantID, b); err != nil {
		return err
	}
	s := t.at(merchantID, b.Country, b.Currency)
	if b.Available != b.Balance-s.reserved {
		return fmt.Errorf("%w: merchant %s %s/%s: available %d, balance %d − reserved %d",
			ErrLedger, merchantID, b.Country, b.Currency, b.Available, b.Balance, s.reserved)
	}
	if b.Processed != s.processed || b.Reversed != s.reversed {
		return fmt.Errorf("%w: merchant %s %s/%s: processed %d, reversed %d; the payouts say %d and %d",
			ErrLedger, merchantID, b.Country, b.Currency, b.Processed, b.Reversed, s.processed, s.reversed)
	}
	return nil
}
