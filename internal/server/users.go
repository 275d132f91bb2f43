package server

import (
	"context"
	"errors"
	"time"

	"payouts/rules"
)

// wireUsers gives the admin API the dashboard's named users and the audit log;
// wireDashboard reads them from the deps.
func (w *wiring) wireUsers() {
	w.deps.Auditor = &rules.Auditor{Log: w.db, Now: w.realNow, Logger: w.logger}
	w.refusals = rules.NewSignInRefusals(w.deps.Auditor)
	w.deps.AuditLog = rules.FlushingAuditLog{AuditLog: w.db, Refusals: w.refusals}
	w.workers = append(w.workers, w.flushRefusals)
	w.deps.Users = &rules.UserAdmin{Store: w.db, Now: w.realNow, MerchantExists: func(id string) bool {
		_, err := w.db.Merchant(context.Background(), id)
		return !errors.Is(err, rules.ErrNotFound) && err == nil
	}}
}

// refusalsFlushEvery is how often the counts of refused sign-ins are looked at, so that a
// window's entry is written soon after it ends although no refusal follows.
const refusalsFlushEvery = 10 * time.Second

// flushRefusals writes the counts of refused sign-ins as their windows end, and what is
// counted at shutdown (the store is closed after the workers).
func (w *wiring) flushRefusals(ctx context.Context) {
	t := time.NewTicker(refusalsFlushEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			// what is counted at shutdown is written although the workers' context has ended
			w.refusals.Flush(context.WithoutCancel(ctx), true)
			return
		case <-t.C:
			w.refusals.Flush(ctx, false)
		}
	}
}
