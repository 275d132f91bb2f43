// Package storetest is the conformance suite of the storage engines: every engine
// (store/bolt, store/postgres) runs Run in its tests, and so behaves as rules.Storage says,
// through that interface only.
//
// Times are the suite's own clock (T0 and later, whole microseconds, UTC): nothing sleeps,
// and an engine that keeps microseconds keeps them exactly. Leases of claims are counted on
// the clock of the caller that claims (the now given to Due and DueEvents): the suite ends
// a lease by asking again later than rules.ClaimLease after the claim.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"payouts/rules"
)

// Engine is a storage engine under test.
type Engine struct {
	// Open opens a new, empty store; the suite closes it (t.Cleanup).
	Open func(t *testing.T) rules.Storage
	// Second opens another handle on the same data as first, as a second instance of the
	// service would; nil when the engine allows one handle per data (bbolt).
	Second func(t *testing.T, first rules.Storage) rules.Storage
}

// Run runs the whole conformance suite as subtests of t.
func Run(t *testing.T, e Engine) {
	if e.Open == nil {
		t.Fatal("storetest: Engine.Open is nil")
	}
	for _, area := range []struct {
		name string
		run  func(*testing.T, Engine)
	}{
		{"Merchants", testMerchants},
		{"CreatePayout", testCreatePayout},
		{"ReadPayouts", testReadPayouts},
		{"ListPayouts", testListPayouts},
		{"Queue", testQueue},
		{"UpdatePayouts", testUpdatePayouts},
		{"Balances", testBalances},
		{"Ledger", testLedger},
		{"LedgerEntries", testLedgerEntries},
		{"Outbox", testOutbox},
		{"OutboxAdmin", testOutboxAdmin},
		{"SandboxMail", testSandboxMail},
		{"Cards", testCards},
		{"Sessions", testSessions},
		{"Sandbox", testSandbox},
		{"EventLog", testEventLog},
		{"ImportPayouts", testImportPayouts},
		{"DumpRestore", testDumpRestore},
		{"Backup", testBackup},
		{"Claims", testClaims},
		{"Concurrency", testConcurrency},
		{"KeyFingerprints", testKeyFingerprints},
		{"Users", testUsers},
		{"Audit", testAudit},
		{"Batches", testBatches},
		{"Links", testLinks},
		{"CardAttempts", testCardAttempts},
	} {
		t.Run(area.name, func(t *testing.T) {
			// Each area opens its own stores: on PostgreSQL they mostly wait on round trips
			// and on creating their databases, and side by side the suite takes half as long.
			t.Parallel()
			area.run(t, e)
		})
	}
}

