package cli

import (
	"context"
	"flag"
	"fmt"
)

var helpCommand = &Command{
	Name:  "help",
	Usage: "[command]",
	Short: "this text, or the flags of a command",
	Args:  "[command]",
	Flags: func(*flag.FlagSet) Runner {
		return func(_ context.Context, env Env, args []string) error {
			switch len(args) {
			case 0:
				fmt.Fprint(env.Stdout, listing())
				return nil
			case 1:
				return helpOf(env.Stdout, args[0])
			}
			return usageErrorf("help takes one command (payouts help lists them)")
		}
	},
}
