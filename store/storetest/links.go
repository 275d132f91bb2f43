package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"payouts/rules"
	"payouts/rules/workers"
)

// testLinks: what a payout link's page relies on the engine for, with no lock of its own
// (rules.Lifecycle.LinkDestination, CountLinkAttempt, EndLink): each is one conditional
// write of the payout, so concurrent callers, on one handle or two, give the link one
// destination and lock it once.
func testLinks(t *testing.T, e Engine) {
	const callers = 8

	t.Run("of concurrent submissions on both handles one gives the destination, and the payout is paid once", func(t *testing.T) {
		w := newLinkWorld(t, e)
		p := w.link(t, "LINK-SUBMIT")
		ba := rules.BankAccount{BankCode: "002", AccountType: "2", AccountNumber: account}
		req, route, err := rules.CheckLinkDestination(p, w.m, ba, w.clk.Now())
		if err != nil {
			t.Fatal(err)
		}
		errs := w.concurrently(callers, func(lc *rules.Lifecycle) error {
			_, err := lc.LinkDestination(context.Background(), w.m, p.ID, req, route)
			return err
		})
		if n := countNil(errs); n != 1 {
			t.Fatalf("%d of %d concurrent submissions took the destination, want 1: %v", n, callers, errs)
		}
		w.settle(t)
		w.clk.Add(lifeBatchDelay)
		w.settle(t)
		got := payoutOf(t, w.s, w.m.ID, p.ID)
		if got.Status != rules.StatusProcessed || got.Reserved != 0 || got.Channel == rules.ChannelLink {
			t.Fatalf("the payout ended %s/%s on %s holding %d, want PROCESSED", got.Stage, got.Status, got.Channel, got.Reserved)
		}
		w.paidOnce(t, linkAmount)
		if n := w.events(t, p.ID, rules.LinkSubmitted); n != 1 {
			t.Errorf("%d link.SUBMITTED events, want 1", n)
		}
		if _, err := w.lc.LinkDestination(context.Background(), w.m, p.ID, req, route); err == nil {
			t.Error("a later submission took a destination again")
		}
	})

	t.Run("concurrent failed submissions on both handles count each, and the fifth locks the link once", func(t *testing.T) {
		w := newLinkWorld(t, e)
		p := w.link(t, "LINK-FAIL")
		var mu sync.Mutex
		var locked []*rules.Payout
		errs := w.concurrently(callers, func(lc *rules.Lifecycle) error {
			got, err := lc.CountLinkAttempt(context.Background(), w.m, p.ID, rules.LinkFailed)
			if err == nil && got.Link.Locked() {
				mu.Lock()
				locked = append(locked, got)
				mu.Unlock()
			}
			return err
		})
		if n := countNil(errs); n != rules.LinkAttemptsMax {
			t.Errorf("%d of %d concurrent failures were counted, want %d: %v", n, callers, rules.LinkAttemptsMax, errs)
		}
		if len(locked) != 1 {
			t.Fatalf("%d failures locked the link, want 1", len(locked))
		}
		for _, err := range errs {
			var re *rules.Error
			if err != nil && (!errors.As(err, &re) || re.Code != rules.CodeWrongState) {
				t.Errorf("a failure after the lock: %v, want %s", err, rules.CodeWrongState)
			}
		}
		got := payoutOf(t, w.s, w.m.ID, p.ID)
		if got.Status != rules.StatusExpired || got.Reserved != 0 || got.Link.Failures != rules.LinkAttemptsMax ||
			len(got.Errors) != 1 || got.Errors[0].Code != rules.CodeCardAttemptsExceded {
			t.Fatalf("locked link: %s reserved %d, failures %d, errors %+v", got.Status, got.Reserved, got.Link.Failures, got.Errors)
		}
		if b := balanceOf(t, w.s, w.m.ID, "PER", "PEN"); b.Available != linkFunds || b.Processed != 0 {
			t.Errorf("balance after the lock %+v, want %d available", b, linkFunds)
		}
		if n := w.events(t, p.ID, rules.LinkExpired); n != 1 {
			t.Errorf("%d link.EXPIRED events, want 1", n)
		}
		if err := w.s.CheckAllLedgers(context.Background()); err != nil {
			t.Error(err)
		}
		ba := rules.BankAccount{BankCode: "002", AccountType: "2", AccountNumber: account}
		req, route, err := rules.CheckLinkDestination(p, w.m, ba, w.clk.Now())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.lc.LinkDestination(context.Background(), w.m, p.ID, req, route); err == nil {
			t.Error("a locked link took a destination")
		}
	})

	t.Run("a submission racing failures either gives the destination before the lock or finds the link locked", func(t *testing.T) {
		w := newLinkWorld(t, e)
		p := w.link(t, "LINK-RACE")
		for range rules.LinkAttemptsMax - 1 {
			if _, err := w.lc.CountLinkAttempt(context.Background(), w.m, p.ID, rules.LinkFailed); err != nil {
				t.Fatal(err)
			}
		}
		ba := rules.BankAccount{BankCode: "002", AccountType: "2", AccountNumber: account}
		req, route, err := rules.CheckLinkDestination(p, w.m, ba, w.clk.Now())
		if err != nil {
			t.Fatal(err)
		}
		errs := w.concurrently(2, func(lc *rules.Lifecycle) error {
			if lc == w.lc.Lifecycle {
				_, err := lc.LinkDestination(context.Background(), w.m, p.ID, req, route)
				return err
			}
			_, err := lc.CountLinkAttempt(context.Background(), w.m, p.ID, rules.LinkFailed)
			return err
		})
		if n := countNil(errs); n != 1 {
			t.Fatalf("the submission and the fifth failure: %v, want exactly one written", errs)
		}
		w.settle(t)
		w.clk.Add(lifeBatchDelay)
		w.settle(t)
		got := payoutOf(t, w.s, w.m.ID, p.ID)
		switch {
		case errs[0] == nil && got.Status == rules.StatusProcessed:
			w.paidOnce(t, linkAmount)
		case errs[1] == nil && got.Status == rules.StatusExpired && got.Reserved == 0:
			w.paidOnce(t, 0)
		default:
			t.Fatalf("submission %v, failure %v: the payout ended %s holding %d", errs[0], errs[1], got.Status, got.Reserved)
		}
	})

	t.Run("the sixth holder's name locks the link, and a link given a destination is not ended by the review", func(t *testing.T) {
		w := newLinkWorld(t, e)
		p := w.link(t, "LINK-LOOKS")
		for i := range rules.LinkAttemptsMax + 1 {
			got, err := w.lc.CountLinkAttempt(context.Background(), w.m, p.ID, rules.LinkLooked)
			if err != nil {
				t.Fatal(err)
			}
			if locked := i == rules.LinkAttemptsMax; got.Link.Locked() != locked || (got.Status == rules.StatusExpired) != locked {
				t.Fatalf("look %d: locked %v, %s", i+1, got.Link.Locked(), got.Status)
			}
		}
		q := w.link(t, "LINK-GIVEN")
		ba := rules.BankAccount{BankCode: "002", AccountType: "2", AccountNumber: account}
		req, route, err := rules.CheckLinkDestination(q, w.m, ba, w.clk.Now())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.lcB.LinkDestination(context.Background(), w.m, q.ID, req, route); err != nil {
			t.Fatal(err)
		}
		if _, err := w.lc.EndLink(context.Background(), w.m, q.ID, rules.StatusRejectedBank, rules.CodeLinkOwnership, "late review"); err == nil {
			t.Error("the review of another submission ended a link that took a destination")
		}
		if _, err := w.lc.CountLinkAttempt(context.Background(), w.m, q.ID, rules.LinkFailed); err == nil {
			t.Error("a failure was counted on a link that took a destination")
		}
		if got := payoutOf(t, w.s, w.m.ID, q.ID); got.Channel == rules.ChannelLink || got.Status.Final() {
			t.Errorf("the given link is %s/%s", got.Stage, got.Status)
		}
	})
}

