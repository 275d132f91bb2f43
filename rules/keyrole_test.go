package rules_test

import (
	"testing"

	"payouts/rules"
)

// TestKeyRoleAllows: each role against each kind of signed operation.
func TestKeyRoleAllows(t *testing.T) {
	cases := []struct {
		method, rest string
		want         rules.Action
		allowed      []rules.KeyRole
	}{
		{"GET", "payouts/7", rules.ActionRead, []rules.KeyRole{rules.KeyRoleFull, rules.KeyRoleMaker, rules.KeyRoleChecker, rules.KeyRoleRead}},
		{"POST", "payouts", rules.ActionCreate, []rules.KeyRole{rules.KeyRoleFull, rules.KeyRoleMaker}},
		{"POST", "payouts/card", rules.ActionCreate, []rules.KeyRole{rules.KeyRoleFull, rules.KeyRoleMaker}},
		{"POST", "", rules.ActionCreate, []rules.KeyRole{rules.KeyRoleFull, rules.KeyRoleMaker}},
		{"POST", "batches", rules.ActionCreate, []rules.KeyRole{rules.KeyRoleFull, rules.KeyRoleMaker}},
		{"POST", "payouts/7/cancel", rules.ActionCreate, []rules.KeyRole{rules.KeyRoleFull, rules.KeyRoleMaker}},
		{"POST", "events/e1/resend", rules.ActionCreate, []rules.KeyRole{rules.KeyRoleFull, rules.KeyRoleMaker}},
		{"POST", "batches/3/approve", rules.ActionApprove, []rules.KeyRole{rules.KeyRoleFull, rules.KeyRoleChecker}},
		{"POST", "payouts/7/simulate", rules.ActionManage, []rules.KeyRole{rules.KeyRoleFull}},
		{"DELETE", "sandbox/inbox", rules.ActionManage, []rules.KeyRole{rules.KeyRoleFull}},
	}
	for _, tc := range cases {
		t.Run(tc.method+" "+tc.rest, func(t *testing.T) {
			if got := rules.ActionOf(tc.method, tc.rest); got != tc.want {
				t.Fatalf("ActionOf = %s, want %s", got, tc.want)
			}
			for _, r := range rules.KeyRoles {
				want := false
				for _, a := range tc.allowed {
					want = want || a == r
				}
				if got := r.Allows(tc.want); got != want {
					t.Errorf("%s.Allows(%s) = %v, want %v", r, tc.want, got, want)
				}
			}
		})
	}
	if _, ok := rules.ParseKeyRole("admin"); ok {
		t.Error("ParseKeyRole accepted admin")
	}
	if r, ok := rules.ParseKeyRole(""); !ok || r != rules.KeyRoleFull {
		t.Errorf("ParseKeyRole(\"\") = %s, %v", r, ok)
	}
}
