package rules_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"payouts/rules"
	"payouts/rules/sandbox"
)

// scripted puts rs as the world's merchant's scripted outcomes on its rail.
func (w *world) scripted(rs []rules.ScriptRule) {
	w.t.Helper()
	if err := rules.CheckScriptRules(rs); err != nil {
		w.t.Fatal(err)
	}
	rail := &sandbox.Rail{Delay: rtDelay, BatchDelay: batchDelay, Now: w.clk.Now,
		Scripts: func(context.Context, string) ([]rules.ScriptRule, error) { return rs, nil }}
	w.lc.Rail = func(rules.Channel) rules.Rail { return rail }
}

// A scripted outcome's timeline, SUCCESS after a minute then REVERSED three days
// later, moves the balance twice and writes the outcome events of each step.
func TestScriptedTimelinePaidThenReturned(t *testing.T) {
	for _, tc := range []struct {
		name     string
		rule     rules.ScriptRule
		example  string
		edit     func(map[string]any)
		paidIn   time.Duration
		returnIn time.Duration
		code     string
	}{
		{"scripted: SUCCESS after 60 s, REVERSED 4025 after 3 days", rules.ScriptRule{
			Match: rules.ScriptMatch{Country: "PER"},
			Outcome: rules.ScriptOutcome{Stage: rules.StageSuccess, AfterSeconds: ptr(int64(60)),
				Then: []rules.ScriptStep{{Status: rules.StatusReversed, Code: rules.CodeAccountNotFound, AfterSeconds: 3 * 86400}}}},
			"per-cci", nil, time.Minute, 72 * time.Hour, rules.CodeAccountNotFound},
		{"scripted: default code 4901", rules.ScriptRule{
			Outcome: rules.ScriptOutcome{Stage: rules.StageSuccess,
				Then: []rules.ScriptStep{{Status: rules.StatusReversed, AfterSeconds: 3600}}}},
			"per-bank-account", nil, batchDelay, time.Hour, rules.CodeReversed},
		{"magic ending 9994: paid, returned 4901 after 3 days", rules.ScriptRule{Match: rules.ScriptMatch{Country: "COL"}, Outcome: rules.ScriptOutcome{Stage: rules.StageRejected}},
			"per-bank-account", sandboxAccount("9994"), batchDelay, 72 * time.Hour, rules.CodeReversed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := rules.AllSettings()
			set.NotificationURL = "https://tienda.pe/hooks"
			w := newWorld(t, set, "", nil)
			w.scripted([]rules.ScriptRule{tc.rule})
			w.fund("PER", "PEN", 100_000_00)
			funded := w.balance("PER", "PEN")
			p := w.create(tc.example, tc.edit)
			w.run()
			w.clk.Add(tc.paidIn)
			w.run()
			got := w.get(p.ID)
			if got.Status != rules.StatusProcessed {
				t.Fatalf("after %v: %s, want PROCESSED", tc.paidIn, got.Status)
			}
			paid := funded
			paid.Available -= p.Amount
			paid.Balance -= p.Amount
			paid.Processed += p.Amount
			if b := w.balance("PER", "PEN"); b != paid {
				t.Fatalf("paid: balance %+v, want %+v", b, paid)
			}
			w.clk.Add(tc.returnIn - time.Second)
			w.run()
			if got := w.get(p.ID); got.Status != rules.StatusProcessed {
				t.Fatalf("a second before the return: %s", got.Status)
			}
			w.clk.Add(time.Second)
			w.run()
			got = w.get(p.ID)
			want := append(slices.Clone(inProgress), rules.StatusProcessed, rules.StatusReversed)
			if !sameStatuses(statuses(got), want...) {
				t.Fatalf("history %v, want %v", statuses(got), want)
			}
			if len(got.Errors) != 1 || got.Errors[0].Code != tc.code {
				t.Fatalf("errors %+v, want %s", got.Errors, tc.code)
			}
			returned := paid
			returned.Available += p.Amount
			returned.Balance += p.Amount
			returned.Reversed += p.Amount
			if b := w.balance("PER", "PEN"); b != returned {
				t.Fatalf("returned: balance %+v, want %+v", b, returned)
			}
			if next, err := w.db.NextDue(context.Background()); err != nil || !next.IsZero() {
				t.Fatalf("the queue after the last step: %v %v, want empty", next, err)
			}
			evs, _, err := w.db.DueEvents(context.Background(), rules.LaneNotify, w.clk.Now(), 10)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, ev := range evs {
				if ev.Kind == rules.EventMerchantNotification {
					ids = append(ids, ev.ID)
				}
			}
			slices.Sort(ids)
			if wantIDs := []string{rules.OutcomeEventID(rules.EventMerchantNotification, p.ID, rules.StatusProcessed),
				rules.OutcomeEventID(rules.EventMerchantNotification, p.ID, rules.StatusReversed)}; !slices.Equal(ids, wantIDs) {
				t.Fatalf("notifications %v, want %v", ids, wantIDs)
			}
		})
	}
}

