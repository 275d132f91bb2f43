package dashboard

import (
	"errors"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"payouts/rules"
	"payouts/templates"
)

// Batches: a merchant's batches page — upload a CSV, read its validation report,
// approve, follow its progress, download the result.

// batchRoutes adds the batch pages (called from Routes, signed in).
func (d *Dashboard) batchRoutes(r chi.Router) {
	if d.cfg.Batches == nil {
		return
	}
	r.Get("/dashboard/merchants/{id}/batches", d.batches)
	r.With(d.require(rules.PermCreate)).Post("/dashboard/merchants/{id}/batches", d.uploadBatch)
	r.Get("/dashboard/merchants/{id}/batches/{batch}", d.batch)
	r.With(d.require(rules.PermApprove)).Post("/dashboard/merchants/{id}/batches/{batch}/approve", d.approveBatch)
	r.Get("/dashboard/merchants/{id}/batches/{batch}/result.csv", d.batchCSV)
}

// batchPrincipal is who the signed-in session is, as a batch records its maker or approver:
// a named user by its id (the same person across password changes and sessions), the admin
// token by its fingerprint.
func (d *Dashboard) batchPrincipal(r *http.Request) string {
	if a := d.actor(r); a.UserID != "" {
		return "dashboard:user:" + a.UserID
	}
	return "dashboard:" + d.sm.GetString(r.Context(), kPrincipal)
}

// mayApprove is the one place where the dashboard decides whether the signed-in principal
// may approve batch b: an operator or the merchant's checker (rules.Actor.Can), never the
// batch's own maker (rules.Batches.Approve refuses it too). It returns the principal the
// approval is recorded under.
func (d *Dashboard) mayApprove(r *http.Request, b *rules.Batch) (string, bool) {
	p := d.batchPrincipal(r)
	return p, d.actor(r).Can(rules.PermApprove, b.MerchantID) && b.Status == rules.BatchDraft && b.MadeBy != p
}

func batchHref(merchantID string, id int64) string {
	return "/dashboard/merchants/" + url.PathEscape(merchantID) + "/batches/" + strconv.FormatInt(id, 10)
}

func batchRow(b *rules.Batch) templates.BatchRow {
	return templates.BatchRow{ID: strconv.FormatInt(b.ID, 10), BatchID: b.BatchID, Status: string(b.Status), Items: strconv.Itoa(b.Items),
		MadeBy: b.MadeBy, ApprovedBy: b.ApprovedBy, Created: timeText(b.CreatedAt), Href: batchHref(b.MerchantID, b.ID)}
}

// batches is the merchant's batches page.
func (d *Dashboard) batches(w http.ResponseWriter, r *http.Request) {
	m, ok := d.merchantOf(w, r)
	if !ok {
		return
	}
	f := d.frame(r, "b.title", "merchants")
	f.Title = f.W.S("b.title") + " · " + m.Name
	list, err := d.cfg.Batches.Store.Batches(r.Context(), m.ID, 0, 0)
	if err != nil {
		d.internal(w, r, err)
		return
	}
	v := templates.BatchesView{Frame: f, MerchantID: m.ID}
	for i := len(list) - 1; i >= 0; i-- { // newest first
		v.Rows = append(v.Rows, batchRow(list[i]))
	}
	d.render(w, r, http.StatusOK, templates.DashBatches(v))
}

