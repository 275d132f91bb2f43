package dashboard

import (
	"net/http"
	"slices"
	"strconv"
	"time"

	"payouts/rules"
	"payouts/templates"
	"payouts/web/notify"
)

// overviewMax bounds the payouts the overview reads; past it the figures are a lower bound.
const overviewMax = 20_000

// overview is /dashboard: the last 24 hours at a glance.
func (d *Dashboard) overview(w http.ResponseWriter, r *http.Request) {
	_, ms, err := d.merchantNames(r)
	if err != nil {
		d.internal(w, r, err)
		return
	}
	now := d.cfg.Now().UTC()
	since := now.Add(-24 * time.Hour)
	var ids []string
	for _, m := range ms {
		ids = append(ids, m.ID)
	}
	var all []*rules.Payout
	f := rules.ListFilter{From: since}
	partial := false
	for {
		items, next, err := d.list(r.Context(), ids, f, 500, nil)
		if err != nil {
			d.internal(w, r, err)
			return
		}
		all = append(all, items...)
		if next == 0 {
			break
		}
		if len(all) >= overviewMax {
			partial = true
			break
		}
		f.Cursor = next
	}
	fr := d.frame(r, "ov.title", "overview")
	v := Summarize(all, since, fr.W)
	v.Frame, v.Partial = fr, partial
	v.Backups = d.backupWarnings(r, fr.W)
	if d.cfg.KeyFiles != nil && d.scope(r) == "" { // the service's files: operators only
		v.KeyFiles = d.cfg.KeyFiles()
	}
	v.OutboxDepth = d.cfg.Outbox.Depth(r.Context())
	scope := d.scope(r)
	dead, err := d.cfg.Outbox.Held(r.Context(), 1<<30, func(dl Delivery) bool { return dl.State == StateDead && (scope == "" || dl.MerchantID == scope) })
	if err != nil {
		d.internal(w, r, err)
		return
	}
	v.DeadLetters = len(dead)
	if scope != "" { // a merchant user's outbox is its merchant's events
		held, err := d.cfg.Outbox.Held(r.Context(), 1<<30, func(dl Delivery) bool { return dl.MerchantID == scope && dl.State != StateDead })
		if err != nil {
			d.internal(w, r, err)
			return
		}
		v.OutboxDepth = len(held)
	}
	d.render(w, r, http.StatusOK, templates.DashOverview(v))
}

// standing is how a payout stands for the overview: succeeded, rejected or still active.
func standing(p *rules.Payout) string {
	switch p.Stage {
	case rules.StageSuccess:
		return "success"
	case rules.StageRejected:
		return "rejected"
	}
	return "active"
}

