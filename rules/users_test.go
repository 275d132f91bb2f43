package rules_test

import (
	"bytes"
	"encoding/csv"
	"errors"
	"strings"
	"testing"
	"time"

	"payouts/rules"
)

// Roles are read in one place: an operator everything, everywhere; a merchant's users only
// on their merchant, each the actions of its role.
func TestActorCan(t *testing.T) {
	op := rules.AdminActor("admin-token:ab")
	maker := rules.Actor{Principal: "user:u1:1", Role: rules.RoleMaker, MerchantID: "M1"}
	checker := rules.Actor{Principal: "user:u2:1", Role: rules.RoleChecker, MerchantID: "M1"}
	viewer := rules.Actor{Principal: "user:u3:1", Role: rules.RoleViewer, MerchantID: "M1"}
	perms := []rules.Permission{rules.PermView, rules.PermCreate, rules.PermApprove, rules.PermFund, rules.PermManage, rules.PermAdmin}
	for _, tc := range []struct {
		name     string
		a        rules.Actor
		merchant string
		want     []bool // in perms' order
	}{
		{"operator, any merchant", op, "M2", []bool{true, true, true, true, true, true}},
		{"maker, its merchant", maker, "M1", []bool{true, true, false, false, false, false}},
		{"maker, some merchant (its own)", maker, "", []bool{true, true, false, false, false, false}},
		{"maker, another merchant", maker, "M2", []bool{false, false, false, false, false, false}},
		{"checker, its merchant", checker, "M1", []bool{true, false, true, false, false, false}},
		{"viewer, its merchant", viewer, "M1", []bool{true, false, false, false, false, false}},
		{"viewer, another merchant", viewer, "M2", []bool{false, false, false, false, false, false}},
		{"a merchant role without a merchant", rules.Actor{Role: rules.RoleMaker}, "", []bool{false, false, false, false, false, false}},
		{"nobody", rules.Actor{}, "M1", []bool{false, false, false, false, false, false}},
	} {
		for i, p := range perms {
			if got := tc.a.Can(p, tc.merchant); got != tc.want[i] {
				t.Errorf("%s: Can(%d) = %v, want %v", tc.name, p, got, tc.want[i])
			}
		}
	}
}

func TestCheckNewUser(t *testing.T) {
	exists := func(id string) bool { return id == "M1" }
	for _, tc := range []struct {
		name   string
		n      rules.NewUser
		fields []string
	}{
		{"an operator", rules.NewUser{Name: "Ana", Email: "ana@example.com", Role: rules.RoleOperator}, nil},
		{"a viewer of M1", rules.NewUser{Name: "Ana", Email: "ana@example.com", Role: rules.RoleViewer, MerchantID: "M1"}, nil},
		{"everything wrong at once", rules.NewUser{Email: "Ana <ana@example.com>", Role: "boss"}, []string{"name", "email", "role"}},
		{"an operator with a merchant", rules.NewUser{Name: "Ana", Email: "ana@example.com", Role: rules.RoleOperator, MerchantID: "M1"}, []string{"merchantId"}},
		{"a maker without one", rules.NewUser{Name: "Ana", Email: "ana@example.com", Role: rules.RoleMaker}, []string{"merchantId"}},
		{"a checker of no merchant", rules.NewUser{Name: "Ana", Email: "ana@example.com", Role: rules.RoleChecker, MerchantID: "M9"}, []string{"merchantId"}},
		{"a control character in the name", rules.NewUser{Name: "Ana\x07", Email: "ana@example.com", Role: rules.RoleOperator}, []string{"name"}},
		{"no role", rules.NewUser{Name: "Ana", Email: "ana@example.com"}, []string{"role"}},
	} {
		err := rules.CheckNewUser(tc.n, exists)
		var got []string
		var p *rules.Problem
		if errors.As(err, &p) {
			for _, e := range p.Errors {
				if e.Code != rules.CodeUserField {
					t.Errorf("%s: code %s", tc.name, e.Code)
				}
				got = append(got, e.Field)
			}
		} else if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if strings.Join(got, ",") != strings.Join(tc.fields, ",") {
			t.Errorf("%s: fields %v, want %v", tc.name, got, tc.fields)
		}
	}
	if rules.CheckPassword("eleven char") == "" || rules.CheckPassword("twelve chars") != "" {
		t.Error("passwords: 12 characters at least")
	}
}

func TestAuditQueryAndCSV(t *testing.T) {
	f, err := rules.AuditQuery{From: "2026-11-24", To: "2026-11-24", Cursor: "40", Limit: 10}.Filter()
	if err != nil || !f.From.Equal(time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)) || !f.To.Equal(time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)) || f.Before != 40 {
		t.Errorf("a day's filter: %+v %v", f, err)
	}
	for _, q := range []rules.AuditQuery{{From: "yesterday"}, {To: "24/11/2026"}, {Cursor: "abc"}, {Cursor: "-1"}, {Limit: 1001}} {
		var e *rules.Error
		if _, err := q.Filter(); !errors.As(err, &e) || e.Code != rules.CodeAuditQuery || !strings.HasPrefix(e.Field, "query.") {
			t.Errorf("%+v: %v, want 2959 with its parameter", q, err)
		}
	}
	var buf bytes.Buffer
	es := []rules.AuditEntry{{ID: 3, At: time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC), Principal: "user:u1:2", ActorName: "=cmd|' /C calc'!A0",
		Action: "user.create", Detail: []byte(`{"email":"a@b.pe","role":"maker"}`), RemoteAddr: "127.0.0.1", UserAgent: "curl/8"}}
	if err := rules.WriteAuditCSV(rules.NewCSVWriter(&buf), es, true); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil || len(rows) != 2 || strings.Join(rows[0], ",") != strings.Join(rules.AuditCSVHeader, ",") {
		t.Fatalf("CSV: %v %v", rows, err)
	}
	if rows[1][3] != "'=cmd|' /C calc'!A0" || rows[1][7] != `{"email":"a@b.pe","role":"maker"}` || rows[1][1] != "2026-11-25T08:00:00Z" {
		t.Errorf("row %q: a formula is quoted, the detail kept whole", rows[1])
	}
}
