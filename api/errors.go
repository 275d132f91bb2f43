package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"payouts/rules"
)

// Problem is the error body (docs/reference/errors.md): RFC 9457 problem+json extended with the
// original API's code, message list and per-field errors.
type Problem struct {
	Title   string         `json:"title"`
	Status  int            `json:"status"`
	Detail  string         `json:"detail"`
	Code    string         `json:"code"`
	Message []string       `json:"message"`
	Errors  []ProblemError `json:"errors"`
	// ErrorType tells the two kinds of 401 apart: the specification answers a
	// country-rule refusal 401 like a failed signature, and a client must not retry the one
	// as if it were the other. The header X-Payouts-Error-Type carries the same word.
	ErrorType string `json:"errorType,omitempty" enum:"validation,authentication" doc:"On a 401 only: validation (the request breaks a country rule or the merchant's configuration: fix the data, not the credentials) or authentication (code 1001: the key, timestamp or signature). Also in the header X-Payouts-Error-Type."`

	headers http.Header
}

// ErrorTypeHeader carries a 401's errorType, for clients that read headers before bodies.
const ErrorTypeHeader = "X-Payouts-Error-Type"

// The errorType of a 401.
const (
	ErrorTypeValidation     = "validation"
	ErrorTypeAuthentication = "authentication"
)

// ProblemError is one error of a Problem; Location is "body." + the field path.
type ProblemError struct {
	Code     string `json:"code"`
	Message  string `json:"message"`
	Location string `json:"location,omitempty"`
	Value    any    `json:"value,omitempty"`
}

func (p *Problem) Error() string                { return p.Detail }
func (p *Problem) GetStatus() int               { return p.Status }
func (p *Problem) ContentType(ct string) string { return "application/problem+json" }
func (p *Problem) GetHeaders() http.Header      { return p.headers }
func (p *Problem) withHeader(k, v string) *Problem {
	if p.headers == nil {
		p.headers = http.Header{}
	}
	p.headers.Set(k, v)
	return p
}

// in is the problem in the client's language (Accept-Language): the rules' messages exist in
// Spanish too. A 1001 keeps its English, which names the part that failed, and a
// 500 says nothing either way.
func (p *Problem) in(lang string) *Problem {
	if !rules.Spanish(lang) || p.Code == rules.CodeAuthentication || p.Status >= 500 || len(p.Errors) == 0 {
		return p
	}
	es := *p
	es.Errors = make([]ProblemError, len(p.Errors))
	es.Message = make([]string, len(p.Errors))
	for i, e := range p.Errors {
		e.Message = rules.MessageIn(lang, e.Code, e.Message)
		es.Errors[i] = e
		es.Message[i] = e.Message
		if field := strings.TrimPrefix(e.Location, "body."); field != "" {
			es.Message[i] = field + ": " + e.Message
		}
	}
	es.Detail = es.Message[0]
	if n := len(es.Errors); n > 1 {
		es.Detail = strconv.Itoa(n) + " errores; el primero: " + es.Message[0]
	}
	switch {
	case p.Status == http.StatusBadRequest:
		es.Title = "Datos faltantes o no válidos"
	case p.ErrorType == ErrorTypeValidation:
		es.Title = "Error de validación de datos"
	}
	return es.withHeader("Content-Language", "es")
}

// typed marks a 401 with its errorType, in the body and the header.
func (p *Problem) typed(kind rules.Kind) *Problem {
	if p.Status != http.StatusUnauthorized {
		return p
	}
	p.ErrorType = ErrorTypeValidation
	if kind == rules.KindUnauthorized {
		p.ErrorType = ErrorTypeAuthentication
	}
	return p.withHeader(ErrorTypeHeader, p.ErrorType)
}

var kindStatus = map[rules.Kind]int{
	rules.KindInvalid:          http.StatusBadRequest,
	rules.KindRejected:         http.StatusUnauthorized,
	rules.KindUnauthorized:     http.StatusUnauthorized,
	rules.KindNotFound:         http.StatusNotFound,
	rules.KindConflict:         http.StatusConflict,
	rules.KindTooLarge:         http.StatusRequestEntityTooLarge,
	rules.KindRateLimited:      http.StatusTooManyRequests,
	rules.KindForbidden:        http.StatusForbidden,
	rules.KindUnsupportedMedia: http.StatusUnsupportedMediaType,
	rules.KindUnavailable:      http.StatusServiceUnavailable,
}

var kindTitle = map[rules.Kind]string{
	rules.KindInvalid:          "Missing or invalid data",
	rules.KindRejected:         "Data validation error",
	rules.KindUnauthorized:     "Unauthorized",
	rules.KindNotFound:         "Not found",
	rules.KindConflict:         "Conflict",
	rules.KindTooLarge:         "Payload too large",
	rules.KindRateLimited:      "Too many requests",
	rules.KindForbidden:        "Forbidden",
	rules.KindUnsupportedMedia: "Unsupported media type",
	rules.KindUnavailable:      "Service unavailable",
}

