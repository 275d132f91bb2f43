package rules

import (
	"context"
	"strconv"
	"time"
)

// Rail moves money to a destination. A real connector (an ACH file, a Bre-B or CCE
// gateway, VISA Direct) implements it; this binary ships only SimulatedRail. Both calls are
// made outside any database transaction.
type Rail interface {
	// Submit hands a payout to the rail and says when to ask for its outcome.
	Submit(ctx context.Context, p *Payout) (Submission, error)
	// Outcome asks what became of a submitted payout.
	Outcome(ctx context.Context, p *Payout, now time.Time) (Outcome, error)
}

// Submission is the rail's receipt.
type Submission struct {
	Reference string
	CheckAt   time.Time
}

// Outcome is what the rail says of a submitted payout. Until Settled, CheckAt says when to
// ask again; a zero CheckAt waits for an outside event (a cash claim, a sandbox simulate).
type Outcome struct {
	Settled bool
	Status  Status // PROCESSED, or a REJECTED status
	Code    string
	Note    string
	CheckAt time.Time
	// Then, on a settled outcome, says the rail has a later word on the payout this long
	// after it (a scripted return after the money was paid, for one); zero: none. The
	// lifecycle asks Outcome again then, with the payout in its settled status.
	Then time.Duration
}

// SimulatedRail is the sandbox rail: real-time channels settle after
// Delay, batch after BatchDelay, cash waits for its claim. Outcomes are deterministic from
// the destination (sandboxEndings): an account number, CCI, key or phone ending in 9999 is
// rejected by the bank (4001), 9998 is denied (3007), 9997 stays PENDING_BANK until
// simulated, 9996 is an account that does not exist (4025), 9995 a bank out of service
// (4008), 9994 is paid and then returned three days later (REVERSED, 4901); the card 4000000000000002 is declined (4032). It keeps no state: everything it needs is on the
// payout, so a restart loses nothing.
type SimulatedRail struct {
	Delay      time.Duration
	BatchDelay time.Duration
	Now        func() time.Time

	// Scripts returns a merchant's scripted outcomes (scripts.go): the first
	// rule that fits a payout decides, before the magic endings. Nil: none.
	Scripts func(ctx context.Context, merchantID string) ([]ScriptRule, error)
	// Directory knows the Bre-B keys (directory.go): a key payout to a key it
	// does not know is rejected (4027). Nil: every key is known.
	Directory Directory
}

// Submit accepts every payout.
func (r *SimulatedRail) Submit(ctx context.Context, p *Payout) (Submission, error) {
	now := r.Now()
	return Submission{Reference: "SIM-" + strconv.FormatInt(p.ID, 10), CheckAt: now.Add(r.delay(ctx, p))}, nil
}

func (r *SimulatedRail) delay(ctx context.Context, p *Payout) time.Duration {
	if rule, err := r.script(ctx, p); err == nil && rule != nil { // a scripted rule may set its own delay
		return rule.delay(r.channelDelay(p))
	}
	return r.channelDelay(p)
}

// script is the merchant's first scripted rule that fits p, or nil when none fits.
func (r *SimulatedRail) script(ctx context.Context, p *Payout) (*ScriptRule, error) {
	if r.Scripts == nil {
		return nil, nil
	}
	rs, err := r.Scripts(ctx, p.MerchantID)
	if err != nil {
		return nil, err
	}
	return FirstScript(rs, p), nil
}

func (r *SimulatedRail) channelDelay(p *Payout) time.Duration {
	if p.Channel == ChannelBatch {
		return r.BatchDelay
	}
	return r.Delay
}

// Outcome settles a payout once its delay has passed since it reached PENDING_BANK.
func (r *SimulatedRail) Outcome(ctx context.Context, p *Payout, now time.Time) (Outcome, error) {
	if p.Channel == ChannelCash {
		return Outcome{CheckAt: p.ClaimUntil}, nil // settled by the claim
	}
	if p.Status == StatusProcessed {
		return r.afterPaid(ctx, p, now)
	}
	due := p.StatusChangedAt.Add(r.delay(ctx, p))
	if now.Before(due) {
		return Outcome{CheckAt: due}, nil
	}
	// A scripted rule decides first, before the test cards and the magic endings.
	if rule, err := r.script(ctx, p); err != nil {
		return Outcome{}, err
	} else if rule != nil {
		return rule.outcome(), nil
	}
	if p.Channel == ChannelCard && p.Card != nil {
		if p.Card.BIN == "400000" && p.Card.Last4 == "0002" { // test card 4000000000000002
			return Outcome{Settled: true, Status: StatusRejectedBank, Code: CodeCardDeclined, Note: "the card issuer declined the credit"}, nil
		}
		return Outcome{Settled: true, Status: StatusProcessed}, nil
	}
	end := SandboxEnding(p)
	if end == "" {
		return r.settleByDirectory(ctx, p) // processed, unless to a Bre-B key the directory lacks
	}
	o := sandboxEndings[end]
	if o.Status == "" {
		return Outcome{}, nil // held until simulated
	}
	o.Settled = true
	return o, nil
}

