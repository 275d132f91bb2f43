package cli_test

import (
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
	if cfg.Addr != "127.0.0.1:1234" || cfg.SandboxDelay.String() != "5s" || cfg.RateLimit != 7 {
		t.Fatalf("cfg %+v", cfg)
	}
}
