package server

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"payouts/rules/merchants"
	"payouts/store"
)

// MinAdminTokenLength is the shortest admin token the server starts with: the admin API
// can create merchants and move balances, so its token must not be guessable.
const MinAdminTokenLength = 24

// adminToken is --admin-token, else the data directory's admin-token file, generated and
// printed once on first start.
func adminToken(cfg Config, stdout io.Writer) (string, error) {
	if cfg.Keys.AdminToken != "" {
		if len(cfg.Keys.AdminToken) < MinAdminTokenLength {
			return "", fmt.Errorf("--admin-token must be at least %d characters", MinAdminTokenLength)
		}
		return cfg.Keys.AdminToken, nil
	}
	path := filepath.Join(cfg.Storage.Data, AdminTokenFile)
	b, _, err := store.ReadKeyFile(path, store.MaxKeyFileSize)
	if err == nil {
		tok := strings.TrimSpace(string(b))
		if len(tok) < MinAdminTokenLength {
			return "", fmt.Errorf("the admin token in %s must be at least %d characters", path, MinAdminTokenLength)
		}
		return tok, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	tok := NewAdminToken()
	if err := store.WriteFileOnce(path, []byte(tok+"\n"), 0o600); errors.Is(err, os.ErrExist) {
		return adminToken(cfg, stdout) // another first start wrote it
	} else if err != nil {
		return "", err
	}
	fmt.Fprintf(stdout, "admin token (stored in %s, shown once): %s\n", path, tok)
	return tok, nil
}

// NewAdminToken is a new random admin token.
func NewAdminToken() string { return "adm_" + merchants.NewCredentials().APIKey[3:] }

// adminTokenSource is a shell expression that gives the admin token, for the printed commands.
func adminTokenSource(cfg Config) string {
	if cfg.Keys.AdminToken != "" {
		return "$PAYOUTS_ADMIN_TOKEN" // given with --admin-token(-file): the operator has it
	}
	return "$(cat " + ShellQuote(filepath.Join(cfg.Storage.Data, AdminTokenFile)) + ")"
}

// ShellQuote quotes s for a POSIX shell.
func ShellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
