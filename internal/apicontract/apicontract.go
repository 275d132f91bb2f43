// Package apicontract checks HTTP exchanges and webhook bodies against an OpenAPI document
// (kin-openapi's openapi3filter, which reads OpenAPI 3.1 as the server serves it and
// validates its schemas as JSON Schema 2020-12): the tests hold every answer of the server,
// and every request it accepts, to the document it serves.
//
// kin-openapi rather than libopenapi-validator, which did the same: the latter's generic
// models were half of what the compiler did for the tests, some six minutes of CPU on a
// machine with an empty build cache, for each of the two builds CI makes (with the race
// detector and without); kin-openapi is a tenth of that.
package apicontract

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// Document is a parsed OpenAPI document with its validator. It is safe for concurrent use.
type Document interface {
	// Check checks an answer, and the request when it was accepted (a status below 400),
	// against the document. outside: the document has no such operation (a page, a health
	// check, a static file); template is the operation's path template, e.g. /payouts/{id}.
	// The request's and the answer's bodies are given read: Check reads copies of them.
	Check(req *http.Request, reqBody []byte, resp *http.Response, respBody []byte) (problems []string, template string, outside bool)
	// HasWebhook says whether the document declares the webhook name.
	HasWebhook(name string) bool
	// CheckWebhook checks a notification body against the document's webhook name, and
	// says what is wrong ("": nothing).
	CheckWebhook(name string, body []byte) string
}

// document is a Document. The parsed document and its router are only read once made.
type document struct {
	doc    *openapi3.T
	router routers.Router
	bodies *bodies
}

// options are the checks made of every exchange by openapi3filter: every problem rather
// than the first, an undeclared status is one, and the request's credentials are the
// server's to check (a signature the document describes but cannot verify). The bodies are
// checked by bodies, with schemas compiled once.
var options = &openapi3filter.Options{
	MultiError:            true,
	IncludeResponseStatus: true,
	ExcludeRequestBody:    true,
	ExcludeResponseBody:   true,
	AuthenticationFunc:    openapi3filter.NoopAuthenticationFunc,
}

// Parse reads an OpenAPI document (JSON or YAML).
func Parse(raw []byte) (Document, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(raw)
	if err != nil {
		return nil, fmt.Errorf("the document does not parse: %v", err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		return nil, fmt.Errorf("the document is not valid OpenAPI: %v", err)
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("no router for the document's paths: %v", err)
	}
	b, err := newBodies(raw)
	if err != nil {
		return nil, fmt.Errorf("the document's schemas: %v", err)
	}
	return &document{doc: doc, router: router, bodies: b}, nil
}

func (d *document) Check(req *http.Request, reqBody []byte, resp *http.Response, respBody []byte) (problems []string, template string, outside bool) {
	ctx := context.Background()
	vreq := req.Clone(ctx)
	vreq.Body = io.NopCloser(bytes.NewReader(reqBody))
	route, params, err := d.router.FindRoute(vreq)
	if err != nil {
		return nil, "", true
	}
	in := &openapi3filter.RequestValidationInput{Request: vreq, PathParams: params, Route: route, Options: options}
	err = openapi3filter.ValidateResponse(ctx, &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in,
		Status:                 resp.StatusCode,
		Header:                 resp.Header,
		Body:                   io.NopCloser(bytes.NewReader(respBody)),
		Options:                options,
	})
	method := strings.ToLower(req.Method)
	answered := describe(err)
	// The answer's body against the response openapi3filter chose: its status, its range
	// (2XX), or the default.
	key := strconv.Itoa(resp.StatusCode)
	if route.Operation.Responses.Value(key) == nil {
		key = key[:1] + "XX"
	}
	if route.Operation.Responses.Value(key) == nil {
		key = "default"
	}
	if r := route.Operation.Responses.Value(key); r != nil && r.Value != nil && req.Method != http.MethodHead {
		answered = append(answered, d.bodies.check(r.Value.Content, resp.Header.Get("Content-Type"), respBody,
			"paths", route.Path, method, "responses", key, "content")...)
	}
	for _, p := range answered {
		problems = append(problems, "answer: "+p)
	}
	if resp.StatusCode < 400 {
		sent := describe(openapi3filter.ValidateRequest(ctx, in))
		if rb := route.Operation.RequestBody; rb != nil && rb.Value != nil {
			if len(reqBody) == 0 && rb.Value.Required {
				sent = append(sent, "the body is required")
			} else if len(reqBody) > 0 {
				sent = append(sent, d.bodies.check(rb.Value.Content, req.Header.Get("Content-Type"), reqBody,
					"paths", route.Path, method, "requestBody", "content")...)
			}
		}
		for _, p := range sent {
			problems = append(problems, "accepted request: "+p)
		}
	}
	return problems, route.Path, false
}

// WebhookOf is the name of the document's webhook a notification's body is sent as: a
// batch's, a payout link's event, else a payout's outcome (told by the body's type).
func WebhookOf(body []byte) string {
	var probe struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(body, &probe) == nil && strings.HasPrefix(probe.Type, "batch.") {
		return "batch-completed"
	} else if strings.HasPrefix(probe.Type, "link.") {
		return "payout-link-event"
	}
	return "payout-outcome"
}

func (d *document) HasWebhook(name string) bool {
	return d.doc.Webhooks[name] != nil
}

func (d *document) CheckWebhook(name string, body []byte) string {
	hook := d.doc.Webhooks[name]
	if hook == nil {
		return "the document has no webhook " + name
	}
	if hook.Post == nil || hook.Post.RequestBody == nil || hook.Post.RequestBody.Value == nil {
		return "the document's webhook " + name + " has no body"
	}
	if mt := hook.Post.RequestBody.Value.Content.Get("application/json"); mt == nil || mt.Schema == nil {
		return "the document's webhook " + name + " has no JSON schema"
	}
	problems := d.bodies.check(hook.Post.RequestBody.Value.Content, "application/json", body, "webhooks", name, "post", "requestBody", "content")
	if len(problems) > 0 {
		return fmt.Sprintf("a notification does not match the document's webhook:\n  %s\n  body: %.600s", strings.Join(problems, "\n  "), body)
	}
	return ""
}

// describe is each problem err holds, one line each.
func describe(err error) []string {
	if err == nil {
		return nil
	}
	var multi openapi3.MultiError
	if errors.As(err, &multi) {
		var out []string
		for _, e := range multi {
			out = append(out, describe(e)...)
		}
		return out
	}
	// A schema's refusal goes on with the whole schema and value: the body is shown apart.
	msg, _, _ := strings.Cut(err.Error(), "\nSchema:")
	return []string{strings.Join(strings.Fields(msg), " ")}
}

// Transport is a client's transport that hands each exchange, both bodies read, to Check,
// and gives the client the answer as if unread. An event stream is passed on unread: it is
// read as it comes, and its operation is checked by its own test.
type Transport struct {
	Inner http.RoundTripper
	Check func(req *http.Request, reqBody []byte, resp *http.Response, respBody []byte)
}

// RoundTrip sends req through Inner, then calls Check.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	var reqBody []byte
	if req.Body != nil && req.Body != http.NoBody {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		reqBody = b
		req.Body = io.NopCloser(bytes.NewReader(b))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	}
	resp, err := t.Inner.RoundTrip(req)
	if err != nil || strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return resp, err
	}
	respBody, rerr := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(respBody))
	if rerr == nil {
		t.Check(req, reqBody, resp, respBody)
	}
	return resp, nil
}
