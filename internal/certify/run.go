package certify

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"payouts/api"
	"payouts/rules"
	"payouts/web/notify"
)

// Receiver runs receiver certifications. Its notifications are the service's own: Body
// builds them as deliveries are built, Headers signs them as deliveries are signed (the
// notification key), Client is the deliveries' client (no redirects, the same dial rules).
type Receiver struct {
	Headers func(merchantID, eventID string, body []byte) (map[string]string, error)
	Body    func(p *rules.Payout) ([]byte, error)
	// Sign signs a report: the notification key's signature over merchantId and its bytes.
	Sign   func(merchantID string, body []byte) (string, error)
	Client *http.Client
	// Timeout is the delivery timeout a receiver must answer within; 0 is the service's.
	Timeout time.Duration
	Now     func() time.Time
}

// Observed is what every report says its grades come from.
const Observed = "Grades come from what the receiver answered, as the service sees it: the HTTP status, the time to " +
	"answer against the delivery timeout, the TLS of an https URL, and redirects. What the receiver did inside (stored, " +
	"paid twice, logged) is not seen: a receiver that answers 2xx to a forgery it then ignores still fails."

func (r *Receiver) timeout() time.Duration {
	if r.Timeout > 0 {
		return r.Timeout
	}
	return notify.NotificationTimeout
}

func (r *Receiver) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// forgersKey signs the forged notifications: a key that is not the service's, made once
// per process. A new one for each run cost a tenth of a second to a second of CPU (finding
// its primes), a run's whole cost; the receiver only ever holds the service's public key.
var forgersKey = sync.OnceValues(func() (*rsa.PrivateKey, error) { return rsa.GenerateKey(rand.Reader, notify.KeyBits) })

// Run certifies the receiver at target for merchant and returns the report, unsigned.
func (r *Receiver) Run(ctx context.Context, runID, merchant, target string) (api.CertificationReport, error) {
	started := r.now()
	other, err := forgersKey()
	if err != nil {
		return api.CertificationReport{}, err
	}
	x := &exchanger{r: r, ctx: ctx, runID: runID, merchant: merchant, target: target,
		other: &notify.Notifier{Key: other}, base: r.now().Unix() % 100_000 * 1000}
	rep := api.CertificationReport{Kind: "receiver", RunID: runID, MerchantID: merchant, URL: MaskURL(target),
		StartedAt: wireTime(started), DeliveryTimeoutMS: r.timeout().Milliseconds(), Observed: Observed}
	for _, c := range receiverChecks {
		from := len(x.log)
		g := c.run(x)
		if x.err != nil {
			return api.CertificationReport{}, x.err
		}
		cr := api.CertificationCheck{Name: c.Name, Required: c.Required, Sent: c.Sent, Passes: c.Passes, Why: c.Why,
			Reason: g.reason, Evidence: x.log[from:]}
		switch {
		case g.skipped:
			cr.Result = "skipped"
			rep.Summary.Skipped++
		case g.ok:
			cr.Result = "pass"
			rep.Summary.Passed++
		default:
			cr.Result = "fail"
			rep.Summary.Failed++
			if c.Required {
				rep.Summary.RequiredFailed++
			}
		}
		if cr.Evidence == nil {
			cr.Evidence = []api.CertificationExchange{}
		}
		rep.Checks = append(rep.Checks, cr)
		if ctx.Err() != nil {
			return api.CertificationReport{}, ctx.Err()
		}
	}
	rep.Summary.Checks = len(rep.Checks)
	rep.Passed = rep.Summary.RequiredFailed == 0
	rep.FinishedAt = wireTime(r.now())
	return rep, nil
}

// exchanger sends a run's requests and keeps what was exchanged.
type exchanger struct {
	r                       *Receiver
	ctx                     context.Context
	runID, merchant, target string
	other                   *notify.Notifier // signs with a key that is not the service's
	base, seq               int64            // the made-up payouts' ids
	last                    time.Time        // the last made-up payout's time
	log                     []api.CertificationExchange
	err                     error // a failure of the run itself (signing), not of the receiver
}

func (x *exchanger) now() time.Time { return x.r.now() }

func (x *exchanger) body(p *rules.Payout) []byte {
	b, err := x.r.Body(p)
	if err != nil && x.err == nil {
		x.err = err
	}
	return b
}

func (x *exchanger) eventID(p *rules.Payout) string {
	return rules.OutcomeEventID(rules.EventMerchantNotification, p.ID, p.Status)
}

