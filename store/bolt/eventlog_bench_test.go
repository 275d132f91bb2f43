package bolt_test

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"payouts/rules"
	"payouts/store/bolt"
)

// BenchmarkLogAttempt is the event log's cost on a delivery: one attempt of a new event
// (a notification's whole log when it is delivered at once), durably.
func BenchmarkLogAttempt(b *testing.B) {
	db, err := bolt.Open(filepath.Join(b.TempDir(), "p.db"), bolt.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close(context.Background())
	body := []byte(`{"payout":{"id":"1042","country":"PER","amount":"100000","currency":"PEN","orderId":"ORD-1042","merchantId":"1","bankCode":"002","accountNumber":"**********8012","name":"Ana Quispe"},"output":{"stage":"SUCCESS","status":"PROCESSED","statusChangeDateTime":"2026-11-25T04:51:08.373Z","authorizationCode":"SIM-1042","authorizationDate":"2026-11-25T04:51:08.373Z"}}`)
	now := time.Now().UTC()
	b.ResetTimer()
	for i := range b.N {
		id := "merchant.notification:" + strconv.Itoa(i) + ":PROCESSED"
		ev := rules.LoggedEvent{ID: id, MerchantID: "1", PayoutID: int64(i), Type: rules.EventType(id), Body: body, CreatedAt: now}
		if err := db.LogAttempt(context.Background(), ev, rules.DeliveryAttempt{At: now, Status: 200, Duration: time.Millisecond}); err != nil {
			b.Fatal(err)
		}
	}
}
