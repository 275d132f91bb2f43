package sandbox

import (
	"context"
	"strconv"
	"time"

	"payouts/rules"
)

// Rail is the sandbox's rules.Rail, behind the interface a real connector implements:
// real-time channels settle after Delay, batch after BatchDelay, cash waits for its claim.
// Outcomes are deterministic from the destination (sandboxEndings): an account number, CCI,
// key or phone ending in 9999 is rejected by the bank (4001), 9998 is denied (3007), 9997
// stays PENDING_BANK until simulated, 9996 is an account that does not exist (4025), 9995 a
// bank out of service (4008), 9994 is paid and then returned three days later (REVERSED,
// 4901); the card 4000000000000002 is declined (4032). It keeps no state: everything it needs
// is on the payout, so a restart loses nothing.
type Rail struct {
	Delay      time.Duration
	BatchDelay time.Duration
	Now        func() time.Time

	// Scripts returns a merchant's scripted outcomes (scripts.go): the first
	// rule that fits a payout decides, before the magic endings. Nil: none.
	Scripts func(ctx context.Context, merchantID string) ([]rules.ScriptRule, error)
	// Directory knows the Bre-B keys (directory.go): a key payout to a key it
	// does not know is rejected (4027). Nil: every key is known.
	Directory rules.Directory
}

// Submit accepts every payout.
func (r *Rail) Submit(ctx context.Context, p *rules.Payout) (rules.Submission, error) {
	now := r.Now()
	return rules.Submission{Reference: "SIM-" + strconv.FormatInt(p.ID, 10), CheckAt: now.Add(r.delay(ctx, p))}, nil
}

func (r *Rail) delay(ctx context.Context, p *rules.Payout) time.Duration {
	if rule, err := r.script(ctx, p); err == nil && rule != nil { // a scripted rule may set its own delay
		return scriptDelay(rule, r.channelDelay(p))
	}
	return r.channelDelay(p)
}

// script is the merchant's first scripted rule that fits p, or nil when none fits.
func (r *Rail) script(ctx context.Context, p *rules.Payout) (*rules.ScriptRule, error) {
	if r.Scripts == nil {
		return nil, nil
	}
	rs, err := r.Scripts(ctx, p.MerchantID)
	if err != nil {
		return nil, err
	}
	return FirstScript(rs, p), nil
}

func (r *Rail) channelDelay(p *rules.Payout) time.Duration {
	if p.Channel == rules.ChannelBatch {
		return r.BatchDelay
	}
	return r.Delay
}

// Outcome settles a payout once its delay has passed since it reached PENDING_BANK.
func (r *Rail) Outcome(ctx context.Context, p *rules.Payout, now time.Time) (rules.Outcome, error) {
	if p.Channel == rules.ChannelCash {
		return rules.Outcome{CheckAt: p.ClaimUntil}, nil // settled by the claim
	}
	if p.Status == rules.StatusProcessed {
		return r.afterPaid(ctx, p, now)
	}
	due := p.StatusChangedAt.Add(r.delay(ctx, p))
	if now.Before(due) {
		return rules.Outcome{CheckAt: due}, nil
	}
	// A scripted rule decides first, before the test cards and the magic endings.
	if rule, err := r.script(ctx, p); err != nil {
		return rules.Outcome{}, err
	} else if rule != nil {
		return scriptOutcome(rule), nil
	}
	if p.Channel == rules.ChannelCard && p.Card != nil {
		if p.Card.BIN == "400000" && p.Card.Last4 == "0002" { // test card 4000000000000002
			return rules.Outcome{Settled: true, Status: rules.StatusRejectedBank, Code: rules.CodeCardDeclined, Note: "the card issuer declined the credit"}, nil
		}
		return rules.Outcome{Settled: true, Status: rules.StatusProcessed}, nil
	}
	end := Ending(p)
	if end == "" {
		return r.settleByDirectory(ctx, p) // processed, unless to a Bre-B key the directory lacks
	}
	o := sandboxEndings[end]
	if o.Status == "" {
		return rules.Outcome{}, nil // held until simulated
	}
	o.Settled = true
	return o, nil
}

