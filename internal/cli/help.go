package cli

import (
	"context"
	"flag"
	"fmt"
	"strings"
)

var helpCommand = &Command{
	Name:  "help",
	Usage: "[command]",
	Short: "this text, or the flags of a command",
	Args:  "[command]",
	Flags: func(*flag.FlagSet) Runner {
		return func(_ context.Context, env Env, args []string) error {
			if len(args) == 0 {
				fmt.Fprint(env.Stdout, listing())
				return nil
			}
			// A command of two words (help merchant create) is named as it is typed.
			return helpOf(env.Stdout, strings.Join(args, " "))
		}
	},
}
