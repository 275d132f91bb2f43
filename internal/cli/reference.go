package cli

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// Reference writes docs/reference/cli.md: every command of the table with its usage, what it
// does, and every flag with its variable and default.
func Reference(w io.Writer) {
	fmt.Fprint(w, "# Command line reference\n\n"+
		"Generated from the command table (`internal/cli/commands.go`) by `go test ./internal/cli -update`; do not edit.\n"+
		"`payouts help` and `payouts help <command>` print the same from the binary.\n\n"+
		"Every flag may also be set as its `PAYOUTS_` variable (the flag's name upper case, `-` as `_`); "+
		"a flag on the command line wins over its variable. A command line the binary cannot run exits 2 "+
		"with one line saying why; any other failure exits 1.\n\n"+
		"| command | what it does |\n|---|---|\n")
	for _, c := range Commands() {
		fmt.Fprintf(w, "| [`%s`](#%s) | %s |\n", cell(c.usageLine()), strings.ReplaceAll(c.Name, " ", "-"), cell(c.Short))
	}
	for _, c := range Commands() {
		fmt.Fprintf(w, "\n## %s\n\n```text\n%s\n```\n\n%s.\n", c.Name, c.usageLine(), upperFirst(c.Short))
		if c.Long != "" {
			fmt.Fprintf(w, "\n%s\n", c.Long)
		}
		if c.ReadsStore {
			fmt.Fprintf(w, "\n%s\n", readsStoreNote)
		}
		fs := flagSet(c)
		n := 0
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n == 0 {
			continue
		}
		fmt.Fprint(w, "\n| flag | variable | default | meaning |\n|---|---|---|---|\n")
		fs.VisitAll(func(f *flag.Flag) {
			meaning := cell(f.Usage)
			if hiddenFlags[f.Name] {
				meaning += " (not listed by `help`: for tests and benchmarks)"
			}
			def := "`" + f.DefValue + "`"
			if f.DefValue == "" {
				def = ""
			}
			fmt.Fprintf(w, "| `--%s` | `%s` | %s | %s |\n", f.Name, envName(f.Name), def, meaning)
		})
	}
}

// cell makes s safe in a markdown table cell.
func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}
