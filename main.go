// Command payouts is the whole payout service in one binary: the signed JSON API, the card
// form, the dashboard, the lifecycle and the notifications (internal/server), run by the
// commands of internal/cli.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"payouts/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
