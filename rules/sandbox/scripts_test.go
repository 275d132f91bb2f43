package sandbox_test

import (
	"context"
	"sync"
	"testing"

	"payouts/rules"
	"payouts/rules/sandbox"
)

func TestFirstScriptMatches(t *testing.T) {
	n := func(v int64) *int64 { return &v }
	rs := []rules.ScriptRule{
		{Match: rules.ScriptMatch{AccountSuffix: "0002"}, Outcome: rules.ScriptOutcome{Stage: rules.StageRejected}},
		{Match: rules.ScriptMatch{Country: "COL", AmountMax: n(100_000)}, Outcome: rules.ScriptOutcome{Stage: rules.StageInProgress}},
		{Match: rules.ScriptMatch{BankCode: "002", AmountMin: n(500)}, Outcome: rules.ScriptOutcome{Stage: rules.StageSuccess}},
	}
	if err := rules.CheckScriptRules(rs); err != nil {
		t.Fatal(err)
	}
	payout := func(country, bank string, amount int64, account, cci string, ch rules.Channel) *rules.Payout {
		p := &rules.Payout{Country: country, BankCode: bank, Amount: amount, Channel: ch}
		p.Request.Destination.BankAccount.AccountNumber = rules.Text(account)
		p.Request.Destination.BankAccount.CCI = cci
		return p
	}
	card := payout("PER", "", 1000, "", "", rules.ChannelCard)
	card.Card = &rules.CardRef{Last4: "0002"}
	cases := []struct {
		name string
		p    *rules.Payout
		want int // index of the rule, -1 none
	}{
		{"suffix on the CCI", payout("PER", "002", 100, "", "00219400000000000002", rules.ChannelRealTime), 0},
		{"suffix on a card's last four", card, 0},
		{"first match wins over a later one", payout("PER", "002", 1000, "123450002", "", rules.ChannelBatch), 0},
		{"country and maximum", payout("COL", "007", 100_000, "123", "", rules.ChannelBatch), 1},
		{"above the maximum", payout("COL", "007", 100_001, "123", "", rules.ChannelBatch), -1},
		{"bank and minimum", payout("PER", "002", 500, "123", "", rules.ChannelBatch), 2},
		{"cash is never scripted", payout("COL", "099", 100, "0002", "", rules.ChannelCash), -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := sandbox.FirstScript(rs, tc.p)
			switch {
			case tc.want < 0 && got != nil:
				t.Fatalf("matched %+v, want none", got.Match)
			case tc.want >= 0 && got != &rs[tc.want]:
				t.Fatalf("matched %v, want rule %d", got, tc.want)
			}
		})
	}
	if rs[0].Outcome.Status != rules.StatusRejectedBank || rs[0].Outcome.Code != rules.CodeBankRejected || rs[1].Outcome.Status != rules.StatusPendingBank {
		t.Fatalf("defaults not filled in: %+v %+v", rs[0].Outcome, rs[1].Outcome)
	}
}

// heldScriptStore keeps one merchant's rules as a store would, one write at a time, and
// holds each write's answer until the test lets it go.
type heldScriptStore struct {
	mu      sync.Mutex
	rs      []rules.ScriptRule
	written chan chan struct{} // each write, once written: closing it answers the write
}

func (s *heldScriptStore) SandboxRules(context.Context, string) ([]rules.ScriptRule, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rs, nil
}

func (s *heldScriptStore) PutSandboxRules(_ context.Context, _ string, rs []rules.ScriptRule) error {
	s.mu.Lock()
	s.rs = rs
	s.mu.Unlock()
	release := make(chan struct{})
	s.written <- release
	<-release
	return nil
}

// Two Puts at once, answered in the other order than the store wrote them: the book then
// reads what the store holds, the later write, not the Put that answered last.
func TestScriptBookEndsWithWhatTheStoreHolds(t *testing.T) {
	s := &heldScriptStore{written: make(chan chan struct{})}
	b := &sandbox.ScriptBook{Store: s}
	rule := func(status rules.Status) []rules.ScriptRule {
		return []rules.ScriptRule{{Outcome: rules.ScriptOutcome{Stage: rules.StageRejected, Status: status, Code: rules.CodeDenied}}}
	}
	// put starts a Put and answers, once the store wrote it, a func that lets the write
	// answer and waits for the Put to end.
	put := func(rs []rules.ScriptRule) func() {
		done := make(chan struct{})
		go func() {
			defer close(done)
			if _, err := b.Put(context.Background(), "7", rs); err != nil {
				t.Error(err)
			}
		}()
		release := <-s.written
		return func() { close(release); <-done }
	}
	first := put(rule(rules.StatusDenied))
	second := put(rule(rules.StatusRejectedBank)) // written last: what the store holds
	second()
	first()
	got, err := b.Rules(context.Background(), "7")
	if err != nil || len(got) != 1 || got[0].Outcome.Status != rules.StatusRejectedBank {
		t.Fatalf("the book reads %+v (%v); the store holds the later write, %s", got, err, rules.StatusRejectedBank)
	}
	// One Put alone is read back without the store.
	put(rule(rules.StatusDenied))()
	s.mu.Lock()
	s.rs = nil // a read of the store would answer nothing
	s.mu.Unlock()
	if got, _ := b.Rules(context.Background(), "7"); len(got) != 1 || got[0].Outcome.Status != rules.StatusDenied {
		t.Errorf("after a Put alone the book reads %+v, want the rules put", got)
	}
}