// open opens a new empty store, closed when the test ends.
func (e Engine) open(t *testing.T) rules.Storage {
	t.Helper()
	s := e.Open(t)
	if s == nil {
		t.Fatal("storetest: Engine.Open returned nil")
	}
	t.Cleanup(func() {
		if err := s.Close(context.Background()); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return s
}

// handles opens a new empty store and, when the engine has them, a second handle on its
// data; without Second both are the same handle, so the tests that use two handles test
// one handle's concurrent callers.
func (e Engine) handles(t *testing.T) (first, second rules.Storage) {
	t.Helper()
	first = e.open(t)
	if e.Second == nil {
		return first, first
	}
	second = e.Second(t, first)
	if second == nil {
		t.Fatal("storetest: Engine.Second returned nil")
	}
	t.Cleanup(func() {
		if err := second.Close(context.Background()); err != nil {
			t.Errorf("close the second handle: %v", err)
		}
	})
	return first, second
}

// T0 is the suite's clock at the start of every test.
var T0 = time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC)

// at is T0 plus d.
func at(d time.Duration) time.Time { return T0.Add(d) }

// Merchants the tests use.
const (
	m1 = "M1"
	m2 = "M2"
)

// addMerchants stores merchants with the given ids.
func addMerchants(t *testing.T, s rules.Storage, ids ...string) {
	t.Helper()
	for _, id := range ids {
		m := &rules.Merchant{ID: id, Name: "Tienda " + id, Settings: rules.DefaultSettings(), CreatedAt: T0}
		if err := s.CreateMerchant(context.Background(), m, nil); err != nil {
			t.Fatalf("CreateMerchant %s: %v", id, err)
		}
	}
}

// account is a Peru bank account; its last four digits may be a sandbox ending.
const account = "19312345678012"

// traceparent is a W3C traceparent, as a traced create stores with its payout and events.
const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

// newPayout builds a payout of merchant m as the service does (rules.NewPayout): a Peru
// bank transfer of amount centimos, IN_PROGRESS/CREATED at created, in the batch channel.
func newPayout(m, orderID string, amount int64, created time.Time) *rules.Payout {
	return newPayoutTo(m, orderID, amount, created, "PER", account)
}

// newPayoutTo is newPayout to a country (PER in PEN, COL in COP) and an account number.
func newPayoutTo(m, orderID string, amount int64, created time.Time, country, accountNumber string) *rules.Payout {
	currency := "PEN"
	if country == "COL" {
		currency = "COP"
	}
	req := &rules.PayoutRequest{Country: country, Currency: currency, OrderID: orderID,
		Amount:      json.Number(strconv.FormatInt(amount, 10)),
		Description: "conformance",
		Beneficiary: rules.Beneficiary{Name: "Ana", LastName: "Rojas", Email: "ana.rojas@correo.pe",
			Document: rules.Document{Type: 1, Number: "45678912"}},
		Destination: rules.Destination{BankAccount: rules.BankAccount{BankCode: "002", AccountType: "2",
			AccountNumber: rules.Text(accountNumber)}},
	}
	return rules.NewPayout(m, req, rules.Route{Amount: amount, Channel: rules.ChannelBatch, AccountType: 2, BankCode: "002"}, created)
}

// create stores p queued at due, with no events and no admit step, and returns the stored
// copy.
func create(t *testing.T, s rules.Storage, p *rules.Payout, due time.Time) *rules.Payout {
	t.Helper()
	stored, created, err := s.CreatePayout(context.Background(), p, due, nil, nil)
	if err != nil || !created || stored == nil || stored.ID <= 0 {
		t.Fatalf("CreatePayout %s/%s: created %v, stored %v, err %v", p.MerchantID, p.OrderID, created, stored, err)
	}
	return stored
}

// moveTo is a step that moves its payout to status at when and queues it at next.
func moveTo(status rules.Status, when, next time.Time) rules.Step {
	return func(p *rules.Payout, l rules.Ledger) (time.Time, error) {
		if !p.Move(status, when, "", "") {
			return time.Time{}, fmt.Errorf("cannot move payout %d from %s to %s", p.ID, p.Status, status)
		}
		return next, nil
	}
}

// reserveStep authorizes its payout as the lifecycle does: it holds the amount on the
// merchant's balance (refusing when it does not cover) and queues the payout at next.
func reserveStep(when, next time.Time) rules.Step {
	return func(p *rules.Payout, l rules.Ledger) (time.Time, error) {
		b, err := l.Balance(p.MerchantID, p.Country, p.Currency)
		if err != nil {
			return time.Time{}, err
		}
		if b.Available < p.Amount {
			return time.Time{}, fmt.Errorf("payout %d: available %d does not cover %d", p.ID, b.Available, p.Amount)
		}
		b.Available -= p.Amount
		p.Reserved = p.Amount
		p.Move(rules.StatusAuthorized, when, "", "")
		return next, l.PutBalance(p.MerchantID, b)
	}
}

// update runs step on ids and fails the test on an error.
func update(t *testing.T, s rules.Storage, ids []int64, step rules.Step) {
	t.Helper()
	if err := s.UpdatePayouts(context.Background(), ids, step); err != nil {
		t.Fatalf("UpdatePayouts %v: %v", ids, err)
	}
}

// payoutOf reads a payout and fails the test when it is not there.
func payoutOf(t *testing.T, s rules.Storage, merchantID string, id int64) *rules.Payout {
	t.Helper()
	p, err := s.Payout(context.Background(), merchantID, id)
	if err != nil {
		t.Fatalf("Payout %s/%d: %v", merchantID, id, err)
	}
	return p
}

// balanceOf is a merchant's balance in one country and currency (zero when it has none).
func balanceOf(t *testing.T, s rules.Storage, merchantID, country, currency string) rules.Balance {
	t.Helper()
	bs, err := s.Balances(context.Background(), merchantID)
	if err != nil {
		t.Fatalf("Balances %s: %v", merchantID, err)
	}
	for _, b := range bs {
		if b.Country == country && b.Currency == currency {
			return b
		}
	}
	return rules.Balance{Country: country, Currency: currency}
}

// fund funds a balance and fails the test on an error.
func fund(t *testing.T, s rules.Storage, merchantID, country, currency string, amount int64) rules.Balance {
	t.Helper()
	b, err := s.Fund(context.Background(), merchantID, country, currency, amount, time.Now())
	if err != nil {
		t.Fatalf("Fund %s %s/%s %d: %v", merchantID, country, currency, amount, err)
	}
	return b
}

// jsonOf is v as JSON, for comparing records whatever their times' locations.
func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(normalize(v))
	if err != nil {
		t.Fatalf("marshal %T: %v", v, err)
	}
	return string(b)
}

