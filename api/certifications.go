package api

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"payouts/rules"
)

// Certifications start a receiver certification run for the signing merchant and read its
// report (internal/certify runs it). Sandbox only.
type Certifications struct {
	Sandbox   bool
	AllowHTTP bool // the server's development flag: http:// URLs and private addresses
	// Start begins a run against url; a merchant with a run still going gets that run.
	Start func(ctx context.Context, m *rules.Merchant, url string) (CertificationRunView, error)
	// Run reads a run of the merchant (rules.ErrNotFound when it has none by that id).
	Run func(merchantID, runID string) (CertificationRunView, error)
	// StartClient opens a client certification session lasting at most d; a merchant with a
	// session open gets that session. Nil (sandbox off): answered 403.
	StartClient func(ctx context.Context, m *rules.Merchant, d time.Duration) (ClientSessionView, error)
	// ClientSession reads a session of the merchant (rules.ErrNotFound when it has none by that id).
	ClientSession func(merchantID, sessionID string) (ClientSessionView, error)
}

// ClientSessionView is a client certification session: open while the merchant's code does
// its steps, then done with its signed report.
type ClientSessionView struct {
	SessionID string               `json:"sessionId" example:"cs_9b2e41d07a3c"`
	State     string               `json:"state" enum:"open,done" doc:"open until every step was seen or the deadline"`
	StartedAt string               `json:"startedAt" example:"2026-11-25T10:15:02.123Z"`
	Deadline  string               `json:"deadline" example:"2026-11-25T10:25:02.123Z" doc:"When the session ends if its steps are not all done"`
	Steps     []ClientSessionStep  `json:"steps" doc:"What the merchant's own code must do during the session, in order"`
	Report    *CertificationReport `json:"report,omitempty" doc:"Once done: every check graded"`
	Signature string               `json:"signature,omitempty" doc:"Once done: base64 RSA PKCS#1 v1.5 SHA-256 over merchantId followed by the report's canonical JSON, by the notification key; payouts certify verify checks it"`
}

// ClientSessionStep is one thing the merchant's code must do, and whether the session saw it.
type ClientSessionStep struct {
	Check string `json:"check" example:"idempotent-resend" doc:"The check that grades it"`
	Do    string `json:"do" doc:"What the merchant's code must do"`
	Seen  bool   `json:"seen" doc:"The session saw it done (graded at the end)"`
}

// CertificationRunView is a receiver certification run: running, then done with its
// signed report.
type CertificationRunView struct {
	RunID     string               `json:"runId" example:"cr_4f1c9a0b7e2d" doc:"The run's id"`
	State     string               `json:"state" enum:"running,done" doc:"running until every check was graded"`
	URL       string               `json:"url" example:"https://shop.example/payouts/notifications" doc:"The receiver certified (its query, which may carry a token, masked)"`
	StartedAt string               `json:"startedAt" example:"2026-11-25T10:15:02.123Z"`
	Report    *CertificationReport `json:"report,omitempty" doc:"Once done: every check graded"`
	Signature string               `json:"signature,omitempty" doc:"Once done: base64 RSA PKCS#1 v1.5 SHA-256 over merchantId followed by the report's canonical JSON (keys sorted, no spaces), by the notification key served at /api/v1/notifications/public-key; payouts certify verify checks it"`
}

// CertificationReport is what a receiver certification run observed, check by check.
type CertificationReport struct {
	Kind              string               `json:"kind" enum:"receiver,client"`
	RunID             string               `json:"runId" example:"cr_4f1c9a0b7e2d"`
	MerchantID        string               `json:"merchantId" example:"1"`
	URL               string               `json:"url,omitempty" example:"https://shop.example/payouts/notifications" doc:"A receiver run's receiver"`
	StartedAt         string               `json:"startedAt" example:"2026-11-25T10:15:02.123Z"`
	FinishedAt        string               `json:"finishedAt" example:"2026-11-25T10:15:04.480Z"`
	DeliveryTimeoutMS int64                `json:"deliveryTimeoutMs,omitempty" example:"15000" doc:"A receiver run's: how long the service waits for a receiver's answer"`
	Passed            bool                 `json:"passed" doc:"Every required check passed"`
	Summary           CertificationSummary `json:"summary"`
	Observed          string               `json:"observed" doc:"What the grades come from"`
	Checks            []CertificationCheck `json:"checks"`
}

// CertificationSummary counts the checks by result.
type CertificationSummary struct {
	Checks         int `json:"checks" example:"21"`
	Passed         int `json:"passed" example:"20"`
	Failed         int `json:"failed" example:"0"`
	Skipped        int `json:"skipped" example:"1"`
	RequiredFailed int `json:"requiredFailed" example:"0"`
}

// CertificationCheck is one check and its grade, with what was exchanged.
type CertificationCheck struct {
	Name     string                  `json:"name" example:"forged-other-key"`
	Required bool                    `json:"required" example:"true"`
	Sent     string                  `json:"sent" doc:"What the run sends"`
	Passes   string                  `json:"passes" doc:"What answer passes"`
	Why      string                  `json:"why" doc:"Why it matters"`
	Result   string                  `json:"result" enum:"pass,fail,skipped"`
	Reason   string                  `json:"reason" doc:"Why it passed, failed or was skipped, from what was observed"`
	Evidence []CertificationExchange `json:"evidence"`
}

