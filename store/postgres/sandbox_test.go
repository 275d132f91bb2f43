package postgres

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"payouts/rules"
)

func TestSandboxClockOffset(t *testing.T) {
	db := openRest(t)
	if off, err := db.SandboxClockOffset(context.Background()); off != 0 || err != nil {
		t.Fatalf("no offset: %v %v", off, err)
	}
	for _, want := range []time.Duration{36*time.Hour + 5, -time.Second} {
		if err := db.PutSandboxClockOffset(context.Background(), want); err != nil {
			t.Fatal(err)
		}
		if off, err := db.SandboxClockOffset(context.Background()); off != want || err != nil {
			t.Errorf("offset %v %v, want %v", off, err, want)
		}
	}
}

func TestSandboxRulesByMerchant(t *testing.T) {
	db := openRest(t)
	if rs, err := db.SandboxRules(context.Background(), "m1"); err != nil || rs == nil || len(rs) != 0 {
		t.Fatalf("never set: %#v %v; want an empty list", rs, err)
	}
	least := int64(500)
	rs := []rules.ScriptRule{
		{Match: rules.ScriptMatch{AccountSuffix: "99", AmountMin: &least}, Outcome: rules.ScriptOutcome{Stage: rules.StageRejected, Status: rules.StatusDenied, Code: "1201"}},
		{Outcome: rules.ScriptOutcome{Stage: rules.StageSuccess}},
	}
	if err := db.PutSandboxRules(context.Background(), "m1", rs); err != nil {
		t.Fatal(err)
	}
	if got, err := db.SandboxRules(context.Background(), "m1"); err != nil || !reflect.DeepEqual(got, rs) {
		t.Errorf("rules %+v %v", got, err)
	}
	if got, _ := db.SandboxRules(context.Background(), "m2"); len(got) != 0 {
		t.Errorf("another merchant's rules: %+v", got)
	}
	if err := db.PutSandboxRules(context.Background(), "m1", rs[1:]); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.SandboxRules(context.Background(), "m1"); !reflect.DeepEqual(got, rs[1:]) {
		t.Errorf("replaced rules %+v", got)
	}
}

func TestDirectoryEntries(t *testing.T) {
	db := openRest(t)
	if _, err := db.DirectoryEntry(context.Background(), "PER", "987654321"); !errors.Is(err, rules.ErrNotFound) {
		t.Fatalf("no entry: %v", err)
	}
	e := rules.DirectoryEntry{Entities: []rules.WalletEntity{{EntityBrand: "Yape", Status: "AVAILABLE"}}, HolderName: "Ana"}
	if err := db.PutDirectoryEntry(context.Background(), "PER", "987654321", e); err != nil {
		t.Fatal(err)
	}
	if got, err := db.DirectoryEntry(context.Background(), "PER", "987654321"); err != nil || !reflect.DeepEqual(*got, e) {
		t.Errorf("entry %+v %v", got, err)
	}
	if _, err := db.DirectoryEntry(context.Background(), "COL", "987654321"); !errors.Is(err, rules.ErrNotFound) {
		t.Errorf("another country's entry: %v", err)
	}
	if err := db.PutDirectoryEntry(context.Background(), "PER", "987654321", rules.DirectoryEntry{Absent: true}); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.DirectoryEntry(context.Background(), "PER", "987654321"); got == nil || !got.Absent {
		t.Errorf("replaced entry %+v", got)
	}
	for range 2 {
		if err := db.DeleteDirectoryEntry(context.Background(), "PER", "987654321"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.DirectoryEntry(context.Background(), "PER", "987654321"); !errors.Is(err, rules.ErrNotFound) {
		t.Errorf("deleted entry: %v", err)
	}
}

func TestIntegrationUsers(t *testing.T) {
	db := openRest(t)
	if _, err := db.IntegrationUser(context.Background(), "u1"); !errors.Is(err, rules.ErrNotFound) {
		t.Fatalf("no user: %v", err)
	}
	if _, err := db.IntegrationUserOf(context.Background(), "m1"); !errors.Is(err, rules.ErrNotFound) {
		t.Fatalf("no user of m1: %v", err)
	}
	u1 := &rules.IntegrationUser{User: "u1", MerchantID: "m1", PasswordHash: "h1", CreatedAt: restT0}
	if err := db.PutIntegrationUser(context.Background(), u1); err != nil {
		t.Fatal(err)
	}
	if got, err := db.IntegrationUserOf(context.Background(), "m1"); err != nil || *got != *u1 {
		t.Errorf("user of m1: %+v %v", got, err)
	}
	// Another merchant cannot take the name.
	if err := db.PutIntegrationUser(context.Background(), &rules.IntegrationUser{User: "u1", MerchantID: "m2"}); !errors.Is(err, rules.ErrExists) {
		t.Errorf("a taken name: %v", err)
	}
	// The same merchant may write its user again (a new password).
	u1.PasswordHash = "h1b"
	if err := db.PutIntegrationUser(context.Background(), u1); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.IntegrationUser(context.Background(), "u1"); got == nil || got.PasswordHash != "h1b" {
		t.Errorf("rewritten user %+v", got)
	}
	// Rotating replaces the merchant's user.
	u2 := &rules.IntegrationUser{User: "u2", MerchantID: "m1", PasswordHash: "h2", CreatedAt: restT0}
	if err := db.PutIntegrationUser(context.Background(), u2); err != nil {
		t.Fatal(err)
	}
	if _, err := db.IntegrationUser(context.Background(), "u1"); !errors.Is(err, rules.ErrNotFound) {
		t.Errorf("the replaced user is still there: %v", err)
	}
	if got, err := db.IntegrationUserOf(context.Background(), "m1"); err != nil || got.User != "u2" {
		t.Errorf("user of m1 after rotating: %+v %v", got, err)
	}
	// The freed name is free for another merchant.
	if err := db.PutIntegrationUser(context.Background(), &rules.IntegrationUser{User: "u1", MerchantID: "m2"}); err != nil {
		t.Errorf("a freed name: %v", err)
	}
}

func TestLookupRequests(t *testing.T) {
	db := openRest(t)
	for i, want := range []bool{false, true} {
		if seen, err := db.SeenLookupRequest(context.Background(), "m1", "r1", restT0); seen != want || err != nil {
			t.Errorf("try %d: seen %v %v, want %v", i, seen, err, want)
		}
	}
	if seen, _ := db.SeenLookupRequest(context.Background(), "m2", "r1", restT0); seen {
		t.Errorf("another merchant's request id counts")
	}
	db.SeenLookupRequest(context.Background(), "m1", "r2", restT0.Add(2*time.Hour))
	if n, err := db.PruneLookupRequests(context.Background(), restT0.Add(time.Hour)); n != 2 || err != nil {
		t.Fatalf("pruned %d %v, want the two older ids", n, err)
	}
	if seen, _ := db.SeenLookupRequest(context.Background(), "m1", "r1", restT0.Add(3*time.Hour)); seen {
		t.Errorf("a pruned id is still seen")
	}
	if seen, _ := db.SeenLookupRequest(context.Background(), "m1", "r2", restT0.Add(3*time.Hour)); !seen {
		t.Errorf("a newer id was pruned")
	}
}
