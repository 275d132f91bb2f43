package server

import (
	"context"
	"log/slog"
	"time"
)

// housekeeping is a worker that runs sweep at start and then every period until ctx ends:
// an error is logged as name's failure, and what a sweep removed at level (sweeps that remove
// nothing say nothing).
func (w *wiring) housekeeping(period time.Duration, name string, level slog.Level, sweep func(ctx context.Context) (int, error)) func(context.Context) {
	return func(ctx context.Context) {
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			if n, err := sweep(ctx); err != nil {
				w.logger.Error(name, "err", err)
			} else if n > 0 {
				w.logger.Log(ctx, level, name, "removed", n)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}
}
