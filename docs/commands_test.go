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

// What a new user following the docs literally needs comes before it is used: the scaling
// guide creates the role, the database and the --database-file file before an instance reads
// them; the operations guide's ACME trial has pebble's certificate, its resolver and its root;
// the README stops the first server before starting the binary and promises no test time.
func TestGuidesSetUpWhatTheirCommandsUse(t *testing.T) {
	before := func(name, first, then string) {
		t.Helper()
		doc := read(t, name)
		i, j := strings.Index(doc, first), strings.Index(doc, then)
		if i < 0 || j < 0 || i > j {
			t.Errorf("%s: %q (at %d) does not come before %q (at %d)", name, first, i, then, j)
		}
	}
	before("docs/guides/scaling.md", "CREATE ROLE payouts LOGIN", "--database-file /etc/payouts/database-url")
	before("docs/guides/scaling.md", "CREATE DATABASE payouts OWNER payouts", "--database-file /etc/payouts/database-url")
	before("docs/guides/scaling.md", "/etc/payouts/database-url >/dev/null", "--database-file /etc/payouts/database-url")
	before("docs/guides/operations.md", "-keyout pebble-key.pem -out pebble-cert.pem", "--acme-ca-root pebble-cert.pem")
	before("docs/guides/operations.md", "pebble-challtestsrv -defaultIPv4 127.0.0.1", "pebble -config pebble.json -dnsserver 127.0.0.1:8053")
	before("docs/guides/operations.md", "--acme-ca https://127.0.0.1:14000/dir", "https://127.0.0.1:15000/roots/0 > pebble-root.pem")
	before("README.md", "Stop the server `go run .` started", "go build -o payouts . && ./payouts\n")
	if m := regexp.MustCompile(`takes (about )?[0-9]+ minutes`).FindString(read(t, "README.md")); m != "" {
		t.Errorf("README.md states a test time it cannot keep: %q", m)
	}
}
