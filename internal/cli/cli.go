// Package cli is the command line: one table of commands (commands.go) from which the
// dispatch, -h, `payouts help <command>`, usage errors (exit 2) and docs/reference/cli.md are
// all derived. Each command is a file of its own.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"payouts/internal/server"
)

// Env is what a command reads and writes besides its arguments.
type Env struct {
	Getenv         func(string) string
	Stdout, Stderr io.Writer
	// Options are injected into the server that `serve` starts (tests only; the binary
	// leaves them zero).
	Options server.Options
}

// Command is one thing an operator types: `payouts <Name> <Usage>`.
type Command struct {
	// Name is the command's words: "serve", "merchant create".
	Name string
	// Usage is what follows the name in the usage line: "--name N [flags]".
	Usage string
	// Short is one line for the list of commands.
	Short string
	// Long says more, for `payouts help <command>` and the reference.
	Long string
	// Args names what the command takes besides its flags ("PATH"); empty when it takes
	// nothing else, so that a stray argument is a usage error.
	Args string
	// Required names the flags the command cannot run without (set on the command line or
	// by their PAYOUTS_ variables): one missing is a usage error, before anything is opened
	// or created.
	Required []string
	// ReadsStore says the command works on an existing store: the database of --data, unless
	// --database names one. A data directory without a database is refused before anything is
	// opened, so that a mistyped --data neither reads an empty store nor leaves one behind.
	ReadsStore bool
	// Flags declares the command's flags on fs and returns what runs it with their values
	// and the arguments besides them.
	Flags func(fs *flag.FlagSet) Runner
}

// Runner runs a command once its flags are parsed.
type Runner func(ctx context.Context, env Env, args []string) error

// Main runs the command line args and returns the process's exit status: 0, 2 for a command
// line it cannot run (after one short line on stderr), 1 for any other failure.
func Main(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	err := Run(ctx, args, Env{Getenv: getenv, Stdout: stdout, Stderr: stderr})
	code := ExitCode(err)
	if code != 0 {
		fmt.Fprintln(stderr, "payouts:", err)
	}
	return code
}

// Run runs the command line args: the command its first words name (serve when they name
// none), with its flags.
func Run(ctx context.Context, args []string, env Env) error {
	if env.Getenv == nil {
		env.Getenv = func(string) string { return "" }
	}
	if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		fmt.Fprint(env.Stdout, listing())
		fmt.Fprintln(env.Stdout, "\nThe flags of serve (payouts help <command> for the others):")
		printFlags(env.Stdout, find("serve"))
		return nil
	}
	if len(args) > 0 && (args[0] == "--version" || args[0] == "-version") {
		args = append([]string{"version"}, args[1:]...)
	}
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		args = append([]string{"serve"}, args...)
	}
	c, rest := lookup(args)
	if c == nil {
		if group := groupOf(args[0]); len(group) > 0 {
			return usageErrorf("%s: say %s (payouts help %s)", args[0], strings.Join(group, " or "), args[0])
		}
		return usageErrorf("unknown command %q (payouts help lists the commands)", args[0])
	}
	return c.run(ctx, env, rest)
}

