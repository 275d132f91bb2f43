package api

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"payouts/rules"
	"payouts/rules/sandbox"
)

// Sandbox holds the admin powers of the sandbox. Enabled is false with
// --sandbox=false: every operation then answers 403 (2060).
type Sandbox struct {
	Enabled bool
	Clock   *sandbox.Clock
	Scripts *sandbox.ScriptBook
	// Directory is the simulated directory, whose entries the admin puts.
	Directory *sandbox.Directory
	// Merchant reads a merchant (ErrNotFound when there is none).
	Merchant func(ctx context.Context, id string) (*rules.Merchant, error)
}

// merchantExists answers 404 (2070) for an unknown merchant.
func (sb Sandbox) merchantExists(ctx context.Context, id string) error {
	if _, err := sb.Merchant(ctx, id); err != nil {
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

func clockView(c *sandbox.Clock) ClockView {
	off := c.Offset()
	real := c.Real()
	return ClockView{Now: wireTime(real.Add(off)), RealNow: wireTime(real), Offset: off.String(), OffsetSeconds: int64(off / time.Second)}
}

type clockOut struct {
	Body ClockView
}

// registerSandbox adds the sandbox's admin operations.
func registerSandbox(a huma.API, sb Sandbox) {
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
		d, err := sandbox.ParseAdvance(in.Body.Advance)
		if err != nil {
			return nil, err
		}
		if err := sb.Clock.Advance(ctx, d); err != nil {
			return nil, err
		}
		rules.Audit(ctx, "sandbox.clock.advance", "sandbox:clock", "", map[string]string{"advance": in.Body.Advance})
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
		if err := sb.Clock.Reset(ctx); err != nil {
			return nil, err
		}
		rules.Audit(ctx, "sandbox.clock.reset", "sandbox:clock", "", nil)
		return &clockOut{Body: clockView(sb.Clock)}, nil
	})

	registerScripts(a, sb)
}

func registerScripts(a huma.API, sb Sandbox) {
	const doc = "Scripted outcomes of the simulated rail for one merchant (sandbox only): an ordered list of " +
		"{match: {accountSuffix?, bankCode?, country?, amountMin?, amountMax?}, outcome: {stage, status?, code?, afterSeconds?, then?}}. " +
		"outcome.then (this project's extension) is a timeline of later steps on the sandbox clock, each afterSeconds " +
		"after the one before, such as SUCCESS then REVERSED three days later with a code of the catalogue: each step moves the " +
		"balance and notifies as a real one would. " +
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
		if err := sb.merchantExists(ctx, in.ID); err != nil {
			return nil, err
		}
		rs, err := sb.Scripts.Put(ctx, in.ID, in.Body.Rules)
		if err != nil {
			return nil, err
		}
		rules.Audit(ctx, "sandbox.scripts.put", "merchant:"+in.ID, in.ID, map[string]int{"rules": len(rs)})
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
		if err := sb.merchantExists(ctx, in.ID); err != nil {
			return nil, err
		}
		rs, err := sb.Scripts.Rules(ctx, in.ID)
		if err != nil {
			return nil, err
		}
		return &rulesOut{Body: ScriptRulesBody{Rules: rs}}, nil
	})

	markTimeline(a)
	registerDirectory(a, sb)
}

// markTimeline marks outcome.then in the OpenAPI document as this project's extension, with
// an example: the rules package, which declares it, knows nothing of huma.
func markTimeline(a huma.API) {
	out := a.OpenAPI().Components.Schemas.Map()["ScriptOutcome"]
	if out == nil || out.Properties["then"] == nil {
		return
	}
	then := out.Properties["then"]
	then.Extensions = map[string]any{"x-payouts-extension": true}
	then.Examples = []any{[]map[string]any{{"status": "REVERSED", "code": rules.CodeAccountNotFound, "afterSeconds": 3 * 24 * 3600}}}
}

// DirectoryEntryView is an entry of the simulated directory as the admin API shows it.
type DirectoryEntryView struct {
	Country  string               `json:"country"`
	ID       string               `json:"id" doc:"The Peru cellphone or the Bre-B key"`
	Source   string               `json:"source" enum:"admin,default" doc:"admin: an entry put here; default: the deterministic answer"`
	Entities []rules.WalletEntity `json:"entities,omitempty"`
	Holder   *rules.BreBHolder    `json:"holder,omitempty"`
	// HolderName is a Peru cellphone's wallets' holder, shown masked on a payout link's review.
	HolderName string `json:"holderName,omitempty" doc:"PER: the holder of the cellphone's wallets, in full"`
	Absent     bool   `json:"absent,omitempty" doc:"COL: the directory knows no such key"`
}