const (
	linkAmount = 2000
	linkFunds  = 10_000
)

// linkWorld is a lifeWorld with a second lifecycle on the engine's second handle (the same
// one on bbolt), as a second instance of the service would run.
type linkWorld struct {
	*lifeWorld
	lcB *workers.Lifecycle
}

func newLinkWorld(t *testing.T, e Engine) *linkWorld {
	t.Helper()
	a, b := e.handles(t)
	w := &linkWorld{lifeWorld: newLifeWorld(t, a)}
	w.lcB = &workers.Lifecycle{
		Lifecycle: &rules.Lifecycle{Store: b, Merchants: func(id string) (*rules.Merchant, error) { return b.Merchant(context.Background(), id) },
			Now: w.clk.Now, Log: slog.New(slog.NewTextHandler(io.Discard, nil))},
		Rail: w.lc.Rail,
	}
	w.lcB.OnFinal().Bind(rules.OutcomeEventsHook(w.clk.Now))
	w.lcB.OnFinal().Bind(rules.LinkEventsHook(w.clk.Now))
	w.lc.OnFinal().Bind(rules.LinkEventsHook(w.clk.Now))
	if _, err := w.lc.Fund(context.Background(), w.m.ID, "PER", "PEN", linkFunds); err != nil {
		t.Fatal(err)
	}
	return w
}

