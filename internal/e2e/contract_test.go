package e2e

// The OpenAPI document is the contract: every answer the end-to-end tests get from
// a payouts server, and every request it accepts, is checked against the operation the
// server's own /openapi.json declares, with kin-openapi's validator (internal/apicontract,
// which reads OpenAPI 3.1 as served). An undeclared status, a missing declared header or a
// body that does not validate fails the test that sent the request; a server no test owns
// (a binary started by exec) fails the run from TestMain.

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"payouts/internal/apicontract"
)

// contractChecker holds a validator per distinct document and the test owning each server.
type contractChecker struct {
	inner http.RoundTripper

	mu            sync.Mutex
	owners        map[string]testing.TB             // host → the test that started the server
	byHost        map[string]apicontract.Document   // host → its document (nil: not a payouts server)
	byDigest      map[[32]byte]apicontract.Document // one validator per distinct document
	byText        map[[32]byte]apicontract.Document // the same, by the served text without its servers entry
	seen          map[string]map[int]bool           // "METHOD /path/{template}" → statuses answered
	orphans       []string
	answers       atomic.Int64
	requests      atomic.Int64
	outside       atomic.Int64
	notifications atomic.Int64
}

var contract = &contractChecker{
	owners: map[string]testing.TB{}, byHost: map[string]apicontract.Document{}, byDigest: map[[32]byte]apicontract.Document{},
	byText: map[[32]byte]apicontract.Document{}, seen: map[string]map[int]bool{},
}

// own makes t the test whose requests to base are checked (startServer calls it).
func (c *contractChecker) own(base string, t testing.TB) {
	host := strings.TrimPrefix(strings.TrimPrefix(base, "http://"), "https://")
	c.mu.Lock()
	c.owners[host] = t
	delete(c.byHost, host) // a port may be reused by a server of another configuration
	c.mu.Unlock()
	t.Cleanup(func() {
		c.mu.Lock()
		if c.owners[host] == t {
			delete(c.owners, host)
		}
		delete(c.byHost, host)
		c.mu.Unlock()
	})
}

// check validates one exchange and reports what does not match to the owning test.
func (c *contractChecker) check(req *http.Request, reqBody []byte, resp *http.Response, respBody []byte) {
	doc := c.document(req.URL.Scheme + "://" + req.URL.Host)
	if doc == nil {
		return
	}
	problems, template, outside := doc.Check(req, reqBody, resp, respBody)
	if outside {
		c.outside.Add(1)
		return
	}
	c.answers.Add(1)
	c.note(req.Method+" "+template, resp.StatusCode)
	if resp.StatusCode < 400 {
		c.requests.Add(1)
	}
	if len(problems) == 0 {
		return
	}
	msg := fmt.Sprintf("the OpenAPI document does not describe %s %s → %d:\n  %s\n  request body: %.400s\n  answer body: %.600s",
		req.Method, req.URL.Path, resp.StatusCode, strings.Join(problems, "\n  "), reqBody, respBody)
	c.mu.Lock()
	t := c.owners[req.URL.Host]
	if t == nil {
		c.orphans = append(c.orphans, msg)
	}
	c.mu.Unlock()
	if t != nil {
		t.Errorf("%s", msg)
	}
}

func (c *contractChecker) note(k string, status int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen[k] == nil {
		c.seen[k] = map[int]bool{}
	}
	c.seen[k][status] = true
}

// document is the validator of the server at base, fetched once per server; nil when base
// serves no OpenAPI document (a test's own receiver of notifications).
func (c *contractChecker) document(base string) apicontract.Document {
	host := strings.TrimPrefix(base, "http://")
	c.mu.Lock()
	d, ok := c.byHost[host]
	c.mu.Unlock()
	if ok {
		return d
	}
	d = c.fetch(base)
	c.mu.Lock()
	c.byHost[host] = d
	c.mu.Unlock()
	return d
}

