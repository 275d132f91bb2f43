package bolt

import (
	"context"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"payouts/rules"
)

// A mailbox record written before the mailbox kept the event id and time is the mail
// alone: it lists as it is, and dumps with the event id and time the mail itself holds.
func TestMailboxReadsRecordsOfTheMailAlone(t *testing.T) {
	db := openTemp(t)
	sent := time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC)
	legacy := `{"to":"ana@correo.pe","sentAt":"2026-11-21T15:00:00Z","eventId":"beneficiary.mail:7:PROCESSED"}`
	err := db.bdb.Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bMailbox)
		seq, _ := b.NextSequence()
		return b.Put(be64(seq), []byte(legacy))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.PutSandboxMail(context.Background(), "ev-new", []byte(`{"n":1}`), sent.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	mails, err := db.SandboxMails(context.Background(), 10)
	if err != nil || len(mails) != 2 || string(mails[0]) != `{"n":1}` || string(mails[1]) != legacy {
		t.Fatalf("SandboxMails = %q, %v", mails, err)
	}
	var dumped []rules.DumpedMail
	err = db.Dump(context.Background(), func(r rules.DumpRecord) error {
		if r.Kind == rules.DumpMail {
			var m rules.DumpedMail
			if err := unmarshal(r.Value, &m); err != nil {
				return err
			}
			dumped = append(dumped, m)
		}
		return nil
	})
	if err != nil || len(dumped) != 2 {
		t.Fatalf("dumped %+v, %v", dumped, err)
	}
	if m := dumped[0]; m.EventID != "beneficiary.mail:7:PROCESSED" || !m.At.Equal(sent) || string(m.Raw) != legacy {
		t.Errorf("the mail alone dumped as %+v", m)
	}
	if m := dumped[1]; m.EventID != "ev-new" || !m.At.Equal(sent.Add(time.Minute)) || string(m.Raw) != `{"n":1}` {
		t.Errorf("a mail with its event dumped as %+v", m)
	}
}

// Claims never written are forgotten once expired, when the table grows.
func TestClaimTableForgetsExpiredClaims(t *testing.T) {
	var c claimTable[int64]
	t0 := time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC)
	keys := make([]int64, claimSweep)
	for i := range keys {
		keys[i] = int64(i)
	}
	c.take(keys, t0)
	if !c.held(1, t0.Add(rules.ClaimLease-time.Nanosecond)) || c.held(1, t0.Add(rules.ClaimLease)) {
		t.Fatalf("a claim's lease is not rules.ClaimLease")
	}
	if taken := c.take([]int64{2, -1}, t0.Add(rules.ClaimLease-time.Nanosecond)); taken[0] || !taken[1] {
		t.Fatalf("take answered %v for a held claim and a new one, want [false true]", taken)
	}
	c.take([]int64{-2}, t0.Add(rules.ClaimLease))
	if len(c.at) != 2 {
		t.Errorf("%d claims kept, want the two new ones alone", len(c.at))
	}
}