func registerDirectory(a huma.API, sb Sandbox) {
	const doc = "The simulated directory (sandbox only) behind the Peru beneficiary lookup and the Bre-B key lookup and " +
		"rail. PER/{phone}: {\"entities\":[{\"entityBrand\",\"status\"}],\"holderName\"} (an empty list: no entity, PV002; " +
		"the holder is shown masked on a payout link's review). COL/{key}: " +
		"{\"holderName\",\"bankCode\",\"accountType\"} or {\"absent\":true} (Bre-B payouts to it are rejected, 4027). " +
		"An entry wins over the deterministic answer (README, Sandbox); DELETE returns to it."
	type pathIn struct {
		Country string `path:"country" enum:"PER,COL"`
		ID      string `path:"id" doc:"The Peru cellphone or the Bre-B key (URL-escaped)"`
	}
	type putIn struct {
		Country string `path:"country" enum:"PER,COL"`
		ID      string `path:"id"`
		Body    rules.DirectoryEntry
	}
	type viewOut struct {
		Body DirectoryEntryView
	}
	view := func(ctx context.Context, country, id string) (*viewOut, error) {
		v := DirectoryEntryView{Country: country, ID: id, Source: "default"}
		if _, err := sb.Directory.Store.DirectoryEntry(ctx, country, id); err == nil {
			v.Source = "admin"
		} else if !errors.Is(err, rules.ErrNotFound) {
			return nil, err
		}
		if country == "PER" {
			es, err := sb.Directory.PeruEntities(ctx, id)
			if err != nil {
				return nil, err
			}
			v.Entities = es
			if v.HolderName, err = sb.Directory.PeruHolder(ctx, id); err != nil {
				return nil, err
			}
		} else {
			h, err := sb.Directory.BreBKey(ctx, id)
			if err != nil {
				return nil, err
			}
			v.Holder, v.Absent = h, h == nil
		}
		return &viewOut{Body: v}, nil
	}
	off := func() bool { return !sb.Enabled || sb.Directory == nil }
	huma.Register(a, huma.Operation{
		OperationID: "sandbox-put-directory-entry", Method: http.MethodPut, Path: "/admin/v1/sandbox/directory/{country}/{id}",
		Summary: "Put an entry in the simulated directory", Description: doc,
		Tags: []string{"Sandbox"}, Security: adminSecurity, Errors: []int{400, 401, 403},
	}, func(ctx context.Context, in *putIn) (*viewOut, error) {
		if off() {
			return nil, sandboxOff()
		}
		if err := rules.CheckDirectoryEntry(in.Country, in.ID, &in.Body); err != nil {
			return nil, err
		}
		if err := sb.Directory.Store.PutDirectoryEntry(ctx, in.Country, in.ID, in.Body); err != nil {
			return nil, err
		}
		rules.Audit(ctx, "sandbox.directory.put", "directory:"+in.Country+"/"+in.ID, "", in.Body)
		return view(ctx, in.Country, in.ID)
	})
	huma.Register(a, huma.Operation{
		OperationID: "sandbox-get-directory-entry", Method: http.MethodGet, Path: "/admin/v1/sandbox/directory/{country}/{id}",
		Summary: "What the simulated directory answers for a phone or key", Description: doc,
		Tags: []string{"Sandbox"}, Security: adminSecurity, Errors: []int{401, 403},
	}, func(ctx context.Context, in *pathIn) (*viewOut, error) {
		if off() {
			return nil, sandboxOff()
		}
		return view(ctx, in.Country, in.ID)
	})
	huma.Register(a, huma.Operation{
		OperationID: "sandbox-delete-directory-entry", Method: http.MethodDelete, Path: "/admin/v1/sandbox/directory/{country}/{id}",
		Summary: "Remove an entry: the deterministic answer again", Description: doc,
		Tags: []string{"Sandbox"}, Security: adminSecurity, Errors: []int{401, 403},
	}, func(ctx context.Context, in *pathIn) (*viewOut, error) {
		if off() {
			return nil, sandboxOff()
		}
		if err := sb.Directory.Store.DeleteDirectoryEntry(ctx, in.Country, in.ID); err != nil {
			return nil, err
		}
		rules.Audit(ctx, "sandbox.directory.delete", "directory:"+in.Country+"/"+in.ID, "", nil)
		return view(ctx, in.Country, in.ID)
	})
}
