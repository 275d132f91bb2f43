package cli_test

import (
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"payouts/internal/cli"
)

// The docs against the command table: what they tell a reader to type, and the command
// line of the systemd unit they install, are ones the commands take. (The other checks of
// the docs are the docs package's own tests, which need none of the binary.)

// readDoc reads a file of the repository, named from its root.
func readDoc(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// markdownFiles is the README and every Markdown file under docs/, named from the root.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md"}
	err := fs.WalkDir(os.DirFS(filepath.Join("..", "..")), "docs", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

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
		text := strings.ReplaceAll(readDoc(t, name), "\\\n", " ")
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

// The command line of the systemd unit the operations guide installs (docs/payouts.service)
// is one `payouts serve` runs, writing where the unit lets it.
func TestSystemdUnitRunsAServeCommandLine(t *testing.T) {
	unit := readDoc(t, "docs/payouts.service")
	// ExecStart, its continuation lines joined, with the credentials directory (%d) of a
	// test's own.
	execStart := ""
	lines := strings.Split(unit, "\n")
	for i := 0; i < len(lines); i++ {
		if rest, ok := strings.CutPrefix(lines[i], "ExecStart="); ok {
			for execStart = rest; strings.HasSuffix(execStart, `\`) && i+1 < len(lines); i++ {
				execStart = strings.TrimSuffix(execStart, `\`) + lines[i+1]
			}
		}
	}
	args := strings.Fields(execStart)
	if len(args) < 2 || args[0] != "/usr/local/bin/payouts" || args[1] != "serve" {
		t.Fatalf("ExecStart=%s: want /usr/local/bin/payouts serve …", execStart)
	}
	creds := t.TempDir()
	if err := os.WriteFile(filepath.Join(creds, "admin-token"), []byte("an-admin-token-of-thirty-two-chars\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for i, a := range args {
		args[i] = strings.ReplaceAll(a, "%d", creds)
	}
	cfg, err := cli.ServeConfig(args[2:], func(string) string { return "" })
	if err == nil {
		err = cfg.Check()
	}
	if err != nil {
		t.Errorf("ExecStart=%s: %v", execStart, err)
	}
	if cfg.Storage.Data != "/var/lib/payouts" || cfg.Backups.Dir != "/var/backups/payouts" {
		t.Errorf("ExecStart writes to %s and %s, not to the ReadWritePaths", cfg.Storage.Data, cfg.Backups.Dir)
	}
}
