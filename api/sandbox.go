package api

import (
	"context"
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
}
