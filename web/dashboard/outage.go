package dashboard

import (
	"net/http"
	"strconv"

	"payouts/rules"
	"payouts/static"
	"payouts/templates"
)

// While the database cannot be reached (PostgreSQL down or out of reach: rules.Unavailable),
// every dashboard page and the sign-in answer 503 with Retry-After and a page that says so,
// as the API answers 503 (1925): a 500 would say the service is broken, and an operator
// would not know to simply wait. The sessions live in the database too, so the failure may
// come from loading the session, from a page's reads, or from saving the session after the
// page was rendered; each of the three answers alike.

// firstAnswerWriter keeps the first answer written through it: once a session could not be
// saved (scs calls ErrorFunc just before the page's own header goes out), the page's header
// and body that follow are dropped, so the client gets the error page alone.
type firstAnswerWriter struct {
	http.ResponseWriter
	answered bool
}

func (w *firstAnswerWriter) WriteHeader(code int) {
	if !w.answered {
		w.ResponseWriter.WriteHeader(code)
	}
}

func (w *firstAnswerWriter) Write(b []byte) (int, error) {
	if w.answered {
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

func (w *firstAnswerWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// keepFirstAnswer goes outside the session manager (LoadAndSave), so that sessionFailed can
// close the answer it wrote.
func keepFirstAnswer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(&firstAnswerWriter{ResponseWriter: w}, r)
	})
}

// sessionFailed is the session manager's ErrorFunc: the session could not be loaded or saved.
func (d *Dashboard) sessionFailed(w http.ResponseWriter, r *http.Request, err error) {
	if rules.Unavailable(err) {
		d.cfg.Log.Warn("dashboard: database unavailable", "path", r.URL.Path, "err", err)
		d.unavailablePage(w, r, queryLang(r))
	} else {
		d.cfg.Log.Error("dashboard session", "path", r.URL.Path, "err", err)
		w.Header().Set("Cache-Control", "no-store")
		http.Error(w, "internal error", http.StatusInternalServerError)
	}
	if fw, ok := w.(*firstAnswerWriter); ok {
		fw.answered = true
	}
}

// unavailablePage answers 503 with Retry-After and a page that says the database cannot be
// reached. It reads nothing of the session, which may not have loaded.
func (d *Dashboard) unavailablePage(w http.ResponseWriter, r *http.Request, lang string) {
	words := templates.DashWords(lang)
	f := templates.Frame{Lang: lang, W: words, Title: words.S("unavailable.title"), Path: r.URL.RequestURI(), CSS: static.Path("dashboard.css")}
	w.Header().Del("Location") // a redirect the page had begun when its session could not be saved
	w.Header().Set("Retry-After", strconv.Itoa(rules.UnavailableRetryAfter))
	d.render(w, r, http.StatusServiceUnavailable, templates.DashMessage(templates.MessageView{Frame: f, Message: words.S("unavailable")}))
}

// queryLang is the language the request's query asks for, else the dashboard's default.
func queryLang(r *http.Request) string {
	if r.URL.Query().Get("lang") == "en" {
		return "en"
	}
	return "es"
}
