package rules

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// Batches: a merchant's many payouts sent as one request, checked item
// by item with the same rules as a single create, approved by a checker who is not their
// maker, then created as payouts exactly once each (by their orderIds) through the same
// create path as a single payout.

// MaxBatchItems is the most items a batch may have.
const MaxBatchItems = 10_000

// MaxBatchBody is the largest body of a batch create (the other operations take 64 KiB).
const MaxBatchBody = 10 << 20

// BatchStatus is where a batch is.
type BatchStatus string

// Batch statuses: INVALID and DRAFT are answers to the upload; an approved batch goes
// APPROVED → PROCESSING → COMPLETED (every item created as a payout, or refused at creation).
const (
	BatchInvalid    BatchStatus = "INVALID"
	BatchDraft      BatchStatus = "DRAFT"
	BatchApproved   BatchStatus = "APPROVED"
	BatchProcessing BatchStatus = "PROCESSING"
	BatchCompleted  BatchStatus = "COMPLETED"
)

// Batch is a merchant's batch. MadeBy and ApprovedBy are principals: "key:" and an API
// key's id, or "dashboard:" and the dashboard's signed-in principal.
type Batch struct {
	ID          int64        `json:"id"`
	MerchantID  string       `json:"merchantId"`
	BatchID     string       `json:"batchId"`
	Status      BatchStatus  `json:"status"`
	Fingerprint string       `json:"fingerprint"`
	Items       int          `json:"items"`
	Invalid     int          `json:"invalid"`         // items with at least one error
	Links       int          `json:"links,omitempty"` // valid items without destination: payout links
	Errors      []BatchError `json:"errors,omitempty"`
	Totals      []BatchTotal `json:"totals,omitempty"` // of the valid items, by currency
	MadeBy      string       `json:"madeBy"`
	ApprovedBy  string       `json:"approvedBy,omitempty"`
	CreatedAt   time.Time    `json:"createdAt"`
	ApprovedAt  time.Time    `json:"approvedAt,omitzero"`
	CompletedAt time.Time    `json:"completedAt,omitzero"` // every item created or refused
	NotifiedAt  time.Time    `json:"notifiedAt,omitzero"`  // every item final; the notification written
}

// BatchError is one problem of one item: Item counts from 1 (the first element of items,
// or the first data row of a CSV).
type BatchError struct {
	Item     int    `json:"item"`
	Code     string `json:"code"`
	Location string `json:"location,omitempty"`
	Message  string `json:"message"`
}

// BatchTotal is the sum of a batch's items in one currency.
type BatchTotal struct {
	Currency string `json:"currency"`
	Items    int    `json:"items"`
	Amount   int64  `json:"amount"`
	Paid     int64  `json:"paid" doc:"Of payouts in stage SUCCESS"`
}

// BatchItem is one item of a batch: its request body, and once created its payout (or why
// its creation was refused). Stage and Status are its payout's, filled by the engine when
// it reads the items; they are not stored with the item.
type BatchItem struct {
	Seq      int             `json:"item"`
	OrderID  string          `json:"orderId"`
	Currency string          `json:"currency,omitempty"`
	Amount   int64           `json:"amount,omitempty"`
	Body     json.RawMessage `json:"body"`
	PayoutID int64           `json:"payoutId,omitempty"`
	Code     string          `json:"code,omitempty"` // refused at creation
	Message  string          `json:"message,omitempty"`
	Location string          `json:"location,omitempty"`
	// Link marks an item without destination: it becomes a payout link (CreateLink), whose
	// beneficiary gives the destination.
	Link   bool   `json:"link,omitempty"`
	Stage  Stage  `json:"-"`
	Status Status `json:"-"`
}

// Done says whether the item needs no more creating: it has a payout, or was refused.
func (it *BatchItem) Done() bool { return it.PayoutID != 0 || it.Code != "" }

// Final says whether the item reached a final stage: its payout's, or refused at creation.
func (it *BatchItem) Final() bool {
	return it.Code != "" || it.PayoutID != 0 && (it.Stage == StageSuccess || it.Stage == StageRejected)
}