// A timeline whose rule is gone by the time of its next step ends where it is.
func TestScriptedTimelineRuleRemoved(t *testing.T) {
	w := newWorld(t, rules.AllSettings(), "", nil)
	rs := []rules.ScriptRule{{Outcome: rules.ScriptOutcome{Stage: rules.StageSuccess,
		Then: []rules.ScriptStep{{Status: rules.StatusReversed, AfterSeconds: 60}}}}}
	w.scripted(rs)
	w.fund("PER", "PEN", 100_000_00)
	p := w.create("per-cci", nil)
	w.run()
	w.clk.Add(rtDelay)
	w.run()
	w.scripted(nil)
	w.clk.Add(time.Minute)
	w.run()
	if got := w.get(p.ID); got.Status != rules.StatusProcessed {
		t.Fatalf("%s, want PROCESSED", got.Status)
	}
	if next, err := w.db.NextDue(context.Background()); err != nil || !next.IsZero() {
		t.Fatalf("queue: %v %v, want empty", next, err)
	}
}

func TestCheckScriptTimeline(t *testing.T) {
	step := func(s rules.Status, code string, after int64) rules.ScriptStep {
		return rules.ScriptStep{Status: s, Code: code, AfterSeconds: after}
	}
	cases := []struct {
		name  string
		out   rules.ScriptOutcome
		field string // "" accepted
	}{
		{"SUCCESS then REVERSED", rules.ScriptOutcome{Stage: rules.StageSuccess, Then: []rules.ScriptStep{step(rules.StatusReversed, "4025", 1)}}, ""},
		{"REVERSED needs a PROCESSED payout", rules.ScriptOutcome{Stage: rules.StageRejected, Then: []rules.ScriptStep{step(rules.StatusReversed, "", 60)}}, "rules[0].outcome.then[0].status"},
		{"nothing follows REVERSED", rules.ScriptOutcome{Stage: rules.StageSuccess, Then: []rules.ScriptStep{step(rules.StatusReversed, "", 60), step(rules.StatusProcessed, "", 60)}}, "rules[0].outcome.then[1].status"},
		{"a held payout has no timeline", rules.ScriptOutcome{Stage: rules.StageInProgress, Then: []rules.ScriptStep{step(rules.StatusReversed, "", 60)}}, "rules[0].outcome.then"},
		{"afterSeconds at least 1", rules.ScriptOutcome{Stage: rules.StageSuccess, Then: []rules.ScriptStep{step(rules.StatusReversed, "", 0)}}, "rules[0].outcome.then[0].afterSeconds"},
		{"afterSeconds at most 30 days", rules.ScriptOutcome{Stage: rules.StageSuccess, Then: []rules.ScriptStep{step(rules.StatusReversed, "", 30*86400+1)}}, "rules[0].outcome.then[0].afterSeconds"},
		{"code of the catalogue", rules.ScriptOutcome{Stage: rules.StageSuccess, Then: []rules.ScriptStep{step(rules.StatusReversed, "4999", 60)}}, "rules[0].outcome.then[0].code"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rs := []rules.ScriptRule{{Outcome: tc.out}}
			err := rules.CheckScriptRules(rs)
			if tc.field == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var p *rules.Problem
			if !errors.As(err, &p) {
				t.Fatalf("got %v, want a problem at %s", err, tc.field)
			}
			for _, e := range p.Errors {
				if e.Code == rules.CodeScriptRule && e.Field == tc.field {
					return
				}
			}
			t.Fatalf("got %v, want %s at %s", p, rules.CodeScriptRule, tc.field)
		})
	}
	rs := []rules.ScriptRule{{Outcome: rules.ScriptOutcome{Stage: rules.StageSuccess, Then: []rules.ScriptStep{step(rules.StatusReversed, "", 60)}}}}
	if err := rules.CheckScriptRules(rs); err != nil || rs[0].Outcome.Then[0].Code != rules.CodeReversed {
		t.Fatalf("default code: %v %+v", err, rs[0].Outcome.Then)
	}
}

func ptr[T any](v T) *T { return &v }
