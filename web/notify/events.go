package notify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"time"

	"payouts/rules"
)

// The event log, the sandbox inbox and the delivery chaos of merchant notifications
// (rules.EventLog).

// Headers are the headers of a notification's delivery: the same on every attempt, on a
// resend, and in the event stream that `payouts listen` forwards from, so that a merchant's
// verification code runs unchanged on each. The signature (RSA PKCS#1 v1.5) is
// deterministic: signing the same body again gives the same header.
func (n *Notifier) Headers(merchantID, eventID string, body []byte) (map[string]string, error) {
	sig, err := Sign(n.Key, merchantID, body)
	if err != nil {
		return nil, err
	}
	return map[string]string{
		"Content-Type":    "application/json",
		"verification":    sig,
		"User-Agent":      "payouts-notifications/1",
		"Idempotency-Key": eventID,
	}, nil
}

func (n *Notifier) now() time.Time {
	if n.Now != nil {
		return n.Now()
	}
	return time.Now()
}

func (n *Notifier) rand() float64 {
	if n.Rand != nil {
		return n.Rand()
	}
	return rand.Float64()
}

func (n *Notifier) logger() *slog.Logger {
	if n.Logger != nil {
		return n.Logger
	}
	return slog.Default()
}

// deliver makes one delivery of ev (and, by the merchant's chaos, perhaps a duplicate after
// it), logging each attempt. cause is empty for the dispatcher's own tries.
func (n *Notifier) deliver(ctx context.Context, ev rules.Event, target string, body []byte, cause string) error {
	headers, err := n.Headers(ev.MerchantID, ev.ID, body)
	if err != nil {
		return err
	}
	var chaos rules.DeliveryChaos
	if n.Sandbox && n.Log != nil && cause == "" {
		if c, err := n.Log.DeliveryChaos(ctx, ev.MerchantID); err == nil {
			chaos = c
		} else if !errors.Is(err, rules.ErrNotFound) {
			return err
		}
	}
	wait := chaos.Delay
	if chaos.Reorder {
		wait += time.Duration(n.rand() * float64(rules.ChaosReorderWindow))
	}
	if wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
	a, err := n.attempt(ctx, ev, target, body, headers)
	a.Cause = cause
	if err == nil && chaos.FailFirst > 0 {
		if k := n.countCause(ctx, ev, rules.CauseChaosFailFirst); k < chaos.FailFirst {
			// Sent, and answered, but counted as failed: the receiver sees the event again,
			// as when its answer is lost on the way back.
			err = &rules.DeliveryFailure{Public: fmt.Sprintf("counted as failed on purpose: delivery chaos failFirst (%d of %d)", k+1, chaos.FailFirst)}
			a.Error, a.Cause = err.Error(), rules.CauseChaosFailFirst
		}
	}
	n.log(ctx, ev, body, a)
	if err != nil && cause != "" {
		n.failed(ev, cause, err) // the dispatcher logs its own tries' failures
	}
	if err == nil && chaos.Duplicate > 0 && n.rand() < chaos.Duplicate {
		d, derr := n.attempt(ctx, ev, target, body, headers)
		d.Cause = rules.CauseChaosDuplicate
		n.log(ctx, ev, body, d)
		if derr != nil {
			n.failed(ev, d.Cause, derr)
		}
	}
	return err
}

// failed logs the whole error of an attempt the dispatcher does not see: the event log
// keeps only its class (rules.PublicDeliveryError).
func (n *Notifier) failed(ev rules.Event, cause string, err error) {
	n.logger().Warn("notification: attempt failed", "event", ev.ID, "merchant_id", ev.MerchantID, "cause", cause, "err", err)
}

// countCause counts the logged attempts of ev made for cause.
func (n *Notifier) countCause(ctx context.Context, ev rules.Event, cause string) int {
	e, err := n.Log.LoggedEvent(ctx, ev.MerchantID, ev.ID)
	if err != nil {
		return 0
	}
	k := 0
	for _, a := range e.Attempts {
		if a.Cause == cause {
			k++
		}
	}
	return k
}

