package dashboard

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"

	"payouts/rules"
	"payouts/templates"
)

// The event log's pages: a merchant's logged events with their attempts, the sandbox inbox
// with the bodies pretty-printed, and the delivery chaos on the merchant's page.

// EventLog is what the dashboard reads of the event log (rules.EventLog).
type EventLog interface {
	LoggedEvents(ctx context.Context, merchantID string, q rules.EventQuery) ([]rules.LoggedEvent, error)
	LoggedEvent(ctx context.Context, merchantID, id string) (rules.LoggedEvent, error)
	InboxItems(ctx context.Context, merchantID string, limit int) ([]rules.InboxItem, error)
	DeliveryChaos(ctx context.Context, merchantID string) (rules.DeliveryChaos, error)
}

func (d *Dashboard) eventRoutes(r chi.Router) {
	r.Get("/dashboard/merchants/{id}/events", d.events)
	r.Get("/dashboard/merchants/{id}/events/{eventId}", d.event)
	r.Get("/dashboard/merchants/{id}/inbox", d.inbox)
}

func eventHref(merchantID, eventID string) string {
	return merchantHref(merchantID) + "/events/" + url.PathEscape(eventID)
}

// pretty indents a JSON body; anything else is shown as it came.
func pretty(body []byte) string {
	var b bytes.Buffer
	if json.Indent(&b, body, "", "  ") != nil {
		return string(body)
	}
	return b.String()
}

// webhooksPanel is the merchant page's section on notifications.
func (d *Dashboard) webhooksPanel(ctx context.Context, m *rules.Merchant) (*templates.WebhooksPanel, error) {
	if d.cfg.Events == nil {
		return nil, nil
	}
	base := merchantHref(m.ID)
	p := &templates.WebhooksPanel{NotificationURL: m.Settings.NotificationURL, EventsHref: base + "/events"}
	if !d.cfg.Sandbox {
		return p, nil
	}
	p.InboxHref = base + "/inbox"
	c, err := d.cfg.Events.DeliveryChaos(ctx, m.ID)
	if errors.Is(err, rules.ErrNotFound) {
		return p, nil
	}
	if err != nil {
		return nil, err
	}
	p.Chaos = &templates.ChaosView{Duplicate: strconv.FormatFloat(c.Duplicate, 'f', -1, 64), Reorder: c.Reorder,
		Delay: c.Delay.String(), FailFirst: strconv.Itoa(c.FailFirst)}
	return p, nil
}

// withAttempts fills a merchant notification's row from the event log: the number of
// attempts (the outbox forgets them once delivered) and a link to them.
func (d *Dashboard) withAttempts(ctx context.Context, row *templates.DeliveryRow, dl Delivery) {
	if d.cfg.Events == nil || dl.Kind != rules.EventMerchantNotification || dl.MerchantID == "" {
		return
	}
	e, err := d.cfg.Events.LoggedEvent(ctx, dl.MerchantID, dl.ID)
	if err != nil {
		return // not tried yet, or forgotten after 30 days
	}
	row.Attempts = strconv.Itoa(len(e.Attempts))
	row.EventHref = eventHref(dl.MerchantID, dl.ID)
	if n := len(e.Attempts); n > 0 && row.LastError == "" && e.DeliveredAt.IsZero() {
		row.LastError = rules.PublicAttemptError(e.Attempts[n-1].Error)
	}
}

// eventsMerchant is the merchant of an event page; none (and the answer written) when it is
// unknown or the dashboard has no event log.
func (d *Dashboard) eventsMerchant(w http.ResponseWriter, r *http.Request) (*rules.Merchant, bool) {
	if d.cfg.Events == nil {
		http.NotFound(w, r)
		return nil, false
	}
	return d.merchantOf(w, r)
}

func merchantHref(id string) string { return "/dashboard/merchants/" + url.PathEscape(id) }

