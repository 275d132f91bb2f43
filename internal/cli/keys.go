package cli

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"payouts/internal/server"
	"payouts/store"
	"payouts/web/notify"
)

// keysCommand writes a new set of the secrets that every instance on one PostgreSQL must
// share, each in its own 0600 file, never over an existing one.
var keysCommand = &Command{
	Name:     "keys",
	Usage:    "--out DIR",
	Short:    "write the keys several instances on PostgreSQL share (docs/guides/scaling.md)",
	Required: []string{"out"},
	Flags:    keysFlags,
}

func keysFlags(fs *flag.FlagSet) Runner {
	out := fs.String("out", "", "directory to write master.key, card.key, notification-key.pem and admin-token into (required)")
	return func(ctx context.Context, env Env, _ []string) error {
		if err := os.MkdirAll(*out, 0o700); err != nil {
			return err
		}
		rsaKey, err := rsa.GenerateKey(rand.Reader, notify.KeyBits)
		if err != nil {
			return err
		}
		der, err := x509.MarshalPKCS8PrivateKey(rsaKey)
		if err != nil {
			return err
		}
		files := []struct {
			name string
			data []byte
		}{
			{server.MasterKeyFile, []byte(randomHexKey() + "\n")},
			{server.CardKeyFile, []byte(randomHexKey() + "\n")},
			{server.NotificationKeyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})},
			{server.AdminTokenFile, []byte(server.NewAdminToken() + "\n")},
		}
		for _, f := range files {
			path := filepath.Join(*out, f.name)
			if err := store.WriteFileOnce(path, f.data, 0o600); errors.Is(err, os.ErrExist) {
				return fmt.Errorf("keys: %s exists; keys are never overwritten (instances and sealed data depend on them)", path)
			} else if err != nil {
				return err
			}
		}
		d := *out
		fmt.Fprintf(env.Stdout, "keys written to %s (0600 each). Give the same files to every instance:\n"+
			"  --master-key-file %s --card-key-file %s --notification-key-file %s --admin-token-file %s\n",
			d, filepath.Join(d, "master.key"), filepath.Join(d, server.CardKeyFile), filepath.Join(d, server.NotificationKeyFile),
			filepath.Join(d, "admin-token"))
		return nil
	}
}

func randomHexKey() string {
	var b [32]byte
	rand.Read(b[:])
	return strings.ToLower(hex.EncodeToString(b[:]))
}
