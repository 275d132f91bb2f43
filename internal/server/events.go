package server

import (
	"context"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/trace"

	"payouts/api"
	"payouts/rules"
)

// wireEvents adds the operations over the event log that the notify lane's deliverer
// writes: the events (list, read, resend), the sandbox inbox, the event stream of
// `payouts listen`, the delivery chaos, and the log's housekeeping.
func (w *wiring) wireEvents(n *notifications) {
	streams := api.NewEventStreams()
	n.webhook.Logged = streams.Notify
	w.onShutdown = append(w.onShutdown, streams.Close)
	// Resends run one after the other on a worker of their own, never on the request, and
	// never hold up the dispatcher's deliveries. Each carries the span of the request that
	// asked for it, when traces are exported: its delivery is a span of that request's trace.
	resends := make(chan queuedResend, 256)
	ev := api.Events{Log: w.db, Sandbox: w.cfg.Sandbox.On, Headers: n.webhook.Headers, Merchant: w.db.Merchant, Streams: streams,
		Resend: func(ctx context.Context, e rules.LoggedEvent) error {
			m, err := w.lc.Merchants(e.MerchantID)
			if err != nil {
				return err
			}
			if m.Settings.NotificationURL == "" {
				return rules.Errorf(rules.KindConflict, rules.CodeNoDeliveryURL, "the merchant has no notificationUrl to resend to")
			}
			select {
			case resends <- queuedResend{event: e, from: trace.SpanContextFromContext(ctx)}:
				return nil
			default:
				return rules.Errorf(rules.KindRateLimited, rules.CodeRateLimited, "too many resends waiting; try again in a moment")
			}
		}}
	w.deps.Events = &ev
	w.workers = append(w.workers, func(ctx context.Context) {
		for {
			select {
			case <-ctx.Done():
				return
			case r := <-resends:
				e := r.event
				err := w.traceResend(ctx, r, func(ctx context.Context) error { return n.webhook.Resend(ctx, e) })
				if err != nil && ctx.Err() == nil {
					w.logger.Warn("event resend failed", "event", e.ID, "merchant", e.MerchantID, "err", err)
				}
			}
		}
	}, w.housekeeping(time.Hour, "event log housekeeping", slog.LevelInfo, func(ctx context.Context) (int, error) {
		// Events are kept rules.EventLogRetention after their first try, then forgotten.
		return w.db.PruneEventLog(ctx, w.now().Add(-rules.EventLogRetention))
	}))
}
