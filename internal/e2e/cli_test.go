package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"payouts/internal/cli"
	"payouts/store/bolt"
)

func runCLI(t *testing.T, getenv func(string) string, args ...string) (string, error) {
	t.Helper()
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	var out, errOut bytes.Buffer
	err := cli.Run(context.Background(), args, cli.Env{Getenv: getenv, Stdout: &out, Stderr: &errOut})
	return out.String() + errOut.String(), err
}

func TestCLIMerchantCreateBackupVersion(t *testing.T) {
	t.Parallel()
	boltOnly(t, "the offline merchant create and the backup are of the data directory's file (PostgreSQL: pg_dump)")
	dir := t.TempDir()
	out, err := runCLI(t, nil, "merchant", "create", "--data", dir, "--name", "Tienda", "--card-payouts", "--allowed-origins", "https://tienda.pe")
	if err != nil {
		t.Fatalf("merchant create: %v\n%s", err, out)
	}
	var m struct {
		MerchantID, APIKey, APISecret string
		Settings                      struct {
			CardPayouts, CardOnFile bool
			AllowedOrigins          []string
		}
	}
	if err := json.Unmarshal([]byte(out), &m); err != nil || m.MerchantID == "" || m.APIKey == "" || m.APISecret == "" {
		t.Fatalf("merchant create printed %q (%v)", out, err)
	}
	if !m.Settings.CardPayouts || !m.Settings.CardOnFile || len(m.Settings.AllowedOrigins) != 1 {
		t.Fatalf("settings %+v", m.Settings)
	}
	// The secret is not stored in plain text anywhere in the data directory.
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if info != nil && !info.IsDir() {
			b, _ := os.ReadFile(p)
			if bytes.Contains(b, []byte(m.APISecret)) || bytes.Contains(b, []byte(m.APIKey)) {
				t.Errorf("%s holds the API key or secret in plain text", p)
			}
		}
		return nil
	})

	// Offline backup, then a backup from a running server through the admin API.
	offline := filepath.Join(t.TempDir(), "offline.db")
	if out, err := runCLI(t, nil, "backup", "--data", dir, "--out", offline); err != nil {
		t.Fatalf("offline backup: %v %s", err, out)
	}
	s := startServer(t, dir)
	c := s.newMerchant(t, nil)
	c.do(t, "POST", "payouts", perBankRequest("BK-1"), "")
	online := filepath.Join(t.TempDir(), "online.db")
	addr := strings.TrimPrefix(s.URL, "http://")
	if out, err := runCLI(t, nil, "backup", "--data", dir, "--addr", addr, "--admin-token", s.AdminToken, "--out", online); err != nil {
		t.Fatalf("online backup: %v %s", err, out)
	}
	db, err := bolt.Open(online, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	if p, err := db.PayoutByOrder(context.Background(), c.MerchantID, "BK-1"); err != nil || p.OrderID != "BK-1" {
		t.Fatalf("the online backup lacks the payout: %v", err)
	}

	if out, err := runCLI(t, nil, "version"); err != nil || !strings.HasPrefix(out, "payouts ") {
		t.Fatalf("version: %q %v", out, err)
	}
	if _, err := runCLI(t, nil, "frobnicate"); err == nil {
		t.Fatal("an unknown command was accepted")
	}
}

// The first ten minutes: -h lists the subcommands, help <command> its flags, and sign prints
// a URL that the real server accepts.
func TestCLIHelpAndSign(t *testing.T) {
	t.Parallel()
	out, err := runCLI(t, nil, "-h")
	if err != nil {
		t.Fatalf("-h: %v", err)
	}
	for _, want := range []string{"merchant create", "backup", "sign", "version", "help [command]", "-addr", "PAYOUTS_"} {
		if !strings.Contains(out, want) {
			t.Errorf("-h does not mention %q:\n%s", want, out)
		}
	}
	for cmd, want := range map[string]string{"serve": "-sandbox-delay", "merchant": "-card-payouts", "backup": "-out", "sign": "-secret"} {
		if out, err := runCLI(t, nil, "help", cmd); err != nil || !strings.Contains(out, want) {
			t.Errorf("help %s: %v\n%s", cmd, err, out)
		}
	}
	if _, err := runCLI(t, nil, "help", "nope"); err == nil {
		t.Error("help of an unknown command succeeded")
	}

	s := startServer(t, "")
	c := s.newMerchant(t, nil)
	env := func(k string) string {
		return map[string]string{"PAYOUTS_SECRET": c.Secret, "PAYOUTS_BASE": s.URL}[k]
	}
	for _, args := range [][]string{{"sign", "/api/v1/" + c.MerchantID + "/balance"}, {"sign", "--seconds", "/api/v1/" + c.MerchantID + "/payouts?limit=1"}} {
		out, err := runCLI(t, env, args...)
		if err != nil {
			t.Fatalf("%v: %v %s", args, err, out)
		}
		req, _ := http.NewRequest("GET", strings.TrimSpace(out), nil)
		req.Header.Set("monnet-api-key", c.Key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("%v: the signed URL %s answered %d", args, out, resp.StatusCode)
		}
	}
}

// The CLI refuses the settings the admin API refuses.
func TestCLIMerchantCreateChecksSettings(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--notification-url", "http://hooks.example/payouts"},
		{"--allowed-origins", "*"},
		{"--allowed-origins", "https://shop.example/path"},
	} {
		all := append([]string{"merchant", "create", "--data", t.TempDir(), "--name", "Tienda"}, args...)
		if out, err := runCLI(t, nil, all...); err == nil || !strings.Contains(err.Error(), "settings.") {
			t.Errorf("%v: %v %s, want a refusal naming the setting", args, err, out)
		}
	}
	if out, err := runCLI(t, nil, "merchant", "create", "--data", t.TempDir(), "--name", "Tienda",
		"--notification-url", "https://hooks.example/payouts", "--allowed-origins", "https://shop.example"); err != nil {
		t.Errorf("valid settings refused: %v %s", err, out)
	}
}
