package server

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"payouts/rules"
)

// A store from before the notification key's fingerprint, whose key file is gone: a new key
// is made while it has sent no notification (filled offline, say), refused once its event
// log holds one.
func TestMissingNotificationKeyOfAStoreFromBeforeItsFingerprint(t *testing.T) {
	dir := t.TempDir()
	db, _, err := Open(context.Background(), Config{Storage: StorageConfig{Data: dir, NoSync: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	if err := db.CreateMerchant(context.Background(), &rules.Merchant{ID: "7", Name: "Offline"}, nil); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, NotificationKeyFile)
	if err := missingNotificationKey(context.Background(), db, path, "here", dir); err != nil {
		t.Errorf("a store that sent nothing: %v", err)
	}
	now := time.Now().UTC()
	ev := rules.LoggedEvent{ID: "merchant.notification:1:PROCESSED", MerchantID: "7", PayoutID: 1, Type: "payout.processed",
		Body: []byte(`{}`), CreatedAt: now}
	if err := db.LogAttempt(context.Background(), ev, rules.DeliveryAttempt{At: now, Status: 200}); err != nil {
		t.Fatal(err)
	}
	err = missingNotificationKey(context.Background(), db, path, "here", dir)
	if err == nil || !strings.Contains(err.Error(), "has sent notifications") || !strings.Contains(err.Error(), "notification-key rotate") {
		t.Errorf("a store that sent a notification: %v", err)
	}
}
