package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"payouts/rules"
)

// Dump and Restore: the whole database in the engine-neutral records that `payouts
// migrate` copies from one engine to the other (rules.DumpRecord). Claims are not dumped
// (a restored event is unclaimed), nor are the lookups' request ids (a day's memory).
// Within a kind, records come in key order (text keys in byte order, as store/bolt
// keeps them), so that two dumps of the same records are the same.

// dumpQuery reads one table's records of a kind; scan makes the record's value of a row.
type dumpQuery struct {
	sql  string
	scan func(pgx.CollectableRow) (any, error)
}

// dumpQueries are the queries of each of rules.DumpKinds, in the order the kind's records come.
var dumpQueries = map[string][]dumpQuery{
	rules.DumpMerchant: {{`SELECT doc FROM merchants ORDER BY id COLLATE "C"`, scanDumpedMerchant}},
	rules.DumpBalance: {{`SELECT merchant_id, country, currency, available, balance, funded, processed, reversed
		FROM balances ORDER BY merchant_id COLLATE "C", country COLLATE "C", currency COLLATE "C"`, scanDumpedBalance}},
	rules.DumpPayout:    {{`SELECT id, due_at, doc FROM payouts ORDER BY id`, scanDumpedPayout}},
	rules.DumpEvent:     {{`SELECT doc, dead FROM outbox ORDER BY seq`, scanDumpedEvent}},
	rules.DumpDelivered: {{`SELECT event_id, at FROM delivered ORDER BY event_id COLLATE "C"`, scanDumpedDelivery}},
	rules.DumpMail:      {{`SELECT COALESCE(event_id, ''), raw, at FROM sandbox_mail ORDER BY seq`, scanDumpedMail}},
	rules.DumpCard: {
		{`SELECT merchant_id, doc_type, doc_number, token, brand, bin, last4, sealed, on_file FROM cards
			ORDER BY merchant_id COLLATE "C", doc_type, doc_number COLLATE "C"`, scanDumpedCardOnFile},
		{`SELECT payout_id, token, brand, bin, last4, sealed, on_file FROM payout_cards ORDER BY payout_id`, scanDumpedPayoutCard},
	},
	rules.DumpSession:     {{`SELECT token, data, expiry FROM sessions ORDER BY token COLLATE "C"`, scanDumpedSession}},
	rules.DumpCardSession: {{`SELECT payout_id, session_id, expiry FROM card_sessions ORDER BY payout_id`, scanDumpedCardSession}},
	rules.DumpClock:       {{`SELECT value FROM meta WHERE key = '` + metaClockOffset + `'`, scanDumpedClock}},
	rules.DumpScripts:     {{`SELECT merchant_id, rules FROM sandbox_rules ORDER BY merchant_id COLLATE "C"`, scanDumpedScripts}},
	rules.DumpDirectory: {{`SELECT country, id, entry FROM directory
		ORDER BY country COLLATE "C", id COLLATE "C"`, scanDumpedDirectoryEntry}},
	rules.DumpIntegrationUser: {{`SELECT doc FROM integration_users ORDER BY user_name COLLATE "C"`, scanDumpedIntegrationUser}},
	rules.DumpLoggedEvent:     {{`SELECT ` + eventColumns + ` FROM event_log ORDER BY seq`, scanDumpedLoggedEvent}},
	rules.DumpInboxItem: {{`SELECT merchant_id, event_id, received_at, headers, body, signature_valid
		FROM sandbox_inbox ORDER BY merchant_id COLLATE "C", seq`, scanDumpedInboxItem}},
	rules.DumpDeliveryChaos: {{`SELECT merchant_id, chaos FROM delivery_chaos
		ORDER BY merchant_id COLLATE "C"`, scanDumpedDeliveryChaos}},
	rules.DumpBatch: {{`SELECT b.doc, COALESCE((SELECT jsonb_agg(i.doc ORDER BY i.seq)
		FROM batch_items i WHERE i.batch_id = b.id), '[]'::jsonb) FROM batches b ORDER BY b.id`, scanDumpedBatch}},
	rules.DumpLedgerEntry: {{`SELECT merchant_id, country, currency, ` + entrySelect + ` FROM ledger_entries
		ORDER BY merchant_id COLLATE "C", country COLLATE "C", currency COLLATE "C", id`, scanDumpedEntry}},
	rules.DumpUser:  {{`SELECT doc FROM users ORDER BY id COLLATE "C"`, scanDumpedUser}},
	rules.DumpAudit: {{`SELECT id, doc FROM audit_log ORDER BY id`, scanDumpedAudit}},
}

