package server

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"payouts/rules"
	"payouts/rules/merchants"
	"payouts/store"
)

// A data directory knows it was initialised: a database that is missing or empty
// where one was is a loss to restore, never a first start, and a key that is missing or is
// not the one that sealed the store's secrets is refused rather than generated anew.

// InitialisedMarker is written into a data directory once its store was opened with its
// keys: from then on, a missing or empty payouts.db there is a loss.
const InitialisedMarker = "initialised"

const markerText = "This data directory was initialised by payouts: its payouts.db holds the service's records.\n" +
	"If payouts.db goes missing or empty, the server refuses to start instead of starting afresh.\n"

// storeTraces are the files a server writes into a data directory only once its database
// is there (bbolt creates payouts.db before any of them): any one of them beside a missing or
// empty payouts.db means the directory held a store, so the database was lost. The marker
// says so plainly; the keys and the admin token say it for a directory whose marker went
// with its database, or from before the marker. (A directory `payouts keys --out` wrote
// holds the same files: it is for instances on PostgreSQL, which never look for a
// payouts.db; a bbolt server is given such keys by flag, with a --data of its own.)
var storeTraces = []string{InitialisedMarker, MasterKeyFile, CardKeyFile, NotificationKeyFile, AdminTokenFile}

// checkDataDir refuses a data directory whose database was lost: missing or empty (0 bytes:
// never a database bbolt wrote) beside a file that only a server with a database writes
// (storeTraces). A directory with none of them is a first start.
func checkDataDir(dir string) error {
	dbPath := filepath.Join(dir, DatabaseFile)
	state := "missing"
	if st, err := os.Stat(dbPath); err == nil {
		if st.Size() > 0 {
			return nil
		}
		state = "empty (0 bytes)"
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("data directory: %w", err)
	}
	var traces []string
	for _, name := range storeTraces {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			traces = append(traces, name)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("data directory: %w", err)
		}
	}
	if len(traces) == 0 {
		return nil // a new directory
	}
	why := filepath.Join(dir, InitialisedMarker) + " says so"
	if traces[0] != InitialisedMarker {
		why = "it holds " + strings.Join(traces, ", ") + ", which a server writes only once its database is there"
	}
	return fmt.Errorf("%s is %s, but %s was initialised (%s): the database was lost, this is not a first start. "+
		"Restore it with the server stopped: `payouts restore --data %s BACKUP` verifies a backup (`payouts backup --out FILE` "+
		"or --backup-every writes one) and installs it as %s. "+
		"To start afresh on purpose, move %s aside and start on an empty directory (the old keys and admin token "+
		"go with the old database: a fresh store makes its own)",
		dbPath, state, dir, why, dir, dbPath, dir)
}

// markInitialised writes the marker once; an existing one is kept.
func markInitialised(dir string) error {
	err := store.WriteFileOnce(filepath.Join(dir, InitialisedMarker), []byte(markerText), 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	return err
}

// sealedKey is one key that seals secrets in the store: its name in the store's
// fingerprints ("master", "card"), where it came from (a file or a flag) and how to give it.
type sealedKey struct {
	name, source, flag string
	// opensSecret, when the store recorded no fingerprint yet (a store from before them),
	// tells whether the key opens a secret the store already holds; nil when it holds none.
	opensSecret func() error
}

// missingKeyError is the refusal to generate a key anew for a store whose secrets a lost
// one sealed; nil when the store has none sealed with the key named.
func missingKeyError(ctx context.Context, db rules.KeyFingerprints, k sealedKey, where string, holdsSecrets bool) error {
	fp, err := db.KeyFingerprint(ctx, k.name)
	if err != nil {
		return err
	}
	if fp == "" && !holdsSecrets {
		return nil
	}
	seal := "secrets sealed with a " + k.name + " key"
	if fp != "" {
		seal += " (fingerprint " + fp + ")"
	}
	return fmt.Errorf("%s is missing, but %s holds %s: a new key would lock them out. Copy the key that goes with "+
		"this database to %s (after `payouts migrate --to DIR`: the source directory's %s), or give it with %s",
		k.source, where, seal, k.source, filepath.Base(k.source), k.flag)
}

// checkSealedKey compares key with the fingerprint the store recorded for it, and records it
// on the store's first start with it.
func checkSealedKey(ctx context.Context, db rules.KeyFingerprints, k sealedKey, key []byte, where string) error {
	fp := store.Fingerprint(key)
	recorded, err := db.KeyFingerprint(ctx, k.name)
	if err != nil {
		return err
	}
	if recorded == "" && k.opensSecret != nil {
		if err := k.opensSecret(); err != nil {
			recorded = "unknown: the key does not open the secrets already stored"
		}
	}
	if recorded == "" {
		if recorded, err = db.RecordKeyFingerprint(ctx, k.name, fp); err != nil {
			return err
		}
	}
	if recorded != fp {
		return fmt.Errorf("the %s key (%s, fingerprint %s) is not the one that sealed the secrets of %s (fingerprint %s): "+
			"give the key that goes with this database (%s), e.g. restored from the backup of this directory, "+
			"or start with the database that goes with this key", k.name, k.source, fp, where, recorded, k.flag)
	}
	return nil
}

// firstMerchantOpens tells whether sealer opens the API secret of a merchant already stored;
// nil when there is none.
func firstMerchantOpens(db rules.Storage, sealer *store.Sealer) func() error {
	return func() error {
		ms, err := db.Merchants(context.Background())
		if err != nil || len(ms) == 0 {
			return err
		}
		_, err = merchants.New(db, sealer).OpenSecret(ms[0], ms[0].SealedSecret)
		return err
	}
}
