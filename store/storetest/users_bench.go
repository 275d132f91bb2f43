package storetest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"payouts/rules"
)

// BenchmarkAppendAudit is one audit entry written (what a dashboard or admin action adds to
// its request); the engines' benchmarks run it.
func BenchmarkAppendAudit(b *testing.B, s rules.Storage) {
	e := rules.AuditEntry{At: T0, Principal: "user:u_1:2", ActorName: "Ana", Action: "balance.fund", Target: "merchant:M1", MerchantID: m1,
		Detail: json.RawMessage(`{"country":"PER","currency":"PEN","amount":100000}`), RemoteAddr: "127.0.0.1", UserAgent: "Mozilla/5.0"}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		e.ID, e.At = 0, T0.Add(time.Duration(i)*time.Millisecond)
		if err := s.AppendAudit(context.Background(), &e); err != nil {
			b.Fatal(err)
		}
	}
}
