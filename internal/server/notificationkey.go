package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"payouts/rules"
	"payouts/store"
	"payouts/web/notify"
)

// The key that signs merchant notifications is pinned by merchants (they verify with its
// certificate), so it is kept like a sealing key: the store records its fingerprint, a
// missing key is not made anew for a store that has used one, a different key is refused,
// and a new key is installed only on purpose, by RotateNotificationKey.

// notificationFingerprint is the name of the notification key in the store's fingerprints.
const notificationFingerprint = "notification"

// NotificationKeyFingerprint names a notification key by its public half (store.Fingerprint
// of the PKIX encoding), the same whichever file or encoding holds it.
func NotificationKeyFingerprint(k *rsa.PrivateKey) string {
	der, _ := x509.MarshalPKIXPublicKey(&k.PublicKey)
	return store.Fingerprint(der)
}

// notificationKey is --notification-key-file, else the data directory's
// notification-key.pem, created on the first start of a store that never had one; either
// way the key whose fingerprint the store recorded.
func (w *wiring) notificationKey(ctx context.Context) (*rsa.PrivateKey, error) {
	path := w.cfg.Keys.NotificationFile
	where := storeWhere(w.cfg)
	if path != "" {
		if _, err := os.Stat(path); err != nil { // given, it must exist: instances share it
			return nil, fmt.Errorf("--notification-key-file: %w", err)
		}
	} else {
		path = filepath.Join(w.cfg.Storage.Data, NotificationKeyFile)
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			if err := missingNotificationKey(ctx, w.db, path, where, w.cfg.Storage.Data); err != nil {
				return nil, err
			}
			if err := createNotificationKey(path, w.opts.NewNotificationKey); err != nil {
				return nil, fmt.Errorf("notification key: %w", err)
			}
		}
	}
	raw, _, err := store.ReadKeyFile(path, store.MaxKeyFileSize)
	if err != nil {
		return nil, fmt.Errorf("notification key: %w", err)
	}
	key, err := parseNotificationKey(path, raw)
	if err != nil {
		return nil, fmt.Errorf("notification key: %w", err)
	}
	if bits := key.N.BitLen(); bits < notify.KeyBits {
		// Refused by `notification-key rotate`; one installed before is kept (merchants pinned
		// it), and said.
		w.logger.Warn("the notification key is too short: rotate it (`payouts notification-key rotate`)",
			"file", path, "bits", bits, "at_least", notify.KeyBits)
	}
	fp := NotificationKeyFingerprint(key)
	recorded, err := w.db.KeyFingerprint(ctx, notificationFingerprint)
	if err == nil && recorded == "" {
		recorded, err = w.db.RecordKeyFingerprint(ctx, notificationFingerprint, fp)
	}
	if err != nil {
		return nil, err
	}
	if recorded != fp {
		return nil, fmt.Errorf("the notification key (%s, fingerprint %s) is not the one that signs the notifications of %s "+
			"(fingerprint %s): merchants verify with that key's certificate and would reject every notification signed with this one. "+
			"Give the key that goes with this database (--notification-key-file, or %s in the data directory), e.g. restored from "+
			"a backup of the data directory; or make this one the key on purpose: %s",
			path, fp, where, recorded, NotificationKeyFile, rotateCommand(w.cfg, path))
	}
	return key, nil
}

// missingNotificationKey is the refusal to make a new notification key for a store that
// signed notifications with one: its fingerprint recorded, or, in a store from before the
// fingerprint, a notification in its event log (kept 30 days). A store that never sent one
// (new, or filled offline by `payouts merchant create`) gets a key.
func missingNotificationKey(ctx context.Context, db rules.Storage, path, where, dir string) error {
	fp, err := db.KeyFingerprint(ctx, notificationFingerprint)
	if err != nil {
		return err
	}
	used := "signs its notifications with a key of fingerprint " + fp
	if fp == "" {
		sent, err := sentNotifications(ctx, db)
		if err != nil || !sent {
			return err
		}
		used = "has sent notifications signed with a key (its event log holds them)"
	}
	return fmt.Errorf("%s is missing, but %s %s: merchants that pinned its certificate would reject every notification "+
		"signed with a new key, so none is made. Copy the key that goes with this database back to %s (from a backup of the data "+
		"directory; after `payouts migrate --to DIR`: the source directory's %s), or give it with --notification-key-file. "+
		"To replace it on purpose: %s, then have every merchant fetch the new certificate (GET /api/v1/notifications/certificate)",
		path, where, used, path, NotificationKeyFile, rotateCommand(Config{Storage: StorageConfig{Data: dir}}, path))
}

// sentNotifications reports whether a merchant of db has a notification in the event log.
func sentNotifications(ctx context.Context, db rules.Storage) (bool, error) {
	ms, err := db.Merchants(ctx)
	if err != nil {
		return false, err
	}
	for _, m := range ms {
		evs, err := db.LoggedEvents(ctx, m.ID, rules.EventQuery{Limit: 1})
		if err != nil || len(evs) > 0 {
			return len(evs) > 0, err
		}
	}
	return false, nil
}