// fromRules turns a domain error into the wire problem.
func fromRules(p *rules.Problem) *Problem {
	out := &Problem{Title: p.Title, Status: kindStatus[p.Kind], Detail: p.Detail}
	if out.Title == "" {
		out.Title = kindTitle[p.Kind]
	}
	for _, e := range p.Errors {
		out.add(e)
	}
	if out.Detail == "" && len(p.Errors) > 0 {
		out.Detail = p.Errors[0].Message
	}
	return out.typed(p.Kind)
}

func (p *Problem) add(e *rules.Error) {
	loc := ""
	if e.Field != "" {
		loc = "body." + e.Field
		if strings.HasPrefix(e.Field, "query.") || strings.HasPrefix(e.Field, "path.") || strings.HasPrefix(e.Field, "header.") {
			loc = e.Field
		}
	}
	if p.Code == "" {
		p.Code = e.Code
	}
	text := rules.WithPublished(e.Code, e.Message)
	msg := text
	if e.Field != "" {
		msg = e.Field + ": " + text
	}
	p.Message = append(p.Message, msg)
	p.Errors = append(p.Errors, ProblemError{Code: e.Code, Message: text, Location: loc, Value: e.Value})
}

// newProblem is huma's error constructor for this API (STYLE: errors are mapped to HTTP
// once). Handlers return rules errors and huma hands them here as a 500 "unexpected error";
// huma's own errors (parameter parsing, body size) arrive with their status and details.
func newProblem(status int, msg string, errs ...error) huma.StatusError {
	return newProblemCtx(context.Background(), status, msg, errs...)
}

func newProblemCtx(ctx context.Context, status int, msg string, errs ...error) huma.StatusError {
	for _, err := range errs {
		var rp *rules.Problem
		if errors.As(err, &rp) {
			return fromRules(rp)
		}
		var re *rules.Error
		if errors.As(err, &re) {
			return fromRules(&rules.Problem{Kind: re.Kind, Detail: re.Message, Errors: []*rules.Error{re}})
		}
		var pe *Problem
		if errors.As(err, &pe) {
			return pe
		}
	}
	if status == http.StatusUnprocessableEntity {
		status = http.StatusBadRequest
	}
	p := &Problem{Title: http.StatusText(status), Status: status, Detail: msg}
	switch status {
	case http.StatusInternalServerError:
		// Everything internal goes to the request's log, nothing to the client.
		if slices.ContainsFunc(errs, rules.Unavailable) {
			requestLogger(ctx).Warn("storage unavailable", "err", errors.Join(errs...))
			return unavailableProblem()
		}
		for _, err := range errs {
			if err != nil {
				requestLogger(ctx).Error("internal error", "err", err)
			}
		}
		return internalProblem()
	case http.StatusRequestEntityTooLarge:
		p.Detail = bodyLimitMessage(msg)
		p.add(&rules.Error{Code: rules.CodeBodyTooLarge, Message: p.Detail})
		return p
	}
	code := rules.CodeWrongType
	for _, err := range errs {
		if err == nil {
			continue
		}
		e := &rules.Error{Code: code, Message: err.Error()}
		var d huma.ErrorDetailer
		if errors.As(err, &d) {
			det := d.ErrorDetail()
			e.Message, e.Value = det.Message, det.Value
			e.Field = det.Location
			if field, m, ok := plainDecodeError(det.Message); ok {
				// The decoder's words name Go types and struct fields: say it in the
				// API's, at the field, without echoing the whole body back.
				e.Field, e.Message, e.Value = "body."+field, m, nil
			} else if det.Location == "body" {
				e.Value = nil
			}
			if strings.HasPrefix(det.Location, "query.") || strings.HasPrefix(det.Location, "path.") {
				e.Code = rules.CodeQueryParam
			} else if e.Field == "body" {
				e.Field = ""
			} else {
				e.Field = strings.TrimPrefix(e.Field, "body.")
			}
		}
		p.add(e)
	}
	if len(p.Errors) == 0 {
		c := rules.CodeMalformedJSON
		if status == http.StatusNotFound {
			c = rules.CodePayoutNotFound
		}
		p.add(&rules.Error{Code: c, Message: msg})
	}
	if status == http.StatusBadRequest {
		p.Title = kindTitle[rules.KindInvalid]
	}
	return p
}

func init() {
	huma.NewError = newProblem
	huma.NewErrorWithContext = func(hc huma.Context, status int, msg string, errs ...error) huma.StatusError {
		ctx := context.Background()
		if hc != nil {
			ctx = hc.Context()
		}
		se := newProblemCtx(ctx, status, msg, errs...)
		if p, ok := se.(*Problem); ok && hc != nil {
			se = p.in(hc.Header("Accept-Language"))
		}
		// huma writes the headers of the handler's own error only; a domain error becomes
		// a Problem here, so its headers (X-Payouts-Error-Type) are set here.
		if p, ok := se.(*Problem); ok && hc != nil {
			for k, v := range p.headers {
				hc.SetHeader(k, v[0])
			}
		}
		return se
	}
}