// attempt sends one delivery, to the merchant's URL or to the sandbox inbox, and describes it.
func (n *Notifier) attempt(ctx context.Context, ev rules.Event, target string, body []byte, headers map[string]string) (rules.DeliveryAttempt, error) {
	start := time.Now()
	a := rules.DeliveryAttempt{At: n.now().UTC()}
	if n.TraceContext != nil { // per attempt: Headers are the same on every one
		headers = maps.Clone(headers)
		n.TraceContext(ctx, headers)
	}
	var err error
	if target == rules.SandboxInboxURL {
		a.Status, err = n.toInbox(ctx, ev, body, headers, a.At)
	} else {
		a.Status, err = n.post(ctx, ev, target, body, headers)
	}
	a.Duration = time.Since(start)
	if err != nil {
		a.Error = truncate(rules.PublicDeliveryError(err), 500)
	}
	return a, err
}

// toInbox is the sandbox inbox receiving a delivery: it checks the signature as a merchant
// does, with the public key the server serves (parsed from its PEM), and keeps what came.
func (n *Notifier) toInbox(ctx context.Context, ev rules.Event, body []byte, headers map[string]string, at time.Time) (int, error) {
	if !n.Sandbox || n.Log == nil {
		return 0, rules.Permanent(errors.New("the notificationUrl is " + rules.SandboxInboxURL + ", which only a sandbox server delivers to"))
	}
	n.servedKeyOnce.Do(func() { n.servedKey, _ = ParsePublicKeyPEM(PublicKeyPEM(n.Key)) })
	valid := n.servedKey != nil && Verify(n.servedKey, ev.MerchantID, body, headers["verification"]) == nil
	it := rules.InboxItem{EventID: ev.ID, ReceivedAt: at, Headers: headers, Body: body, SignatureValid: valid}
	if err := n.Log.PutInboxItem(ctx, ev.MerchantID, it); err != nil {
		return 0, &rules.DeliveryFailure{Public: "the sandbox inbox of merchant " + ev.MerchantID + " could not keep it", Err: err}
	}
	return 200, nil
}

func (n *Notifier) log(ctx context.Context, ev rules.Event, body []byte, a rules.DeliveryAttempt) {
	if n.Log == nil {
		return
	}
	rec := rules.LoggedEvent{ID: ev.ID, MerchantID: ev.MerchantID, PayoutID: ev.PayoutID, Type: rules.EventType(ev.ID),
		Body: body, CreatedAt: ev.CreatedAt.UTC()}
	if rec.CreatedAt.IsZero() {
		rec.CreatedAt = a.At
	}
	if err := n.Log.LogAttempt(ctx, rec, a); err != nil {
		n.logger().Error("event log: an attempt was not recorded", "event", ev.ID, "err", err)
		return
	}
	if n.Logged != nil {
		n.Logged(ev.MerchantID)
	}
}

// Resend delivers a logged event once more, now, with its logged body and the same event id
// and headers (POST /api/v1/{merchantId}/events/{eventId}/resend): one attempt, logged with
// cause resend, never retried. The chaos does not apply to it.
func (n *Notifier) Resend(ctx context.Context, e rules.LoggedEvent) error {
	m, err := n.Source.Merchant(ctx, e.MerchantID)
	if err != nil {
		return missing(err, "merchant")
	}
	if m.Settings.NotificationURL == "" {
		return rules.Errorf(rules.KindConflict, rules.CodeNoDeliveryURL, "the merchant has no notificationUrl to resend to")
	}
	ev := rules.Event{ID: e.ID, Kind: rules.EventMerchantNotification, MerchantID: e.MerchantID, PayoutID: e.PayoutID, CreatedAt: e.CreatedAt}
	return n.deliver(ctx, ev, m.Settings.NotificationURL, e.Body, rules.CauseResend)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
