package docs_test

import (
	"flag"
	"regexp"
	"slices"
	"strings"
	"testing"

	"payouts/internal/cli"
)

// commandLine finds a command line of the binary in the docs: `./payouts …`, `go run . …`,
// or a code span that starts with `payouts `.
var commandLine = regexp.MustCompile("(?:\\./payouts|go run \\.)((?: [^|;&)`#]*)?)|`payouts ([^`]*)`")

// Every command line of the binary that the README and the docs show names a command of the
// command table and only flags that command has, so that a reader who types it literally
// gets no usage error; one of listen or sign names its server with --base.
func TestDocumentedCommandLinesUseFlagsTheCommandsHave(t *testing.T) {
	flags := map[string]map[string]bool{}
	for _, c := range cli.Commands() {
		fs := flag.NewFlagSet(c.Name, flag.ContinueOnError)
		c.Flags(fs)
		flags[c.Name] = map[string]bool{"h": true, "help": true}
		fs.VisitAll(func(f *flag.Flag) { flags[c.Name][f.Name] = true })
	}
	checked := 0
	for _, name := range markdownFiles(t) {
		if name == "docs/reference/cli.md" { // generated from the table itself
			continue
		}
		// A shell line continued with \ is one command line.
		text := strings.ReplaceAll(read(t, name), "\\\n", " ")
		for _, m := range commandLine.FindAllStringSubmatch(text, -1) {
			words := strings.Fields(m[1] + m[2])
			command := "serve"
			switch {
			case len(words) > 0 && (words[0] == "--version" || words[0] == "-version"):
				command, words = "version", words[1:]
			case len(words) > 1 && flags[words[0]+" "+words[1]] != nil:
				command, words = words[0]+" "+words[1], words[2:]
			case len(words) > 0 && flags[words[0]] != nil:
				command, words = words[0], words[1:]
			case len(words) > 0 && !strings.HasPrefix(words[0], "-"):
				if strings.HasPrefix(m[0], "`payouts ") {
					t.Errorf("%s: %q names no command of the table", name, m[0])
				}
				continue // ./payouts in prose, not a command line
			}
			checked++
			// A command that talks to a running server says which: the server may not be
			// on the default address.
			if (command == "listen" || command == "sign") && strings.HasPrefix(m[0], "./payouts") && !slices.Contains(words, "--base") {
				t.Errorf("%s: %q does not name the server with --base", name, strings.TrimSpace(m[0]))
			}
			for _, w := range words {
				if !strings.HasPrefix(w, "--") || w == "--" {
					continue
				}
				f, _, _ := strings.Cut(strings.TrimPrefix(w, "--"), "=")
				f = strings.Trim(f, `"'.,:`)
				if !flags[command][f] {
					t.Errorf("%s: %q: payouts %s has no flag --%s", name, strings.TrimSpace(m[0]), command, f)
				}
			}
		}
	}
	if checked < 40 {
		t.Errorf("only %d command lines found in the docs; the pattern reads too little", checked)
	}
	t.Logf("%d command lines checked", checked)
}