// Dump calls fn with every record of the database, kind after kind in the order of
// rules.DumpKinds, as one consistent snapshot (a read-only REPEATABLE READ transaction).
func (s *DB) Dump(ctx context.Context, fn func(rules.DumpRecord) error) error {
	ctx = context.WithoutCancel(ctx) // the work ends even when its caller has gone
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return fmt.Errorf("dump: %w", err)
	}
	defer tx.Rollback(ctx)
	for _, kind := range rules.DumpKinds {
		qs, ok := dumpQueries[kind]
		if !ok {
			return fmt.Errorf("dump: no query for records of kind %q", kind)
		}
		for _, q := range qs {
			if err := dumpRecords(ctx, tx, kind, q, fn); err != nil {
				return fmt.Errorf("dump %s records: %w", kind, err)
			}
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("dump: %w", err)
	}
	return nil
}

// dumpRecords calls fn with the records of one query.
func dumpRecords(ctx context.Context, tx pgx.Tx, kind string, q dumpQuery, fn func(rules.DumpRecord) error) error {
	rows, err := tx.Query(ctx, q.sql)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		v, err := q.scan(rows)
		if err != nil {
			return err
		}
		raw, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if err := fn(rules.DumpRecord{Kind: kind, Value: raw}); err != nil {
			return err
		}
	}
	return rows.Err()
}

func scanDumpedMerchant(r pgx.CollectableRow) (any, error) {
	var doc []byte
	m := new(rules.Merchant)
	if err := r.Scan(&doc); err != nil {
		return nil, err
	}
	return m, json.Unmarshal(doc, m)
}

func scanDumpedBalance(r pgx.CollectableRow) (any, error) {
	var d rules.DumpedBalance
	b := &d.Balance
	err := r.Scan(&d.MerchantID, &b.Country, &b.Currency, &b.Available, &b.Balance, &b.Funded, &b.Processed, &b.Reversed)
	return d, err
}

func scanDumpedPayout(r pgx.CollectableRow) (any, error) {
	var id int64
	var due *time.Time
	var doc []byte
	if err := r.Scan(&id, &due, &doc); err != nil {
		return nil, err
	}
	d := rules.DumpedPayout{Payout: new(rules.Payout)}
	if err := json.Unmarshal(doc, d.Payout); err != nil {
		return nil, fmt.Errorf("payout %d: %w", id, err)
	}
	d.Payout.ID = id
	if due != nil {
		d.Due = due.UTC()
	}
	return d, nil
}

func scanDumpedEvent(r pgx.CollectableRow) (any, error) {
	var doc []byte
	var d rules.DumpedEvent
	if err := r.Scan(&doc, &d.Dead); err != nil {
		return nil, err
	}
	var err error
	d.Event, err = eventOfDoc(doc)
	return d, err
}

func scanDumpedDelivery(r pgx.CollectableRow) (any, error) {
	var d rules.DumpedDelivery
	err := r.Scan(&d.ID, &d.At)
	d.At = d.At.UTC()
	return d, err
}

func scanDumpedMail(r pgx.CollectableRow) (any, error) {
	var d rules.DumpedMail
	err := r.Scan(&d.EventID, &d.Raw, &d.At)
	d.At = d.At.UTC()
	return d, err
}

func scanDumpedCardOnFile(r pgx.CollectableRow) (any, error) {
	var d rules.DumpedCard
	err := r.Scan(&d.MerchantID, &d.DocType, &d.DocNumber, &d.Ref.Token, &d.Ref.Brand, &d.Ref.BIN, &d.Ref.Last4, &d.Sealed, &d.OnFile)
	return d, err
}

func scanDumpedPayoutCard(r pgx.CollectableRow) (any, error) {
	var d rules.DumpedCard
	err := r.Scan(&d.PayoutID, &d.Ref.Token, &d.Ref.Brand, &d.Ref.BIN, &d.Ref.Last4, &d.Sealed, &d.OnFile)
	return d, err
}