// Summarize counts payouts created since a time: totals, by country and by channel, amounts
// per currency, and the per-hour chart (24 bars stacked by current stage).
func Summarize(ps []*rules.Payout, since time.Time, w templates.Words) templates.OverviewView {
	v := templates.OverviewView{Since: timeText(since)}
	type counts struct{ created, success, rejected, active int }
	type sums struct{ created, success, rejected, active int64 }
	byCountry, byChannel := map[string]*counts{}, map[string]*counts{}
	byCurrency := map[string]*sums{}
	var hours [24]counts
	add := func(m map[string]*counts, k string) *counts {
		if m[k] == nil {
			m[k] = &counts{}
		}
		return m[k]
	}
	for _, p := range ps {
		if p.CreatedAt.Before(since) {
			continue
		}
		st := standing(p)
		cur := byCurrency[p.Currency]
		if cur == nil {
			cur = &sums{}
			byCurrency[p.Currency] = cur
		}
		cur.created += p.Amount
		h := int(p.CreatedAt.Sub(since) / time.Hour)
		if h > 23 {
			h = 23
		}
		for _, c := range []*counts{add(byCountry, p.Country), add(byChannel, string(p.Channel)), &hours[h]} {
			c.created++
			switch st {
			case "success":
				c.success++
			case "rejected":
				c.rejected++
			default:
				c.active++
			}
		}
		v.Created++
		switch st {
		case "success":
			v.Succeeded++
			cur.success += p.Amount
		case "rejected":
			v.Rejected++
			cur.rejected += p.Amount
		default:
			v.Active++
			cur.active += p.Amount
		}
	}
	rows := func(m map[string]*counts) []templates.CountRow {
		var out []templates.CountRow
		for k, c := range m {
			out = append(out, templates.CountRow{Key: k, Created: c.created, Succeeded: c.success, Rejected: c.rejected, Active: c.active})
		}
		slices.SortFunc(out, func(a, b templates.CountRow) int {
			if a.Created != b.Created {
				return b.Created - a.Created
			}
			if a.Key < b.Key {
				return -1
			}
			return 1
		})
		return out
	}
	v.ByCountry, v.ByChannel = rows(byCountry), rows(byChannel)
	var currencies []string
	for c := range byCurrency {
		currencies = append(currencies, c)
	}
	slices.Sort(currencies)
	for _, c := range currencies {
		s := byCurrency[c]
		v.Amounts = append(v.Amounts, templates.AmountRow{Currency: c, Created: templates.FormatAmount(c, s.created),
			Succeeded: templates.FormatAmount(c, s.success), Rejected: templates.FormatAmount(c, s.rejected),
			Active: templates.FormatAmount(c, s.active)})
	}

	// The chart: 24 bars of the hours since `since`, stacked success, rejected, active.
	const width, height, left, top, bottom = 720, 240, 56, 14, 28
	plotH := height - top - bottom
	peak := 1
	for _, h := range hours {
		peak = max(peak, h.created)
	}
	scale, step := niceAxis(peak)
	c := templates.Chart{Width: width, Height: height, Desc: sprintf(w.S("ov.chartDesc"), v.Created),
		Legend: []templates.LegendItem{{Class: "bar-success", Label: w.S("ov.succeeded")},
			{Class: "bar-rejected", Label: w.S("ov.rejected")}, {Class: "bar-active", Label: w.S("ov.pending")}}}
	for val := 0; val <= scale; val += step {
		y := top + plotH - plotH*val/scale
		c.YLabels = append(c.YLabels, templates.AxisLabel{Y: y, Text: strconv.Itoa(val)})
	}
	slot := (width - left - 4) / 24
	for i, h := range hours {
		x := left + i*slot + 2
		y := top + plotH
		start := since.Add(time.Duration(i) * time.Hour)
		for _, part := range []struct {
			n     int
			class string
			label string
		}{{h.success, "bar-success", w.S("ov.succeeded")}, {h.rejected, "bar-rejected", w.S("ov.rejected")}, {h.active, "bar-active", w.S("ov.pending")}} {
			if part.n == 0 {
				continue
			}
			bh := max(plotH*part.n/scale, 1)
			y -= bh
			c.Bars = append(c.Bars, templates.Bar{X: x, Y: y, W: slot - 4, H: bh, Class: part.class,
				Title: start.Format("15:04") + "Z · " + part.label + ": " + strconv.Itoa(part.n)})
		}
		if i%3 == 0 {
			c.XLabels = append(c.XLabels, templates.AxisLabel{X: x + (slot-4)/2, Y: height - 6, Text: start.Format("15h")})
		}
	}
	v.Chart = c
	return v
}

// niceAxis is the chart's top and the step between its ticks for a peak of n: the step is 1,
// 2 or 5 times a power of ten, the top a multiple of it, at most 5 steps, so that the ticks
// are evenly spaced whole numbers (0, 2, 4, 6, 8, 10; never 0, 2, 5, 7, 10).
func niceAxis(n int) (top, step int) {
	n = max(n, 1)
	for p := 1; ; p *= 10 {
		for _, m := range []int{1, 2, 5} {
			step = m * p
			if steps := (n + step - 1) / step; steps <= 5 {
				return steps * step, step
			}
		}
	}
}

// mail is /dashboard/mail: the sandbox mailbox (the bearer-only /sandbox/mail stays for scripts).
func (d *Dashboard) mail(w http.ResponseWriter, r *http.Request) {
	f := d.frame(r, "mail.title", "mail")
	q := r.URL.Query()
	v := templates.MailView{Frame: f, To: q.Get("to"), PayoutID: q.Get("payoutId"), SandboxOff: !d.cfg.Sandbox}
	if v.SandboxOff {
		d.render(w, r, http.StatusForbidden, templates.DashMail(v))
		return
	}
	var pid int64
	if v.PayoutID != "" {
		n, err := strconv.ParseInt(v.PayoutID, 10, 64)
		if err != nil || n <= 0 {
			v.Error = sprintf(f.W.S("p.badFilter"), "payoutId")
			d.render(w, r, http.StatusBadRequest, templates.DashMail(v))
			return
		}
		pid = n
	}
	scope := d.scope(r)
	mails, err := d.mails(r.Context(), func(m notify.Mail) bool {
		return (v.To == "" || m.To == v.To) && (pid == 0 || m.PayoutID == pid) && (scope == "" || m.MerchantID == scope)
	}, 100)
	if err != nil {
		d.internal(w, r, err)
		return
	}
	for _, m := range mails {
		row := templates.MailRow{To: m.To, Subject: m.Subject, Text: m.Text, SentAt: timeText(m.SentAt), Kind: m.Kind}
		if m.PayoutID > 0 {
			row.PayoutID = strconv.FormatInt(m.PayoutID, 10)
			row.PayoutHref = "/dashboard/payouts/" + row.PayoutID
		}
		v.Mails = append(v.Mails, row)
	}
	d.render(w, r, http.StatusOK, templates.DashMail(v))
}