// normalize puts the times of the records the suite compares in UTC, so that an engine
// that reads them back in another location (the same instant) compares equal.
func normalize(v any) any {
	switch x := v.(type) {
	case *rules.Payout:
		if x == nil {
			return x
		}
		c := *x
		c.StatusChangedAt, c.CreatedAt = c.StatusChangedAt.UTC(), c.CreatedAt.UTC()
		c.ClaimUntil, c.SessionExpiresAt = c.ClaimUntil.UTC(), c.SessionExpiresAt.UTC()
		c.History = slices.Clone(x.History)
		for i := range c.History {
			c.History[i].At = c.History[i].At.UTC()
		}
		return &c
	case rules.Event:
		x.CreatedAt, x.NextAt = x.CreatedAt.UTC(), x.NextAt.UTC()
		return x
	case *rules.Merchant:
		if x == nil {
			return x
		}
		c := *x
		c.CreatedAt, c.KeyCreatedAt = c.CreatedAt.UTC(), c.KeyCreatedAt.UTC()
		c.OldKeys = slices.Clone(x.OldKeys)
		for i := range c.OldKeys {
			c.OldKeys[i].CreatedAt, c.OldKeys[i].ExpiresAt = c.OldKeys[i].CreatedAt.UTC(), c.OldKeys[i].ExpiresAt.UTC()
		}
		return &c
	}
	return v
}

// samePayout fails the test when got is not want as stored (every field, times by instant).
func samePayout(t *testing.T, what string, got, want *rules.Payout) {
	t.Helper()
	if g, w := jsonOf(t, got), jsonOf(t, want); g != w {
		t.Errorf("%s:\n got  %s\n want %s", what, g, w)
	}
}

// ids are the ids of payouts, in their order.
func ids(ps []*rules.Payout) []int64 {
	out := make([]int64, len(ps))
	for i, p := range ps {
		out[i] = p.ID
	}
	return out
}

// dueIDs are the ids of queue entries, in their order.
func dueIDs(due []rules.DueEntry) []int64 {
	out := make([]int64, len(due))
	for i, d := range due {
		out[i] = d.ID
	}
	return out
}

// eventIDs are the event ids of outbox entries or events, in their order.
func eventIDs[E rules.Event | rules.OutboxEntry | rules.OutboxRecord](evs []E) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		switch x := any(e).(type) {
		case rules.Event:
			out[i] = x.ID
		case rules.OutboxEntry:
			out[i] = x.ID
		case rules.OutboxRecord:
			out[i] = x.ID
		}
	}
	return out
}

// sorted is a sorted copy.
func sorted[E interface{ ~int64 | ~string }](s []E) []E {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}

// isNotFound reports whether err says the record does not exist.
func isNotFound(err error) bool { return errors.Is(err, rules.ErrNotFound) }

// errBoom is the error the suite's failing steps return.
var errBoom = errors.New("storetest: the step failed on purpose")