func scanDumpedSession(r pgx.CollectableRow) (any, error) {
	var d rules.DumpedSession
	err := r.Scan(&d.Token, &d.Data, &d.Expiry)
	d.Expiry = d.Expiry.UTC()
	return d, err
}

func scanDumpedCardSession(r pgx.CollectableRow) (any, error) {
	var d rules.DumpedCardSession
	err := r.Scan(&d.PayoutID, &d.SessionID, &d.Expiry)
	d.Expiry = d.Expiry.UTC()
	return d, err
}

func scanDumpedClock(r pgx.CollectableRow) (any, error) {
	var v []byte
	if err := r.Scan(&v); err != nil {
		return nil, err
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	return rules.DumpedClock{Offset: time.Duration(n)}, err
}

func scanDumpedScripts(r pgx.CollectableRow) (any, error) {
	var doc []byte
	var d rules.DumpedScripts
	if err := r.Scan(&d.MerchantID, &doc); err != nil {
		return nil, err
	}
	return d, json.Unmarshal(doc, &d.Rules)
}

func scanDumpedDirectoryEntry(r pgx.CollectableRow) (any, error) {
	var doc []byte
	var d rules.DumpedDirectoryEntry
	if err := r.Scan(&d.Country, &d.ID, &doc); err != nil {
		return nil, err
	}
	return d, json.Unmarshal(doc, &d.Entry)
}

func scanDumpedIntegrationUser(r pgx.CollectableRow) (any, error) {
	var doc []byte
	u := new(rules.IntegrationUser)
	if err := r.Scan(&doc); err != nil {
		return nil, err
	}
	return u, json.Unmarshal(doc, u)
}

// restoreBatch is how many records Restore sends to the database at once.
const restoreBatch = 500

// ErrRestoreNotEmpty refuses a restore into a database that has merchants or payouts.
var ErrRestoreNotEmpty = errors.New("the database already has merchants or payouts: restore only into an empty database")

// Restore writes dumped records into an empty database (refused with ErrRestoreNotEmpty
// when it has merchants or payouts), in one transaction: payouts keep their ids, and the
// payout ids and merchant numbers go on after the restored ones. Restored events are
// unclaimed.
func (s *DB) Restore(ctx context.Context, recs []rules.DumpRecord) error {
	ctx = context.WithoutCancel(ctx) // the work ends even when its caller has gone
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := refuseNonEmpty(ctx, tx); err != nil {
			return err
		}
		if err := restoreRecords(ctx, tx, recs); err != nil {
			return err
		}
		if err := openEntries(ctx, tx); err != nil {
			return err
		}
		return advanceSequences(ctx, tx)
	})
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	return nil
}

