package rules_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"payouts/rules"
)

type memoryAudit struct {
	mu      sync.Mutex
	entries []rules.AuditEntry
}

func (m *memoryAudit) AppendAudit(_ context.Context, e *rules.AuditEntry) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	e.ID = int64(len(m.entries) + 1)
	m.entries = append(m.entries, *e)
	return nil
}

func (m *memoryAudit) AuditEntries(context.Context, rules.AuditFilter) (rules.AuditPage, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return rules.AuditPage{Entries: append([]rules.AuditEntry(nil), m.entries...)}, nil
}

func (m *memoryAudit) of(action string) []map[string]any {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []map[string]any
	for _, e := range m.entries {
		if e.Action == action {
			var d map[string]any
			json.Unmarshal(e.Detail, &d)
			d["_addr"] = e.RemoteAddr
			out = append(out, d)
		}
	}
	return out
}

// Thousands of refused sign-ins from a few addresses, each for another account, write a
// bounded number of entries whose counts add up to every refusal; lock-outs are written at
// once; a window's counts are written when the next window's first refusal comes, or when
// the audit log is read.
func TestSignInRefusalsAreCountedNotWrittenEach(t *testing.T) {
	now := time.Date(2026, 11, 28, 10, 0, 5, 0, time.UTC)
	log := &memoryAudit{}
	s := rules.NewSignInRefusals(&rules.Auditor{Log: log, Now: func() time.Time { return now }})
	s.Max = 10
	const sent = 5000
	for i := range sent {
		s.Refused(context.Background(), rules.Refusal{Addr: fmt.Sprintf("198.51.100.%d", i%3), Method: "user", Email: fmt.Sprintf("u%d@example.com", i),
			Account: fmt.Sprintf("u%d@example.com", i), Why: "limited", AddressOver: i >= 60})
	}
	s.Refused(context.Background(), rules.Refusal{Addr: "198.51.100.9", Method: "user", Email: "olga@example.com", Account: "olga@example.com",
		Why: "wrong password", AccountFailures: 4, AccountWait: time.Second, LocksAccount: true})
	locks := log.of("signin.lockout")
	if len(locks) != 4 || len(log.of("signin.failure")) != 0 {
		t.Fatalf("%d lock-outs and %d failure entries written during the window, want 4 (three addresses, one account) and 0",
			len(locks), len(log.of("signin.failure")))
	}
	if l := locks[0]; l["lockout"] != "address" || l["tries"] != 21.0 {
		t.Errorf("the first address's lock-out: %v, want it with the address's 21 tries so far", l)
	}
	if l := locks[3]; l["lockout"] != "account" || l["email"] != "olga@example.com" || l["accountFailures"] != 4.0 || l["accountWait"] != "1s" {
		t.Errorf("the account's lock-out: %v", l)
	}

	now = now.Add(time.Minute) // the next window's first refusal writes the last one's counts
	s.Refused(context.Background(), rules.Refusal{Addr: "198.51.100.1", Method: "admin-token", Why: "wrong token"})
	failures := log.of("signin.failure")
	if len(failures) > 2*s.Max+1 {
		t.Errorf("%d failure entries for one window, want at most %d", len(failures), 2*s.Max+1)
	}
	total := 0
	for _, f := range failures {
		total += int(f["count"].(float64))
		if f["from"] == nil || f["to"] == nil || f["reasons"] == nil {
			t.Errorf("an entry without its window or reasons: %v", f)
		}
	}
	if total != sent+1 {
		t.Errorf("the entries count %d refusals, want %d", total, sent+1)
	}

	// A read sees what is counted so far.
	before := len(log.of("signin.failure"))
	if _, err := (rules.FlushingAuditLog{AuditLog: log, Refusals: s}).AuditEntries(context.Background(), rules.AuditFilter{}); err != nil {
		t.Fatal(err)
	}
	if got := log.of("signin.failure"); len(got) != before+1 || got[len(got)-1]["method"] != "admin-token" || got[len(got)-1]["count"] != 1.0 {
		t.Errorf("a read of the audit log did not write the current window's count: %v", got[before:])
	}
}