// parseNotificationKey reads the notification key in raw, read from path, saying which keys
// it takes: notifications are signed RSA PKCS#1 v1.5 with SHA-256, which merchants verify
// with an RSA certificate, so an EC or Ed25519 key is refused.
func parseNotificationKey(path string, raw []byte) (*rsa.PrivateKey, error) {
	key, err := notify.ParseKey(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: a notification key is an RSA private key of at least %d bits, in PEM (PKCS#8 or PKCS#1)",
			path, err, notify.KeyBits)
	}
	return key, nil
}

// rotateCommand is the command line that installs a new notification key for cfg's store.
func rotateCommand(cfg Config, path string) string {
	if cfg.OnPostgres() {
		return "`payouts notification-key rotate --database URL --notification-key-file " + ShellQuote(path) + "`"
	}
	return "`payouts notification-key rotate --data " + ShellQuote(cfg.Storage.Data) + "`"
}

// NewNotificationKeyPEM is a new RSA key for notifications, as PKCS#8 PEM.
func NewNotificationKeyPEM() ([]byte, error) {
	k, err := rsa.GenerateKey(rand.Reader, notify.KeyBits)
	if err != nil {
		return nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// NotificationKeyRotation is what RotateNotificationKey did.
type NotificationKeyRotation struct {
	Path        string // the file that holds the new key
	Retired     string // where the file's old key went; "" when there was none
	Old, New    string // the fingerprints: the one recorded before ("" for none) and the new key's
	Certificate []byte // the new key's certificate (PEM), as GET /api/v1/notifications/certificate will serve it
}

// RotateNotificationKey installs a new notification key for a store on purpose: the key
// in from (a PEM file), or a new one; written to path (the file the servers are given,
// default the data directory's notification-key.pem), whose old key, if any, is moved
// beside it (path.retired-<fingerprint>, never over a file); and its fingerprint recorded in
// place of the old. On bbolt the server must be stopped (the file is locked while it runs).
// Every step may be run again after a crash: a second rotation finds what the first left.
func RotateNotificationKey(ctx context.Context, cfg Config, path, from string) (NotificationKeyRotation, error) {
	var r NotificationKeyRotation
	var db rules.Storage
	var err error
	if cfg.OnPostgres() {
		if path == "" {
			return r, errors.New("on PostgreSQL give the file the instances read, --notification-key-file FILE: the new key is written there")
		}
		db, err = OpenEngine(ctx, cfg.Storage.Database)
	} else {
		dbPath := filepath.Join(cfg.Storage.Data, DatabaseFile)
		if st, serr := os.Stat(dbPath); serr != nil || st.Size() == 0 {
			return r, fmt.Errorf("no database at %s: a notification key is rotated for a store that has one", dbPath)
		}
		if path == "" {
			path = filepath.Join(cfg.Storage.Data, NotificationKeyFile)
		}
		db, err = OpenEngine(ctx, cfg.Storage.Data)
	}
	if err != nil {
		return r, err
	}
	defer db.Close(ctx)
	r.Path = path
	if r.Old, err = db.KeyFingerprint(ctx, notificationFingerprint); err != nil {
		return r, err
	}

	var raw []byte
	if from != "" {
		raw, _, err = store.ReadKeyFile(from, store.MaxKeyFileSize)
	} else {
		raw, err = NewNotificationKeyPEM()
	}
	if err != nil {
		return r, err
	}
	key, err := parseNotificationKey(from, raw)
	if err != nil {
		return r, err
	}
	if bits := key.N.BitLen(); bits < notify.KeyBits {
		return r, fmt.Errorf("%s: an RSA key of %d bits; a notification key has at least %d "+
			"(`openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:%d` makes one; without --from a new one is made)",
			from, bits, notify.KeyBits, notify.KeyBits)
	}
	r.New = NotificationKeyFingerprint(key)
	if r.Certificate, err = notify.CertificatePEM(key); err != nil {
		return r, err
	}

	if old, _, err := store.ReadKeyFile(path, store.MaxKeyFileSize); err == nil {
		name := "unreadable"
		if k, err := notify.ParseKey(old); err == nil {
			name = NotificationKeyFingerprint(k)
		}
		r.Retired = path + ".retired-" + name
		if err := os.Link(path, r.Retired); errors.Is(err, os.ErrExist) {
			if kept, _, _ := store.ReadKeyFile(r.Retired, store.MaxKeyFileSize); !bytes.Equal(kept, old) { // the same key retired before is kept once
				return r, fmt.Errorf("keep the old key: %s exists and holds another key", r.Retired)
			}
		} else if err != nil {
			return r, fmt.Errorf("keep the old key: %w", err)
		}
		if err := os.Remove(path); err != nil {
			return r, err
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return r, err
	}
	if err := store.WriteFileOnce(path, raw, 0o600); err != nil {
		return r, err
	}
	ok, err := db.ReplaceKeyFingerprint(ctx, notificationFingerprint, r.Old, r.New)
	if err != nil {
		return r, err
	}
	if !ok {
		return r, fmt.Errorf("another rotation recorded another notification key while this one ran: run it again")
	}
	return r, nil
}
