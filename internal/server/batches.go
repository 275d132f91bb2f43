package server

import (
	"payouts/api"
	"payouts/rules"
	"payouts/rules/workers"
)

// wireBatches adds the batches: the signed operations, and the runner that
// creates an approved batch's items through the service's create path and notifies the
// merchant once every item is final. It runs after wireNotifications (the batch
// notification travels the notify lane).
func (w *wiring) wireBatches() {
	runner := &workers.BatchRunner{Store: w.db, Service: w.svc, Merchants: w.keys.Merchant, Now: w.now, Log: w.logger,
		Notice: api.BatchNotificationJSON}
	kicks := w.kicks
	runner.Notified = func() {
		for _, k := range kicks {
			k()
		}
	}
	w.batches = &rules.Batches{Store: w.db, Now: w.now, Approved: func(*rules.Batch) { runner.Kick() }}
	w.deps.Batches = w.batches
	w.workers = append(w.workers, runner.Run)
	w.kicks = append(w.kicks, runner.Kick)
}
