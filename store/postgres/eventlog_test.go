package postgres_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"payouts/rules"
	"payouts/store/postgres"
	"payouts/store/postgres/pgtest"
)

// BenchmarkLogAttempt is the event log's cost on a delivery: one attempt of a new event, one
// round trip (the upsert and the feed row in one statement).
func BenchmarkLogAttempt(b *testing.B) {
	if !pgtest.Available() {
		b.Skip("no " + pgtest.EnvURL)
	}
	db, err := postgres.Open(context.Background(), pgtest.Database(b), postgres.Options{})
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

// TestFeedCursorsCommitInOrder logs attempts of one merchant from many goroutines while a
// reader follows the feed by cursor, as the event stream does: it must see every attempt.
func TestFeedCursorsCommitInOrder(t *testing.T) {
	if !pgtest.Available() {
		t.Skip("no " + pgtest.EnvURL)
	}
	db, err := postgres.Open(context.Background(), pgtest.Database(t), postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	const writers, each = 8, 40
	done := make(chan error, writers)
	now := time.Now().UTC()
	for w := range writers {
		go func() {
			for i := range each {
				id := "merchant.notification:" + strconv.Itoa(w*1000+i) + ":PROCESSED"
				ev := rules.LoggedEvent{ID: id, MerchantID: "1", PayoutID: int64(w*1000 + i), Type: rules.EventType(id), Body: []byte("{}"), CreatedAt: now}
				if err := db.LogAttempt(context.Background(), ev, rules.DeliveryAttempt{At: now, Status: 200}); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	seen, after, finished := map[string]bool{}, int64(0), 0
	for finished < writers || len(seen) < writers*each {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			finished++
		default:
		}
		fs, err := db.AttemptsAfter(context.Background(), "1", after, 1000)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fs {
			seen[f.Event.ID] = true
			after = f.Cursor
		}
		if finished == writers && len(fs) == 0 {
			break
		}
	}
	if len(seen) != writers*each {
		t.Errorf("a reader following the feed saw %d of %d attempts", len(seen), writers*each)
	}
}
