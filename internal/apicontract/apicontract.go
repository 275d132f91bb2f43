// Package apicontract checks HTTP exchanges and webhook bodies against an OpenAPI document
// (libopenapi-validator, which reads OpenAPI 3.1 as the server serves it): the tests hold
// every answer of the server, and every request it accepts, to the document it serves.
//
// It is a package of its own, not a file of the tests that use it, because the validator's
// generic models cost the compiler some ten thousand instantiated functions: compiled once
// here, not again in every test package that checks answers.
package apicontract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	verrors "github.com/pb33f/libopenapi-validator/errors"
	"github.com/pb33f/libopenapi-validator/paths"
	"github.com/pb33f/libopenapi-validator/schema_validation"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
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

// document is a Document. It is reached only through the interface, and Parse is not
// inlined, so that no libopenapi type shows in what importers compile against: one that
// did (a field's type, an inlined body) would have its generic methods instantiated in
// every importer again.
type document struct {
	// mu is held while the document is read: libopenapi renders parts of its model lazily,
	// writing as it validates, so one validation at a time. It guards memory only: the
	// bodies validated are already read.
	mu    sync.Mutex
	v     validator.Validator
	model *v3.Document
	// find is what FindPath reads, and hooks validates the webhooks' bodies: made once
	// with the document, so that the regular expressions of its paths and the schemas of
	// its webhooks are compiled once, not again for every answer and notification checked.
	find  *config.ValidationOptions
	hooks schema_validation.SchemaValidator
}

// Parse reads an OpenAPI document (JSON or YAML).
//
//go:noinline
func Parse(raw []byte) (Document, error) {
	parsed, err := libopenapi.NewDocument(raw)
	if err != nil {
		return nil, fmt.Errorf("the document does not parse: %v", err)
	}
	regexes := config.WithRegexCache(&sync.Map{})
	v, errs := validator.NewValidator(parsed, regexes)
	if len(errs) > 0 {
		return nil, fmt.Errorf("no validator for the document: %v", errs)
	}
	model, err := parsed.BuildV3Model()
	if err != nil {
		return nil, fmt.Errorf("the document has no model: %v", err)
	}
	return &document{v: v, model: &model.Model, find: config.NewValidationOptions(regexes),
		hooks: schema_validation.NewSchemaValidator(regexes)}, nil
}

func (d *document) Check(req *http.Request, reqBody []byte, resp *http.Response, respBody []byte) (problems []string, template string, outside bool) {
	vreq := req.Clone(req.Context())
	vreq.Body = io.NopCloser(bytes.NewReader(reqBody))
	vresp := *resp
	vresp.Body = io.NopCloser(bytes.NewReader(respBody))
	vresp.Request = vreq
	d.mu.Lock()
	defer d.mu.Unlock()
	_, errs := d.v.ValidateHttpResponse(vreq, &vresp)
	if len(errs) == 1 && (errs[0].IsPathMissingError() || errs[0].IsOperationMissingError()) {
		return nil, "", true
	}
	_, _, template = paths.FindPath(vreq, d.model, d.find)
	for _, e := range errs {
		problems = append(problems, "answer: "+describe(e))
	}
	if resp.StatusCode < 400 {
		vreq.Body = io.NopCloser(bytes.NewReader(reqBody))
		_, errs := d.v.ValidateHttpRequest(vreq)
		for _, e := range errs {
			problems = append(problems, "accepted request: "+describe(e))
		}
	}
	return problems, template, false
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
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.model.Webhooks != nil && d.model.Webhooks.GetOrZero(name) != nil
}

func (d *document) CheckWebhook(name string, body []byte) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.model.Webhooks == nil || d.model.Webhooks.GetOrZero(name) == nil {
		return "the document has no webhook " + name
	}
	hook := d.model.Webhooks.GetOrZero(name)
	if hook.Post == nil || hook.Post.RequestBody == nil {
		return "the document's webhook " + name + " has no body"
	}
	mt := hook.Post.RequestBody.Content.GetOrZero("application/json")
	if mt == nil || mt.Schema == nil {
		return "the document's webhook " + name + " has no JSON schema"
	}
	if ok, errs := d.hooks.ValidateSchemaBytesWithVersion(mt.Schema.Schema(), body, 3.1); !ok {
		var problems []string
		for _, e := range errs {
			problems = append(problems, describe(e))
		}
		return fmt.Sprintf("a notification does not match the document's webhook:\n  %s\n  body: %.600s", strings.Join(problems, "\n  "), body)
	}
	return ""
}

func describe(e *verrors.ValidationError) string {
	s := e.Message
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	for _, f := range e.SchemaValidationErrors {
		s += fmt.Sprintf(" [%s at %s]", f.Reason, f.FieldPath)
	}
	return s
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
