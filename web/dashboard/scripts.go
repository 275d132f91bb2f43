package dashboard

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"payouts/rules"
	"payouts/templates"
)

// scriptRows shows a merchant's scripted outcomes, each with its timeline.
func scriptRows(rs []rules.ScriptRule, w templates.Words) []templates.ScriptRow {
	rows := make([]templates.ScriptRow, 0, len(rs))
	for i, r := range rs {
		var match []string
		m := r.Match
		for _, kv := range [][2]string{{"accountSuffix", m.AccountSuffix}, {"bankCode", m.BankCode}, {"country", m.Country}} {
			if kv[1] != "" {
				match = append(match, kv[0]+"="+kv[1])
			}
		}
		if m.AmountMin != nil {
			match = append(match, "amountMin="+strconv.FormatInt(*m.AmountMin, 10))
		}
		if m.AmountMax != nil {
			match = append(match, "amountMax="+strconv.FormatInt(*m.AmountMax, 10))
		}
		if len(match) == 0 {
			match = []string{w.S("sc.any")}
		}
		o := r.Outcome
		out := string(o.Stage) + "/" + string(o.Status)
		if o.Code != "" {
			out += " " + o.Code
		}
		if o.AfterSeconds != nil {
			out += fmt.Sprintf(" · %v", time.Duration(*o.AfterSeconds)*time.Second)
		}
		var then []string
		for _, st := range o.Then {
			then = append(then, fmt.Sprintf("+%v → %s %s", time.Duration(st.AfterSeconds)*time.Second, st.Status, st.Code))
		}
		rows = append(rows, templates.ScriptRow{N: strconv.Itoa(i + 1), Match: strings.Join(match, ", "), Outcome: out, Timeline: strings.Join(then, "; ")})
	}
	return rows
}
