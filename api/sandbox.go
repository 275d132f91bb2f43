package api

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"payouts/rules"
)

// Sandbox holds the admin powers of the sandbox (issue 15). Enabled is false with
// --sandbox=false: every operation then answers 403 (2060).
type Sandbox struct {
	Enabled bool
	Clock   *rules.SandboxClock
	Scripts *rules.ScriptBook
	// Merchant reads a merchant (ErrNotFound when there is none).
	Merchant func(id string) (*rules.Merchant, error)
}

// merchantExists answers 404 (2070) for an unknown merchant.
func (sb Sandbox) merchantExists(id string) error {
	if _, err := sb.Merchant(id); err != nil {
		if errors.Is(err, rules.ErrNotFound) {
			return rules.Errorf(rules.KindNotFound, rules.CodeMerchantNotFound, "merchant %s not found", id)
		}
		return err
	}
	return nil
}

// ScriptRulesBody is a merchant's ordered list of scripted outcomes.
type ScriptRulesBody struct {
	Rules []rules.ScriptRule `json:"rules" doc:"In order: the first rule whose match fits a payout decides the simulated rail's answer"`
}

func sandboxOff() error {
	return rules.Errorf(rules.KindForbidden, rules.CodeSandboxOff, "sandbox controls are off: the server runs with --sandbox=false")
}

// ClockView is the sandbox clock as the admin API shows it.
type ClockView struct {
	Now           string `json:"now" doc:"The service's time (RFC 3339, UTC)"`
	RealNow       string `json:"realNow" doc:"Real time"`
	Offset        string `json:"offset" doc:"How far the service's clock runs ahead, as a Go duration"`
	OffsetSeconds int64  `json:"offsetSeconds"`
}

func clockView(c *rules.SandboxClock) ClockView {
	off := c.Offset()
	real := c.Real()
	return ClockView{Now: wireTime(real.Add(off)), RealNow: wireTime(real), Offset: off.String(), OffsetSeconds: int64(off / time.Second)}
}

type clockOut struct {
	Body ClockView
}

// RegisterSandbox adds the sandbox's admin operations.
func RegisterSandbox(a huma.API, sb Sandbox) {
	const clockDoc = "The service's clock in the sandbox: real time plus an offset that only grows. Cash claims and card " +
		"sessions expire, settlements land and notification retries fall due by it; signatures and tokens keep real time. " +
		"The offset is kept in the database: a restart keeps it. With --sandbox=false the offset is ignored and these answer 403."
	huma.Register(a, huma.Operation{
		OperationID: "sandbox-get-clock", Method: http.MethodGet, Path: "/admin/v1/sandbox/clock",
		Summary: "Read the sandbox clock", Description: clockDoc, Tags: []string{"Sandbox"}, Security: adminSecurity,
		Errors: []int{401, 403},
	}, func(ctx context.Context, _ *struct{}) (*clockOut, error) {
		if !sb.Enabled || sb.Clock == nil {
			return nil, sandboxOff()
		}
		return &clockOut{Body: clockView(sb.Clock)}, nil
	})

	type advanceIn struct {
		Body struct {
			Advance string `json:"advance" doc:"A positive Go duration (\"90m\", \"48h\") or whole days (\"8d\")" example:"48h"`
		}
	}
	huma.Register(a, huma.Operation{
		OperationID: "sandbox-advance-clock", Method: http.MethodPost, Path: "/admin/v1/sandbox/clock",
		Summary: "Move the sandbox clock forward", Description: clockDoc + " Never back: a zero or negative advance is 400 (" + rules.CodeClockAdvance + ").",
		Tags: []string{"Sandbox"}, Security: adminSecurity, Errors: []int{400, 401, 403},
	}, func(ctx context.Context, in *advanceIn) (*clockOut, error) {
		if !sb.Enabled || sb.Clock == nil {
			return nil, sandboxOff()
		}
		d, err := rules.ParseAdvance(in.Body.Advance)
		if err != nil {
			return nil, err
		}
		if err := sb.Clock.Advance(d); err != nil {
			return nil, err
		}
		return &clockOut{Body: clockView(sb.Clock)}, nil
	})

	huma.Register(a, huma.Operation{
		OperationID: "sandbox-reset-clock", Method: http.MethodDelete, Path: "/admin/v1/sandbox/clock",
		Summary: "Return the sandbox clock to real time", Description: clockDoc,
		Tags: []string{"Sandbox"}, Security: adminSecurity, Errors: []int{401, 403},
	}, func(ctx context.Context, _ *struct{}) (*clockOut, error) {
		if !sb.Enabled || sb.Clock == nil {
			return nil, sandboxOff()
		}
		if err := sb.Clock.Reset(); err != nil {
			return nil, err
		}
		return &clockOut{Body: clockView(sb.Clock)}, nil
	})

	registerScripts(a, sb)
}

func registerScripts(a huma.API, sb Sandbox) {
	const doc = "Scripted outcomes of the simulated rail for one merchant (sandbox only): an ordered list of " +
		"{match: {accountSuffix?, bankCode?, country?, amountMin?, amountMax?}, outcome: {stage, status?, code?, afterSeconds?}}. " +
		"The first rule that fits a payout decides, before the magic endings and the test cards; cash payouts settle by their claim " +
		"and are not scripted. A rejection's code must be in the error catalogue. PUT replaces the whole list; an empty list removes it."
	type idIn struct {
		ID string `path:"id"`
	}
	type putIn struct {
		ID   string `path:"id"`
		Body ScriptRulesBody
	}
	type rulesOut struct {
		Body ScriptRulesBody
	}
	huma.Register(a, huma.Operation{
		OperationID: "sandbox-put-rules", Method: http.MethodPut, Path: "/admin/v1/merchants/{id}/sandbox/rules",
		Summary: "Script the simulated rail's outcomes for a merchant", Description: doc,
		Tags: []string{"Sandbox"}, Security: adminSecurity, Errors: []int{400, 401, 403, 404},
	}, func(ctx context.Context, in *putIn) (*rulesOut, error) {
		if !sb.Enabled || sb.Scripts == nil {
			return nil, sandboxOff()
		}
		if err := sb.merchantExists(in.ID); err != nil {
			return nil, err
		}
		rs, err := sb.Scripts.Put(in.ID, in.Body.Rules)
		if err != nil {
			return nil, err
		}
		return &rulesOut{Body: ScriptRulesBody{Rules: rs}}, nil
	})
	huma.Register(a, huma.Operation{
		OperationID: "sandbox-get-rules", Method: http.MethodGet, Path: "/admin/v1/merchants/{id}/sandbox/rules",
		Summary: "Read a merchant's scripted outcomes", Description: doc,
		Tags: []string{"Sandbox"}, Security: adminSecurity, Errors: []int{401, 403, 404},
	}, func(ctx context.Context, in *idIn) (*rulesOut, error) {
		if !sb.Enabled || sb.Scripts == nil {
			return nil, sandboxOff()
		}
		if err := sb.merchantExists(in.ID); err != nil {
			return nil, err
		}
		rs, err := sb.Scripts.Rules(in.ID)
		if err != nil {
			return nil, err
		}
		return &rulesOut{Body: ScriptRulesBody{Rules: rs}}, nil
	})
}
