package api

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"payouts/rules"
)

// Problem is the error body of contract section 3: RFC 9457 problem+json extended with the
// original API's code, message list and per-field errors.
type Problem struct {
	Title   string         `json:"title"`
	Status  int            `json:"status"`
	Detail  string         `json:"detail"`
	Code    string         `json:"code"`
	Message []string       `json:"message"`
	Errors  []ProblemError `json:"errors"`

	headers http.Header
}

// ProblemError is one error of a Problem; Location is "body." + the field path.
type ProblemError struct {
	Code     string `json:"code"`
	Message  string `json:"message"`
	Location string `json:"location,omitempty"`
	Value    any    `json:"value,omitempty"`
}

func (p *Problem) Error() string                   { return p.Detail }
func (p *Problem) GetStatus() int                  { return p.Status }
func (p *Problem) ContentType(ct string) string    { return "application/problem+json" }
func (p *Problem) GetHeaders() http.Header         { return p.headers }
func (p *Problem) withHeader(k, v string) *Problem { p.headers = http.Header{k: {v}}; return p }

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
	return out
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
	msg := e.Message
	if e.Field != "" {
		msg = e.Field + ": " + e.Message
	}
	p.Message = append(p.Message, msg)
	p.Errors = append(p.Errors, ProblemError{Code: e.Code, Message: e.Message, Location: loc, Value: e.Value})
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
		p.add(&rules.Error{Code: rules.CodeBodyTooLarge, Message: "the body is over 64 KiB"})
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
			if strings.HasPrefix(det.Location, "query.") || strings.HasPrefix(det.Location, "path.") {
				e.Code = rules.CodeQueryParam
			} else {
				e.Field = strings.TrimPrefix(det.Location, "body.")
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
		return newProblemCtx(ctx, status, msg, errs...)
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

func merchantFrom(ctx context.Context) *rules.Merchant {
	m, _ := ctx.Value(ctxMerchant).(*rules.Merchant)
	return m
}