func (c *contractChecker) fetch(base string) apicontract.Document {
	req, _ := http.NewRequest("GET", base+"/openapi.json", nil)
	resp, err := c.inner.RoundTrip(req)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		return nil
	}
	// Servers differ only in their address: one validator per document without it. A text
	// seen before but for its servers entry (as the server writes it) is not read again.
	var text [32]byte
	entry := []byte(`,"servers":[{"description":"This server","url":"` + base + `"}]`)
	if bytes.Count(raw, entry) == 1 {
		text = sha256.Sum256(bytes.Replace(raw, entry, nil, 1))
		c.mu.Lock()
		d := c.byText[text]
		c.mu.Unlock()
		if d != nil {
			return d
		}
	}
	var doc map[string]any
	if json.Unmarshal(raw, &doc) != nil || doc["openapi"] == nil {
		return nil
	}
	delete(doc, "servers")
	norm, _ := json.Marshal(doc)
	digest := sha256.Sum256(norm)
	c.mu.Lock()
	d := c.byDigest[digest]
	c.mu.Unlock()
	if d == nil {
		d, err = apicontract.Parse(norm)
		if err != nil {
			panic(fmt.Sprintf("contract: the served document: %v", err))
		}
	}
	c.mu.Lock()
	c.byDigest[digest] = d
	if text != ([32]byte{}) {
		c.byText[text] = d
	}
	c.mu.Unlock()
	return d
}

func (c *contractChecker) orphanFailures() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.orphans...)
}

func (c *contractChecker) operationsSeen() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.seen)
}

func (c *contractChecker) statusesSeen() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, s := range c.seen {
		n += len(s)
	}
	return n
}

// seenStatuses lists the statuses the tests saw per operation (PAYOUTS_CONTRACT_SEEN=1).
func (c *contractChecker) seenStatuses() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for k, s := range c.seen {
		var codes []string
		for code := range s {
			codes = append(codes, fmt.Sprint(code))
		}
		sort.Strings(codes)
		out = append(out, k+" "+strings.Join(codes, ","))
	}
	sort.Strings(out)
	return out
}

// contractRecorder is a test whose errors are kept, to test the checker itself.
type contractRecorder struct {
	testing.TB
	mu   sync.Mutex
	msgs []string
}

func (r *contractRecorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, fmt.Sprintf(format, args...))
}

func TestContractCheckerRefusesWhatTheDocumentDoesNotDeclare(t *testing.T) {
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
	for _, tc := range []struct {
		path string
		want int
	}{{"/things/1", 0}, {"/things/2", 1}, {"/things/3", 1}, {"/things/4", 1}, {"/elsewhere", 0}} {
		t.Run(tc.path, func(t *testing.T) {
			rec := &contractRecorder{TB: t}
			contract.own(srv.URL, rec)
			resp, err := http.Get(srv.URL + tc.path)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if len(rec.msgs) != tc.want {
				t.Errorf("GET %s: %d violations, want %d: %v", tc.path, len(rec.msgs), tc.want, rec.msgs)
			}
		})
	}
}

// checkNotification validates a notification a test's receiver got against the webhook's
// body in the document; what does not match fails the run (TestMain), as the receiver does
// not know its test.
func (c *contractChecker) checkNotification(body []byte) {
	name := apicontract.WebhookOf(body)
	c.mu.Lock()
	docs := make([]apicontract.Document, 0, len(c.byDigest))
	for _, d := range c.byDigest {
		docs = append(docs, d)
	}
	c.mu.Unlock()
	var doc apicontract.Document
	for _, d := range docs {
		if d.HasWebhook(name) {
			doc = d
			break
		}
	}
	if doc == nil {
		return
	}
	problem := doc.CheckWebhook(name, body)
	c.notifications.Add(1)
	if problem != "" {
		c.fail(problem)
	}
}

func (c *contractChecker) fail(msg string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.orphans = append(c.orphans, msg)
}

// Serial: it takes back the failures it provokes from the run's list, which the other tests'
// servers append to while they run (serial tests run before the parallel ones start).
func TestContractCheckerRefusesANotificationOfAnotherShape(t *testing.T) {
	s := startServer(t, "")
	if contract.document(s.URL) == nil {
		t.Fatal("no document")
	}
	before := len(contract.orphanFailures())
	contract.checkNotification([]byte(`{"payout":{"id":29,"amount":"1"},"output":{"stage":"REJECTED"}}`)) // id a number, fields missing
	contract.checkNotification([]byte(`{"payout":{"id":"29","country":"PER","amount":"100","currency":"PEN","orderId":"A","merchantId":"1","bankCode":"002","accountNumber":"****1234","name":"Ana Quispe","customerEmail":"a@b.pe"},"output":{"stage":"SUCCESS","status":"PROCESSED","statusChangeDateTime":"2026-11-21T10:00:00Z"}}`))
	contract.mu.Lock()
	got := contract.orphans[before:]
	contract.orphans = contract.orphans[:before] // this test's own failures do not fail the run
	contract.mu.Unlock()
	if len(got) != 1 || !strings.Contains(got[0], "does not match the document's webhook") {
		t.Errorf("got %d failures, want 1 (the first body): %v", len(got), got)
	}
}
