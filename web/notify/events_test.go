package notify_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"payouts/rules"
	"payouts/web/notify"
)

// memLog is an in-memory rules.EventLog: enough for the Notifier's own logic; the engines'
// are tested by store/storetest.
type memLog struct {
	mu     sync.Mutex
	events map[string]*rules.LoggedEvent
	inbox  []rules.InboxItem
	chaos  map[string]rules.DeliveryChaos
}

func newMemLog() *memLog {
	return &memLog{events: map[string]*rules.LoggedEvent{}, chaos: map[string]rules.DeliveryChaos{}}
}

func (l *memLog) LogAttempt(ctx context.Context, ev rules.LoggedEvent, a rules.DeliveryAttempt) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.events[ev.ID]
	if e == nil {
		e = &ev
		l.events[ev.ID] = e
	}
	e.Attempts = append(e.Attempts, a)
	return nil
}
func (l *memLog) LoggedEvents(context.Context, string, rules.EventQuery) ([]rules.LoggedEvent, error) {
	return nil, nil
}
func (l *memLog) LoggedEvent(ctx context.Context, _, id string) (rules.LoggedEvent, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e := l.events[id]; e != nil {
		return *e, nil
	}
	return rules.LoggedEvent{}, rules.ErrNotFound
}
func (l *memLog) AttemptsAfter(context.Context, string, int64, int) ([]rules.FedAttempt, error) {
	return nil, nil
}
func (l *memLog) PruneEventLog(context.Context, time.Time) (int, error) { return 0, nil }
func (l *memLog) PutInboxItem(ctx context.Context, _ string, it rules.InboxItem) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.inbox = append(l.inbox, it)
	return nil
}
func (l *memLog) InboxItems(context.Context, string, int) ([]rules.InboxItem, error) {
	return l.inbox, nil
}
func (l *memLog) DeliveryChaos(ctx context.Context, m string) (rules.DeliveryChaos, error) {
	if c, ok := l.chaos[m]; ok {
		return c, nil
	}
	return rules.DeliveryChaos{}, rules.ErrNotFound
}
func (l *memLog) PutDeliveryChaos(ctx context.Context, m string, c rules.DeliveryChaos) error {
	l.chaos[m] = c
	return nil
}
func (l *memLog) DeleteDeliveryChaos(ctx context.Context, m string) error {
	delete(l.chaos, m)
	return nil
}

func inboxNotifier(t *testing.T, sandbox bool) (*notify.Notifier, *memLog, rules.Event) {
	k, err := notify.LoadOrCreateKey(filepath.Join(t.TempDir(), "k.pem"))
	if err != nil {
		t.Fatal(err)
	}
	m := &rules.Merchant{ID: "22", Settings: rules.Settings{NotificationURL: rules.SandboxInboxURL}}
	log := newMemLog()
	n := &notify.Notifier{Source: fakeSource{m: m}, Key: k, Log: log, Sandbox: sandbox}
	ev := rules.Event{ID: "merchant.notification:73:PROCESSED", Kind: rules.EventMerchantNotification, MerchantID: "22", PayoutID: 73,
		Data: []byte(`{"payout":{"id":"73"},"output":{"stage":"SUCCESS"}}`), CreatedAt: time.Date(2026, 11, 25, 5, 0, 0, 0, time.UTC)}
	return n, log, ev
}

func TestInboxDeliveryKeepsWhatCameWithTheSignatureChecked(t *testing.T) {
	n, log, ev := inboxNotifier(t, true)
	if err := n.Deliver(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	if len(log.inbox) != 1 {
		t.Fatalf("inbox: %+v", log.inbox)
	}
	it := log.inbox[0]
	if !it.SignatureValid || string(it.Body) != string(ev.Data) || it.EventID != ev.ID || it.Headers["Idempotency-Key"] != ev.ID {
		t.Errorf("inbox item: %+v", it)
	}
	e, _ := log.LoggedEvent(context.Background(), "22", ev.ID)
	if len(e.Attempts) != 1 || e.Attempts[0].Status != 200 || e.Type != "payout.PROCESSED" || string(e.Body) != string(ev.Data) {
		t.Errorf("logged: %+v", e)
	}
}

func TestInboxRefusedOutsideTheSandboxForGood(t *testing.T) {
	n, log, ev := inboxNotifier(t, false)
	err := n.Deliver(context.Background(), ev)
	if err == nil || !rules.IsPermanent(err) || len(log.inbox) != 0 {
		t.Errorf("sandbox off: %v (permanent %v), inbox %d", err, rules.IsPermanent(err), len(log.inbox))
	}
}

func TestChaosDelayAndReorderWaitBeforeTheDelivery(t *testing.T) {
	n, log, ev := inboxNotifier(t, true)
	n.Rand = func() float64 { return 0.1 } // reorder waits 0.1 × 3 s
	log.chaos["22"] = rules.DeliveryChaos{Delay: 200 * time.Millisecond, Reorder: true}
	start := time.Now()
	if err := n.Deliver(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 500*time.Millisecond || took > 3*time.Second {
		t.Errorf("the delivery took %v, want the delay (200ms) plus the reorder wait (300ms)", took)
	}
	// A shutdown during the wait ends it, and the event stays due (no attempt logged).
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	ev.ID = "merchant.notification:74:PROCESSED"
	if err := n.Deliver(ctx, ev); err == nil {
		t.Error("a delivery cut short by its context succeeded")
	}
	if _, err := log.LoggedEvent(ctx, "22", ev.ID); err == nil {
		t.Error("an attempt cut short before sending was logged")
	}
}

func TestResendIsOneAttemptWithoutChaos(t *testing.T) {
	n, log, ev := inboxNotifier(t, true)
	log.chaos["22"] = rules.DeliveryChaos{FailFirst: 5, Duplicate: 1}
	e := rules.LoggedEvent{ID: ev.ID, MerchantID: "22", PayoutID: 73, Body: ev.Data, CreatedAt: ev.CreatedAt}
	if err := n.Resend(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	got, _ := log.LoggedEvent(context.Background(), "22", ev.ID)
	if len(got.Attempts) != 1 || got.Attempts[0].Cause != rules.CauseResend || !got.Attempts[0].Delivered() || len(log.inbox) != 1 {
		t.Errorf("resend: %+v, inbox %d", got.Attempts, len(log.inbox))
	}
}
