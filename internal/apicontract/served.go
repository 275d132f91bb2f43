package apicontract

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
)

// A test holds a server to its contract through Served: every answer the server gives the
// test's HTTP client, and every request it accepts, is checked against the operation the
// server's own /openapi.json declares. An undeclared status, a missing declared header or a
// body that does not validate fails the test that sent the request (ForTest), else the test
// that started the server.

type testKey struct{}

// ForTest is ctx carrying t: what does not match the contract in an exchange of a request
// with this context fails t (a subtest) rather than the test that started the server.
func ForTest(ctx context.Context, t testing.TB) context.Context {
	return context.WithValue(ctx, testKey{}, t)
}

// Served checks the exchanges with the server at base against the document it serves.
type Served struct {
	base  string
	inner http.RoundTripper
	owner testing.TB

	once sync.Once
	doc  Document
}

// NewServed checks the exchanges with the server at base, made through inner; what does
// not match fails owner unless the request carries a test of its own (ForTest).
func NewServed(base string, inner http.RoundTripper, owner testing.TB) *Served {
	return &Served{base: base, inner: inner, owner: owner}
}

// Transport is the client's transport: every exchange with base is checked.
func (ct *Served) Transport() http.RoundTripper {
	return &Transport{Inner: ct.inner, Check: ct.check}
}

func (ct *Served) check(req *http.Request, reqBody []byte, resp *http.Response, respBody []byte) {
	if !strings.HasPrefix(req.URL.String(), ct.base) {
		return
	}
	doc := ct.Document()
	if doc == nil {
		ct.reporter(req).Errorf("the server serves no OpenAPI document to check its answers against")
		return
	}
	if problems, _, outside := doc.Check(req, reqBody, resp, respBody); !outside && len(problems) > 0 {
		ct.reporter(req).Errorf("the OpenAPI document does not describe %s %s → %d:\n  %s\n  request body: %.400s\n  answer body: %.600s",
			req.Method, req.URL.Path, resp.StatusCode, strings.Join(problems, "\n  "), reqBody, respBody)
	}
}

func (ct *Served) reporter(req *http.Request) testing.TB {
	if t := TestOf(req.Context()); t != nil {
		return t
	}
	return ct.owner
}

// TestOf is the test ctx carries (ForTest), nil if none.
func TestOf(ctx context.Context) testing.TB {
	t, _ := ctx.Value(testKey{}).(testing.TB)
	return t
}

// Document is the server's document, fetched once.
func (ct *Served) Document() Document {
	ct.once.Do(func() {
		req, _ := http.NewRequest("GET", ct.base+"/openapi.json", nil)
		resp, err := ct.inner.RoundTrip(req)
		if err != nil {
			return
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != 200 {
			return
		}
		ct.doc, err = ParseServed(raw)
		if err != nil {
			ct.owner.Errorf("contract: %v", err)
		}
	})
	return ct.doc
}

var (
	docsMu sync.Mutex
	docs   = map[[32]byte]func() (Document, error){} // one validator per distinct document
)

// ParseServed is the validator of a served document: servers differ in their address only,
// so one is parsed per document without it, once however many servers wait for it.
func ParseServed(raw []byte) (Document, error) {
	norm, err := withoutServers(raw)
	if err != nil {
		return nil, err
	}
	digest := sha256.Sum256(norm)
	docsMu.Lock()
	parse := docs[digest]
	if parse == nil {
		parse = sync.OnceValues(func() (Document, error) { return Parse(norm) })
		docs[digest] = parse
	}
	docsMu.Unlock()
	d, err := parse()
	if err != nil {
		return nil, fmt.Errorf("the served document: %v", err)
	}
	return d, nil
}

// withoutServers is the served document without its servers entry. The entry is cut from
// the bytes as served where it occurs once (the server writes its document compact), which
// reads the document without building it: decoding it whole into maps and encoding it again
// took each test server's first request about 30 ms of CPU under the race detector.
func withoutServers(raw []byte) ([]byte, error) {
	var top struct {
		OpenAPI json.RawMessage `json:"openapi"`
		Servers json.RawMessage `json:"servers"`
	}
	if err := json.Unmarshal(raw, &top); err != nil || top.OpenAPI == nil {
		return nil, fmt.Errorf("the served document is no OpenAPI document: %v", err)
	}
	if top.Servers == nil {
		return raw, nil
	}
	entry := append([]byte(`"servers":`), top.Servers...)
	if i := bytes.Index(raw, entry); i > 0 && bytes.Count(raw, entry) == 1 {
		end := i + len(entry)
		switch {
		case raw[i-1] == ',':
			i--
		case end < len(raw) && raw[end] == ',':
			end++
		}
		return slices.Concat(raw[:i], raw[end:]), nil
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	delete(doc, "servers")
	return json.Marshal(doc)
}