// afterPaid is the rail's later word on a PROCESSED payout: the next step of its
// scripted timeline, or the return of the magic ending 9994, due that long after the payout
// was paid. Nothing more (a zero Outcome with no CheckAt) when neither applies, for instance
// because the merchant's rules changed since.
func (r *Rail) afterPaid(ctx context.Context, p *rules.Payout, now time.Time) (rules.Outcome, error) {
	var next rules.Outcome
	var after time.Duration
	rule, err := r.script(ctx, p)
	switch {
	case err != nil:
		return rules.Outcome{}, err
	case rule != nil:
		st, ok := later(rule, rules.StatusProcessed)
		if !ok {
			return rules.Outcome{}, nil
		}
		next = rules.Outcome{Status: st.Status, Code: st.Code, Note: "scripted sandbox timeline"}
		after = time.Duration(st.AfterSeconds) * time.Second
	default:
		end := Ending(p)
		ret, ok := sandboxReturns[end]
		if !ok || p.Channel == rules.ChannelCard {
			return rules.Outcome{}, nil
		}
		next, after = ret, sandboxEndings[end].Then
	}
	if due := p.StatusChangedAt.Add(after); now.Before(due) {
		return rules.Outcome{CheckAt: due}, nil
	}
	next.Settled = true
	return next, nil
}

// settleByDirectory processes a payout, unless it goes to a Bre-B key the directory does
// not know: that one is rejected 4027, the original's code for it.
func (r *Rail) settleByDirectory(ctx context.Context, p *rules.Payout) (rules.Outcome, error) {
	if p.Channel == rules.ChannelRealTimeKey && r.Directory != nil {
		h, err := r.Directory.BreBKey(ctx, string(p.Request.Destination.BankAccount.AccountNumber))
		if err != nil {
			return rules.Outcome{}, err
		}
		if h == nil {
			return rules.Outcome{Settled: true, Status: rules.StatusRejectedBank, Code: rules.CodeDirectoryUnavailable, Note: "the Bre-B directory has no entry for the key"}, nil
		}
	}
	return rules.Outcome{Settled: true, Status: rules.StatusProcessed}, nil
}

// sandboxEndings are the sandbox's deterministic outcomes by the destination's last four
// digits (README "Stages, statuses and the sandbox rails"). A zero
// Outcome holds the payout in PENDING_BANK until it is simulated.
var sandboxEndings = map[string]rules.Outcome{
	"9999": {Status: rules.StatusRejectedBank, Code: rules.CodeBankRejected, Note: "the beneficiary is not the account's owner (sandbox account ending 9999)"},
	"9998": {Status: rules.StatusDenied, Code: rules.CodeDenied, Note: "the payout was denied by the anti-fraud rules (sandbox account ending 9998)"},
	"9997": {},
	"9996": {Status: rules.StatusRejectedBank, Code: rules.CodeAccountNotFound, Note: "the account does not exist (sandbox account ending 9996)"},
	"9995": {Status: rules.StatusRejectedBank, Code: rules.CodeBankOutOfService, Note: "the bank is out of service (sandbox account ending 9995)"},
	// Paid, then returned by the bank three days later (sandboxReturns).
	"9994": {Status: rules.StatusProcessed, Then: sandboxReturnAfter},
}

// sandboxReturnAfter is how long after it was paid a payout to an account ending 9994 is
// returned: three days on the sandbox clock.
const sandboxReturnAfter = 72 * time.Hour

// sandboxReturns are the later words of the endings whose Outcome has a Then.
var sandboxReturns = map[string]rules.Outcome{
	"9994": {Status: rules.StatusReversed, Code: rules.CodeReversed, Note: "the beneficiary's bank returned the money after it was paid (sandbox account ending 9994)"},
}

// Ending is the sandbox trigger a destination carries (a key of sandboxEndings), or "".
func Ending(p *rules.Payout) string {
	ba := p.Request.Destination.BankAccount
	for _, s := range []string{string(ba.AccountNumber), ba.CCI} {
		if len(s) >= 4 {
			if _, ok := sandboxEndings[s[len(s)-4:]]; ok {
				return s[len(s)-4:]
			}
		}
	}
	return ""
}
