package cli

import (
	"context"
	"flag"
	"fmt"

	"payouts/internal/server"
)

var versionCommand = &Command{
	Name:  "version",
	Usage: "(or --version)",
	Short: "print the version",
	Flags: func(*flag.FlagSet) Runner {
		return func(_ context.Context, env Env, _ []string) error {
			fmt.Fprintln(env.Stdout, "payouts", server.Version())
			return nil
		}
	},
}
