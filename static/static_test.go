package static_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"payouts/static"
)

func TestServedWithVersionedLinks(t *testing.T) {
	h := static.Handler()
	for _, name := range []string{"card.js", "card.css", "dashcopy.js"} {
		p := static.Path(name)
		if !strings.HasPrefix(p, "/static/"+name+"?v=") || len(p) < len("/static/"+name+"?v=")+8 {
			t.Fatalf("Path(%s) = %q", name, p)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", p, nil))
		if rec.Code != 200 || rec.Body.Len() == 0 || !strings.Contains(rec.Header().Get("Cache-Control"), "immutable") ||
			rec.Header().Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: %d %q", p, rec.Code, rec.Header())
		}
		rec = httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/static/"+name+"?v=old", nil))
		if rec.Code != 200 || strings.Contains(rec.Header().Get("Cache-Control"), "immutable") {
			t.Errorf("an old version link is cached for long: %q", rec.Header().Get("Cache-Control"))
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/static/static.go", nil))
	if rec.Code != http.StatusNotFound {
		t.Errorf("GET /static/static.go: %d, want 404", rec.Code)
	}
}