// run parses the command's flags (PAYOUTS_ variables first, the command line wins) and
// runs it.
func (c *Command) run(ctx context.Context, env Env, args []string) error {
	fs := flag.NewFlagSet(c.Name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	runner := c.Flags(fs)
	rest, err := parseFlags(fs, args, env.Getenv)
	if errors.Is(err, flag.ErrHelp) {
		c.help(env.Stdout)
		return nil
	}
	if err != nil {
		return err
	}
	if c.Args == "" && len(rest) > 0 {
		return usageErrorf("%s: unexpected argument %q (payouts help %s lists the flags)", c.Name, rest[0], c.group())
	}
	for _, name := range c.Required {
		if fs.Lookup(name).Value.String() == "" {
			return usageErrorf("%s: --%s (or %s) is required (payouts help %s)", c.Name, name, envName(name), c.Name)
		}
	}
	if c.ReadsStore {
		if err := existingStore(ctx, fs); err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
	}
	return runner(ctx, env, rest)
}

// readsStoreNote is what help and the reference say of a command that reads a store.
const readsStoreNote = "It works on an existing store: a --data without a database (or a --database without the store's tables) is refused, and nothing is created."

// existingStore refuses a --data directory without a database (missing, or 0 bytes: never a
// database bbolt wrote), or with --database a PostgreSQL database without the store's
// tables. It only looks: it creates nothing.
func existingStore(ctx context.Context, fs *flag.FlagSet) error {
	for _, name := range []string{"database", "database-url"} {
		if f := fs.Lookup(name); f != nil && f.Value.String() != "" {
			if !server.IsPostgresURL(f.Value.String()) {
				return nil // the command says what --database must be
			}
			if err := server.StoreExists(ctx, f.Value.String()); err != nil {
				return fmt.Errorf("--%s %s: %w", name, server.RedactURL(f.Value.String()), err)
			}
			return nil
		}
	}
	data := fs.Lookup("data").Value.String()
	where := filepath.Join(data, server.DatabaseFile)
	st, err := os.Stat(where)
	if err == nil && st.Mode().IsRegular() && st.Size() > 0 {
		return nil
	}
	return fmt.Errorf("no database at %s: --data must name the data directory of a server (its payouts.db); nothing was created", where)
}

// lookup finds the command args name: one word, or two for a command of a group
// ("merchant create"). It returns the arguments after the name.
func lookup(args []string) (*Command, []string) {
	if len(args) > 1 {
		if c := find(args[0] + " " + args[1]); c != nil {
			return c, args[2:]
		}
	}
	if c := find(args[0]); c != nil {
		return c, args[1:]
	}
	return nil, nil
}

func find(name string) *Command {
	for _, c := range Commands() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// groupOf lists the second words of the commands of a group ("create", "keys" of merchant).
func groupOf(word string) []string {
	var subs []string
	for _, c := range Commands() {
		if first, second, ok := strings.Cut(c.Name, " "); ok && first == word {
			subs = append(subs, second)
		}
	}
	return subs
}

// group is the name `payouts help` takes for c: its first word.
func (c *Command) group() string {
	first, _, _ := strings.Cut(c.Name, " ")
	return first
}

// usageLine is "payouts merchant create --name N [flags]".
func (c *Command) usageLine() string {
	name := c.Name
	if c.Name == "serve" {
		name = "[serve]" // the command run when none is named
	}
	return strings.TrimSpace("payouts " + name + " " + c.Usage)
}

// listing is `payouts help`: every command of the table with its short help.
func listing() string {
	var b strings.Builder
	b.WriteString("payouts: payouts to beneficiaries in Colombia and Peru, in one binary.\n\nusage:\n")
	const width = 42 // a longer usage line pushes its short help along
	for _, c := range Commands() {
		fmt.Fprintf(&b, "  %-*s  %s\n", width, c.usageLine(), c.Short)
	}
	b.WriteString("\nEvery flag may be set as PAYOUTS_<FLAG> (upper case, - as _); flags win.\n")
	return b.String()
}

// help prints a command's usage, what it does and its flags.
func (c *Command) help(w io.Writer) {
	fmt.Fprintf(w, "usage: %s\n\n%s\n", c.usageLine(), upperFirst(c.Short))
	if c.Long != "" {
		fmt.Fprintf(w, "\n%s\n", c.Long)
	}
	if c.ReadsStore {
		fmt.Fprintf(w, "\n%s\n", readsStoreNote)
	}
	if hasFlags(c) {
		fmt.Fprintf(w, "\nflags (each also PAYOUTS_<FLAG>, upper case, - as _):\n")
		printFlags(w, c)
	}
}

// helpOf prints the help of the command or group name: `payouts help merchant` prints both
// merchant commands.
func helpOf(w io.Writer, name string) error {
	if c := find(name); c != nil {
		c.help(w)
		return nil
	}
	var group []*Command
	for _, c := range Commands() {
		if c.group() == name {
			group = append(group, c)
		}
	}
	if len(group) == 0 {
		return usageErrorf("no command %q (payouts help lists the commands)", name)
	}
	for i, c := range group {
		if i > 0 {
			fmt.Fprintln(w)
		}
		c.help(w)
	}
	return nil
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// flagSet is the command's flags, declared on a set of their own (for help and the docs).
func flagSet(c *Command) *flag.FlagSet {
	fs := flag.NewFlagSet(c.Name, flag.ContinueOnError)
	c.Flags(fs)
	return fs
}

func hasFlags(c *Command) bool {
	n := 0
	flagSet(c).VisitAll(func(f *flag.Flag) {
		if !hiddenFlags[f.Name] {
			n++
		}
	})
	return n > 0
}

// printFlags prints a command's flags as the flag package does, without the hidden ones.
func printFlags(w io.Writer, c *Command) {
	fs := flagSet(c)
	shown := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
	shown.SetOutput(w)
	fs.VisitAll(func(f *flag.Flag) {
		if !hiddenFlags[f.Name] {
			shown.Var(f.Value, f.Name, f.Usage)
			shown.Lookup(f.Name).DefValue = f.DefValue
		}
	})
	shown.PrintDefaults()
}
