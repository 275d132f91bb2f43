package server

import (
	"context"

	"payouts/api"
	"payouts/internal/certify"
	"payouts/rules"
	"payouts/web/notify"
)

// wireCertifications adds receiver certification runs: the notify lane's deliverer builds
// and signs their notifications and the notification key signs their reports; the runs are
// kept in memory on this instance (certify.Runs). Client certification sessions (sandbox
// only) watch the merchant's requests through the API's ClientWatch and sign their reports
// with the same key.
func (w *wiring) wireCertifications(n *notifications) {
	runs := &certify.Runs{Logger: w.logger, Receiver: &certify.Receiver{
		Headers: n.webhook.Headers,
		Body:    n.webhook.Body,
		Client:  notify.NewHTTPClient(w.cfg.Notify.AllowPrivateURLs),
		Sign:    func(merchantID string, b []byte) (string, error) { return notify.Sign(n.webhook.Key, merchantID, b) },
		Timeout: w.opts.CertificationTimeout, // zero: the deliveries' own
	}}
	w.workers = append(w.workers, runs.Serve)
	w.deps.Certifications = &api.Certifications{Sandbox: w.cfg.Sandbox.On, AllowHTTP: w.cfg.Notify.AllowPrivateURLs,
		Start: runs.Start, Run: runs.Run}
	if !w.cfg.Sandbox.On {
		return // no session can open: the API's requests are not watched at all
	}
	sessions := &certify.Sessions{Logger: w.logger, Sign: runs.Receiver.Sign, Quiet: w.opts.ClientSessionQuiet}
	w.workers = append(w.workers, sessions.Serve)
	w.deps.Certifications.StartClient, w.deps.Certifications.ClientSession = sessions.Start, sessions.Session
	w.deps.ClientWatch = sessions
}

// certifyReceiver is the dashboard's start of a receiver run: the API's, target rules and all
// (nil with the sandbox off).
func (w *wiring) certifyReceiver() func(ctx context.Context, m *rules.Merchant, url string) (string, error) {
	c := w.deps.Certifications
	if c == nil || !c.Sandbox {
		return nil
	}
	return func(ctx context.Context, m *rules.Merchant, url string) (string, error) {
		target, err := api.ReceiverTarget(m, url, c.AllowHTTP)
		if err != nil {
			return "", err
		}
		v, err := c.Start(ctx, m, target)
		return v.RunID, err
	}
}

// certificationReport is the dashboard's read of a run: its report as the page the CLI writes.
func (w *wiring) certificationReport() func(merchantID, runID string) (bool, []byte, error) {
	c := w.deps.Certifications
	if c == nil || !c.Sandbox {
		return nil
	}
	return func(merchantID, runID string) (bool, []byte, error) {
		v, err := c.Run(merchantID, runID)
		if err != nil || v.State != "done" || v.Report == nil {
			return false, nil, err
		}
		page, err := certify.HTML(*v.Report, v.Signature)
		return err == nil, page, err
	}
}