// refuseNonEmpty locks out the writers of merchants and payouts until the restore ends, and
// refuses a database that has any.
func refuseNonEmpty(ctx context.Context, tx pgx.Tx) error {
	if _, err := tx.Exec(ctx, `LOCK TABLE merchants, payouts IN SHARE ROW EXCLUSIVE MODE`); err != nil {
		return err
	}
	var used bool
	err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM merchants) OR EXISTS (SELECT 1 FROM payouts)`).Scan(&used)
	if err == nil && used {
		err = ErrRestoreNotEmpty
	}
	return err
}

// restoreRecords writes the records, a batch at a time.
func restoreRecords(ctx context.Context, tx pgx.Tx, recs []rules.DumpRecord) error {
	batch := &pgx.Batch{}
	flush := func() error {
		if batch.Len() == 0 {
			return nil
		}
		err := tx.SendBatch(ctx, batch).Close()
		batch = &pgx.Batch{}
		return err
	}
	for i, rec := range recs {
		write, ok := restoreWrites[rec.Kind]
		if !ok {
			return fmt.Errorf("record %d: unknown kind %q", i, rec.Kind)
		}
		sql, args, err := write(rec.Value)
		if err != nil {
			return fmt.Errorf("record %d (%s): %w", i, rec.Kind, err)
		}
		batch.Queue(sql, args...)
		if batch.Len() >= restoreBatch {
			if err := flush(); err != nil {
				return fmt.Errorf("records up to %d: %w", i, err)
			}
		}
	}
	if err := flush(); err != nil {
		return fmt.Errorf("the last records: %w", err)
	}
	return nil
}

// advanceSequences makes the next payout id and merchant number follow the restored ones.
func advanceSequences(ctx context.Context, tx pgx.Tx) error {
	_, err := tx.Exec(ctx, `SELECT setval(pg_get_serial_sequence('payouts', 'id'), max(id))
		FROM payouts HAVING max(id) IS NOT NULL`)
	if err != nil {
		return fmt.Errorf("advance the payout ids: %w", err)
	}
	_, err = tx.Exec(ctx, `SELECT setval('merchant_numbers', GREATEST(max(id::bigint), 1))
		FROM merchants WHERE id ~ '^[0-9]{1,18}$' HAVING count(*) > 0`)
	if err != nil {
		return fmt.Errorf("advance the merchant numbers: %w", err)
	}
	return nil
}

// restoreWrite decodes a record's value into the statement that writes it.
type restoreWrite func(json.RawMessage) (sql string, args []any, err error)

// restoreWrites are the writes of each of rules.DumpKinds.
var restoreWrites = map[string]restoreWrite{
	rules.DumpMerchant:        restoreMerchant,
	rules.DumpBalance:         restoreBalance,
	rules.DumpPayout:          restorePayout,
	rules.DumpEvent:           restoreEvent,
	rules.DumpDelivered:       restoreDelivery,
	rules.DumpMail:            restoreMail,
	rules.DumpCard:            restoreCard,
	rules.DumpSession:         restoreSession,
	rules.DumpCardSession:     restoreCardSession,
	rules.DumpClock:           restoreClock,
	rules.DumpScripts:         restoreScripts,
	rules.DumpDirectory:       restoreDirectoryEntry,
	rules.DumpIntegrationUser: restoreIntegrationUser,
	rules.DumpLoggedEvent:     restoreLoggedEvent,
	rules.DumpInboxItem:       restoreInboxItem,
	rules.DumpDeliveryChaos:   restoreDeliveryChaos,
	rules.DumpBatch:           restoreDumpedBatch,
	rules.DumpLedgerEntry:     restoreEntry,
	rules.DumpUser:            restoreUser,
	rules.DumpAudit:           restoreAudit,
}

func restoreMerchant(raw json.RawMessage) (string, []any, error) {
	var m rules.Merchant
	if err := json.Unmarshal(raw, &m); err != nil {
		return "", nil, err
	}
	if m.ID == "" {
		return "", nil, errors.New("a merchant without an id")
	}
	var created *time.Time
	if !m.CreatedAt.IsZero() {
		created = &m.CreatedAt
	}
	doc, err := json.Marshal(&m)
	return `INSERT INTO merchants (id, doc, created_at) VALUES ($1, $2, COALESCE($3, now()))`,
		[]any{m.ID, doc, created}, err
}

func restoreBalance(raw json.RawMessage) (string, []any, error) {
	var d rules.DumpedBalance
	if err := json.Unmarshal(raw, &d); err != nil {
		return "", nil, err
	}
	b := d.Balance
	return `INSERT INTO balances (merchant_id, country, currency, available, balance, funded, processed, reversed)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		[]any{d.MerchantID, b.Country, b.Currency, b.Available, b.Balance, b.Funded, b.Processed, b.Reversed}, nil
}

func restorePayout(raw json.RawMessage) (string, []any, error) {
	var d rules.DumpedPayout
	if err := json.Unmarshal(raw, &d); err != nil {
		return "", nil, err
	}
	p := d.Payout
	if p == nil || p.ID <= 0 {
		return "", nil, errors.New("a payout without an id")
	}
	var due *time.Time
	var dueStatus *string
	if !d.Due.IsZero() {
		st := string(p.Status)
		due, dueStatus = &d.Due, &st
	}
	doc, err := json.Marshal(p)
	return `INSERT INTO payouts (id, merchant_id, order_id, country, currency, amount, stage, status, created_at,
			due_at, due_status, doc) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		[]any{p.ID, p.MerchantID, p.OrderID, p.Country, p.Currency, p.Amount, string(p.Stage), string(p.Status),
			p.CreatedAt.UTC(), due, dueStatus, doc}, err
}

func restoreEvent(raw json.RawMessage) (string, []any, error) {
	var d rules.DumpedEvent
	if err := json.Unmarshal(raw, &d); err != nil {
		return "", nil, err
	}
	ev := d.Event
	if ev.ID == "" {
		return "", nil, errors.New("an event without an id")
	}
	doc, err := json.Marshal(ev)
	return `INSERT INTO outbox (event_id, lane, kind, merchant_id, payout_id, next_at, dead, doc)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		[]any{ev.ID, string(rules.LaneOf(ev.Kind)), ev.Kind, ev.MerchantID, ev.PayoutID, ev.NextAt.UTC(), d.Dead, doc}, err
}

