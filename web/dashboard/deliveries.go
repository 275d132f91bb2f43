package dashboard

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"time"

	"payouts/rules"
	"payouts/templates"
	"payouts/web/notify"
)

// logLimit is how many deliveries the log shows.
const logLimit = 200

var kinds = []string{rules.EventBeneficiaryMail, rules.EventMerchantNotification, rules.EventCashOTP}

// deliveryRow is one event as a row; names give merchant names.
func deliveryRow(dl Delivery, w templates.Words, names map[string]string) templates.DeliveryRow {
	row := templates.DeliveryRow{ID: dl.ID, Kind: dl.Kind, State: dl.State, StateLabel: w.S("st." + dl.State),
		Merchant: dl.MerchantID, Created: timeText(dl.CreatedAt), Delivered: timeText(dl.DeliveredAt)}
	if n := names[dl.MerchantID]; n != "" {
		row.Merchant = dl.MerchantID + " · " + n
	}
	if dl.PayoutID > 0 {
		row.PayoutID = strconv.FormatInt(dl.PayoutID, 10)
		row.PayoutHref = "/dashboard/payouts/" + row.PayoutID
	}
	if dl.State != StateDelivered {
		row.Attempts = strconv.Itoa(dl.Attempts)
		row.LastError = rules.PublicAttemptError(dl.LastError)
		if dl.State != StateDead {
			row.Next = timeText(dl.NextAt)
		}
	}
	// Send again: a dead letter or an event waiting for its next retry. A dead cash code
	// lost its sealed code when it was given up: nothing could deliver it.
	row.CanResend = dl.State == StateDead || dl.State == StateRetrying
	if dl.Kind == rules.EventCashOTP && dl.State == StateDead && len(dl.Data) == 0 {
		row.CanResend = false
		row.Note = w.S("del.noCode")
	}
	return row
}

// payoutDeliveries are the deliveries a payout caused: the held events of the payout, the
// delivered ids of its outcomes, and its cash code. A cash code's id is random, so once it is
// delivered it is known only from the sandbox mailbox; out of the outbox and not dead means
// delivered all the same.
func (d *Dashboard) payoutDeliveries(ctx context.Context, p *rules.Payout, w templates.Words) ([]templates.DeliveryRow, error) {
	held, err := d.cfg.Outbox.Held(ctx, logLimit, func(dl Delivery) bool { return dl.PayoutID == p.ID })
	if err != nil {
		return nil, err
	}
	done, err := d.cfg.Outbox.Delivered(ctx, logLimit, func(dl Delivery) bool { return dl.PayoutID == p.ID })
	if err != nil {
		return nil, err
	}
	all := append(held, done...)
	if p.Channel == rules.ChannelCash && !slices.ContainsFunc(all, func(dl Delivery) bool { return dl.Kind == rules.EventCashOTP }) {
		otp := Delivery{Event: rules.Event{Kind: rules.EventCashOTP, MerchantID: p.MerchantID, PayoutID: p.ID}, State: StateDelivered}
		if mails, err := d.mails(ctx, func(m notify.Mail) bool { return m.PayoutID == p.ID && m.Kind == rules.EventCashOTP }, 1); err == nil && len(mails) > 0 {
			otp.ID, otp.DeliveredAt = mails[0].EventID, mails[0].SentAt
		}
		all = append(all, otp)
	}
	slices.SortStableFunc(all, func(a, b Delivery) int { return a.CreatedAt.Compare(b.CreatedAt) })
	rows := make([]templates.DeliveryRow, len(all))
	for i, dl := range all {
		rows[i] = deliveryRow(dl, w, nil)
		dl.MerchantID = p.MerchantID
		d.withAttempts(ctx, &rows[i], dl)
	}
	return rows, nil
}