// BatchStore keeps the batches; store/bolt and store/postgres implement it.
type BatchStore interface {
	// CreateBatch stores b (its ID is assigned) with its items, unless the merchant has a
	// batch of that BatchID: then it returns that one and false.
	CreateBatch(ctx context.Context, b *Batch, items []BatchItem) (*Batch, bool, error)
	Batch(ctx context.Context, merchantID string, id int64) (*Batch, error) // ErrNotFound when none
	// Batches lists the merchant's batches with an id above after, in id order.
	Batches(ctx context.Context, merchantID string, after int64, limit int) ([]*Batch, error)
	// BatchItems lists a batch's items with Seq above after, in order, with their payouts'
	// stage and status; limit 0 is all.
	BatchItems(ctx context.Context, merchantID string, id int64, after, limit int) ([]BatchItem, error)
	// UpdateBatch changes a batch in one transaction, with the events fn returns written to
	// the outbox in it.
	UpdateBatch(ctx context.Context, merchantID string, id int64, fn func(*Batch) ([]Event, error)) (*Batch, error)
	// RecordBatchItems writes the payout or refusal of items (by Seq).
	RecordBatchItems(ctx context.Context, merchantID string, id int64, items []BatchItem) error
	// RunnableBatches lists the batches of every merchant still APPROVED or PROCESSING, or
	// COMPLETED and not yet notified.
	RunnableBatches(ctx context.Context) ([]*Batch, error)
	// UsedOrderIDs says which of orderIDs the merchant's payouts already use, with their ids.
	UsedOrderIDs(ctx context.Context, merchantID string, orderIDs []string) (map[string]int64, error)
}

// DumpedBatch is a batch with its items as dumped.
type DumpedBatch struct {
	Batch *Batch      `json:"batch"`
	Items []BatchItem `json:"items"`
}

// KeyPrincipal is the principal of an API key, as a batch records its maker or approver.
func KeyPrincipal(keyID string) string { return "key:" + keyID }

// BatchRequest is an upload: its batchId and its items' bodies.
type BatchRequest struct {
	BatchID string
	Items   []json.RawMessage
}

