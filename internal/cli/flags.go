package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"payouts/internal/server"
	"payouts/store"
)

// usageError is a command line the binary cannot run: a wrong flag, a missing argument, an
// unknown command. It exits 2, the flag package's convention, with one short line.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usageErrorf(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// ExitCode is the process status of Run's error: 0, 2 for a usage error, 1 for anything else.
func ExitCode(err error) int {
	var ue usageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		return 2
	}
	return 1
}

// hiddenFlags are for tests and benchmarks (docs/guides/performance.md): they work, but
// help does not list them, so that nobody reaches for them by accident.
var hiddenFlags = map[string]bool{"unsafe-no-fsync": true, "bench-seed-from": true}

// envName is the variable that sets a flag: PAYOUTS_ and the flag's name, upper case, - as _.
func envName(flagName string) string {
	return "PAYOUTS_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// parseFlags gives every flag of fs the value of its PAYOUTS_ variable, then parses the
// command line, so that flags win. Flags may come before or after the
// other arguments (`payouts sign PATH --curl`), and `--` ends the flags; it returns the other
// arguments. A command line it cannot parse is a usage error of one line; -h answers
// flag.ErrHelp without printing anything.
func parseFlags(fs *flag.FlagSet, args []string, getenv func(string) string) ([]string, error) {
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		name := envName(f.Name)
		if v := getenv(name); v != "" && err == nil {
			if e := fs.Set(f.Name, v); e != nil {
				err = usageErrorf("%s: %v", name, e)
			}
		}
	})
	if err != nil {
		return nil, err
	}
	fs.SetOutput(io.Discard) // the flag package would print the error and all the flags
	fs.Usage = func() {}
	group, _, _ := strings.Cut(fs.Name(), " ")
	var positional []string
	for {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		if err != nil {
			return nil, usageErrorf("%s: %v (payouts help %s lists the flags)", fs.Name(), err, group)
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

// storeConfig is the storage a command opens: the bbolt file in data or, with database, that
// PostgreSQL database, whose secrets are sealed with the instances' master key read from
// masterKeyFile (none when empty). A database that is not a postgres:// URL is a usage error
// of command.
func storeConfig(command, data, database, masterKeyFile string) (server.Config, error) {
	cfg := server.Config{Storage: server.StorageConfig{Data: data, Database: database}}
	if cfg.Storage.Database != "" && !cfg.OnPostgres() {
		return cfg, usageErrorf("%s: --database must be a postgres:// URL", command)
	}
	if masterKeyFile != "" {
		k, err := store.ReadSecretFile(masterKeyFile)
		if err != nil {
			return cfg, fmt.Errorf("--master-key-file: %w", err)
		}
		cfg.Keys.Master = k
	}
	return cfg, nil
}