// uploadBatch validates and stores an uploaded CSV, made by the signed-in principal.
func (d *Dashboard) uploadBatch(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, rules.MaxBatchBody+64<<10)
	m, ok := d.merchantOf(w, r)
	if !ok {
		return
	}
	self := "/dashboard/merchants/" + url.PathEscape(m.ID) + "/batches"
	words := templates.DashWords(d.lang(r))
	if err := r.ParseMultipartForm(1 << 20); err != nil {
		d.back(w, r, self, "", rules.MessageIn(d.lang(r), rules.CodeBatchTooLarge, "the upload is over 10 MiB"))
		return
	}
	defer r.MultipartForm.RemoveAll()
	file, _, err := r.FormFile("file")
	batchID := strings.TrimSpace(r.FormValue("batchId"))
	if err != nil || batchID == "" {
		d.back(w, r, self, "", words.S("b.noFile"))
		return
	}
	defer file.Close()
	items, err := rules.ParseBatchCSV(file)
	var b *rules.Batch
	if err == nil {
		b, _, err = d.cfg.Batches.Create(r.Context(), m, rules.BatchRequest{BatchID: batchID, Items: items}, d.batchPrincipal(r))
	}
	var re *rules.Error
	if errors.As(err, &re) {
		msg := rules.MessageIn(d.lang(r), re.Code, re.Message)
		if re.Field != "" {
			msg = re.Field + ": " + msg
		}
		d.back(w, r, self, "", re.Code+" "+msg)
		return
	}
	if err != nil {
		d.internal(w, r, err)
		return
	}
	d.cfg.Log.Info("dashboard: batch uploaded", "merchant_id", m.ID, "batch", b.ID, "items", b.Items, "status", b.Status)
	rules.Audit(r.Context(), "batch.upload", "batch:"+strconv.FormatInt(b.ID, 10), m.ID, map[string]any{"batchId": b.BatchID, "items": b.Items, "status": b.Status})
	http.Redirect(w, r, batchHref(m.ID, b.ID), http.StatusSeeOther)
}

// batchOf reads the merchant and batch of the path; false when either failed, answered.
func (d *Dashboard) batchOf(w http.ResponseWriter, r *http.Request) (*rules.Batch, bool) {
	m, ok := d.merchantOf(w, r)
	if !ok {
		return nil, false
	}
	id, err := strconv.ParseInt(chi.URLParam(r, "batch"), 10, 64)
	var b *rules.Batch
	if err == nil {
		b, err = d.cfg.Batches.Get(r.Context(), m.ID, id)
	}
	var re *rules.Error
	if err != nil && (errors.As(err, &re) || id == 0) {
		d.back(w, r, "/dashboard/merchants/"+url.PathEscape(m.ID)+"/batches", "", templates.DashWords(d.lang(r)).S("m.notFound"))
		return nil, false
	}
	if err != nil {
		d.internal(w, r, err)
		return nil, false
	}
	return b, true
}

// batch is one batch's page.
func (d *Dashboard) batch(w http.ResponseWriter, r *http.Request) {
	b, ok := d.batchOf(w, r)
	if !ok {
		return
	}
	items, err := d.cfg.Batches.Store.BatchItems(r.Context(), b.MerchantID, b.ID, 0, 0)
	if err != nil {
		d.internal(w, r, err)
		return
	}
	f := d.frame(r, "b.title", "merchants")
	f.Title = sprintf(f.W.S("b.one"), b.BatchID)
	_, can := d.mayApprove(r, b)
	v := templates.BatchPageView{Frame: f, MerchantID: b.MerchantID, Batch: batchRow(b), CanApprove: can,
		SelfMade: b.Status == rules.BatchDraft && !can, CSVHref: batchHref(b.MerchantID, b.ID) + "/result.csv",
		Running: b.Status == rules.BatchApproved || b.Status == rules.BatchProcessing || b.Status == rules.BatchCompleted && b.NotifiedAt.IsZero()}
	c, totals := rules.Summarize(b, items)
	for _, x := range []struct {
		key string
		n   int
	}{{"b.c.items", c.Items}, {"b.c.valid", c.Valid}, {"b.c.invalid", c.Invalid}, {"b.c.created", c.Created},
		{"b.c.refused", c.Refused}, {"b.c.pending", c.Pending}, {"b.c.final", c.Final}, {"b.c.links", c.Links}} {
		v.Counts = append(v.Counts, templates.Fact{Label: f.W.S(x.key), Value: strconv.Itoa(x.n)})
	}
	stages := make([]string, 0, len(c.ByStage))
	for s := range c.ByStage {
		stages = append(stages, s)
	}
	sort.Strings(stages)
	for _, s := range stages {
		v.ByStage = append(v.ByStage, templates.Fact{Label: s, Value: strconv.Itoa(c.ByStage[s])})
	}
	for _, t := range totals {
		v.Totals = append(v.Totals, templates.TotalRow{Currency: t.Currency, Items: strconv.Itoa(t.Items),
			Amount: templates.FormatAmount(t.Currency, t.Amount), Paid: templates.FormatAmount(t.Currency, t.Paid)})
	}
	for _, e := range b.Errors {
		v.Errors = append(v.Errors, templates.BatchErrorRow{Item: strconv.Itoa(e.Item), Code: e.Code, Location: e.Location,
			Message: rules.MessageIn(d.lang(r), e.Code, e.Message)})
	}
	for i := range items {
		it := &items[i]
		if !it.Link {
			continue
		}
		if len(v.Links) == maxLinkRows {
			v.MoreLinks++
			continue
		}
		row := templates.BatchLinkRow{Item: strconv.Itoa(it.Seq), OrderID: it.OrderID, Status: linkItemStatus(it)}
		if it.PayoutID != 0 {
			row.PayoutID = strconv.FormatInt(it.PayoutID, 10)
			row.PayoutHref = "/dashboard/payouts/" + row.PayoutID
		}
		v.Links = append(v.Links, row)
	}
	for i := range items {
		if it := &items[i]; it.Code != "" {
			v.Errors = append(v.Errors, templates.BatchErrorRow{Item: strconv.Itoa(it.Seq), Code: it.Code, Location: it.Location,
				Message: rules.MessageIn(d.lang(r), it.Code, it.Message)})
		}
	}
	d.render(w, r, http.StatusOK, templates.DashBatch(v))
}

