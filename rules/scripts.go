package rules

import (
	"context"
	"fmt"
	"strings"
)

// Scripted outcomes: a merchant's ordered list of rules that decide what the
// simulated rail answers, before the magic endings. The first rule whose match fits the
// payout decides; a payout no rule fits goes on to the magic endings and the test cards.
// Cash payouts are not scripted: they settle by their claim.

// ScriptMatch selects payouts; an absent field matches everything, an empty match every payout.
type ScriptMatch struct {
	AccountSuffix string `json:"accountSuffix,omitempty" doc:"The account number, CCI, Bre-B key, phone or card's last digits end with this" maxLength:"34"`
	BankCode      string `json:"bankCode,omitempty" doc:"The payout's bank code (3 digits)"`
	Country       string `json:"country,omitempty" doc:"COL or PER"`
	AmountMin     *int64 `json:"amountMin,omitempty" doc:"At least this amount, minor units"`
	AmountMax     *int64 `json:"amountMax,omitempty" doc:"At most this amount, minor units"`
}

// ScriptOutcome is what the rail answers for a matched payout.
type ScriptOutcome struct {
	Stage        Stage  `json:"stage" doc:"SUCCESS, REJECTED, or IN_PROGRESS (held at PENDING_BANK until simulated)"`
	Status       Status `json:"status,omitempty" doc:"Defaults: PROCESSED, REJECTED_BANK, PENDING_BANK; REJECTED takes REJECTED_BANK, DENIED, ERROR, BUSINESS_ERROR or DATA_ERROR"`
	Code         string `json:"code,omitempty" doc:"For REJECTED: a code of the catalogue (default by status)"`
	AfterSeconds *int64 `json:"afterSeconds,omitempty" doc:"Seconds after the payout reached PENDING_BANK (default: the channel's sandbox delay)"`
	// Then is the outcome's timeline: later steps on the sandbox clock, each a
	// move the lifecycle allows from the status before it, such as SUCCESS then REVERSED
	// three days later (a return after the money was paid, which banks do).
	Then []ScriptStep `json:"then,omitempty" doc:"Later steps on the sandbox clock, in order, each afterSeconds after the step before it (this project's extension): after SUCCESS, REVERSED" maxItems:"5"`
}

// ScriptStep is a later step of a scripted outcome's timeline. It moves the balance and
// notifies as the same move by a real rail would.
type ScriptStep struct {
	Status       Status `json:"status" doc:"The status the payout moves to: REVERSED after SUCCESS" example:"REVERSED"`
	Code         string `json:"code,omitempty" doc:"A code of the catalogue (default: 4901 for REVERSED)" example:"4901"`
	AfterSeconds int64  `json:"afterSeconds" doc:"Seconds after the step before it, on the sandbox clock (1 to 30 days' worth)" example:"259200"`
}

// maxScriptSteps bounds a timeline.
const maxScriptSteps = 5

// ScriptRule is one scripted outcome.
type ScriptRule struct {
	Match   ScriptMatch   `json:"match"`
	Outcome ScriptOutcome `json:"outcome"`
}

// MaxScriptRules bounds a merchant's list.
const MaxScriptRules = 100

// maxScriptDelay bounds afterSeconds: 30 days.
const maxScriptDelay = 30 * 24 * 3600

// scriptStatuses are the statuses a scripted rejection may take: the rail's own and the
// manual ones; NO_BALANCE, EXPIRED and REVERSED have their own paths.
var scriptStatuses = []Status{StatusRejectedBank, StatusDenied, StatusError, StatusBusinessError, StatusDataError}

