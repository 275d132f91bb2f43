package bolt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"sync"
	"time"

	bbolt "go.etcd.io/bbolt"

	"payouts/rules"
)

// A payout is stored in two parts, so that a lifecycle step rewrites about a hundred bytes
// rather than the whole record:
//
//   - its core (bPayouts): what the request and the rules fixed at creation, written once
//     (JSON, about 470 bytes, most of them the request as sent);
//   - its state (bPayoutState): stage, status, the other fields steps change, the history
//     and the payout's place in the lifecycle queue, rewritten at each step (binary, about
//     110 bytes for a settled payout with its five transitions).
//
// The history lives in the state rather than as entries of its own: the state's page is
// written at every step anyway, while separate entries, inserted among the recent payouts,
// split their pages half empty (measured: 740 bytes of pages per payout for the history
// alone). The state is binary because it is the record rewritten most: as JSON it was 320
// bytes, most of them field names and decimal nanoseconds.

// payoutCore is the part of a payout written once. OrderID, Country and Currency are kept
// only when they differ from the request's (they never do for a created payout).
type payoutCore struct {
	MerchantID  string              `json:"m"`
	OrderID     string              `json:"o,omitempty"`
	Country     string              `json:"c,omitempty"`
	Currency    string              `json:"cu,omitempty"`
	Amount      int64               `json:"a"`
	Channel     rules.Channel       `json:"ch"`
	AccountType int                 `json:"at"`
	BankCode    string              `json:"bc,omitempty"`
	Fingerprint string              `json:"f"`
	CreatedAt   int64               `json:"t"`
	ClaimUntil  int64               `json:"cl,omitempty"`
	Request     rules.PayoutRequest `json:"r"`
	Traceparent string              `json:"tp,omitempty"`
	// Link is replaced, never changed in place, by the steps that change it (a resend, a
	// failed attempt): a pointer compares as equal as long as it is the same.
	Link *rules.Link `json:"lk,omitempty"`
}

func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

func coreOf(p *rules.Payout) payoutCore {
	c := payoutCore{MerchantID: p.MerchantID, Amount: p.Amount, Channel: p.Channel, AccountType: p.AccountType,
		BankCode: p.BankCode, Fingerprint: p.Fingerprint, CreatedAt: nanos(p.CreatedAt), ClaimUntil: nanos(p.ClaimUntil),
		Request: p.Request, Traceparent: p.Traceparent, Link: p.Link}
	if p.OrderID != p.Request.OrderID {
		c.OrderID = p.OrderID
	}
	if p.Country != p.Request.Country {
		c.Country = p.Country
	}
	if p.Currency != p.Request.Currency {
		c.Currency = p.Currency
	}
	return c
}

// stateVersion is the first byte of a state record.
const stateVersion = 1

// Flags of a state record: which optional parts follow.
const (
	stateStageOwn     = 1 << iota // the stage is not StageOf(status): it is written
	stateCard                     // a card reference follows
	stateErrors                   // the errors follow, as JSON
	stateCardAttempts             // the card form's failed attempts follow (none: a record written before they were counted)
)

