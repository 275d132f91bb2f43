package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"time"

	"payouts/api"
	"payouts/internal/server"
	"payouts/rules"
	"payouts/rules/merchants"
)

// merchantKeysCommand is `payouts merchant keys`: a merchant's API keys, offline (the server stopped,
// or on PostgreSQL beside it), the CLI's counterpart of /admin/v1/merchants/{id}/keys. It is
// how the demo merchant gets credentials again after its first start printed them once.
var merchantKeysCommand = &Command{
	Name:       "merchant keys",
	Usage:      "--id ID [--new | --revoke KEYID]",
	Short:      "list a merchant's API keys offline, or issue a new key and secret",
	Long:       "With --new the old pair keeps working for --grace.",
	Required:   []string{"id"},
	ReadsStore: true,
	Flags:      merchantKeysFlags,
}

func merchantKeysFlags(fs *flag.FlagSet) Runner {
	data := fs.String("data", "./data", "data directory")
	id := fs.String("id", "", "the merchant's id (required; the demo merchant is 1)")
	issue := fs.Bool("new", false, "issue a new API key and secret (printed once); the old pair keeps working for --grace")
	grace := fs.Duration("grace", merchants.DefaultKeyGrace, "with --new: how long the old pair keeps working (0 ends it at once)")
	revoke := fs.String("revoke", "", "end the old key with this keyId at once")
	database := fs.String("database", "", "a postgres:// URL (default: the bbolt file in --data)")
	masterKeyFile := fs.String("master-key-file", "", "with --database and --new: the instances' master key file")
	return func(ctx context.Context, env Env, _ []string) error {
		switch {
		case *issue && *revoke != "":
			return usageErrorf("merchant keys: --new or --revoke, not both")
		case *grace < 0:
			return usageErrorf("merchant keys: --grace must not be negative")
		}
		cfg, err := storeConfig("merchant keys", *data, *database, *masterKeyFile)
		if err != nil {
			return err
		}
		db, sealer, err := server.Open(context.Background(), cfg)
		if err != nil {
			return err
		}
		defer db.Close(ctx)
		keys := merchants.New(db, sealer)
		now := time.Now().UTC()
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		var m *rules.Merchant
		switch {
		case *issue:
			var c merchants.Credentials
			if m, c, err = keys.RotateKey(ctx, *id, *grace, now); err == nil {
				return enc.Encode(api.NewKeyView{KeyID: rules.KeyID(m.APIKeyHash), APIKey: c.APIKey, APISecret: c.APISecret, Keys: api.KeyViews(m, now)})
			}
		case *revoke != "":
			if err = keys.RevokeKey(ctx, *id, *revoke, now); err == nil {
				m, err = db.Merchant(ctx, *id)
			}
		default:
			m, err = db.Merchant(ctx, *id)
		}
		if errors.Is(err, rules.ErrNotFound) {
			return fmt.Errorf("merchant keys: no merchant %q", *id)
		}
		if err != nil {
			return fmt.Errorf("merchant keys: %w", err)
		}
		return enc.Encode(api.KeyViews(m, now))
	}
}
