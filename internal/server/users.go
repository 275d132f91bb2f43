package server

import (
	"context"
	"errors"

	"payouts/rules"
)

// wireUsers gives the admin API the dashboard's named users and the audit log;
// wireDashboard reads them from the deps.
func (w *wiring) wireUsers() {
	w.deps.AuditLog = w.db
	w.deps.Auditor = &rules.Auditor{Log: w.db, Now: w.realNow, Logger: w.logger}
	w.deps.Users = &rules.UserAdmin{Store: w.db, Now: w.realNow, MerchantExists: func(id string) bool {
		_, err := w.db.Merchant(context.Background(), id)
		return !errors.Is(err, rules.ErrNotFound) && err == nil
	}}
}
