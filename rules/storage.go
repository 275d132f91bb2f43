package rules

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Storage is everything the service keeps, as one engine provides it: store/bolt (the
// default, one file) or store/postgres (several instances on one database). main.go opens
// one and hands it to the rest, which see only the narrower interfaces declared beside
// their users (Store, LifecycleStore, OutboxStore, ...). store/storetest is the conformance
// suite every engine passes.
//
// Work queues are claimed, not just read: Due and DueEventsSkipping hand each entry they
// return to one caller only, in this process or in another instance on the same database,
// until the claim is written (UpdatePayouts, EventDelivered, RescheduleEvent, DeadEvent) or
// its lease (ClaimLease) ends, when another caller may take it over. Leases run on the
// service's clock: the now the claiming call was given. An engine shared by instances may
// have a write claim the step it queues for its own instance, from the step's due time
// (store/postgres): that instance's Due then hands it out first, another's after the lease.
type Storage interface {
	Store
	LifecycleStore
	OutboxStore
	OutboxSkipper
	ClockStore
	ScriptStore
	DirectoryStore
	MerchantStore
	CardStore
	OutboxAdmin
	IntegrationUsers
	LookupRequests
	KeyFingerprints
	EventLog
	UserStore
	AuditLog
	LedgerEntries
	BatchStore

	// Sessions is the store of the card-form and dashboard sessions (scs.Store and
	// scs.IterableStore); now is its clock.
	Sessions(ctx context.Context, now func() time.Time) SessionStore

	// ImportPayouts stores payouts built elsewhere (seeding), with their ids.
	ImportPayouts(ctx context.Context, ps []*Payout) error
	// CheckAllLedgers checks the ledger invariant of every balance from scratch.
	CheckAllLedgers(ctx context.Context) error
	// Dump calls fn with every record of the store, in Restore's order (payouts migrate).
	Dump(ctx context.Context, fn func(DumpRecord) error) error
	// Restore writes dumped records into an empty store.
	Restore(ctx context.Context, recs []DumpRecord) error
	// Backup writes a consistent copy of the whole store, when the engine can (bbolt);
	// ErrNotSupported otherwise (PostgreSQL: pg_dump).
	Backup(ctx context.Context, w io.Writer) (int64, error)
	Ping(ctx context.Context) error
	Close(ctx context.Context) error
}

// KeyFingerprints are the fingerprints of the keys that sealed a store's secrets ("master":
// the merchants' API secrets; "card": the stored cards) or signed what it sent
// ("notification": the merchant notifications, whose certificate merchants pin), so that a
// store is never opened with another key, nor with a key lost and generated anew: half its
// secrets would be sealed with each, or every merchant would reject its notifications. A
// fingerprint is a hash, never the key.
type KeyFingerprints interface {
	// KeyFingerprint is the fingerprint recorded for the key named; "" when none is.
	KeyFingerprint(ctx context.Context, name string) (string, error)
	// RecordKeyFingerprint records fp for name when none is recorded yet, and returns the
	// fingerprint recorded: fp, or the one recorded before, which it never replaces.
	RecordKeyFingerprint(ctx context.Context, name, fp string) (string, error)
	// ReplaceKeyFingerprint records fp for name in place of old ("": none recorded), for a
	// deliberate rotation, and reports whether it did: false when the fingerprint recorded is
	// no longer old (another rotation came first), which it then leaves as it is.
	ReplaceKeyFingerprint(ctx context.Context, name, old, fp string) (bool, error)
}

// ClaimLease is how long a claimed lifecycle step or outbox event stays its claimer's: a
// crashed instance's claims are taken over once it has passed. It is longer than any rail
// call or delivery attempt.
const ClaimLease = 30 * time.Second

// ErrNotSupported is an operation the engine does not offer.
var ErrNotSupported = fmt.Errorf("not supported by this storage engine")

// MerchantStore keeps the merchants.
type MerchantStore interface {
	// CreateMerchant stores m; an empty ID takes the next number. prepare runs with the
	// final id before the write (to seal the secret bound to it).
	CreateMerchant(ctx context.Context, m *Merchant, prepare func(*Merchant) error) error
	Merchant(ctx context.Context, id string) (*Merchant, error) // ErrNotFound when none
	UpdateMerchant(ctx context.Context, id string, fn func(*Merchant) error) (*Merchant, error)
	Merchants(ctx context.Context) ([]*Merchant, error)
}

// CardStore keeps the tokenized cards (sealed) and which card a payout uses.
type CardStore interface {
	SavedCard(ctx context.Context, merchantID string, docType int, docNumber string) (CardRef, bool, error)
	PutCard(ctx context.Context, merchantID string, docType int, docNumber string, payoutID int64, ref CardRef, sealed []byte, onFile bool) error
	// KeepCardOnFile makes the card a payout took the beneficiary's card on file: after the
	// take, so that a submission that lost it leaves no card on file.
	KeepCardOnFile(ctx context.Context, merchantID string, docType int, docNumber string, payoutID int64, token string) error
	UseSavedCard(ctx context.Context, merchantID string, docType int, docNumber string, payoutID int64) (CardRef, error)
	// PayoutCard is the card of a payout under the token its take recorded: submissions at
	// once each keep their own card until the payout takes one.
	PayoutCard(ctx context.Context, payoutID int64, token string) (CardRef, []byte, error)
	// DropPayoutCard drops every card of a payout, at its outcome.
	DropPayoutCard(ctx context.Context, payoutID int64) error
	// DropUntakenCard drops one submission's card that its payout did not take; never the
	// card the payout's take recorded.
	DropUntakenCard(ctx context.Context, payoutID int64, token string) error
	DropFinishedPayoutCards(ctx context.Context) (int, error)
}

// OutboxAdmin is what the dashboard, the mailbox and the operators read of the outbox and
// do to it.
type OutboxAdmin interface {
	OutboxRecords(ctx context.Context, limit int, keep func(OutboxRecord) bool) ([]OutboxRecord, error)
	DeliveredRecords(ctx context.Context, limit int, keep func(OutboxRecord) bool) ([]OutboxRecord, error)
	ResendEvent(ctx context.Context, id string, now time.Time) (Event, bool, error)
	OutboxEvents(ctx context.Context, limit int) ([]Event, error)
	DeadEvents(ctx context.Context, limit int) ([]Event, error)
	WasDelivered(ctx context.Context, id string) (time.Time, bool, error)
	// PutSandboxMail keeps a mail and marks its event delivered in one transaction; an
	// event already delivered writes nothing.
	PutSandboxMail(ctx context.Context, eventID string, raw []byte, at time.Time) error
	SandboxMails(ctx context.Context, limit int) ([][]byte, error)
	PruneOutbox(ctx context.Context, now time.Time) (int, error)
	OutboxDepth(ctx context.Context) int
}

// IntegrationUsers keeps the integration users of the sandbox's lookup API.
type IntegrationUsers interface {
	IntegrationUser(ctx context.Context, user string) (*IntegrationUser, error)
	IntegrationUserOf(ctx context.Context, merchantID string) (*IntegrationUser, error)
	PutIntegrationUser(ctx context.Context, u *IntegrationUser) error
}

// LookupRequests remembers the lookup API's request ids, to refuse a reused one.
type LookupRequests interface {
	SeenLookupRequest(ctx context.Context, merchantID, requestID string, at time.Time) (bool, error)
	PruneLookupRequests(ctx context.Context, cutoff time.Time) (int, error)
}

// SessionStore is the sessions' store: github.com/alexedwards/scs/v2's Store and
// IterableStore, plus which session is a card payout's current one.
type SessionStore interface {
	Find(token string) ([]byte, bool, error)
	Commit(token string, b []byte, expiry time.Time) error
	Delete(token string) error
	All() (map[string][]byte, error)
	// Cleanup deletes the expired sessions and card-session bindings, and says how many.
	Cleanup() (int, error)
	BindCardSession(payoutID int64, sid string, expiry time.Time) error
	CardSession(payoutID int64) (string, error)
}

// OutboxState is where an event is in its delivery.
type OutboxState string

// Outbox states.
const (
	OutboxPending   OutboxState = "pending"   // waiting for its first try
	OutboxRetrying  OutboxState = "retrying"  // tried and failed, tried again later
	OutboxDead      OutboxState = "dead"      // given up on, kept in the dead letters
	OutboxDelivered OutboxState = "delivered" // delivered; only its id and time are kept
)

// OutboxRecord is one event as the dashboard shows it. A delivered event keeps only its id
// and delivery time (the outbox deletes the rest), so its other fields are what the id
// tells: the kind, and the payout for outcome events.
type OutboxRecord struct {
	Event
	State       OutboxState
	DeliveredAt time.Time
}

// HeldRecord is an event still held, pending, retrying or (dead) in the dead letters.
func HeldRecord(ev Event, dead bool) OutboxRecord {
	state := OutboxPending
	switch {
	case dead:
		state = OutboxDead
	case ev.Attempts > 0:
		state = OutboxRetrying
	}
	return OutboxRecord{Event: ev, State: state}
}

// DeliveredRecord is a delivered event as its id and delivery time tell it: the kind, and
// the payout of an outcome event (OutcomeEvents' ids; a cash code's id is random).
func DeliveredRecord(id string, at time.Time) OutboxRecord {
	ev := Event{ID: id}
	kind, parts, ok := splitEventID(id)
	if !ok {
		kind, _, _ = strings.Cut(id, legacyEventIDSeparator)
	}
	ev.Kind = kind
	if ok && kind != EventCashOTP {
		if n, err := strconv.ParseInt(parts[0], 10, 64); err == nil && n > 0 {
			ev.PayoutID = n
		}
	}
	return OutboxRecord{Event: ev, State: OutboxDelivered, DeliveredAt: at}
}

// DumpRecord is one record of a store in the engine-neutral form that `payouts migrate`
// copies from one engine to the other. Value is JSON, its shape given by Kind.
type DumpRecord struct {
	Kind  string          `json:"kind"`
	Value json.RawMessage `json:"value"`
}

// The kinds of record a store holds, each with the type its Value holds.
const (
	DumpMerchant        = "merchant"         // Merchant
	DumpBalance         = "balance"          // DumpedBalance
	DumpPayout          = "payout"           // DumpedPayout
	DumpEvent           = "event"            // DumpedEvent (pending or dead)
	DumpDelivered       = "delivered"        // DumpedDelivery
	DumpMail            = "mail"             // DumpedMail
	DumpCard            = "card"             // DumpedCard
	DumpSession         = "session"          // DumpedSession
	DumpCardSession     = "card-session"     // DumpedCardSession
	DumpClock           = "clock"            // DumpedClock
	DumpScripts         = "scripts"          // DumpedScripts
	DumpDirectory       = "directory"        // DumpedDirectoryEntry
	DumpIntegrationUser = "integration-user" // IntegrationUser
	DumpLoggedEvent     = "logged-event"     // LoggedEvent, with its Seq
	DumpInboxItem       = "inbox-item"       // DumpedInboxItem, in each merchant's order
	DumpDeliveryChaos   = "delivery-chaos"   // DumpedDeliveryChaos
	DumpBatch           = "batch"            // DumpedBatch: a batch with its items
	DumpLedgerEntry     = "ledgerEntry"      // DumpedLedgerEntry
	DumpUser            = "user"             // User, with its hashes and sealed secret
	DumpAudit           = "audit"            // AuditEntry, with its id
)

// DumpKinds are every kind, in the order Dump gives them and Restore writes them: a
// merchant before what is its, a payout before its events. A new kind goes here, in each
// engine's dump and restore tables (store/bolt/dump.go, store/postgres/dump.go), and in the
// conformance suite's fill of every kind (storetest).
var DumpKinds = []string{DumpMerchant, DumpBalance, DumpPayout, DumpEvent, DumpDelivered, DumpMail, DumpCard,
	DumpSession, DumpCardSession, DumpClock, DumpScripts, DumpDirectory, DumpIntegrationUser,
	DumpLoggedEvent, DumpInboxItem, DumpDeliveryChaos, DumpBatch, DumpLedgerEntry, DumpUser, DumpAudit}

// DumpedBalance is a merchant's balance with its ledger totals. Balance's JSON leaves the
// totals out (they are not on the wire), so a dumped balance carries them beside it:
// {"merchantId", "balance", "funded", "processed", "reversed"}.
type DumpedBalance struct {
	MerchantID string  `json:"merchantId"`
	Balance    Balance `json:"balance"`
}

// dumpedBalanceJSON is DumpedBalance as JSON.
type dumpedBalanceJSON struct {
	MerchantID string  `json:"merchantId"`
	Balance    Balance `json:"balance"`
	Funded     int64   `json:"funded"`
	Processed  int64   `json:"processed"`
	Reversed   int64   `json:"reversed"`
}

// MarshalJSON writes the balance with its ledger totals.
func (d DumpedBalance) MarshalJSON() ([]byte, error) {
	return json.Marshal(dumpedBalanceJSON{MerchantID: d.MerchantID, Balance: d.Balance,
		Funded: d.Balance.Funded, Processed: d.Balance.Processed, Reversed: d.Balance.Reversed})
}

// UnmarshalJSON reads the balance with its ledger totals.
func (d *DumpedBalance) UnmarshalJSON(b []byte) error {
	var w dumpedBalanceJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	d.MerchantID, d.Balance = w.MerchantID, w.Balance
	d.Balance.Funded, d.Balance.Processed, d.Balance.Reversed = w.Funded, w.Processed, w.Reversed
	return nil
}

// DumpedPayout is a payout with when it is due next (zero: not queued).
type DumpedPayout struct {
	Payout *Payout   `json:"payout"`
	Due    time.Time `json:"due"`
}

// DumpedEvent is an event of the outbox, pending or in the dead letters.
type DumpedEvent struct {
	Event Event `json:"event"`
	Dead  bool  `json:"dead,omitempty"`
}

// DumpedDelivery is a delivered event id.
type DumpedDelivery struct {
	ID string    `json:"id"`
	At time.Time `json:"at"`
}

// DumpedMail is a mail of the sandbox mailbox.
type DumpedMail struct {
	EventID string    `json:"eventId"`
	Raw     []byte    `json:"raw"`
	At      time.Time `json:"at"`
}

// DumpedCard is a tokenized card as kept (sealed), saved on file under the beneficiary's
// document or bound to one payout.
type DumpedCard struct {
	MerchantID string  `json:"merchantId,omitempty"`
	DocType    int     `json:"docType,omitempty"`
	DocNumber  string  `json:"docNumber,omitempty"`
	PayoutID   int64   `json:"payoutId,omitempty"`
	Ref        CardRef `json:"ref"`
	Sealed     []byte  `json:"sealed"`
	OnFile     bool    `json:"onFile,omitempty"`
}

// DumpedSession is an scs session (its token as scs hands it to the store).
type DumpedSession struct {
	Token  string    `json:"token"`
	Data   []byte    `json:"data"`
	Expiry time.Time `json:"expiry"`
}

// DumpedCardSession binds a card payout to its current session.
type DumpedCardSession struct {
	PayoutID  int64     `json:"payoutId"`
	SessionID string    `json:"sessionId"`
	Expiry    time.Time `json:"expiry"`
}

// DumpedClock is the sandbox clock's offset.
type DumpedClock struct {
	Offset time.Duration `json:"offset"`
}

// DumpedScripts are a merchant's scripted sandbox outcomes.
type DumpedScripts struct {
	MerchantID string       `json:"merchantId"`
	Rules      []ScriptRule `json:"rules"`
}

// DumpedDirectoryEntry is an admin's entry of the simulated directory.
type DumpedDirectoryEntry struct {
	Country string         `json:"country"`
	ID      string         `json:"id"`
	Entry   DirectoryEntry `json:"entry"`
}

// Gauge is one figure an engine reports for /metrics (pool, claims).
type Gauge struct {
	Name, Help string
	Value      float64
}

// WriterHealth is an engine whose writes go through one writer that can stall (store/bolt's
// group writer): /readyz answers 503 with the reason while it does, so traffic goes elsewhere.
type WriterHealth interface {
	// WriterStalled says why writes cannot be relied on now, or "" when they can.
	WriterStalled() string
}

// GaugeSource is an engine that reports gauges: both do.
type GaugeSource interface {
	Gauges() []Gauge
}