// approveBatch approves a batch as the signed-in principal (mayApprove decides).
func (d *Dashboard) approveBatch(w http.ResponseWriter, r *http.Request) {
	b, ok := d.batchOf(w, r)
	if !ok {
		return
	}
	self := batchHref(b.MerchantID, b.ID)
	principal, _ := d.mayApprove(r, b)
	_, err := d.cfg.Batches.Approve(r.Context(), b.MerchantID, b.ID, principal)
	var re *rules.Error
	if errors.As(err, &re) {
		d.back(w, r, self, "", re.Code+" "+rules.MessageIn(d.lang(r), re.Code, re.Message))
		return
	}
	if err != nil {
		d.internal(w, r, err)
		return
	}
	d.cfg.Log.Info("dashboard: batch approved", "merchant_id", b.MerchantID, "batch", b.ID, "by", principal)
	rules.Audit(r.Context(), "batch.approve", "batch:"+strconv.FormatInt(b.ID, 10), b.MerchantID, map[string]any{"batchId": b.BatchID, "items": b.Items, "madeBy": b.MadeBy})
	d.back(w, r, self, templates.DashWords(d.lang(r)).S("b.approved"), "")
}

// batchCSV is the batch's result CSV.
func (d *Dashboard) batchCSV(w http.ResponseWriter, r *http.Request) {
	b, ok := d.batchOf(w, r)
	if !ok {
		return
	}
	items, err := d.cfg.Batches.Store.BatchItems(r.Context(), b.MerchantID, b.ID, 0, 0)
	if err != nil {
		d.internal(w, r, err)
		return
	}
	if d.cfg.BatchCSV == nil {
		http.Error(w, "not wired", http.StatusNotImplemented)
		return
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="batch-`+strconv.FormatInt(b.ID, 10)+`.csv"`)
	w.Header().Set("Cache-Control", "no-store")
	w.Write(d.cfg.BatchCSV(items))
}

// maxLinkRows is how many link items a batch's page lists; the result CSV has them all.
const maxLinkRows = 200

// linkItemStatus is a link item's state as the batch's items listing says it.
func linkItemStatus(it *rules.BatchItem) string {
	switch {
	case it.PayoutID != 0:
		return string(it.Status)
	case it.Code != "":
		return "REFUSED " + it.Code
	}
	return "NOT_CREATED"
}