func restoreDelivery(raw json.RawMessage) (string, []any, error) {
	var d rules.DumpedDelivery
	err := json.Unmarshal(raw, &d)
	return `INSERT INTO delivered (event_id, at) VALUES ($1, $2)`, []any{d.ID, d.At.UTC()}, err
}

func restoreMail(raw json.RawMessage) (string, []any, error) {
	var d rules.DumpedMail
	if err := json.Unmarshal(raw, &d); err != nil {
		return "", nil, err
	}
	var event *string
	if d.EventID != "" {
		event = &d.EventID
	}
	return `INSERT INTO sandbox_mail (event_id, raw, at) VALUES ($1, $2, $3)`, []any{event, d.Raw, d.At.UTC()}, nil
}

func restoreCard(raw json.RawMessage) (string, []any, error) {
	var d rules.DumpedCard
	if err := json.Unmarshal(raw, &d); err != nil {
		return "", nil, err
	}
	now := time.Now().UTC() // a dump does not carry when a card was saved
	if d.Sealed == nil {
		d.Sealed = []byte{}
	}
	if d.PayoutID != 0 {
		return upsertPayoutCardSQL, []any{d.PayoutID, d.Ref.Token, d.Ref.Brand, d.Ref.BIN, d.Ref.Last4, d.Sealed, d.OnFile, now}, nil
	}
	return upsertCardSQL, []any{d.MerchantID, d.DocType, d.DocNumber, d.Ref.Token, d.Ref.Brand, d.Ref.BIN, d.Ref.Last4,
		d.Sealed, d.OnFile, now}, nil
}

func restoreSession(raw json.RawMessage) (string, []any, error) {
	var d rules.DumpedSession
	if err := json.Unmarshal(raw, &d); err != nil {
		return "", nil, err
	}
	if d.Data == nil {
		d.Data = []byte{}
	}
	return `INSERT INTO sessions (token, data, expiry) VALUES ($1, $2, $3)`, []any{d.Token, d.Data, d.Expiry.UTC()}, nil
}

func restoreCardSession(raw json.RawMessage) (string, []any, error) {
	var d rules.DumpedCardSession
	err := json.Unmarshal(raw, &d)
	return `INSERT INTO card_sessions (payout_id, session_id, expiry) VALUES ($1, $2, $3)`,
		[]any{d.PayoutID, d.SessionID, d.Expiry.UTC()}, err
}

func restoreClock(raw json.RawMessage) (string, []any, error) {
	var d rules.DumpedClock
	err := json.Unmarshal(raw, &d)
	return upsertClockOffsetSQL, []any{[]byte(strconv.FormatInt(int64(d.Offset), 10))}, err
}

func restoreScripts(raw json.RawMessage) (string, []any, error) {
	var d rules.DumpedScripts
	if err := json.Unmarshal(raw, &d); err != nil {
		return "", nil, err
	}
	doc, err := json.Marshal(d.Rules)
	return upsertSandboxRulesSQL, []any{d.MerchantID, doc}, err
}

func restoreDirectoryEntry(raw json.RawMessage) (string, []any, error) {
	var d rules.DumpedDirectoryEntry
	if err := json.Unmarshal(raw, &d); err != nil {
		return "", nil, err
	}
	doc, err := json.Marshal(d.Entry)
	return upsertDirectorySQL, []any{d.Country, d.ID, doc}, err
}

func restoreIntegrationUser(raw json.RawMessage) (string, []any, error) {
	var u rules.IntegrationUser
	if err := json.Unmarshal(raw, &u); err != nil {
		return "", nil, err
	}
	doc, err := json.Marshal(&u)
	return insertIntegrationUserSQL, []any{u.User, u.MerchantID, doc}, err
}