// CheckScriptRules validates a list and fills in the defaults (status, code), reporting every
// problem at once with its place (rules[i].match.bankCode).
func CheckScriptRules(rs []ScriptRule) error {
	var ps problems
	if len(rs) > MaxScriptRules {
		ps.addf(CodeScriptRule, "rules", len(rs), "at most %d rules", MaxScriptRules)
	}
	for i := range rs {
		at := func(f string) string { return fmt.Sprintf("rules[%d].%s", i, f) }
		m, o := &rs[i].Match, &rs[i].Outcome
		for _, f := range []struct{ name, value string }{{"match.accountSuffix", m.AccountSuffix}, {"match.bankCode", m.BankCode},
			{"match.country", m.Country}, {"outcome.code", o.Code}} {
			if r, bad := badIdentifierRune(f.value); bad {
				ps.add(CodeControlCharacter, at(f.name), identifierMessage(r), f.value)
			}
		}
		if s := m.AccountSuffix; s != "" && (len(s) > 34 || strings.ContainsAny(s, " \t\r\n")) {
			ps.add(CodeScriptRule, at("match.accountSuffix"), "1 to 34 characters without spaces", s)
		}
		if m.BankCode != "" && (len(m.BankCode) != 3 || !IsDigits(m.BankCode)) {
			ps.add(CodeScriptRule, at("match.bankCode"), "a bank code has 3 digits", m.BankCode)
		}
		if m.Country != "" && m.Country != "COL" && m.Country != "PER" {
			ps.add(CodeScriptRule, at("match.country"), "COL or PER", m.Country)
		}
		if m.AmountMin != nil && *m.AmountMin < 0 {
			ps.add(CodeScriptRule, at("match.amountMin"), "must not be negative", *m.AmountMin)
		}
		if m.AmountMin != nil && m.AmountMax != nil && *m.AmountMax < *m.AmountMin {
			ps.add(CodeScriptRule, at("match.amountMax"), "must not be below amountMin", *m.AmountMax)
		}
		if o.AfterSeconds != nil && (*o.AfterSeconds < 0 || *o.AfterSeconds > maxScriptDelay) {
			ps.addf(CodeScriptRule, at("outcome.afterSeconds"), *o.AfterSeconds, "0 to %d seconds", maxScriptDelay)
		}
		switch o.Stage {
		case StageSuccess, StageInProgress:
			want := StatusProcessed
			if o.Stage == StageInProgress {
				want = StatusPendingBank
			}
			if o.Status == "" {
				o.Status = want
			}
			if o.Status != want {
				ps.addf(CodeScriptRule, at("outcome.status"), o.Status, "the stage %s takes only %s", o.Stage, want)
			}
			if o.Code != "" {
				ps.add(CodeScriptRule, at("outcome.code"), "only a REJECTED outcome carries a code", o.Code)
			}
			if o.Stage == StageInProgress && o.AfterSeconds != nil {
				ps.add(CodeScriptRule, at("outcome.afterSeconds"), "a held payout waits for simulate; afterSeconds does not apply", *o.AfterSeconds)
			}
		case StageRejected:
			if o.Status == "" {
				o.Status = StatusRejectedBank
			}
			if !containsStatus(scriptStatuses, o.Status) {
				ps.addf(CodeScriptRule, at("outcome.status"), o.Status, "a scripted rejection is one of %v", scriptStatuses)
			}
			if o.Code == "" {
				o.Code = simulatedCode(o.Status)
			} else if !InCatalogue(o.Code) {
				ps.add(CodeScriptRule, at("outcome.code"), "not a code of the catalogue (README, error catalogue)", o.Code)
			}
		default:
			ps.add(CodeScriptRule, at("outcome.stage"), "SUCCESS, REJECTED or IN_PROGRESS", string(o.Stage))
		}
		checkTimeline(&ps, o, at)
	}
	if p := ps.problem(KindInvalid, "Missing or invalid data", "of the scripted rules"); p != nil {
		return p
	}
	return nil
}

// checkTimeline checks an outcome's later steps: each a move the lifecycle allows
// from the status before it (only a PROCESSED payout is REVERSED), after
// a positive delay, with a code of the catalogue (defaulted by status).
func checkTimeline(ps *problems, o *ScriptOutcome, at func(string) string) {
	if len(o.Then) == 0 {
		return
	}
	if len(o.Then) > maxScriptSteps {
		ps.addf(CodeScriptRule, at("outcome.then"), len(o.Then), "at most %d later steps", maxScriptSteps)
		return
	}
	if o.Stage == StageInProgress {
		ps.add(CodeScriptRule, at("outcome.then"), "a held payout waits for simulate: it has no timeline", nil)
		return
	}
	prev := o.Status
	for j := range o.Then {
		st := &o.Then[j]
		f := func(name string) string { return at(fmt.Sprintf("outcome.then[%d].%s", j, name)) }
		if st.AfterSeconds < 1 || st.AfterSeconds > maxScriptDelay {
			ps.addf(CodeScriptRule, f("afterSeconds"), st.AfterSeconds, "1 to %d seconds after the step before it", maxScriptDelay)
		}
		if !CanMove(prev, st.Status) {
			ps.addf(CodeScriptRule, f("status"), string(st.Status), "a %s payout cannot move to %q (only a PROCESSED payout is then REVERSED)", prev, st.Status)
		}
		if st.Code == "" {
			st.Code = simulatedCode(st.Status)
		} else if !InCatalogue(st.Code) {
			ps.add(CodeScriptRule, f("code"), "not a code of the catalogue (README, error catalogue)", st.Code)
		}
		prev = st.Status
	}
}

func containsStatus(list []Status, s Status) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// InCatalogue reports whether code is one of the catalogue's.
func InCatalogue(code string) bool {
	for _, c := range Catalogue {
		if c.Code == code {
			return true
		}
	}
	return false
}

// Matches reports whether the rule's match fits p.
func (m ScriptMatch) Matches(p *Payout) bool {
	if m.Country != "" && m.Country != p.Country {
		return false
	}
	if m.BankCode != "" && m.BankCode != p.BankCode {
		return false
	}
	if m.AmountMin != nil && p.Amount < *m.AmountMin {
		return false
	}
	if m.AmountMax != nil && p.Amount > *m.AmountMax {
		return false
	}
	if m.AccountSuffix == "" {
		return true
	}
	ba := p.Request.Destination.BankAccount
	candidates := []string{string(ba.AccountNumber), ba.CCI}
	if p.Card != nil {
		candidates = append(candidates, p.Card.Last4)
	}
	for _, s := range candidates {
		if s != "" && strings.HasSuffix(s, m.AccountSuffix) {
			return true
		}
	}
	return false
}

// ScriptStore keeps each merchant's scripted rules.
type ScriptStore interface {
	SandboxRules(ctx context.Context, merchantID string) ([]ScriptRule, error)
	PutSandboxRules(ctx context.Context, merchantID string, rs []ScriptRule) error
}
