package cli_test

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"payouts/internal/cli"
)

// Every flag has a PAYOUTS_ variable, and the flag wins.
func TestEnvironmentVariablesAndFlags(t *testing.T) {
	env := map[string]string{"PAYOUTS_ADDR": "127.0.0.1:9999", "PAYOUTS_SANDBOX_DELAY": "5s", "PAYOUTS_RATE_LIMIT": "7"}
	cfg, err := cli.ServeConfig([]string{"--addr", "127.0.0.1:1234"}, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if cfg.HTTP.Addr != "127.0.0.1:1234" || cfg.Sandbox.Delay.String() != "5s" || cfg.HTTP.RateLimit != 7 {
		t.Fatalf("cfg %+v", cfg)
	}
}

// `payouts help` lists every command of the table, and `payouts help <command>` answers for
// each with its usage line; an unknown command is a usage error (exit 2).
func TestHelpCoversEveryCommandOfTheTable(t *testing.T) {
	var list bytes.Buffer
	if err := cli.Run(context.Background(), []string{"help"}, cli.Env{Stdout: &list, Stderr: io.Discard}); err != nil {
		t.Fatal(err)
	}
	for _, c := range cli.Commands() {
		if !strings.Contains(list.String(), " "+c.Name+" ") && !strings.Contains(list.String(), "["+c.Name+"]") {
			t.Errorf("payouts help does not list %q:\n%s", c.Name, list.String())
		}
		var out bytes.Buffer
		if err := cli.Run(context.Background(), append([]string{"help"}, strings.Fields(c.Name)...)[:2], cli.Env{Stdout: &out, Stderr: io.Discard}); err != nil {
			t.Errorf("help %s: %v", c.Name, err)
		}
		if !strings.Contains(out.String(), "usage: payouts ") {
			t.Errorf("help %s printed no usage line:\n%s", c.Name, out.String())
		}
	}
	err := cli.Run(context.Background(), []string{"frobnicate"}, cli.Env{Stdout: io.Discard, Stderr: io.Discard})
	if cli.ExitCode(err) != 2 {
		t.Errorf("an unknown command: exit %d (%v), want 2", cli.ExitCode(err), err)
	}
}
