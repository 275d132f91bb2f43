package dashboard

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/go-chi/chi/v5"

	"payouts/rules"
	"payouts/templates"
)

// certifyReceiver starts a receiver certification run of the merchant's notificationUrl, or
// of the URL given, and goes to the run's page.
func (d *Dashboard) certifyReceiver(w http.ResponseWriter, r *http.Request) {
	m, ok := d.merchantForm(w, r, 8<<10)
	if !ok {
		return
	}
	back := "/dashboard/merchants/" + url.PathEscape(m.ID)
	if d.cfg.CertifyReceiver == nil {
		d.back(w, r, back, "", templates.DashWords(d.lang(r)).S("cert.off"))
		return
	}
	runID, err := d.cfg.CertifyReceiver(r.Context(), m, strings.TrimSpace(r.PostForm.Get("url")))
	if err != nil {
		var re *rules.Error
		if errors.As(err, &re) {
			d.back(w, r, back, "", re.Message)
			return
		}
		d.internal(w, r, err)
		return
	}
	rules.Audit(r.Context(), "certification.receiver", "merchant:"+m.ID, m.ID, map[string]any{"run": runID})
	http.Redirect(w, r, back+"/certifications/"+url.PathEscape(runID), http.StatusSeeOther)
}

// certification is a run's page: a note while it runs, then its signed report as the
// self-contained page the CLI writes.
func (d *Dashboard) certification(w http.ResponseWriter, r *http.Request) {
	m, ok := d.merchantOf(w, r)
	if !ok {
		return
	}
	words := templates.DashWords(d.lang(r))
	back := "/dashboard/merchants/" + url.PathEscape(m.ID)
	if d.cfg.CertificationReport == nil {
		d.back(w, r, back, "", words.S("cert.off"))
		return
	}
	done, page, err := d.cfg.CertificationReport(m.ID, chi.URLParam(r, "runId"))
	if errors.Is(err, rules.ErrNotFound) {
		d.back(w, r, back, "", words.S("cert.notFound"))
		return
	}
	if err != nil {
		d.internal(w, r, err)
		return
	}
	if !done {
		f := d.frame(r, "cert.title", "merchants")
		d.render(w, r, http.StatusOK, templates.DashMessage(templates.MessageView{Frame: f, Message: words.S("cert.running")}))
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	// The report's page carries its own styles inline (it is also a file a CI keeps) and no script.
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	w.Write(page)
}
