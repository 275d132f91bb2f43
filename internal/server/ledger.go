package server

import (
	"payouts/api"
)

// wireLedger adds the operations over the ledger entries: a balance's entries and a
// day's statement, on the service's clock.
func (w *wiring) wireLedger() {
	w.deps.Ledger = &api.Ledger{Entries: w.db, Now: w.now}
}
