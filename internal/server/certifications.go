package server

import (
	"payouts/api"
	"payouts/internal/certify"
	"payouts/web/notify"
)

// wireCertifications adds receiver certification runs: the notify lane's deliverer builds
// and signs their notifications and the notification key signs their reports; the runs are
// kept in memory on this instance (certify.Runs).
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
}
