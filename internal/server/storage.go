package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"payouts/rules"
	"payouts/rules/merchants"
	"payouts/store"
	"payouts/store/bolt"
	"payouts/store/postgres"
)

// The files of a data directory besides its database: the keys and the admin token, each
// 0600, created on first start unless given by flag.
const (
	DatabaseFile        = "payouts.db"
	MasterKeyFile       = "master.key"
	CardKeyFile         = "card.key"
	NotificationKeyFile = "notification-key.pem"
	AdminTokenFile      = "admin-token"
)

// Open opens the engine the configuration names, and the sealer of its secrets: the bbolt
// file in the data directory (the default), or PostgreSQL (Storage.Database). Only this package
// knows the engines; everything else sees rules.Storage.
func Open(ctx context.Context, cfg Config) (rules.Storage, *store.Sealer, error) {
	return open(ctx, cfg, Options{}, nil, 0)
}

// open is Open with what Run injects, the tracer it started (nil: off) and how much of the
// bbolt file may stay mapped in memory (0: no bound).
func open(ctx context.Context, cfg Config, opts Options, tr *tracing, mapped int64) (rules.Storage, *store.Sealer, error) {
	if cfg.OnPostgres() {
		if cfg.Keys.Master == "" {
			return nil, nil, errors.New("on PostgreSQL the master key must be given (--master-key or --master-key-file): every instance needs the same one")
		}
		key, err := store.ParseKey(cfg.Keys.Master)
		if err != nil {
			return nil, nil, fmt.Errorf("--master-key: %w", err)
		}
		sealer, err := store.NewSealer(key)
		if err != nil {
			return nil, nil, err
		}
		db, err := postgres.Open(ctx, cfg.Storage.Database, postgres.Options{Instance: cfg.Storage.Instance, MaxConns: int32(cfg.Storage.MaxConns), Lease: cfg.Storage.ClaimLease,
			Trace: tr.rules()})
		if err != nil {
			return nil, nil, err
		}
		k := sealedKey{name: "master", source: "--master-key", flag: "--master-key-file", opensSecret: firstMerchantOpens(db, sealer)}
		if err := checkSealedKey(ctx, db, k, key, storeWhere(cfg)); err != nil {
			db.Close(ctx)
			return nil, nil, err
		}
		return db, sealer, nil
	}
	dir := cfg.Storage.Data
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, err
	}
	os.Chmod(dir, 0o700)
	if err := checkDataDir(dir); err != nil {
		return nil, nil, err
	}
	db, err := bolt.Open(filepath.Join(dir, DatabaseFile), bolt.Options{NoSync: cfg.Storage.NoSync, Fault: opts.WriteFault, Trace: tr.rules(),
		MappedBudget: mapped, Now: opts.Now})
	if err != nil {
		return nil, nil, err
	}
	sealer, err := openMasterKey(ctx, cfg, db)
	if err == nil {
		// Versions before signatures became reusable saved a replay guard here; it means nothing now.
		_, err = db.TakeMeta("replay-guard")
	}
	if err == nil {
		err = markInitialised(dir)
	}
	if err != nil {
		db.Close(ctx)
		return nil, nil, err
	}
	return db, sealer, nil
}

// openMasterKey reads the master key of a data directory (or --master-key), generating it
// only for a store that holds nothing it sealed, and checks it against the store.
func openMasterKey(ctx context.Context, cfg Config, db rules.Storage) (*store.Sealer, error) {
	path := filepath.Join(cfg.Storage.Data, MasterKeyFile)
	k := sealedKey{name: "master", source: path, flag: "--master-key-file"}
	var key []byte
	var err error
	if cfg.Keys.Master != "" {
		k.source = "--master-key"
		key, err = store.ParseKey(cfg.Keys.Master)
	} else {
		if _, statErr := os.Stat(path); errors.Is(statErr, os.ErrNotExist) {
			ms, err := db.Merchants(ctx)
			if err != nil {
				return nil, err
			}
			if err := missingKeyError(ctx, db, k, storeWhere(cfg), len(ms) > 0); err != nil {
				return nil, err
			}
		}
		key, err = store.LoadOrCreateKey(path)
	}
	if err != nil {
		return nil, fmt.Errorf("master key: %w", err)
	}
	sealer, err := store.NewSealer(key)
	if err != nil {
		return nil, err
	}
	k.opensSecret = firstMerchantOpens(db, sealer)
	if err := checkSealedKey(ctx, db, k, key, storeWhere(cfg)); err != nil {
		return nil, err
	}
	return sealer, nil
}

// storeWhere names the store of cfg in messages: its file, or its database without the
// password.
func storeWhere(cfg Config) string {
	if cfg.OnPostgres() {
		return "the PostgreSQL database " + RedactURL(cfg.Storage.Database)
	}
	return filepath.Join(cfg.Storage.Data, DatabaseFile)
}

// OpenEngine opens the store at where, a data directory or a postgres:// URL, without a
// sealer: `payouts migrate` copies sealed secrets as they are.
func OpenEngine(ctx context.Context, where string) (rules.Storage, error) {
	if IsPostgresURL(where) {
		return postgres.Open(ctx, where, postgres.Options{})
	}
	return bolt.Open(filepath.Join(where, DatabaseFile), bolt.Options{})
}

// StoreExists refuses a PostgreSQL database that holds no store, without changing it (Open
// would make one).
func StoreExists(ctx context.Context, url string) error {
	return postgres.CheckExists(ctx, url)
}

// merchantSource lets the API open sealed secrets without knowing the key.
type merchantSource struct {
	db        rules.Storage
	merchants *merchants.Service
}

// Merchant reads a merchant for the key cache (api.Keyring), whose one read serves every
// request waiting for it: no request's context may cancel it.
func (m merchantSource) Merchant(id string) (*rules.Merchant, error) {
	return m.db.Merchant(context.Background(), id)
}
func (m merchantSource) OpenSecret(x *rules.Merchant, sealed []byte) (string, error) {
	return m.merchants.OpenSecret(x, sealed)
}