// CertificationExchange is one request of a check and the receiver's answer.
type CertificationExchange struct {
	Step     string                `json:"step" example:"forgery"`
	Injected string                `json:"injected,omitempty" doc:"A client session's fault injected in this answer"`
	Request  CertificationRequest  `json:"request"`
	Response CertificationResponse `json:"response"`
}

// CertificationRequest is a request as sent (the URL's query masked).
type CertificationRequest struct {
	Method  string            `json:"method" example:"POST"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
	Body    string            `json:"body"`
}

// CertificationResponse is what came back, or why nothing did.
type CertificationResponse struct {
	Status      int               `json:"status,omitempty" example:"200"`
	DurationMS  int64             `json:"durationMs" example:"12"`
	Headers     map[string]string `json:"headers,omitempty" doc:"Content-Type and Location, when sent"`
	Body        string            `json:"body,omitempty" doc:"The first 512 bytes"`
	Error       string            `json:"error,omitempty" doc:"Why no answer came: timed out, refused, a TLS failure"`
	TLSVersion  string            `json:"tlsVersion,omitempty" example:"TLS 1.3"`
	Certificate string            `json:"certificate,omitempty" doc:"The leaf certificate's subject and names, when https"`
}

// ReceiverTarget is the receiver a run certifies: the URL given, else the merchant's
// notificationUrl, held to the rules of a notificationUrl (https, or http with allowHTTP).
func ReceiverTarget(m *rules.Merchant, given string, allowHTTP bool) (string, error) {
	target := given
	if target == "" {
		target = m.Settings.NotificationURL
	}
	if target == "" || target == rules.SandboxInboxURL {
		return "", &rules.Error{Kind: rules.KindInvalid, Code: rules.CodeNotificationURL, Field: "body.url",
			Message: "name the receiver to certify: the merchant has no notificationUrl of its own (the sandbox inbox is the server's)"}
	}
	if errs := rules.CheckSettingsOn(rules.Settings{NotificationURL: target}, allowHTTP, true); len(errs) > 0 {
		e := *errs[0]
		e.Field = "body.url"
		return "", &e
	}
	return target, nil
}

// registerCertifications adds the receiver certification operations.
func registerCertifications(a huma.API, c Certifications) {
	const doc = "This project's extension, sandbox only. A receiver certification run sends the URL (default: the merchant's " +
		"notificationUrl) notifications of every outcome, signed with the service's notification key exactly as deliveries are, " +
		"then forgeries, a duplicate, reordered outcomes, an unknown field and an unknown payout, and grades the answers from what " +
		"is observable: the HTTP status, the time to answer against the delivery timeout, the TLS of an https URL, a redirect. " +
		"A run's requests go one after the other: well under a second against a prompt receiver, the delivery timeout for each one a receiver never answers. Runs are kept in memory on the " +
		"instance that ran them for an hour (at most 100): read a run from the instance that started it. A merchant has at most one " +
		"run going; starting another meanwhile answers that one. 403 (" + rules.CodeSandboxOff + ") with --sandbox=false."
	type startIn struct {
		MerchantID string `path:"merchantId"`
		Body       struct {
			URL string `json:"url,omitempty" example:"https://shop.example/payouts/notifications" doc:"The receiver to certify; default the merchant's notificationUrl. https, or http with the server's development flag"`
		}
	}
	type runOut struct {
		Status int
		Body   CertificationRunView
	}
	off := func() error {
		return rules.Errorf(rules.KindForbidden, rules.CodeSandboxOff, "receiver certification runs only in the sandbox: the server runs with --sandbox=false")
	}
	huma.Register(a, huma.Operation{
		OperationID: "start-receiver-certification", Method: http.MethodPost, Path: "/api/v1/{merchantId}/certifications/receiver",
		Summary: "Certify the merchant's notification receiver (this project's extension)", Description: doc,
		Tags: []string{"Certification"}, Security: signedSecurity, Errors: []int{400, 401, 403, 429}, Extensions: extension,
		DefaultStatus: http.StatusAccepted,
	}, func(ctx context.Context, in *startIn) (*runOut, error) {
		if !c.Sandbox {
			return nil, off()
		}
		m := merchantFrom(ctx)
		target, err := ReceiverTarget(m, in.Body.URL, c.AllowHTTP)
		if err != nil {
			return nil, err
		}
		v, err := c.Start(ctx, m, target)
		if err != nil {
			return nil, err
		}
		return &runOut{Status: http.StatusAccepted, Body: v}, nil
	})

	type getIn struct {
		MerchantID string `path:"merchantId"`
		RunID      string `path:"runId" example:"cr_4f1c9a0b7e2d"`
	}
	huma.Register(a, huma.Operation{
		OperationID: "get-receiver-certification", Method: http.MethodGet, Path: "/api/v1/{merchantId}/certifications/receiver/{runId}",
		Summary: "A receiver certification run and, once done, its signed report (this project's extension)", Description: doc,
		Tags: []string{"Certification"}, Security: signedSecurity, Errors: []int{401, 403, 404}, Extensions: extension,
	}, func(ctx context.Context, in *getIn) (*runOut, error) {
		if !c.Sandbox {
			return nil, off()
		}
		v, err := c.Run(merchantFrom(ctx).ID, in.RunID)
		if errors.Is(err, rules.ErrNotFound) {
			return nil, rules.Errorf(rules.KindNotFound, rules.CodeCertificationRun, "no certification run %s (runs are kept an hour, on the instance that ran them)", in.RunID)
		}
		if err != nil {
			return nil, err
		}
		return &runOut{Status: http.StatusOK, Body: v}, nil
	})
}

// Client certification sessions: how long one lasts at most, by default and at the longest.
const (
	ClientSessionDefault = 10 * time.Minute
	ClientSessionMax     = time.Hour
)

// registerClientCertifications adds the client certification operations.
func registerClientCertifications(a huma.API, c Certifications) {
	const doc = "This project's extension, sandbox only. A client certification session watches the merchant's own signed " +
		"requests while its code does the steps the session lists (creates of each kind its settings allow, reads by id, by " +
		"orderId and by stage, a rejection), and injects faults one at a time, each named in the report: a create stored and " +
		"then its connection cut, a 503 with Retry-After, a 429, a 401 and a 400 with several errors, a timestamp outside the " +
		"window. The report grades signatures, idempotent resends, backoff, the polling rate (at most one read a second of one " +
		"payout) and reads by stage. The session ends when every step was seen, or at its deadline; it is kept an hour in " +
		"memory on the instance that opened it. Requests to /certifications are never faulted. A merchant has at most one " +
		"session open; opening another meanwhile answers that one. 403 (" + rules.CodeSandboxOff + ") with --sandbox=false."
	type startClientIn struct {
		MerchantID string `path:"merchantId"`
		Body       struct {
			DurationSeconds int `json:"durationSeconds,omitempty" minimum:"30" maximum:"3600" example:"600" doc:"The deadline, from now; default 600"`
		}
	}
	type clientSessionOut struct {
		Status int
		Body   ClientSessionView
	}
	off := func() error {
		return rules.Errorf(rules.KindForbidden, rules.CodeSandboxOff, "client certification runs only in the sandbox: the server runs with --sandbox=false")
	}
	huma.Register(a, huma.Operation{
		OperationID: "start-client-certification", Method: http.MethodPost, Path: "/api/v1/{merchantId}/certifications/client",
		Summary: "Open a client certification session: the merchant's API client is watched and faulted (this project's extension)", Description: doc,
		Tags: []string{"Certification"}, Security: signedSecurity, Errors: []int{400, 401, 403, 429}, Extensions: extension,
		DefaultStatus: http.StatusAccepted,
	}, func(ctx context.Context, in *startClientIn) (*clientSessionOut, error) {
		if !c.Sandbox || c.StartClient == nil {
			return nil, off()
		}
		d := ClientSessionDefault
		if in.Body.DurationSeconds > 0 {
			d = time.Duration(in.Body.DurationSeconds) * time.Second
		}
		v, err := c.StartClient(ctx, merchantFrom(ctx), d)
		if err != nil {
			return nil, err
		}
		return &clientSessionOut{Status: http.StatusAccepted, Body: v}, nil
	})

	type getClientIn struct {
		MerchantID string `path:"merchantId"`
		SessionID  string `path:"sessionId" example:"cs_9b2e41d07a3c"`
	}
	huma.Register(a, huma.Operation{
		OperationID: "get-client-certification", Method: http.MethodGet, Path: "/api/v1/{merchantId}/certifications/client/{sessionId}",
		Summary: "A client certification session, its steps and, once done, its signed report (this project's extension)", Description: doc,
		Tags: []string{"Certification"}, Security: signedSecurity, Errors: []int{401, 403, 404}, Extensions: extension,
	}, func(ctx context.Context, in *getClientIn) (*clientSessionOut, error) {
		if !c.Sandbox || c.ClientSession == nil {
			return nil, off()
		}
		v, err := c.ClientSession(merchantFrom(ctx).ID, in.SessionID)
		if errors.Is(err, rules.ErrNotFound) {
			return nil, rules.Errorf(rules.KindNotFound, rules.CodeCertificationRun, "no client certification session %s (sessions are kept an hour, on the instance that opened them)", in.SessionID)
		}
		if err != nil {
			return nil, err
		}
		return &clientSessionOut{Status: http.StatusOK, Body: v}, nil
	})
}

// TransformSchema names the kind's values for generated clients: oapi-codegen names an enum's
// constants after its values, and one named Client would collide with its client type.
func (CertificationReport) TransformSchema(_ huma.Registry, s *huma.Schema) *huma.Schema {
	if k := s.Properties["kind"]; k != nil {
		k.Extensions = map[string]any{"x-enum-varnames": []string{"ReportKindReceiver", "ReportKindClient"}}
	}
	return s
}