// events is /dashboard/merchants/{id}/events: the merchant's logged events, newest first.
func (d *Dashboard) events(w http.ResponseWriter, r *http.Request) {
	m, ok := d.eventsMerchant(w, r)
	if !ok {
		return
	}
	f := d.frame(r, "wh.events", "merchants")
	f.Title = f.W.S("wh.events") + " · " + m.Name
	v := templates.EventsView{Frame: f, MerchantID: m.ID, MerchantHref: merchantHref(m.ID)}
	var all []rules.LoggedEvent
	for after := int64(0); ; {
		es, err := d.cfg.Events.LoggedEvents(r.Context(), m.ID, rules.EventQuery{After: after, Limit: 500})
		if err != nil {
			d.internal(w, r, err)
			return
		}
		all = append(all, es...)
		if len(es) < 500 {
			break
		}
		after = es[len(es)-1].Seq
	}
	slices.Reverse(all)
	if len(all) > logLimit {
		all = all[:logLimit]
	}
	for _, e := range all {
		v.Rows = append(v.Rows, templates.EventRow{EventID: e.ID, EventHref: eventHref(m.ID, e.ID), Type: e.Type,
			PayoutID: strconv.FormatInt(e.PayoutID, 10), Created: timeText(e.CreatedAt), Delivered: timeText(e.DeliveredAt),
			Attempts: strconv.Itoa(len(e.Attempts))})
	}
	d.render(w, r, http.StatusOK, templates.DashEvents(v))
}

// event is /dashboard/merchants/{id}/events/{eventId}: the body sent and every attempt.
func (d *Dashboard) event(w http.ResponseWriter, r *http.Request) {
	m, ok := d.eventsMerchant(w, r)
	if !ok {
		return
	}
	f := d.frame(r, "ev.title", "deliveries")
	e, err := d.cfg.Events.LoggedEvent(r.Context(), m.ID, chi.URLParam(r, "eventId"))
	if errors.Is(err, rules.ErrNotFound) {
		d.back(w, r, merchantHref(m.ID)+"/events", "", f.W.S("ev.none"))
		return
	}
	if err != nil {
		d.internal(w, r, err)
		return
	}
	f.Title = f.W.S("ev.title") + " " + e.ID
	v := templates.EventView{Frame: f, MerchantID: m.ID, MerchantHref: merchantHref(m.ID),
		EventID: e.ID, Type: e.Type, Created: timeText(e.CreatedAt), Delivered: timeText(e.DeliveredAt), Body: pretty(e.Body)}
	if e.PayoutID > 0 {
		v.PayoutID = strconv.FormatInt(e.PayoutID, 10)
		v.PayoutHref = "/dashboard/payouts/" + v.PayoutID
	}
	for _, a := range e.Attempts {
		row := templates.AttemptRow{At: timeText(a.At), Error: rules.PublicAttemptError(a.Error), Duration: a.Duration.Round(time.Millisecond).String(), Cause: a.Cause}
		if a.Status > 0 {
			row.Status = strconv.Itoa(a.Status)
		}
		v.Attempts = append(v.Attempts, row)
	}
	d.render(w, r, http.StatusOK, templates.DashEvent(v))
}

// inbox is /dashboard/merchants/{id}/inbox: the sandbox inbox, bodies pretty-printed.
func (d *Dashboard) inbox(w http.ResponseWriter, r *http.Request) {
	m, ok := d.eventsMerchant(w, r)
	if !ok {
		return
	}
	f := d.frame(r, "inbox.title", "merchants")
	f.Title = f.W.S("inbox.title") + " · " + m.Name
	v := templates.InboxView{Frame: f, MerchantID: m.ID, MerchantHref: merchantHref(m.ID),
		NotificationURL: m.Settings.NotificationURL, SandboxOff: !d.cfg.Sandbox}
	if v.SandboxOff {
		d.render(w, r, http.StatusForbidden, templates.DashInbox(v))
		return
	}
	items, err := d.cfg.Events.InboxItems(r.Context(), m.ID, 100)
	if err != nil {
		d.internal(w, r, err)
		return
	}
	for _, it := range items {
		row := templates.InboxRow{EventID: it.EventID, EventHref: eventHref(m.ID, it.EventID), ReceivedAt: timeText(it.ReceivedAt),
			SignatureValid: it.SignatureValid, Body: pretty(it.Body)}
		names := make([]string, 0, len(it.Headers))
		for k := range it.Headers {
			names = append(names, k)
		}
		slices.Sort(names)
		for _, k := range names {
			row.Headers = append(row.Headers, templates.Option{Value: k, Label: it.Headers[k]})
		}
		v.Rows = append(v.Rows, row)
	}
	d.render(w, r, http.StatusOK, templates.DashInbox(v))
}
