package sandbox_test

import (
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
