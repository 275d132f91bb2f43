package apicontract

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// recorder is a test whose errors are kept, to test the checks themselves.
type recorder struct {
	testing.TB
	mu   sync.Mutex
	msgs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, fmt.Sprintf(format, args...))
}

func TestContractCheckRefusesWhatTheDocumentDoesNotDeclare(t *testing.T) {
	t.Parallel()
	const doc = `{"openapi":"3.1.0","info":{"title":"t","version":"1"},"paths":{"/things/{id}":{"get":{
		"parameters":[{"name":"id","in":"path","required":true,"schema":{"type":"integer"}}],
		"responses":{"200":{"description":"ok","headers":{"Location":{"required":true,"schema":{"type":"string"}}},
		"content":{"application/json":{"schema":{"type":"object","required":["name"],"properties":{"name":{"type":"string"}},"additionalProperties":false}}}}}}}}}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/openapi.json":
			w.Write([]byte(doc))
		case "/things/1":
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Location", "/things/1")
			w.Write([]byte(`{"name":"a"}`))
		case "/things/2": // a body the schema refuses
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Location", "/things/2")
			w.Write([]byte(`{"nom":1}`))
		case "/things/3": // an undeclared status
			w.WriteHeader(http.StatusTeapot)
		case "/things/4": // a declared header missing
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"name":"a"}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	owner := &recorder{TB: t}
	client := &http.Client{Transport: NewServed(srv.URL, srv.Client().Transport, owner).Transport()}
	for _, tc := range []struct {
		path string
		want int
	}{{"/things/1", 0}, {"/things/2", 1}, {"/things/3", 1}, {"/things/4", 1}, {"/elsewhere", 0}} {
		t.Run(tc.path, func(t *testing.T) {
			rec := &recorder{TB: t}
			req, _ := http.NewRequest("GET", srv.URL+tc.path, nil)
			req = req.WithContext(ForTest(req.Context(), rec))
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if len(rec.msgs) != tc.want {
				t.Errorf("GET %s: %d violations, want %d: %v", tc.path, len(rec.msgs), tc.want, rec.msgs)
			}
		})
	}
	if len(owner.msgs) != 0 {
		t.Errorf("the violations were told to the server's test, not the request's: %v", owner.msgs)
	}
}

// TestServedDocumentsDifferingInTheirServersAreOne: the servers entry is cut wherever it
// stands, and two documents alike but for it are parsed once.
func TestServedDocumentsDifferingInTheirServersAreOne(t *testing.T) {
	for _, c := range []struct{ raw, want string }{
		{`{"openapi":"3.1.0","servers":[{"url":"http://a"}],"paths":{}}`, `{"openapi":"3.1.0","paths":{}}`},
		{`{"servers":[{"url":"http://a"}],"openapi":"3.1.0"}`, `{"openapi":"3.1.0"}`},
		{`{"openapi":"3.1.0","servers":[{"url":"http://a"}]}`, `{"openapi":"3.1.0"}`},
		{`{"openapi":"3.1.0","paths":{}}`, `{"openapi":"3.1.0","paths":{}}`},
		// the entry's text twice (a path's own servers): decoded, cut, encoded again
		{`{"openapi":"3.1.0","paths":{"/p":{"servers":[{"url":"http://a"}]}},"servers":[{"url":"http://a"}]}`,
			`{"openapi":"3.1.0","paths":{"/p":{"servers":[{"url":"http://a"}]}}}`},
	} {
		got, err := withoutServers([]byte(c.raw))
		if err != nil || string(got) != c.want {
			t.Errorf("withoutServers(%s) = %s, %v; want %s", c.raw, got, err, c.want)
		}
	}
	if _, err := withoutServers([]byte(`{"paths":{}}`)); err == nil {
		t.Error("a document without openapi taken for an OpenAPI document")
	}
	a, _ := withoutServers([]byte(`{"openapi":"3.1.0","servers":[{"url":"http://127.0.0.1:1"}],"paths":{}}`))
	b, _ := withoutServers([]byte(`{"openapi":"3.1.0","servers":[{"url":"http://127.0.0.1:2"}],"paths":{}}`))
	if string(a) != string(b) {
		t.Errorf("documents alike but for their servers: %s and %s", a, b)
	}
}

// TestContractCheckReadsTheDocumentAsOpenAPI31: a request the server accepted is held to its
// declared body, a notification to its webhook, and a type list with null (OpenAPI 3.1's
// nullable) is read as JSON Schema 2020-12 reads it, with its formats held.
func TestContractCheckReadsTheDocumentAsOpenAPI31(t *testing.T) {
	t.Parallel()
	const thing = `{"type":"object","required":["name"],"properties":{"name":{"type":"string"},"note":{"type":["string","null"]},"at":{"type":"string","format":"date-time"}},"additionalProperties":false}`
	doc, err := Parse([]byte(`{"openapi":"3.1.0","info":{"title":"t","version":"1"},"paths":{"/things":{"post":{
		"requestBody":{"required":true,"content":{"application/json":{"schema":` + thing + `}}},
		"responses":{"201":{"description":"made","content":{"application/json":{"schema":` + thing + `}}}}}}},
		"webhooks":{"thing-made":{"post":{"requestBody":{"content":{"application/json":{"schema":` + thing + `}}},"responses":{"200":{"description":"ok"}}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, sent, answered string
		status               int
		want                 int
	}{
		{"both as declared, null where null is allowed", `{"name":"a","note":null}`, `{"name":"a","note":"b"}`, 201, 0},
		{"an accepted request the schema refuses", `{"name":2}`, `{"name":"a"}`, 201, 1},
		{"a refused request is not held to the schema", `{"name":2}`, `{"name":"a"}`, 422, 1}, // 422 is undeclared
		{"an answer whose null is not allowed", `{"name":"a"}`, `{"name":null}`, 201, 1},
		{"both wrong", `{"name":1}`, `{}`, 201, 2},
		{"a declared format not kept", `{"name":"a","at":"2026-12-02T22:00:00Z"}`, `{"name":"a","at":"yesterday"}`, 201, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest("POST", "http://x/things", nil)
			req.Header.Set("Content-Type", "application/json")
			resp := &http.Response{StatusCode: tc.status, Header: http.Header{"Content-Type": {"application/json"}}}
			problems, template, outside := doc.Check(req, []byte(tc.sent), resp, []byte(tc.answered))
			if outside || template != "/things" {
				t.Fatalf("outside %v, template %q: want the operation /things", outside, template)
			}
			if len(problems) != tc.want {
				t.Errorf("%d problems, want %d: %q", len(problems), tc.want, problems)
			}
		})
	}
	if _, _, outside := doc.Check(httptest.NewRequest("GET", "http://x/elsewhere", nil), nil, &http.Response{StatusCode: 200}, nil); !outside {
		t.Errorf("a path the document does not have is not outside it")
	}
	if !doc.HasWebhook("thing-made") || doc.HasWebhook("thing-lost") {
		t.Errorf("HasWebhook: thing-made %v, thing-lost %v", doc.HasWebhook("thing-made"), doc.HasWebhook("thing-lost"))
	}
	if p := doc.CheckWebhook("thing-made", []byte(`{"name":"a","note":null}`)); p != "" {
		t.Errorf("a notification as declared: %s", p)
	}
	for _, body := range []string{`{"name":2}`, `{"name":"a","extra":1}`, `not json`} {
		if p := doc.CheckWebhook("thing-made", []byte(body)); p == "" {
			t.Errorf("the notification %s passed its webhook's schema", body)
		}
	}
}