// deliveries is /dashboard/deliveries: the outbox as a log.
func (d *Dashboard) deliveries(w http.ResponseWriter, r *http.Request) {
	names, ms, err := d.merchantNames(r)
	if err != nil {
		d.internal(w, r, err)
		return
	}
	f := d.frame(r, "del.title", "deliveries")
	q := r.URL.Query()
	v := templates.DeliveriesView{Frame: f, Merchant: q.Get("merchant"), Kind: q.Get("kind"), State: q.Get("state"),
		ResendURL: "/dashboard/deliveries/resend", Back: r.URL.RequestURI()}
	if s := d.scope(r); s != "" && v.Merchant == "" {
		v.Merchant = s // a merchant user's deliveries are its merchant's
	}
	v.Merchants = merchantOptions(ms, v.Merchant)
	for _, k := range kinds {
		v.Kinds = append(v.Kinds, templates.Option{Value: k, Label: f.W.S("kind." + k), Selected: k == v.Kind})
	}
	for _, s := range States {
		v.States = append(v.States, templates.Option{Value: s, Label: f.W.S("st." + s), Selected: s == v.State})
	}
	bad := (v.Kind != "" && !slices.Contains(kinds, v.Kind)) || (v.State != "" && !slices.Contains(States, v.State)) ||
		(v.Merchant != "" && names[v.Merchant] == "")
	if bad {
		v.Error = sprintf(f.W.S("p.badFilter"), "merchant/kind/state")
		d.render(w, r, http.StatusBadRequest, templates.DashDeliveries(v))
		return
	}
	keep := func(dl Delivery) bool {
		return (v.Kind == "" || dl.Kind == v.Kind) && (v.State == "" || dl.State == v.State)
	}
	var all []Delivery
	if v.State != StateDelivered {
		held, err := d.cfg.Outbox.Held(r.Context(), logLimit, func(dl Delivery) bool {
			return keep(dl) && (v.Merchant == "" || dl.MerchantID == v.Merchant)
		})
		if err != nil {
			d.internal(w, r, err)
			return
		}
		all = append(all, held...)
	}
	if v.State == "" || v.State == StateDelivered {
		done, err := d.cfg.Outbox.Delivered(r.Context(), logLimit*4, keep)
		if err != nil {
			d.internal(w, r, err)
			return
		}
		// A delivered id names its payout, not its merchant: read the payouts to know.
		if err := d.fillMerchants(r.Context(), done); err != nil {
			d.internal(w, r, err)
			return
		}
		for _, dl := range done {
			if v.Merchant == "" || dl.MerchantID == v.Merchant {
				all = append(all, dl)
			}
		}
	}
	slices.SortStableFunc(all, func(a, b Delivery) int { return latest(b).Compare(latest(a)) })
	if len(all) > logLimit {
		all = all[:logLimit]
	}
	for _, dl := range all {
		row := deliveryRow(dl, f.W, names)
		row.CanResend = row.CanResend && f.Can.Manage
		d.withAttempts(r.Context(), &row, dl)
		v.Rows = append(v.Rows, row)
	}
	d.render(w, r, http.StatusOK, templates.DashDeliveries(v))
}

// latest is when an event last changed: its delivery, else its writing.
func latest(dl Delivery) time.Time {
	if !dl.DeliveredAt.IsZero() {
		return dl.DeliveredAt
	}
	return dl.CreatedAt
}

// fillMerchants sets the merchant of delivered events from their payouts.
func (d *Dashboard) fillMerchants(ctx context.Context, dls []Delivery) error {
	var ids []int64
	for _, dl := range dls {
		if dl.PayoutID > 0 {
			ids = append(ids, dl.PayoutID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	ps, err := d.cfg.Store.PayoutsByID(ctx, ids)
	if err != nil {
		return err
	}
	of := make(map[int64]string, len(ps))
	for _, p := range ps {
		of[p.ID] = p.MerchantID
	}
	for i := range dls {
		dls[i].MerchantID = of[dls[i].PayoutID]
	}
	return nil
}

// resend makes a new attempt of a dead or retrying event (the same event id).
func (d *Dashboard) resend(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 8<<10)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "the form could not be read", http.StatusBadRequest)
		return
	}
	words := templates.DashWords(d.lang(r))
	back := r.PostForm.Get("back")
	id := r.PostForm.Get("event")
	if id == "" || len(id) > 200 {
		http.Error(w, "event is required", http.StatusBadRequest)
		return
	}
	ev, found, err := d.cfg.Outbox.Resend(r.Context(), id, d.cfg.Now())
	if err != nil {
		d.internal(w, r, err)
		return
	}
	if !found {
		d.back(w, r, back, "", words.S("del.gone"))
		return
	}
	d.cfg.Log.Info("dashboard: delivery sent again", "event", ev.ID, "kind", ev.Kind, "payout", ev.PayoutID)
	rules.Audit(r.Context(), "delivery.resend", "event:"+ev.ID, ev.MerchantID, nil)
	d.back(w, r, back, sprintf(words.S("del.resent"), words.S("kind."+ev.Kind)), "")
}

// mails reads the sandbox mailbox, newest first, those keep accepts, up to limit.
func (d *Dashboard) mails(ctx context.Context, keep func(notify.Mail) bool, limit int) ([]notify.Mail, error) {
	raws, err := d.cfg.Store.SandboxMails(ctx, 1000)
	if err != nil {
		return nil, err
	}
	var out []notify.Mail
	for _, raw := range raws {
		var m notify.Mail
		if json.Unmarshal(raw, &m) != nil || (keep != nil && !keep(m)) {
			continue
		}
		out = append(out, m)
		if len(out) == limit {
			break
		}
	}
	return out, nil
}
