// Command bench measures the performance figures the docs quote, each beside its bare stack
// on the same machine in the same run: go run ./bench <command> [flags] (see README.md).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// command is one figure: its name, what it measures, its flags. flags declares them on fs
// and returns what runs the command once they are parsed.
type command struct {
	name, short string
	flags       func(fs *flag.FlagSet, getenv func(string) string) runFunc
}

// runFunc runs a command in a session, printing its results to out.
type runFunc func(ctx context.Context, s *session, out io.Writer) error

var commands = []command{
	{"creates", "signed creates a second, the payouts server (bbolt) against the bare chi+bbolt stack", createsCommand},
	{"reads", "signed reads by id a second, the payouts server (bbolt) against the bare chi+bbolt stack", readsCommand},
	{"million", "creates and reads with a million payouts stored", millionCommand},
	{"latency", "open loop at fixed rates: the payouts server's p99 and p99.9 against the bare chi+bbolt stack's", latencyCommand},
	{"memory", "the payouts server in a memory-capped control group under full load: alive, nothing failed, its peak RSS", memoryCommand},
	{"pg", "creates on PostgreSQL at a network distance: the bare chi+pgx stack, one instance, N instances", pgCommand},
	{"curve", "creates on PostgreSQL for 1 to 4 CPU-capped instances, one merchant then eight: a table", curveCommand},
}

// errBelowGoals is a run that measured and missed its goals: exit 1, the last line says why.
var errBelowGoals = errors.New("below the goals")

// usageError is a command line the runner cannot run: exit 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

func exitCode(err error, stderr io.Writer) int {
	var ue usageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errBelowGoals):
		return 1
	case errors.As(err, &ue):
		fmt.Fprintln(stderr, "bench:", err)
		return 2
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(stderr, "bench: interrupted; everything started is stopped and removed")
		return 1
	}
	fmt.Fprintln(stderr, "bench:", err)
	return 1
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		usage(stderr)
		return usagef("which command?")
	}
	name := args[0]
	if name == "help" || name == "-h" || name == "--help" {
		if len(args) > 1 {
			return run(ctx, []string{args[1], "-h"}, getenv, stdout, stderr)
		}
		usage(stdout)
		return nil
	}
	var c *command
	for i := range commands {
		if commands[i].name == name {
			c = &commands[i]
		}
	}
	if c == nil {
		usage(stderr)
		return usagef("no command %q", name)
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	work := fs.String("work", "", "make the run's temporary directory here (default: the system's)")
	keep := fs.Bool("keep", false, "keep the temporary directory (logs, data) and say where")
	runIt := c.flags(fs, getenv)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: go run ./bench %s [flags]\n\n%s.\n\n", name, c.short)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usagef("%s: %v", name, err)
	}
	if fs.NArg() > 0 {
		return usagef("%s: unexpected argument %q", name, fs.Arg(0))
	}
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	root, err := findRoot(wd)
	if err != nil {
		return err
	}
	s, err := newSession(root, *work, *keep, stderr)
	if err != nil {
		return err
	}
	defer s.close()
	err = runIt(ctx, s, stdout)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: go run ./bench <command> [flags]   (go run ./bench help <command> for its flags)")
	fmt.Fprintln(w)
	for _, c := range commands {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.short)
	}
}

// header prints the line that says when, on what and of which code the figures that follow
// were measured.
func (s *session) header(ctx context.Context, out io.Writer) {
	fmt.Fprintln(out, machineLine(ctx, s.root, time.Now()))
}