// encodeState writes the mutable part of p, and due (the payout's time in the lifecycle
// queue; zero: not queued):
//
//	version, flags, status, [stage], statusChangedAt (8 bytes), due (varint), reserved,
//	railRef, sessionExpiresAt, claimCodeHash, claimAttempts, [card: token brand bin last4],
//	[cardAttempts], [errors JSON], history count, then per transition: flags, status, [stage],
//	time (varint, from the previous transition's or statusChangedAt for the first), code, note
//
// Strings are a uvarint length and the bytes.
func encodeState(p *rules.Payout, due time.Time) ([]byte, error) {
	b := make([]byte, 0, 64+len(p.History)*24)
	flags := byte(0)
	if p.Stage != rules.StageOf(p.Status) {
		flags |= stateStageOwn
	}
	if p.Card != nil {
		flags |= stateCard
	}
	if len(p.Errors) > 0 {
		flags |= stateErrors
	}
	if p.CardAttempts != 0 {
		flags |= stateCardAttempts
	}
	b = append(b, stateVersion, flags)
	b = appendString(b, string(p.Status))
	if flags&stateStageOwn != 0 {
		b = appendString(b, string(p.Stage))
	}
	changed := nanos(p.StatusChangedAt)
	b = binary.BigEndian.AppendUint64(b, uint64(changed))
	b = binary.AppendVarint(b, nanos(due))
	b = binary.AppendVarint(b, p.Reserved)
	b = appendString(b, p.RailRef)
	b = binary.AppendVarint(b, nanos(p.SessionExpiresAt))
	b = appendString(b, p.ClaimCodeHash)
	b = binary.AppendVarint(b, int64(p.ClaimAttempts))
	if p.Card != nil {
		b = appendString(b, p.Card.Token)
		b = appendString(b, p.Card.Brand)
		b = appendString(b, p.Card.BIN)
		b = appendString(b, p.Card.Last4)
	}
	if flags&stateCardAttempts != 0 {
		b = binary.AppendVarint(b, int64(p.CardAttempts))
	}
	if len(p.Errors) > 0 {
		raw, err := marshal(p.Errors)
		if err != nil {
			return nil, err
		}
		b = appendString(b, string(raw))
	}
	b = binary.AppendUvarint(b, uint64(len(p.History)))
	prev := changed
	for _, t := range p.History {
		tf := byte(0)
		if t.Stage != rules.StageOf(t.Status) {
			tf |= stateStageOwn
		}
		b = append(b, tf)
		b = appendString(b, string(t.Status))
		if tf&stateStageOwn != 0 {
			b = appendString(b, string(t.Stage))
		}
		at := nanos(t.At)
		b = binary.AppendVarint(b, at-prev)
		prev = at
		b = appendString(b, t.Code)
		b = appendString(b, t.Note)
	}
	return b, nil
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

var errBadState = errors.New("store: a payout state record is damaged")

// stateReader reads what encodeState wrote; the first error sticks.
type stateReader struct {
	b   []byte
	err error
}

func (r *stateReader) byte() byte {
	if r.err != nil || len(r.b) < 1 {
		r.err = errBadState
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *stateReader) fixed64() int64 {
	if r.err != nil || len(r.b) < 8 {
		r.err = errBadState
		return 0
	}
	n := binary.BigEndian.Uint64(r.b)
	r.b = r.b[8:]
	return int64(n)
}

func (r *stateReader) varint() int64 {
	if r.err != nil {
		return 0
	}
	n, k := binary.Varint(r.b)
	if k <= 0 {
		r.err = errBadState
		return 0
	}
	r.b = r.b[k:]
	return n
}

func (r *stateReader) string() string {
	if r.err != nil {
		return ""
	}
	n, k := binary.Uvarint(r.b)
	if k <= 0 || uint64(len(r.b)-k) < n {
		r.err = errBadState
		return ""
	}
	s := string(r.b[k : k+int(n)]) // a copy: nothing points into the mmap after the transaction
	r.b = r.b[k+int(n):]
	return s
}

// names are the statuses and stages, so that decoding one, as a state record holds one for
// each transition of the history, shares the constant rather than allocating a copy.
var names = func() map[string]string {
	m := make(map[string]string, len(rules.Statuses)+len(rules.Stages))
	for _, s := range rules.Statuses {
		m[string(s)] = string(s)
	}
	for _, s := range rules.Stages {
		m[string(s)] = string(s)
	}
	return m
}()

// name reads a string that is nearly always a status or a stage.
func (r *stateReader) name() string {
	if r.err != nil {
		return ""
	}
	n, k := binary.Uvarint(r.b)
	if k <= 0 || uint64(len(r.b)-k) < n {
		r.err = errBadState
		return ""
	}
	b := r.b[k : k+int(n)]
	r.b = r.b[k+int(n):]
	if s, ok := names[string(b)]; ok { // the lookup does not copy b
		return s
	}
	return string(b) // a copy: nothing points into the mmap after the transaction
}

// decodeState fills the mutable part of p from a state record and returns the queue time.
func decodeState(raw []byte, p *rules.Payout) (time.Time, error) {
	r := &stateReader{b: raw}
	if r.byte() != stateVersion {
		return time.Time{}, errBadState
	}
	flags := r.byte()
	p.Status = rules.Status(r.name())
	p.Stage = rules.StageOf(p.Status)
	if flags&stateStageOwn != 0 {
		p.Stage = rules.Stage(r.name())
	}
	changed := r.fixed64()
	p.StatusChangedAt = fromNanos(changed)
	due := fromNanos(r.varint())
	p.Reserved = r.varint()
	p.RailRef = r.string()
	p.SessionExpiresAt = fromNanos(r.varint())
	p.ClaimCodeHash = r.string()
	p.ClaimAttempts = int(r.varint())
	if flags&stateCard != 0 {
		p.Card = &rules.CardRef{Token: r.string(), Brand: r.string(), BIN: r.string(), Last4: r.string()}
	}
	if flags&stateCardAttempts != 0 {
		p.CardAttempts = int(r.varint())
	}
	if flags&stateErrors != 0 {
		raw := r.string()
		if r.err == nil {
			if err := unmarshal([]byte(raw), &p.Errors); err != nil {
				return time.Time{}, err
			}
		}
	}
	n, k := binary.Uvarint(r.b)
	if r.err != nil || k <= 0 || n > uint64(len(r.b)) {
		return time.Time{}, errBadState
	}
	r.b = r.b[k:]
	// Room for one more: a payout's state is read mostly to take its next step.
	p.History = make([]rules.Transition, n, n+1)
	prev := changed
	for i := range p.History {
		t := &p.History[i]
		tf := r.byte()
		t.Status = rules.Status(r.name())
		t.Stage = rules.StageOf(t.Status)
		if tf&stateStageOwn != 0 {
			t.Stage = rules.Stage(r.name())
		}
		prev += r.varint()
		t.At = fromNanos(prev)
		t.Code = r.string()
		t.Note = r.string()
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = errBadState
	}
	return due, r.err
}

// payoutBuckets are the buckets of one payout's parts in a transaction.
type payoutBuckets struct {
	core, state *bbolt.Bucket
	// cores, when set, is looked up before a core is decoded; fill says whether a core
	// decoded here may go into it: only in a read transaction, whose records are committed.
	cores *coreCache
	fill  bool
	// coreAt and stateAt, when set, read the parts: one cursor each for the transaction,
	// repositioned for every read, where a bucket's Get makes a cursor and its stack per key
	// (four allocations; a lifecycle round reads hundreds of payouts).
	coreAt, stateAt *bbolt.Cursor
}

func payoutBucketsOf(tx *bbolt.Tx) payoutBuckets {
	return payoutBuckets{core: tx.Bucket(bPayouts), state: tx.Bucket(bPayoutState)}
}

// buckets are the payout buckets of tx with the database's cache of decoded cores.
func (s *DB) buckets(tx *bbolt.Tx) payoutBuckets {
	pb := payoutBucketsOf(tx)
	pb.cores, pb.fill = &s.cores, !tx.Writable()
	pb.coreAt, pb.stateAt = pb.core.Cursor(), pb.state.Cursor()
	return pb
}

// getCore and getState read a payout's parts by its key (be64 of its id); nil when absent.
func (b payoutBuckets) getCore(k []byte) []byte { return cursorGet(b.coreAt, b.core, k) }

func (b payoutBuckets) getState(k []byte) []byte { return cursorGet(b.stateAt, b.state, k) }

// cursorGet is b.Get(k) through c, when there is one.
func cursorGet(c *bbolt.Cursor, b *bbolt.Bucket, k []byte) []byte {
	if c == nil {
		return b.Get(k)
	}
	if ck, v := c.Seek(k); bytes.Equal(ck, k) {
		return v
	}
	return nil
}

// appendOnly tells bbolt that the keys of the payout cores and the list index go at the end
// of their range (ids grow), and that cores are seldom rewritten (only a link's): their
// pages fill up rather than split half empty. It lasts for the transaction.
func appendOnly(tx *bbolt.Tx) {
	for _, name := range [][]byte{bPayouts, bLists} {
		tx.Bucket(name).FillPercent = 1.0
	}
}

// insert writes both parts of a new payout, queued at due.
func (b payoutBuckets) insert(p *rules.Payout, due time.Time) error {
	idKey := be64(uint64(p.ID))
	if err := putJSON(b.core, idKey, coreOf(p)); err != nil {
		return err
	}
	return b.putState(p, due)
}

func (b payoutBuckets) putState(p *rules.Payout, due time.Time) error {
	raw, err := encodeState(p, due)
	if err != nil {
		return err
	}
	return b.state.Put(be64(uint64(p.ID)), raw)
}

// read puts a payout back together, with its queue time; ErrNotFound when there is none.
func (b payoutBuckets) read(id int64) (*rules.Payout, time.Time, error) {
	idKey := be64(uint64(id))
	return b.decode(id, b.getCore(idKey), b.getState(idKey))
}

// decode puts a payout back together from its records, its core from the cache if it is
// there. The payout shares the cached core's request, which no one changes.
func (b payoutBuckets) decode(id int64, coreRaw, stateRaw []byte) (*rules.Payout, time.Time, error) {
	if coreRaw == nil || stateRaw == nil {
		return nil, time.Time{}, ErrNotFound
	}
	var sum uint64
	if b.cores != nil {
		sum = coreSum(coreRaw)
	}
	c := b.cores.get(id, sum)
	switch {
	case c != nil:
	case b.fill:
		c = new(payoutCore)
		if err := unmarshal(coreRaw, c); err != nil {
			return nil, time.Time{}, err
		}
		b.cores.put(id, sum, c)
	default:
		// Decoded only to be copied into the payout: the lifecycle's reads and the steps
		// decode two or three cores a payout, each a struct of the size of a request.
		c = scratchCores.Get().(*payoutCore)
		defer func() {
			*c = payoutCore{} // the decoder leaves a field it does not find as it was
			scratchCores.Put(c)
		}()
		if err := unmarshal(coreRaw, c); err != nil {
			return nil, time.Time{}, err
		}
	}
	p := &rules.Payout{ID: id, MerchantID: c.MerchantID, OrderID: c.OrderID, Country: c.Country, Currency: c.Currency,
		Amount: c.Amount, Channel: c.Channel, AccountType: c.AccountType, BankCode: c.BankCode, Request: c.Request,
		Fingerprint: c.Fingerprint, CreatedAt: fromNanos(c.CreatedAt), ClaimUntil: fromNanos(c.ClaimUntil),
		Traceparent: c.Traceparent, Link: c.Link}
	if p.OrderID == "" {
		p.OrderID = c.Request.OrderID
	}
	if p.Country == "" {
		p.Country = c.Request.Country
	}
	if p.Currency == "" {
		p.Currency = c.Request.Currency
	}
	due, err := decodeState(stateRaw, p)
	if err != nil {
		return nil, time.Time{}, err
	}
	return p, due, nil
}

// scratchCores are the cores decode decodes for one payout and does not keep.
var scratchCores = sync.Pool{New: func() any { return new(payoutCore) }}

// readState reads only a payout's state (the status of a card sweep, for example).
func (b payoutBuckets) readState(id int64) (*rules.Payout, error) {
	raw := b.state.Get(be64(uint64(id)))
	if raw == nil {
		return nil, ErrNotFound
	}
	p := &rules.Payout{ID: id}
	_, err := decodeState(raw, p)
	return p, err
}

// update writes what a step changed: the state with the new queue time, and the core only
// if the step changed it (a link's destination, attempts or resend; no lifecycle step).
func (b payoutBuckets) update(p *rules.Payout, core payoutCore, due time.Time) error {
	if c := coreOf(p); c != core {
		if err := putJSON(b.core, be64(uint64(p.ID)), c); err != nil {
			return err
		}
		b.cores.forget(p.ID)
	}
	return b.putState(p, due)
}
