package rules

import (
	"context"
	"errors"
	"strconv"
	"time"
)

// Store is what the service needs of the database (implemented by both engines,
// store/bolt and store/postgres).
type Store interface {
	// CreatePayout runs admit (when not nil) on the new payout in the transaction that stores
	// it, and queues it at admit's answer instead of due.
	CreatePayout(ctx context.Context, p *Payout, due time.Time, events []Event, admit Step) (*Payout, bool, error)
	Payout(ctx context.Context, merchantID string, id int64) (*Payout, error)
	PayoutByOrder(ctx context.Context, merchantID, orderID string) (*Payout, error)
	ListPayouts(ctx context.Context, merchantID string, f ListFilter) (Page, error)
}

// Service creates and reads payouts. Its clock is injected so that tests control time.
type Service struct {
	Store Store
	Now   func() time.Time
	// Admit takes a new payout as far as it goes without a rail (Lifecycle.Admit), in the
	// transaction that creates it. May be nil: the lifecycle worker then takes it from CREATED.
	Admit func(p *Payout, m *Merchant, l Ledger) (time.Time, error)
	// Trace, when set, gives a new payout the traceparent of the request creating it
	// (Payout.Traceparent). May be nil.
	Trace Tracer

	onCreate  CreateHooks
	onCreated DoneHooks
}

// OnCreate is the list of hooks that add the events written with a new payout (the cash
// code's mail), in the transaction that creates it.
func (s *Service) OnCreate() *CreateHooks { return &s.onCreate }

// OnCreated is the list of hooks told after a new payout is stored (as it is stored, after
// Admit): metrics, waking the lifecycle worker. A replayed create tells none.
func (s *Service) OnCreated() *DoneHooks { return &s.onCreated }

// CreateResult is the answer to a create: the payout, and whether this call created it
// (false: an identical earlier request did, and this is its replay). A created Payout is
// the payout as the request created it, IN_PROGRESS/CREATED at the request's time:
// the steps Admit took in the same transaction are in the stored history, with their times.
type CreateResult struct {
	Payout  *Payout
	Created bool
	Route   Route
}

// CreatePayout checks body against the generic contract and the country rules, then stores
// the payout idempotently on the merchant's orderId: the same
// request again returns the stored payout; another request with that orderId is a conflict.
// A request that fails any check stores nothing and leaves its orderId unused.
func (s *Service) CreatePayout(ctx context.Context, m *Merchant, body []byte, ep Endpoint) (CreateResult, error) {
	now := s.Now().UTC()
	req, route, err := Validate(body, m, now, ep)
	if err != nil {
		return CreateResult{}, err
	}
	return s.create(ctx, m, NewPayout(m.ID, req, route, now), route)
}

// create stores a payout built from a checked request (CreatePayout, CreateLink).
func (s *Service) create(ctx context.Context, m *Merchant, p *Payout, route Route) (CreateResult, error) {
	now, req := p.CreatedAt, &p.Request
	if s.Trace != nil {
		p.Traceparent = s.Trace.Traceparent(ctx)
	}
	events, err := s.onCreate.Trigger(p, m)
	if err != nil {
		return CreateResult{}, err
	}
	var admit Step
	if s.Admit != nil {
		admit = func(p *Payout, l Ledger) (time.Time, error) { return s.Admit(p, m, l) }
	}
	stored, created, err := s.Store.CreatePayout(ctx, p, now, events, admit)
	if err != nil {
		return CreateResult{}, err
	}
	if !created {
		if stored.Fingerprint != p.Fingerprint {
			return CreateResult{}, &Problem{Kind: KindConflict, Title: "Conflict",
				Detail: "the orderId was already used with a different request",
				Errors: []*Error{{Kind: KindConflict, Code: CodeOrderIDDuplicated, Field: "orderId", Value: req.OrderID,
					Message: "orderId " + req.OrderID + " was already used with a different request; payout " + itoa(stored.ID)}}}
		}
		return CreateResult{Payout: stored, Created: false, Route: route}, nil
	}
	s.onCreated.Trigger(ctx, stored)
	p.ID = stored.ID
	return CreateResult{Payout: p, Created: true, Route: route}, nil
}

// NewPayout builds the record of an accepted request: IN_PROGRESS/CREATED at now.
func NewPayout(merchantID string, req *PayoutRequest, r Route, now time.Time) *Payout {
	p := &Payout{
		MerchantID:  merchantID,
		OrderID:     req.OrderID,
		Country:     req.Country,
		Currency:    req.Currency,
		Amount:      r.Amount,
		Channel:     r.Channel,
		AccountType: r.AccountType,
		BankCode:    r.BankCode,
		Request:     *req,
		Fingerprint: req.Fingerprint(),
		CreatedAt:   now,
		ClaimUntil:  r.ClaimUntil,
		Stage:       StageInProgress,
		Status:      StatusCreated,
	}
	if r.Channel == ChannelCard {
		p.SessionExpiresAt = now.Add(time.Duration(r.ExpirationMinutes) * time.Minute)
	}
	p.StatusChangedAt = now
	// Room for the statuses its admission moves it through in the create's transaction
	// (authorized, waiting for routing), which would otherwise copy the history twice.
	p.History = make([]Transition, 1, 4)
	p.History[0] = Transition{Stage: StageInProgress, Status: StatusCreated, At: now}
	return p
}

// Payout reads one payout of the merchant.
func (s *Service) Payout(ctx context.Context, merchantID string, id int64) (*Payout, error) {
	p, err := s.Store.Payout(ctx, merchantID, id)
	if errors.Is(err, ErrNotFound) {
		return nil, Errorf(KindNotFound, CodePayoutNotFound, "payout %d not found", id)
	}
	return p, err
}

// ListPayouts returns one page of the merchant's payouts.
func (s *Service) ListPayouts(ctx context.Context, merchantID string, f ListFilter) (Page, error) {
	return s.Store.ListPayouts(ctx, merchantID, f)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
