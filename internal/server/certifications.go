package server

import (
	"payouts/api"
	"payouts/internal/certify"
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
	}}
	w.workers = append(w.workers, runs.Serve)
	w.deps.Certifications = &api.Certifications{Sandbox: w.cfg.Sandbox.On, AllowHTTP: w.cfg.Notify.AllowPrivateURLs,
		Start: runs.Start, Run: runs.Run}
	if !w.cfg.Sandbox.On {
		return // no session can open: the API's requests are not watched at all
	}
	sessions := &certify.Sessions{Logger: w.logger, Sign: runs.Receiver.Sign}
	w.workers = append(w.workers, sessions.Serve)
	w.deps.Certifications.StartClient, w.deps.Certifications.ClientSession = sessions.Start, sessions.Session
	w.deps.ClientWatch = sessions
}