// writeProblem writes a problem from plain HTTP middleware (outside huma).
func writeProblem(w http.ResponseWriter, p *Problem) {
	for k, v := range p.headers {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(p.Status)
	b, _ := jsonMarshal(p)
	w.Write(b)
}

// internalProblem is the body of every 500: nothing internal, the log has it.
func internalProblem() *Problem {
	p := &Problem{Title: http.StatusText(http.StatusInternalServerError), Status: http.StatusInternalServerError,
		Detail: "internal error; the server log has the details"}
	p.add(&rules.Error{Code: rules.CodeInternal, Message: "internal error"})
	return p
}

// unavailableProblem is the answer while the database is out of reach: 503, code 1925, and
// when to try again. Nothing was done; the same request may be sent again as it is.
func unavailableProblem() *Problem {
	return retryAfter(problemOf(rules.KindUnavailable, rules.CodeUnavailable,
		"the service cannot reach its database for now: send the same request again after Retry-After (a create is idempotent on its orderId)"),
		rules.UnavailableRetryAfter)
}

func problemOf(kind rules.Kind, code, msg string) *Problem {
	return fromRules(&rules.Problem{Kind: kind, Detail: msg, Errors: []*rules.Error{{Kind: kind, Code: code, Message: msg}}})
}

func retryAfter(p *Problem, seconds int) *Problem {
	return p.withHeader("Retry-After", strconv.Itoa(max(seconds, 1)))
}

type ctxKey int

const (
	ctxMerchant ctxKey = iota
)

// Signer is who signed a request: the merchant and which of its keys, with the key's role.
// The keyring builds one per key when it loads a merchant, so the signed path puts one
// pointer in the context.
type Signer struct {
	Merchant *rules.Merchant
	KeyID    string
	Role     rules.KeyRole
}

func merchantFrom(ctx context.Context) *rules.Merchant {
	if s := signerFrom(ctx); s != nil {
		return s.Merchant
	}
	return nil
}

func signerFrom(ctx context.Context) *Signer {
	if lc := logContext(ctx); lc != nil && lc.signer != nil {
		return lc.signer
	}
	s, _ := ctx.Value(ctxMerchant).(*Signer)
	return s
}

// bodyLimitMessage states the body limit huma enforced ("request body is too large
// limit=65536 bytes") in the API's words, once: the same text goes in detail and message.
func bodyLimitMessage(msg string) string {
	limit := MaxBody
	if m := hugeBody.FindStringSubmatch(msg); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil {
			limit = n
		}
	}
	return fmt.Sprintf("the body is over %d KiB", limit>>10)
}

var hugeBody = regexp.MustCompile(`limit=(\d+)`)

// decodeError matches encoding/json's type errors: "json: cannot unmarshal number 1e20 into
// Go struct field .amount of type int64".
var decodeError = regexp.MustCompile(`cannot unmarshal (\w+)(?: (\S+))? into Go (?:struct field (\S*)|value) of type (\S+)`)

// plainDecodeError rewrites a decoder's type error as the field it is about (its JSON path)
// and what that field must be, in words a client reads: no Go type, no struct name.
func plainDecodeError(msg string) (field, message string, ok bool) {
	m := decodeError.FindStringSubmatch(msg)
	if m == nil {
		return "", "", false
	}
	jsonType, value, path, goType := m[1], m[2], m[3], m[4]
	if _, after, found := strings.Cut(path, "."); found {
		path = after // "fundIn.amount" or ".amount": the part after the struct's name
	}
	var want string
	switch {
	case strings.Contains(goType, "int"):
		want = "must be a whole number"
		if jsonType == "number" && value != "" {
			want = "must be a whole number between -9223372036854775808 and 9223372036854775807 (got " + value + ")"
		}
	case strings.HasPrefix(goType, "float"):
		want = "must be a number"
	case goType == "string" || strings.HasSuffix(goType, ".Stage") || strings.HasSuffix(goType, ".Status"):
		want = "must be a string"
	case goType == "bool":
		want = "must be true or false"
	case strings.HasPrefix(goType, "[]"):
		want = "must be an array"
	default:
		want = "must be an object"
	}
	if path == "" {
		return "", "the body " + want, true
	}
	return path, want, true
}

// WriteProblem answers p from plain HTTP middleware as every operation answers it
// (problem+json, its status); retryAfterSeconds > 0 adds Retry-After. Client certification
// sessions answer their injected faults with it, so that a fault reads like the real answer.
func WriteProblem(w http.ResponseWriter, p *rules.Problem, retryAfterSeconds int) {
	out := fromRules(p)
	if retryAfterSeconds > 0 {
		out = retryAfter(out, retryAfterSeconds)
	}
	writeProblem(w, out)
}
