package server

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"payouts/store"
	"payouts/web/dashboard"
)

// keyFile is a file of a key, a secret or a certificate that the server reads.
type keyFile struct {
	what string // the flag or the file's part, for messages
	path string
	max  int64
	// secret: a private key or a secret, warned of when others than its owner may read it;
	// a certificate is public.
	secret bool
}

// keyFilesOf lists every file cfg has the server read a key, a secret or a certificate from:
// the data directory's own (those not given by flag), the --X-file flags, the notification
// key, the TLS pair and the ACME CA's root.
func keyFilesOf(cfg Config) []keyFile {
	var out []keyFile
	inData := func(given string, name, what string) {
		if given == "" && cfg.Storage.Data != "" {
			out = append(out, keyFile{what, filepath.Join(cfg.Storage.Data, name), store.MaxKeyFileSize, true})
		}
	}
	if !cfg.OnPostgres() {
		inData(cfg.Keys.Master, MasterKeyFile, "the master key")
		inData(cfg.Keys.NotificationFile, NotificationKeyFile, "the notification key")
	}
	inData(cfg.Keys.Card, CardKeyFile, "the card key")
	inData(cfg.Keys.AdminToken, AdminTokenFile, "the admin token")
	for _, flag := range slices.Sorted(maps.Keys(cfg.Keys.SecretFiles)) {
		out = append(out, keyFile{"--" + flag + "-file", cfg.Keys.SecretFiles[flag], store.MaxKeyFileSize, true})
	}
	if cfg.Keys.NotificationFile != "" {
		out = append(out, keyFile{"--notification-key-file", cfg.Keys.NotificationFile, store.MaxKeyFileSize, true})
	}
	if cfg.TLS.Key != "" {
		out = append(out, keyFile{"--tls-key", cfg.TLS.Key, store.MaxKeyFileSize, true})
	}
	if cfg.TLS.Cert != "" {
		out = append(out, keyFile{"--tls-cert", cfg.TLS.Cert, store.MaxCertificateFileSize, false})
	}
	if cfg.TLS.ACMECARoot != "" {
		out = append(out, keyFile{"--acme-ca-root", cfg.TLS.ACMECARoot, store.MaxCertificateFileSize, false})
	}
	return out
}

// checkKeyFiles refuses, before the server binds its port, a key file that is not a regular
// file or is larger than a key (the read would hang or never end), and warns of each secret
// that others than its owner may read. A file that does not exist yet is left to the code
// that creates or asks for it.
func checkKeyFiles(cfg Config, logger *slog.Logger) error {
	for _, f := range keyFilesOf(cfg) {
		mode, err := store.CheckKeyFile(f.path, f.max)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("%s: %w", f.what, err)
		}
		if f.secret && store.TooOpen(mode) {
			warnTooOpen(logger, f.what, f.path, mode)
		}
	}
	return nil
}

// warnTooOpen logs a secret that others than its owner may read.
func warnTooOpen(logger *slog.Logger, what, path string, mode os.FileMode) {
	logger.Warn("key file readable by others than its owner: chmod 600 it (ssh would refuse such a key)",
		"key", what, "file", path, "mode", fmt.Sprintf("%04o", mode.Perm()))
}

// openKeyFiles are the dashboard's warnings of the secrets that others than their owner may
// read, as the files are now (a chmod shows at the next look).
func openKeyFiles(cfg Config) []dashboard.KeyFileWarning {
	var out []dashboard.KeyFileWarning
	for _, f := range keyFilesOf(cfg) {
		if !f.secret {
			continue
		}
		if st, err := os.Stat(f.path); err == nil && store.TooOpen(st.Mode()) {
			out = append(out, dashboard.KeyFileWarning{What: f.what, Path: f.path, Mode: fmt.Sprintf("%04o", st.Mode().Perm())})
		}
	}
	return out
}