// afterPaid is the rail's later word on a PROCESSED payout: the next step of its
// scripted timeline, or the return of the magic ending 9994, due that long after the payout
// was paid. Nothing more (a zero Outcome with no CheckAt) when neither applies, for instance
// because the merchant's rules changed since.
func (r *SimulatedRail) afterPaid(ctx context.Context, p *Payout, now time.Time) (Outcome, error) {
	var next Outcome
	var after time.Duration
	rule, err := r.script(ctx, p)
	switch {
	case err != nil:
		return Outcome{}, err
	case rule != nil:
		st, ok := rule.later(StatusProcessed)
		if !ok {
			return Outcome{}, nil
		}
		next = Outcome{Status: st.Status, Code: st.Code, Note: "scripted sandbox timeline"}
		after = time.Duration(st.AfterSeconds) * time.Second
	default:
		end := SandboxEnding(p)
		ret, ok := sandboxReturns[end]
		if !ok || p.Channel == ChannelCard {
			return Outcome{}, nil
		}
		next, after = ret, sandboxEndings[end].Then
	}
	if due := p.StatusChangedAt.Add(after); now.Before(due) {
		return Outcome{CheckAt: due}, nil
	}
	next.Settled = true
	return next, nil
}

// settleByDirectory processes a payout, unless it goes to a Bre-B key the directory does
// not know: that one is rejected 4027, the original's code for it.
func (r *SimulatedRail) settleByDirectory(ctx context.Context, p *Payout) (Outcome, error) {
	if p.Channel == ChannelRealTimeKey && r.Directory != nil {
		h, err := r.Directory.BreBKey(ctx, string(p.Request.Destination.BankAccount.AccountNumber))
		if err != nil {
			return Outcome{}, err
		}
		if h == nil {
			return Outcome{Settled: true, Status: StatusRejectedBank, Code: CodeDirectoryUnavailable, Note: "the Bre-B directory has no entry for the key"}, nil
		}
	}
	return Outcome{Settled: true, Status: StatusProcessed}, nil
}

// sandboxEndings are the sandbox's deterministic outcomes by the destination's last four
// digits (README "Stages, statuses and the sandbox rails"). A zero
// Outcome holds the payout in PENDING_BANK until it is simulated.
var sandboxEndings = map[string]Outcome{
	"9999": {Status: StatusRejectedBank, Code: CodeBankRejected, Note: "the beneficiary is not the account's owner (sandbox account ending 9999)"},
	"9998": {Status: StatusDenied, Code: CodeDenied, Note: "the payout was denied by the anti-fraud rules (sandbox account ending 9998)"},
	"9997": {},
	"9996": {Status: StatusRejectedBank, Code: CodeAccountNotFound, Note: "the account does not exist (sandbox account ending 9996)"},
	"9995": {Status: StatusRejectedBank, Code: CodeBankOutOfService, Note: "the bank is out of service (sandbox account ending 9995)"},
	// Paid, then returned by the bank three days later (sandboxReturns).
	"9994": {Status: StatusProcessed, Then: sandboxReturnAfter},
}

// sandboxReturnAfter is how long after it was paid a payout to an account ending 9994 is
// returned: three days on the sandbox clock.
const sandboxReturnAfter = 72 * time.Hour

// sandboxReturns are the later words of the endings whose Outcome has a Then.
var sandboxReturns = map[string]Outcome{
	"9994": {Status: StatusReversed, Code: CodeReversed, Note: "the beneficiary's bank returned the money after it was paid (sandbox account ending 9994)"},
}

// SandboxEnding is the sandbox trigger a destination carries (a key of sandboxEndings), or "".
func SandboxEnding(p *Payout) string {
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

// UnconnectedRail is the rail of a server run with --sandbox=false: this binary ships no
// real connector, so every submission fails and the payout waits in WAITING_ROUTING,
// retried, until one is plugged in.
type UnconnectedRail struct{}

var errNoConnector = errorString("no rail connector is configured: run with --sandbox or plug a connector in")

type errorString string

func (e errorString) Error() string { return string(e) }

// Submit always fails.
func (UnconnectedRail) Submit(context.Context, *Payout) (Submission, error) {
	return Submission{}, errNoConnector
}

// Outcome always fails.
func (UnconnectedRail) Outcome(context.Context, *Payout, time.Time) (Outcome, error) {
	return Outcome{}, errNoConnector
}
