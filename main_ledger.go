package main

import (
	"github.com/danielgtaylor/huma/v2"
	"github.com/go-chi/chi/v5"

	"payouts/api"
)

// wireLedger adds issue 24's operations over the ledger entries: a balance's entries and a
// day's statement, on the service's clock.
func (w *wiring) wireLedger() {
	l := api.Ledger{Entries: w.db, Now: w.now}
	w.routes = append(w.routes, func(r chi.Router, a huma.API) { api.RegisterLedger(a, l) })
}
