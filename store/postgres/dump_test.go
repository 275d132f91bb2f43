package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"payouts/rules"
)

// restFill writes a record of every kind (and some that are not dumped) into db.
func restFill(t *testing.T, db *DB) {
	t.Helper()
	for _, m := range []rules.Merchant{
		{ID: "7", Name: "Seven", APIKeyHash: "h7", SealedSecret: []byte{1, 2}, CreatedAt: restT0},
		{ID: "acme", Name: "Acme", APIKeyHash: "ha", CreatedAt: restT0.Add(time.Hour),
			OldKeys: []rules.OldKey{{APIKeyHash: "old", ExpiresAt: restT0.Add(24 * time.Hour)}}},
	} {
		doc, _ := json.Marshal(m)
		restSQL(t, db, `INSERT INTO merchants (id, doc) VALUES ($1, $2)`, m.ID, doc)
	}
	restSQL(t, db, `INSERT INTO balances VALUES ('7', 'PER', 'PEN', 500, 800, 1000, 300, 100),
		('7', 'COL', 'COP', 0, 0, 0, 0, 0)`)
	restSQL(t, db, `INSERT INTO ledger_entries (merchant_id, country, currency, id, at, type, amount, available, balance)
		VALUES ('7', 'PER', 'PEN', 1, $1, 'opening', 800, 500, 800)`, restT0)
	restSQL(t, db, `UPDATE balances SET entries = 1 WHERE merchant_id = '7' AND currency = 'PEN'`)
	queued := restInsertPayout(t, db, &rules.Payout{MerchantID: "7", OrderID: "A", Country: "PER", Currency: "PEN", Amount: 300,
		Stage: rules.StageInProgress, Status: rules.StatusPendingBank, CreatedAt: restT0, StatusChangedAt: restT0,
		History: []rules.Transition{{Stage: rules.StageInProgress, Status: rules.StatusCreated, At: restT0}}}, restT0.Add(time.Minute))
	done := restInsertPayout(t, db, &rules.Payout{MerchantID: "7", OrderID: "B", Country: "PER", Currency: "PEN", Amount: 50,
		Stage: rules.StageSuccess, Status: rules.StatusProcessed, CreatedAt: restT0, StatusChangedAt: restT0}, time.Time{})

	data := json.RawMessage(`{"status": "PROCESSED", "n": [1, 2]}`)
	pending, dead, sent, claimed := restEvent("pending", restT0), restEvent("dead", restT0), restEvent("sent", restT0), restEvent("claimed", restT0.Add(time.Second))
	pending.Data, pending.PayoutID = data, done
	mail := rules.Event{ID: "beneficiary.mail:1", Kind: rules.EventBeneficiaryMail, MerchantID: "7", PayoutID: queued, CreatedAt: restT0, NextAt: restT0.Add(time.Hour)}
	restEnqueue(t, db, dead, sent, pending, claimed, mail)
	due, _, _ := db.DueEvents(context.Background(), rules.LaneNotify, restT0, 2)
	if err := db.DeadEvent(context.Background(), due[0].Seq, due[0].Event); err != nil {
		t.Fatal(err)
	}
	if err := db.EventDelivered(context.Background(), due[1].Seq, "sent", restT0); err != nil {
		t.Fatal(err)
	}
	db.DueEvents(context.Background(), rules.LaneNotify, restT0.Add(time.Second), 10) // claims pending and claimed
	for _, m := range []struct {
		event string
		raw   string
	}{{"", `{"n":1}`}, {"ev-mail", `{"n":2}`}, {"", `{"n":3}`}} {
		if err := db.PutSandboxMail(context.Background(), m.event, []byte(m.raw), restT0); err != nil {
			t.Fatal(err)
		}
	}
	db.PutCard(context.Background(), "7", 1, "45678912", queued, rules.CardRef{Token: "t1", Brand: "VISA", BIN: "411111", Last4: "1111"}, []byte("s1"), true)
	db.PutCard(context.Background(), "7", 1, "11111111", done, rules.CardRef{Token: "t2", Brand: "VISA", BIN: "424242", Last4: "4242"}, []byte("s2"), false)
	if err := db.PutCard(context.Background(), "acme", 2, "X1", 999, rules.CardRef{Token: "t3"}, nil, false); err != nil {
		t.Fatal(err)
	}
	sessions := db.Sessions(context.Background(), func() time.Time { return restT0 })
	sessions.Commit("tok-b", []byte("data-b"), restT0.Add(time.Hour))
	sessions.Commit("tok-a", []byte{}, restT0.Add(time.Minute))
	sessions.BindCardSession(queued, "tok-b", restT0.Add(time.Hour))
	db.PutSandboxClockOffset(context.Background(), 36*time.Hour)
	db.PutSandboxRules(context.Background(), "7", []rules.ScriptRule{{Outcome: rules.ScriptOutcome{Stage: rules.StageSuccess}}})
	db.PutSandboxRules(context.Background(), "acme", nil)
	db.PutDirectoryEntry(context.Background(), "PER", "987654321", rules.DirectoryEntry{HolderName: "Ana", Entities: []rules.WalletEntity{{EntityBrand: "Yape", Status: "AVAILABLE"}}})
	db.PutDirectoryEntry(context.Background(), "COL", "@ana", rules.DirectoryEntry{Absent: true})
	db.PutIntegrationUser(context.Background(), &rules.IntegrationUser{User: "u7", MerchantID: "7", PasswordHash: "ph", CreatedAt: restT0})
	db.SeenLookupRequest(context.Background(), "7", "r1", restT0) // not dumped
}

