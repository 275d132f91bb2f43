package requirements_test

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"payouts/rules"
	"payouts/rules/requirements"
)

var now = time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC)

// A link offers the account types whose requirements schema some body can pass (the Peru
// card's on the card endpoint): rules.LinkKinds, which rules computes from the settings
// without the generator, agrees with the generator for every combination of settings.
func TestLinkKindsHaveSchemas(t *testing.T) {
	for bits := range 1 << 7 {
		s := rules.Settings{PSP: bits&1 != 0, CardPayouts: bits&2 != 0, CardOnFile: bits&4 != 0, CashPayouts: bits&8 != 0,
			RealTimePhoneAccount: bits&16 != 0, RealTimeKey: bits&32 != 0, EmailNotifications: bits&64 != 0}
		m := &rules.Merchant{ID: "1", Settings: s}
		for _, country := range []string{"COL", "PER", "XX"} {
			var want []int
			for k := 1; k <= 5; k++ {
				q := requirements.Query{Country: country, AccountType: strconv.Itoa(k)}
				if country == "PER" && k == rules.LinkCardKind {
					q.Endpoint = rules.EndpointCard
				}
				if country == "COL" && k == 3 {
					continue // cash: its code is mailed at creation, never offered on a link
				}
				if _, err := requirements.For(q, m, now); err == nil {
					want = append(want, k)
				}
			}
			got := slices.Sorted(slices.Values(rules.LinkKinds(country, m)))
			if !slices.Equal(got, want) {
				t.Errorf("%s, settings %+v: LinkKinds %v, account types with a schema %v", country, s, got, want)
			}
		}
	}
}

// BenchmarkRequirements: a destination's schema is generated per request, from the tables.
func BenchmarkRequirements(b *testing.B) {
	m := &rules.Merchant{ID: "1", Settings: rules.AllSettings()}
	for _, q := range []requirements.Query{
		{Country: "PER", AccountType: "4", BankCode: "037"},
		{Country: "COL"},
		{},
	} {
		s, err := requirements.For(q, m, now)
		if err != nil {
			b.Fatal(err)
		}
		raw, _ := json.Marshal(s)
		b.Run(strings.TrimSpace(q.Country+" "+q.AccountType+" "+q.BankCode)+"/"+strconv.Itoa(len(raw))+"B", func(b *testing.B) {
			for b.Loop() {
				s, _ := requirements.For(q, m, now)
				json.Marshal(s)
			}
		})
	}
}
