package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// usageError is a command line the binary cannot run: a wrong flag, a missing argument, an
// unknown command. It exits 2, the flag package's convention, with one short line.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usageErrorf(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// exitCode is the process status of run's error: 0, 2 for a usage error, 1 for anything else.
func exitCode(err error) int {
	var ue usageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		return 2
	}
	return 1
}

// hiddenFlags are for tests and benchmarks (README, Performance): they work, but -h does not
// list them, so that nobody reaches for them by accident.
var hiddenFlags = map[string]bool{"unsafe-no-fsync": true, "bench-seed-from": true}

// printFlags is PrintDefaults without the hidden flags.
func printFlags(fs *flag.FlagSet) {
	shown := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
	shown.SetOutput(fs.Output())
	fs.VisitAll(func(f *flag.Flag) {
		if !hiddenFlags[f.Name] {
			shown.Var(f.Value, f.Name, f.Usage)
			shown.Lookup(f.Name).DefValue = f.DefValue
		}
	})
	shown.PrintDefaults()
}

// helpName is the command whose flags `payouts help` prints for fs.
func helpName(fs *flag.FlagSet) string {
	if fs.Name() == "merchant create" || fs.Name() == "merchant keys" {
		return "merchant"
	}
	if fs.Name() == "user add" {
		return "user"
	}
	return fs.Name()
}

// envFlags gives every flag of fs the value of its PAYOUTS_ variable before the command
// line is parsed, so that flags win (contract section 1). A command line it cannot parse, or
// with an argument none of these commands takes, is a usage error of one line; -h prints the
// flags (without the hidden ones) and answers flag.ErrHelp.
func envFlags(fs *flag.FlagSet, args []string, getenv func(string) string) error {
	rest, err := envFlagsArgs(fs, args, getenv)
	if err == nil && len(rest) > 0 {
		return usageErrorf("%s: unexpected argument %q (payouts help %s lists the flags)", fs.Name(), rest[0], helpName(fs))
	}
	return err
}

// envFlagsArgs is envFlags for a command that takes arguments besides its flags: flags may
// come before or after them (`payouts sign PATH --curl`), and `--` ends the flags.
func envFlagsArgs(fs *flag.FlagSet, args []string, getenv func(string) string) ([]string, error) {
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		name := "PAYOUTS_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v := getenv(name); v != "" && err == nil {
			if e := fs.Set(f.Name, v); e != nil {
				err = usageErrorf("%s: %v", name, e)
			}
		}
	})
	if err != nil {
		return nil, err
	}
	out, usage := fs.Output(), fs.Usage
	fs.SetOutput(io.Discard) // the flag package would print the error and all the flags
	fs.Usage = func() {}
	defer func() { fs.SetOutput(out); fs.Usage = usage }()
	var positional []string
	for {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(out)
			if usage != nil && fs.Name() == "sign" {
				usage()
			} else {
				fmt.Fprintf(out, "usage of payouts %s:\n", fs.Name())
				printFlags(fs)
			}
			return nil, err
		}
		if err != nil {
			return nil, usageErrorf("%s: %v (payouts help %s lists the flags)", fs.Name(), err, helpName(fs))
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(positional, rest...), nil
		}
		positional, args = append(positional, rest[0]), rest[1:]
	}
}
