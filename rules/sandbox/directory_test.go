package sandbox_test

import (
	"context"
	"testing"
	"time"

	"payouts/rules"
	"payouts/rules/sandbox"
	"payouts/store/bolt"
)

// The simulated rail asks the directory for a Bre-B key: an unknown key is rejected 4027, a
// known one (or an admin's entry) is processed, and a magic ending still wins.
func TestRailRejectsUnknownBreBKeys(t *testing.T) {
	db, err := bolt.Open(t.TempDir()+"/p.db", bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	dir := &sandbox.Directory{Store: db}
	if err := db.PutDirectoryEntry(context.Background(), "COL", "@unknownbutadded", rules.DirectoryEntry{HolderName: "Ana Ríos", BankCode: "007", AccountType: "SAVINGS"}); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC)
	rail := &sandbox.Rail{Delay: time.Second, BatchDelay: time.Second, Now: func() time.Time { return now }, Directory: dir}
	for key, want := range map[string]string{
		"@andreamartinez": "", "3001234027": rules.CodeDirectoryUnavailable, "@unknownperson": rules.CodeDirectoryUnavailable,
		"@unknownbutadded": "", "3001239999": rules.CodeBankRejected,
	} {
		p := &rules.Payout{Channel: rules.ChannelRealTimeKey, Country: "COL", StatusChangedAt: now.Add(-time.Minute)}
		p.Request.Destination.BankAccount.AccountNumber = rules.Text(key)
		out, err := rail.Outcome(context.Background(), p, now)
		if err != nil || !out.Settled || out.Code != want {
			t.Errorf("key %s: %+v %v, want code %q", key, out, err, want)
		}
	}
}
