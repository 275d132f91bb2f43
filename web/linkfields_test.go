package web

import (
	"slices"
	"testing"
	"time"

	"payouts/rules"
)

// A link's page asks for the fields the requirements schema asks of each kind, those of
// alternatives included: a Peru bank account is a CCI, or a bank and an account number.
func TestLinkFieldsFollowTheRequirementsSchema(t *testing.T) {
	m := &rules.Merchant{ID: "1"}
	for _, tc := range []struct {
		country string
		kind    int
		want    []string
	}{
		{"COL", 1, []string{"bankCode", "accountNumber"}},
		{"COL", 2, []string{"bankCode", "accountNumber"}},
		{"PER", 1, []string{"cci", "bankCode", "accountNumber"}},
		{"PER", 2, []string{"cci", "bankCode", "accountNumber"}},
		{"PER", 4, []string{"bankCode", "accountNumber"}},
	} {
		fields, err := linkFields(tc.country, tc.kind, m, time.Now())
		var got []string
		for _, f := range fields {
			got = append(got, f.name)
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%s kind %d: %v %v, want %v", tc.country, tc.kind, got, err, tc.want)
		}
	}
}
