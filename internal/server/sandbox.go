package server

import (
	"context"
	"log/slog"
	"time"

	"payouts/api"
	"payouts/rules"
)

// wireSandbox adds the sandbox's powers: cancel before sending, the test clock, scripted
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
	// The directory is simulated: with --sandbox=false there is none, and the lookups say so.
	var dir rules.Directory
	if w.cfg.Sandbox.On {
		dir = w.directory
	}
	tokens := api.NewTokens(w.db, w.realNow, w.opts.IntegrationPasswordCost)
	lookup := &api.Lookup{Tokens: tokens, Directory: dir, Seen: w.db.SeenLookupRequest, Now: w.now, RealNow: w.realNow, Log: w.logger}
	w.deps.SandboxControls = &api.Sandbox{Enabled: w.cfg.Sandbox.On, Clock: w.clock, Scripts: w.scripts, Directory: w.directory, Merchant: w.db.Merchant}
	w.deps.Cancel = w.lc.Cancel
	w.deps.Tokens = tokens
	w.deps.Lookup = lookup
	w.workers = append(w.workers, w.housekeeping(time.Hour, "lookup request ids housekeeping", slog.LevelDebug, func(ctx context.Context) (int, error) {
		// A lookup's request_id is refused again (VAL001) for a day, then forgotten.
		return w.db.PruneLookupRequests(ctx, w.now().Add(-24*time.Hour))
	}))
	return nil
}
