package main

import (
	"github.com/danielgtaylor/huma/v2"
	"github.com/go-chi/chi/v5"

	"payouts/api"
)

// wireSandbox adds the powers of issue 15: cancel before sending, the test clock, scripted
// outcomes, the integration token and the beneficiary lookups over the simulated directory.
func (w *wiring) wireSandbox() error {
	if w.clock != nil {
		// Whatever sleeps until a due time looks again when the clock jumps.
		w.kicks = append(w.kicks, w.lc.Kick)
		w.clock.Moved = func() {
			for _, kick := range w.kicks {
				kick()
			}
		}
	}
	sb := api.Sandbox{Enabled: w.cfg.Sandbox, Clock: w.clock, Scripts: w.scripts, Merchant: w.db.Merchant}
	w.routes = append(w.routes, func(r chi.Router, a huma.API) {
		api.RegisterCancel(a, w.lc.Cancel)
		api.RegisterSandbox(a, sb)
	})
	return nil
}