// ParseBatchJSON reads {"batchId", "items": [...]}; batchID from the query is used when the
// body has none.
func ParseBatchJSON(body []byte) (BatchRequest, error) {
	var doc struct {
		BatchID *string           `json:"batchId"`
		Items   []json.RawMessage `json:"items"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return BatchRequest{}, &Error{Kind: KindInvalid, Code: CodeBatchBody,
			Message: "the body must be {\"batchId\": \"…\", \"items\": [payout requests]}: " + err.Error()}
	}
	req := BatchRequest{Items: doc.Items}
	if doc.BatchID != nil {
		req.BatchID = *doc.BatchID
	}
	if doc.Items == nil {
		return req, &Error{Kind: KindInvalid, Code: CodeBatchBody, Field: "items", Message: "items is required: an array of payout requests"}
	}
	return req, nil
}

// MaxBatchIDLength is the most characters a batchId may have.
const MaxBatchIDLength = 40

// CheckBatchRequest checks what a batch needs besides its items' own rules. The batchId is
// an identifier as an orderId is (identifier.go): people read it in the dashboard and the
// CSV files, so it refuses what makes one look like another (1909); white space alone
// names nothing and counts as missing.
func CheckBatchRequest(req BatchRequest) error {
	if err := CheckIdentifier("batchId", req.BatchID); err != nil {
		return err
	}
	switch {
	case strings.TrimFunc(req.BatchID, unicode.IsSpace) == "" || utf8.RuneCountInString(req.BatchID) > MaxBatchIDLength:
		return &Error{Kind: KindInvalid, Code: CodeBatchBody, Field: "batchId", Value: req.BatchID,
			Message: fmt.Sprintf("batchId is required: 1 to %d characters, not only white space", MaxBatchIDLength)}
	case len(req.Items) == 0:
		return &Error{Kind: KindInvalid, Code: CodeBatchBody, Field: "items", Message: "items is empty: a batch has 1 to 10,000 items"}
	case len(req.Items) > MaxBatchItems:
		return &Error{Kind: KindTooLarge, Code: CodeBatchTooLarge, Field: "items",
			Message: fmt.Sprintf("a batch has at most %d items; this one has %d", MaxBatchItems, len(req.Items))}
	}
	return nil
}

// Batches creates, approves and reads batches.
type Batches struct {
	Store BatchStore
	Now   func() time.Time
	// Approved is told after a batch is approved (wakes the runner). May be nil.
	Approved func(b *Batch)
}

// Validate checks every item of req with the rules as a single create on ep would
// (Validate: every error of an item at once), orderIds repeated inside the batch, and
// orderIds the merchant's payouts already use. It returns the batch, DRAFT or INVALID, and
// its items.
func (s *Batches) Validate(ctx context.Context, m *Merchant, req BatchRequest, madeBy string, now time.Time) (*Batch, []BatchItem, error) {
	if err := CheckBatchRequest(req); err != nil {
		return nil, nil, err
	}
	b := &Batch{MerchantID: m.ID, BatchID: req.BatchID, Items: len(req.Items), MadeBy: madeBy, CreatedAt: now}
	items := make([]BatchItem, len(req.Items))
	bad := make([]bool, len(req.Items))
	fail := func(i int, code, location, msg string) {
		b.Errors = append(b.Errors, BatchError{Item: i + 1, Code: code, Location: location, Message: msg})
		bad[i] = true
	}
	// Each item is checked on its own, as a single create would be: spread over the cores
	// (a 10,000-item batch is validated in well under its goal of 2 s).
	checked := make([]checkedItem, len(req.Items))
	workers := min(runtime.GOMAXPROCS(0), len(req.Items))
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(req.Items); i += workers {
				checked[i] = checkItem(req.Items[i], m, now)
			}
		}()
	}
	wg.Wait()
	sum := sha256.New()
	first := map[string]int{}
	var orders []string
	for i := range checked {
		c := &checked[i]
		it := &items[i]
		it.Seq, it.Body, it.OrderID, it.Currency, it.Amount, it.Link = i+1, c.body, c.orderID, c.currency, c.amount, c.link
		if c.err != nil {
			var p *Problem
			var e *Error
			switch {
			case errors.As(c.err, &p):
				for _, pe := range p.Errors {
					fail(i, pe.Code, pe.Field, pe.Message)
				}
			case errors.As(c.err, &e):
				fail(i, e.Code, e.Field, e.Message)
			default:
				return nil, nil, c.err
			}
		}
		fmt.Fprintf(sum, "%d:%s\n", i, c.fingerprint)
		if it.OrderID == "" {
			continue
		}
		if j, ok := first[it.OrderID]; ok {
			fail(i, CodeBatchDuplicateOrder, "orderId", fmt.Sprintf("orderId %s is also item %d's: every item needs its own", it.OrderID, j+1))
			continue
		}
		first[it.OrderID] = i
		orders = append(orders, it.OrderID)
	}
	used, err := s.Store.UsedOrderIDs(ctx, m.ID, orders)
	if err != nil {
		return nil, nil, err
	}
	for _, o := range orders {
		if id, ok := used[o]; ok {
			i := first[o]
			fail(i, CodeBatchOrderUsed, "orderId", fmt.Sprintf("orderId %s is already payout %d's", o, id))
		}
	}
	sort.SliceStable(b.Errors, func(i, j int) bool { return b.Errors[i].Item < b.Errors[j].Item })
	b.Fingerprint = hex.EncodeToString(sum.Sum(nil))
	totals := map[string]*BatchTotal{}
	for i := range items {
		if bad[i] {
			b.Invalid++
			continue
		}
		if items[i].Link {
			b.Links++
		}
		t := totals[items[i].Currency]
		if t == nil {
			t = &BatchTotal{Currency: items[i].Currency}
			totals[items[i].Currency] = t
		}
		t.Items++
		t.Amount += items[i].Amount
	}
	for _, t := range totals {
		b.Totals = append(b.Totals, *t)
	}
	sort.Slice(b.Totals, func(i, j int) bool { return b.Totals[i].Currency < b.Totals[j].Currency })
	b.Status = BatchDraft
	if b.Invalid > 0 {
		b.Status = BatchInvalid
	}
	return b, items, nil
}

// checkedItem is one item as Validate checked it.
type checkedItem struct {
	body              json.RawMessage
	orderID, currency string
	amount            int64
	fingerprint       string // the request's, or its body's hash when it does not pass
	link              bool   // no destination: a payout link
	err               error
}

func checkItem(raw json.RawMessage, m *Merchant, now time.Time) checkedItem {
	var compact bytes.Buffer
	if json.Compact(&compact, raw) == nil {
		raw = compact.Bytes()
	}
	c := checkedItem{body: append(json.RawMessage(nil), raw...), link: IsLinkItem(raw)}
	var err error
	if c.link {
		var p *Payout
		if p, err = checkLinkItem(raw, m, now); err == nil {
			c.orderID, c.currency, c.amount, c.fingerprint = p.OrderID, p.Currency, p.Amount, p.Fingerprint
			return c
		}
	} else {
		pr, route, verr := Validate(raw, m, now, EndpointPayouts)
		if verr == nil {
			c.orderID, c.currency, c.amount, c.fingerprint = pr.OrderID, pr.Currency, route.Amount, pr.Fingerprint()
			return c
		}
		err = verr
	}
	c.err = err
	c.fingerprint = fmt.Sprintf("%x", sha256.Sum256(raw))
	var o struct {
		OrderID any `json:"orderId"`
	}
	if json.Unmarshal(raw, &o) == nil {
		if s, ok := o.OrderID.(string); ok {
			c.orderID = strings.TrimSpace(s)
		}
	}
	return c
}

// Create checks and stores an upload, idempotently on its batchId: the same items again
// answer the stored batch (created false); other items under that batchId are a conflict.
// An INVALID batch is stored too, with its report; none of its items is created.
func (s *Batches) Create(ctx context.Context, m *Merchant, req BatchRequest, madeBy string) (*Batch, bool, error) {
	b, items, err := s.Validate(ctx, m, req, madeBy, s.Now().UTC())
	if err != nil {
		return nil, false, err
	}
	stored, created, err := s.Store.CreateBatch(ctx, b, items)
	if err != nil {
		return nil, false, err
	}
	if !created && stored.Fingerprint != b.Fingerprint {
		return nil, false, &Error{Kind: KindConflict, Code: CodeBatchConflict, Field: "batchId", Value: req.BatchID,
			Message: fmt.Sprintf("batchId %s was already used with other items: batch %d", req.BatchID, stored.ID)}
	}
	return stored, created, nil
}

// Get reads one batch of the merchant.
func (s *Batches) Get(ctx context.Context, merchantID string, id int64) (*Batch, error) {
	b, err := s.Store.Batch(ctx, merchantID, id)
	if errors.Is(err, ErrNotFound) {
		return nil, Errorf(KindNotFound, CodeBatchNotFound, "batch %d not found", id)
	}
	return b, err
}

// Approve approves a DRAFT batch by approver, who must not be its maker. Approval is the
// one decision both the signed API (a checker key) and the dashboard go through.
func (s *Batches) Approve(ctx context.Context, merchantID string, id int64, approver string) (*Batch, error) {
	b, err := s.Store.UpdateBatch(ctx, merchantID, id, func(b *Batch) ([]Event, error) {
		if b.Status != BatchDraft {
			return nil, Errorf(KindConflict, CodeBatchState, "batch %d is %s: only a DRAFT batch can be approved", id, b.Status)
		}
		if b.MadeBy == approver {
			return nil, Errorf(KindForbidden, CodeBatchSelfApproval, "batch %d was made by %s, who cannot also approve it: another checker must", id, approver)
		}
		b.Status, b.ApprovedBy, b.ApprovedAt = BatchApproved, approver, s.Now().UTC()
		return nil, nil
	})
	if errors.Is(err, ErrNotFound) {
		return nil, Errorf(KindNotFound, CodeBatchNotFound, "batch %d not found", id)
	}
	if err != nil {
		return nil, err
	}
	if s.Approved != nil {
		s.Approved(b)
	}
	return b, nil
}

// BatchCounts are a batch's items counted by where they are.
type BatchCounts struct {
	Items    int            `json:"items"`
	Valid    int            `json:"valid"`
	Invalid  int            `json:"invalid"`
	Created  int            `json:"created" doc:"Items created as payouts"`
	Refused  int            `json:"refused" doc:"Items refused at creation (their error says why)"`
	Pending  int            `json:"pending" doc:"Valid items not created yet"`
	Final    int            `json:"final" doc:"Items in a final stage (SUCCESS or REJECTED), or refused"`
	Links    int            `json:"links" doc:"Valid items without destination: each is created as a payout link"`
	ByStage  map[string]int `json:"byStage" doc:"Created items by their payout's stage"`
	ByStatus map[string]int `json:"byStatus" doc:"Created items by their payout's status"`
}

// Summarize counts a batch's items and totals them by currency (Paid: of SUCCESS payouts).
func Summarize(b *Batch, items []BatchItem) (BatchCounts, []BatchTotal) {
	c := BatchCounts{Items: b.Items, Invalid: b.Invalid, Valid: b.Items - b.Invalid, Links: b.Links, ByStage: map[string]int{}, ByStatus: map[string]int{}}
	if b.Status == BatchInvalid {
		return c, b.Totals
	}
	totals := map[string]*BatchTotal{}
	for _, t := range b.Totals {
		totals[t.Currency] = &BatchTotal{Currency: t.Currency, Items: t.Items, Amount: t.Amount}
	}
	for i := range items {
		it := &items[i]
		switch {
		case it.PayoutID != 0:
			c.Created++
			c.ByStage[string(it.Stage)]++
			c.ByStatus[string(it.Status)]++
			if it.Stage == StageSuccess && totals[it.Currency] != nil {
				totals[it.Currency].Paid += it.Amount
			}
		case it.Code != "":
			c.Refused++
		default:
			c.Pending++
		}
		if it.Final() {
			c.Final++
		}
	}
	out := make([]BatchTotal, 0, len(totals))
	for _, t := range b.Totals {
		out = append(out, *totals[t.Currency])
	}
	return c, out
}