func (x *exchanger) headers(merchant, eventID string, body []byte) map[string]string {
	h, err := x.r.Headers(merchant, eventID, body)
	if err != nil && x.err == nil {
		x.err = err
	}
	return h
}

func (x *exchanger) otherKeyHeaders(merchant, eventID string, body []byte) map[string]string {
	h, err := x.other.Headers(merchant, eventID, body)
	if err != nil && x.err == nil {
		x.err = err
	}
	return h
}

// genuine sends p's notification exactly as a delivery would be.
func (x *exchanger) genuine(step string, p *rules.Payout) api.CertificationExchange {
	body := x.body(p)
	return x.send(step, body, x.headers(x.merchant, x.eventID(p), body))
}

// allAccepted grades exchanges that each had to be answered 2xx within the timeout.
func (x *exchanger) allAccepted(es ...api.CertificationExchange) grade {
	var parts []string
	for _, e := range es {
		r := e.Response
		switch {
		case r.Status == 0:
			return grade{reason: e.Step + ": no answer: " + r.Error}
		case r.Status >= 300 && r.Status < 400:
			return grade{reason: fmt.Sprintf("%s: answered %d, a redirect (to %q) the service does not follow", e.Step, r.Status, r.Headers["Location"])}
		case r.Status < 200 || r.Status > 299:
			return grade{reason: fmt.Sprintf("%s: answered %d, not 2xx: the service would retry it", e.Step, r.Status)}
		}
		parts = append(parts, fmt.Sprintf("%s: %d in %d ms", e.Step, r.Status, r.DurationMS))
	}
	return grade{ok: true, reason: "accepted (" + strings.Join(parts, "; ") + ")"}
}

// send POSTs one notification and records the exchange.
func (x *exchanger) send(step string, body []byte, headers map[string]string) api.CertificationExchange {
	e := api.CertificationExchange{Step: step, Request: api.CertificationRequest{Method: http.MethodPost,
		URL: MaskURL(x.target), Headers: headers, Body: string(body)}}
	if x.err != nil {
		return e
	}
	ctx, cancel := context.WithTimeout(x.ctx, x.r.timeout())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, x.target, bytes.NewReader(body))
	if err != nil {
		e.Response.Error = "not a valid URL"
		x.log = append(x.log, e)
		return e
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	start := time.Now()
	resp, err := x.r.Client.Do(req)
	e.Response.DurationMS = time.Since(start).Milliseconds()
	if err != nil {
		e.Response.Error = describe(err, ctx, x.r.timeout())
		x.log = append(x.log, e)
		return e
	}
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	e.Response.Status, e.Response.Body = resp.StatusCode, string(raw)
	e.Response.Headers = map[string]string{}
	for _, h := range []string{"Content-Type", "Location"} {
		if v := resp.Header.Get(h); v != "" {
			e.Response.Headers[h] = v
		}
	}
	if resp.TLS != nil {
		e.Response.TLSVersion = tls.VersionName(resp.TLS.Version)
		if len(resp.TLS.PeerCertificates) > 0 {
			c := resp.TLS.PeerCertificates[0]
			names := append([]string(nil), c.DNSNames...)
			for _, ip := range c.IPAddresses {
				names = append(names, ip.String())
			}
			sort.Strings(names)
			e.Response.Certificate = fmt.Sprintf("subject %q, names %s, issuer %q, valid until %s", c.Subject.CommonName,
				strings.Join(names, " "), c.Issuer.CommonName, c.NotAfter.UTC().Format(time.DateOnly))
		}
	}
	x.log = append(x.log, e)
	return e
}

// describe says why no answer came, without the URL (it may carry a token).
func describe(err error, ctx context.Context, timeout time.Duration) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var ce *tls.CertificateVerificationError
	var rh tls.RecordHeaderError
	var ae tls.AlertError
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded), errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("no answer within the delivery timeout (%s): timed out", timeout)
	case errors.As(err, &ce):
		return "TLS: the certificate is not valid for the name: " + ce.Err.Error()
	case errors.As(err, &rh), errors.As(err, &ae), strings.Contains(err.Error(), "tls:"):
		return "TLS handshake failed (TLS 1.2 or newer with a valid certificate is required): " + err.Error()
	case errors.Is(err, notify.ErrPrivateAddress):
		return err.Error() + " (allowed only with the server's development flag)"
	}
	return err.Error()
}

// MaskURL hides what a URL may carry that is secret: its user information and query.
func MaskURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(not a URL)"
	}
	u.User = nil
	if u.RawQuery != "" {
		u.RawQuery = "***"
	}
	return u.String()
}

func wireTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }
