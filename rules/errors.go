package rules

import (
	"errors"
	"fmt"
	"strings"
)

// Kind says which class of failure an error is. api/ maps each kind to one HTTP status;
// nothing in rules knows about HTTP.
type Kind int

const (
	KindInternal         Kind = iota // 500: never shown in detail
	KindInvalid                      // 400: the generic contract
	KindRejected                     // 401: the country rules and the merchant's configuration
	KindUnauthorized                 // 401: authentication (code 1001)
	KindNotFound                     // 404
	KindConflict                     // 409
	KindTooLarge                     // 413
	KindRateLimited                  // 429
	KindForbidden                    // 403: an action this deployment does not allow (sandbox off)
	KindUnsupportedMedia             // 415: a JSON endpoint sent something that is not JSON
	KindUnavailable                  // 503: the database cannot be reached for now (code 1925)
)

// Error is one problem with a request: a stable numeric code, a human message and, when a
// field is at fault, its path in the request body (for example "beneficiary.document.number").
type Error struct {
	Kind    Kind   `json:"-"`
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
	Value   any    `json:"value,omitempty"`
}

func (e *Error) Error() string {
	if e.Field != "" {
		return e.Field + ": " + e.Message
	}
	return e.Message
}

// Errorf builds an Error of the given kind and code with no field.
func Errorf(kind Kind, code, format string, args ...any) *Error {
	return &Error{Kind: kind, Code: code, Message: WithPublished(code, fmt.Sprintf(format, args...))}
}

// Problem is every error of one request, reported together. Its kind
// is that of its errors: a request with generic errors is not checked against country rules.
type Problem struct {
	Kind   Kind
	Title  string
	Detail string
	Errors []*Error
}

func (p *Problem) Error() string {
	msgs := make([]string, len(p.Errors))
	for i, e := range p.Errors {
		msgs[i] = e.Error()
	}
	return p.Detail + ": " + strings.Join(msgs, "; ")
}

// Code is the code of the first error, the one the wire format puts at the top.
func (p *Problem) Code() string {
	if len(p.Errors) == 0 {
		return ""
	}
	return p.Errors[0].Code
}

// problems collects field errors while a request is checked.
type problems struct {
	list []*Error
}

func (ps *problems) add(code, field, msg string, value any) {
	ps.list = append(ps.list, &Error{Code: code, Field: field, Message: WithPublished(code, msg), Value: value})
}

func (ps *problems) addf(code, field string, value any, format string, args ...any) {
	ps.add(code, field, fmt.Sprintf(format, args...), value)
}

func (ps *problems) empty() bool { return len(ps.list) == 0 }

// problem turns the collected errors into one Problem of the given kind, or nil.
func (ps *problems) problem(kind Kind, title, subject string) *Problem {
	if len(ps.list) == 0 {
		return nil
	}
	for _, e := range ps.list {
		e.Kind = kind
	}
	noun := "fields break"
	if len(ps.list) == 1 {
		noun = "field breaks"
	}
	return &Problem{Kind: kind, Title: title, Detail: fmt.Sprintf("%d %s %s", len(ps.list), noun, subject), Errors: ps.list}
}

// ErrNotFound is what a Store answers for a record that does not exist.
var ErrNotFound = errors.New("not found")

// ErrExists is what a Store answers when creating a record whose id is taken.
var ErrExists = errors.New("already exists")