// restDump dumps db whole.
func restDump(t *testing.T, db *DB) []rules.DumpRecord {
	t.Helper()
	var recs []rules.DumpRecord
	if err := db.Dump(context.Background(), func(r rules.DumpRecord) error { recs = append(recs, r); return nil }); err != nil {
		t.Fatal(err)
	}
	return recs
}

func TestDumpRestoreDumpGivesTheSameRecords(t *testing.T) {
	src := openRest(t)
	restFill(t, src)
	first := restDump(t, src)

	// Every kind is there, in rules.DumpKinds' order.
	count := map[string]int{}
	last := 0
	for _, r := range first {
		i := slices.Index(rules.DumpKinds, r.Kind)
		if i < last {
			t.Errorf("a %s record after the %s records", r.Kind, rules.DumpKinds[last])
		}
		last = i
		count[r.Kind]++
	}
	want := map[string]int{rules.DumpMerchant: 2, rules.DumpBalance: 2, rules.DumpPayout: 2, rules.DumpEvent: 4,
		rules.DumpDelivered: 2, rules.DumpMail: 3, rules.DumpCard: 4, rules.DumpSession: 2, rules.DumpCardSession: 1,
		rules.DumpClock: 1, rules.DumpScripts: 2, rules.DumpDirectory: 2, rules.DumpIntegrationUser: 1, rules.DumpLedgerEntry: 1}
	for _, k := range rules.DumpKinds {
		if count[k] != want[k] {
			t.Errorf("%d %s records, want %d", count[k], k, want[k])
		}
	}

	dst := openRest(t)
	if err := dst.Restore(context.Background(), first); err != nil {
		t.Fatal(err)
	}
	second := restDump(t, dst)
	if len(second) != len(first) {
		t.Fatalf("%d records after the restore, want %d", len(second), len(first))
	}
	for i := range first {
		if first[i].Kind != second[i].Kind || string(first[i].Value) != string(second[i].Value) {
			t.Errorf("record %d:\n  dumped   %s %s\n  restored %s %s", i, first[i].Kind, first[i].Value, second[i].Kind, second[i].Value)
		}
	}
	restCheckRestored(t, dst)
}

// restCheckRestored checks what a restore does besides the records: the ledger totals, the
// sequences, the unclaimed events, the refusal of a second restore.
func restCheckRestored(t *testing.T, db *DB) {
	t.Helper()
	ctx := context.Background()
	var funded, processed, reversed int64
	err := db.pool.QueryRow(ctx, `SELECT funded, processed, reversed FROM balances WHERE merchant_id = '7' AND country = 'PER'`).
		Scan(&funded, &processed, &reversed)
	if err != nil || funded != 1000 || processed != 300 || reversed != 100 {
		t.Errorf("restored totals %d %d %d (%v)", funded, processed, reversed, err)
	}
	var nextPayout, nextMerchant, maxPayout int64
	db.pool.QueryRow(ctx, `SELECT max(id) FROM payouts`).Scan(&maxPayout)
	db.pool.QueryRow(ctx, `SELECT nextval(pg_get_serial_sequence('payouts', 'id'))`).Scan(&nextPayout)
	db.pool.QueryRow(ctx, `SELECT nextval('merchant_numbers')`).Scan(&nextMerchant)
	if nextPayout <= maxPayout || nextMerchant <= 7 {
		t.Errorf("next payout id %d (max %d), next merchant number %d (7 restored)", nextPayout, maxPayout, nextMerchant)
	}
	due, _, err := db.DueEvents(ctx, rules.LaneNotify, restT0.Add(time.Second), 10)
	if err != nil || len(due) != 2 || due[0].ID != "pending" || due[1].ID != "claimed" {
		t.Errorf("restored due events %+v %v; want the two claimed in the source, unclaimed", due, err)
	}
	if err := db.Restore(ctx, nil); !errors.Is(err, ErrRestoreNotEmpty) {
		t.Errorf("a restore into a database with merchants: %v", err)
	}
}

func TestRestoreRefusesUnknownKindsAtomically(t *testing.T) {
	db := openRest(t)
	recs := []rules.DumpRecord{
		{Kind: rules.DumpClock, Value: json.RawMessage(`{"offset":5}`)},
		{Kind: "nonsense", Value: json.RawMessage(`{}`)},
	}
	if err := db.Restore(context.Background(), recs); err == nil {
		t.Fatal("restored a record of an unknown kind")
	}
	if off, _ := db.SandboxClockOffset(context.Background()); off != 0 {
		t.Errorf("a failed restore left the clock at %v", off)
	}
}
