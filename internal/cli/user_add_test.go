package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"payouts/internal/cli"
)

// The set-up link `payouts user add` prints names the server's address: --public-url, or the
// one the server derives from the same variables (PAYOUTS_PUBLIC_URL, PAYOUTS_HTTPS,
// PAYOUTS_ADDR), not a fixed :8080.
func TestUserAddLinkNamesTheServersAddress(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"the default address", nil, nil, "http://127.0.0.1:8080/dashboard/setup?t="},
		{"--public-url", []string{"--public-url", "https://pay.example.com/"}, map[string]string{"PAYOUTS_ADDR": "127.0.0.1:9191"}, "https://pay.example.com/dashboard/setup?t="},
		{"PAYOUTS_PUBLIC_URL", nil, map[string]string{"PAYOUTS_PUBLIC_URL": "https://pay.example.com"}, "https://pay.example.com/dashboard/setup?t="},
		{"PAYOUTS_ADDR", nil, map[string]string{"PAYOUTS_ADDR": "127.0.0.1:9191"}, "http://127.0.0.1:9191/dashboard/setup?t="},
		{"PAYOUTS_ADDR on every interface", nil, map[string]string{"PAYOUTS_ADDR": ":9191"}, "http://127.0.0.1:9191/dashboard/setup?t="},
		{"PAYOUTS_HTTPS", nil, map[string]string{"PAYOUTS_HTTPS": "pay.example.com,www.pay.example.com"}, "https://pay.example.com/dashboard/setup?t="},
		{"PAYOUTS_HTTPS on another port", nil, map[string]string{"PAYOUTS_HTTPS": "pay.example.com", "PAYOUTS_ADDR": ":8443"}, "https://pay.example.com:8443/dashboard/setup?t="},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"user", "add", "--data", t.TempDir(), "--email", "olga@example.com", "--role", "operator"}, tc.args...)
			var out bytes.Buffer
			err := cli.Run(context.Background(), args, cli.Env{Getenv: func(k string) string { return tc.env[k] }, Stdout: &out, Stderr: io.Discard})
			if err != nil {
				t.Fatalf("user add: %v", err)
			}
			var u struct{ SetupLink string }
			if err := json.Unmarshal(out.Bytes(), &u); err != nil || !strings.HasPrefix(u.SetupLink, tc.want) {
				t.Errorf("setupLink %q (%v), want it under %q", u.SetupLink, err, tc.want)
			}
		})
	}
}