// link creates a Peru payout link of linkAmount to a bank account, as the service does
// (rules.ValidateLink, admitted in its create), and waits until it is reserved.
func (w *linkWorld) link(t *testing.T, orderID string) *rules.Payout {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"country": "PER", "amount": linkAmount, "currency": "PEN", "orderId": orderID,
		"description": "conformance", "allowedDestinations": []int{2},
		"beneficiary": map[string]any{"name": "Ana", "lastName": "Rojas", "email": "ana.rojas@correo.pe",
			"document": map[string]any{"type": 1, "number": "45678912"}}})
	p, err := rules.ValidateLink(body, w.m, w.clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	admit := func(p *rules.Payout, l rules.Ledger) (time.Time, error) { return w.lc.Admit(p, w.m, l) }
	stored, created, err := w.s.CreatePayout(context.Background(), p, w.clk.Now(), nil, admit)
	if err != nil || !created {
		t.Fatalf("create link %s: %v %v", orderID, created, err)
	}
	w.settle(t)
	got := payoutOf(t, w.s, w.m.ID, stored.ID)
	if got.Channel != rules.ChannelLink || got.Status != rules.StatusAuthorized || got.Reserved != linkAmount {
		t.Fatalf("link %s: %s %s reserved %d", orderID, got.Channel, got.Status, got.Reserved)
	}
	return got
}

// concurrently calls f n times at once, alternately with each handle's lifecycle, and
// answers each call's error in the order of the calls.
func (w *linkWorld) concurrently(n int, f func(*rules.Lifecycle) error) []error {
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range errs {
		lc := w.lc.Lifecycle
		if i%2 == 1 {
			lc = w.lcB.Lifecycle
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = f(lc)
		}()
	}
	close(start)
	wg.Wait()
	return errs
}

// paidOnce checks the balance: paid processed in all, the rest available, the ledger sound.
func (w *linkWorld) paidOnce(t *testing.T, paid int64) {
	t.Helper()
	b := balanceOf(t, w.s, w.m.ID, "PER", "PEN")
	if b.Processed != paid || b.Balance != linkFunds-paid || b.Available != linkFunds-paid {
		t.Errorf("balance %+v, want %d processed of %d", b, paid, linkFunds)
	}
	if err := w.s.CheckAllLedgers(context.Background()); err != nil {
		t.Error(err)
	}
}

// events counts the link events of what written for payout id.
func (w *linkWorld) events(t *testing.T, id int64, what string) int {
	t.Helper()
	evs, err := w.s.OutboxEvents(context.Background(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ev := range evs {
		if ev.Kind == rules.EventLinkNotification && ev.PayoutID == id && strings.HasSuffix(ev.ID, what) {
			n++
		}
	}
	return n
}

func countNil(errs []error) int {
	n := 0
	for _, err := range errs {
		if err == nil {
			n++
		}
	}
	return n
}
