package main

// main_migrate.go: `payouts migrate` (a store into an empty one, either engine to the other)
// and `payouts keys` (the secrets several instances on PostgreSQL share).

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"payouts/api"
	"payouts/rules"
	"payouts/store"
	"payouts/web/notify"
)

func migrateCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	from := fs.String("from", "", "the store to copy: a data directory (./data) or a postgres:// URL (required)")
	to := fs.String("to", "", "the empty store to fill: a postgres:// URL or a data directory (required)")
	if err := envFlags(fs, args, getenv); err != nil {
		return err
	}
	if *from == "" || *to == "" {
		return errors.New("usage: payouts migrate --from ./data --to postgres://user:pass@host/db (or the reverse)")
	}
	if *from == *to {
		return errors.New("migrate: --from and --to are the same store")
	}
	if !isPostgresURL(*from) {
		if _, err := os.Stat(filepath.Join(*from, "payouts.db")); err != nil {
			return fmt.Errorf("migrate: --from %s: no database there: %w", *from, err)
		}
	}
	src, err := openEngine(ctx, *from)
	if err != nil {
		return fmt.Errorf("migrate: open --from: %w", err)
	}
	defer src.Close()
	if !isPostgresURL(*to) {
		if err := os.MkdirAll(*to, 0o700); err != nil {
			return err
		}
	}
	dst, err := openEngine(ctx, *to)
	if err != nil {
		return fmt.Errorf("migrate: open --to: %w", err)
	}
	defer dst.Close()
	counts, err := migrateStore(src, dst)
	if err != nil {
		return err
	}
	// The copy's secrets are sealed with the source's keys: it records their fingerprints,
	// so that a server started on it before the keys are copied refuses instead of making new ones.
	for _, name := range []string{"master", "card"} {
		fp, err := src.KeyFingerprint(name)
		if err == nil && fp != "" {
			_, err = dst.RecordKeyFingerprint(name, fp)
		}
		if err != nil {
			return fmt.Errorf("migrate: key fingerprints: %w", err)
		}
	}
	fmt.Fprintf(stdout, "migrate: copied %s to %s and checked it:\n", describeStore(*from), describeStore(*to))
	for _, k := range rules.DumpKinds {
		if counts[k] > 0 {
			fmt.Fprintf(stdout, "  %-17s %d\n", k, counts[k])
		}
	}
	fmt.Fprintln(stdout, "  balances equal, ledger invariant holds on the copy")
	if !isPostgresURL(*from) {
		fmt.Fprintf(stdout, "Secrets stay sealed with the keys of %s: start every instance with --master-key-file %s "+
			"--card-key-file %s --notification-key-file %s (and --admin-token-file %s to keep the admin token).\n",
			*from, filepath.Join(*from, "master.key"), filepath.Join(*from, cardKeyFile),
			filepath.Join(*from, notificationKeyFile), filepath.Join(*from, "admin-token"))
	} else {
		fmt.Fprintf(stdout, "Secrets stay sealed with the instances' keys: copy them into %s as master.key, %s, %s and admin-token "+
			"(or pass the same --master-key-file, --card-key-file and --notification-key-file).\n", *to, cardKeyFile, notificationKeyFile)
	}
	return nil
}

// describeStore names a store for the output, without a password.
func describeStore(where string) string {
	if isPostgresURL(where) {
		return redactURL(where)
	}
	return where
}

// migrateStore copies src into the empty dst and checks the copy: the same number of
// records of every kind, the same balances (with their ledger totals), and the ledger
// invariant from scratch. It returns the counts.
func migrateStore(src, dst rules.Storage) (map[string]int, error) {
	var recs []rules.DumpRecord
	if err := src.Dump(func(r rules.DumpRecord) error { recs = append(recs, r); return nil }); err != nil {
		return nil, fmt.Errorf("migrate: read the source: %w", err)
	}
	if err := dst.Restore(recs); err != nil {
		return nil, fmt.Errorf("migrate: write the copy: %w", err)
	}
	want, wantBalances, err := summarize(recs)
	if err != nil {
		return nil, err
	}
	var copied []rules.DumpRecord
	if err := dst.Dump(func(r rules.DumpRecord) error { copied = append(copied, r); return nil }); err != nil {
		return nil, fmt.Errorf("migrate: read the copy back: %w", err)
	}
	got, gotBalances, err := summarize(copied)
	if err != nil {
		return nil, err
	}
	for _, k := range rules.DumpKinds {
		if want[k] != got[k] {
			return nil, fmt.Errorf("migrate: the copy has %d %s records, the source %d", got[k], k, want[k])
		}
	}
	if !reflect.DeepEqual(wantBalances, gotBalances) {
		return nil, fmt.Errorf("migrate: the copy's balances differ from the source's:\nsource %v\ncopy   %v", wantBalances, gotBalances)
	}
	if err := dst.CheckAllLedgers(); err != nil {
		return nil, fmt.Errorf("migrate: the copy's ledger: %w", err)
	}
	return want, nil
}

// summarize counts records by kind and lists the balances in a stable order.
func summarize(recs []rules.DumpRecord) (map[string]int, []string, error) {
	counts := map[string]int{}
	var balances []string
	for _, r := range recs {
		counts[r.Kind]++
		if r.Kind != rules.DumpBalance {
			continue
		}
		var b rules.DumpedBalance
		if err := json.Unmarshal(r.Value, &b); err != nil {
			return nil, nil, fmt.Errorf("migrate: a balance record: %w", err)
		}
		balances = append(balances, fmt.Sprintf("%s %s/%s available %d balance %d funded %d processed %d reversed %d",
			b.MerchantID, b.Balance.Country, b.Balance.Currency, b.Balance.Available, b.Balance.Balance,
			b.Balance.Funded, b.Balance.Processed, b.Balance.Reversed))
	}
	slices.Sort(balances)
	return counts, balances, nil
}

// keysCommand writes a new set of the secrets that every instance on one PostgreSQL must
// share, each in its own 0600 file, never over an existing one.
func keysCommand(args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("keys", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "", "directory to write master.key, card.key, notification-key.pem and admin-token into (required)")
	if err := envFlags(fs, args, getenv); err != nil {
		return err
	}
	if *out == "" {
		return errors.New("usage: payouts keys --out DIR")
	}
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
		{"master.key", []byte(randomHexKey() + "\n")},
		{cardKeyFile, []byte(randomHexKey() + "\n")},
		{notificationKeyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})},
		{"admin-token", []byte("adm_" + api.NewCredentials().APIKey[3:] + "\n")},
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
	fmt.Fprintf(stdout, "keys written to %s (0600 each). Give the same files to every instance:\n"+
		"  --master-key-file %s --card-key-file %s --notification-key-file %s --admin-token-file %s\n",
		d, filepath.Join(d, "master.key"), filepath.Join(d, cardKeyFile), filepath.Join(d, notificationKeyFile),
		filepath.Join(d, "admin-token"))
	return nil
}

func randomHexKey() string {
	var b [32]byte
	rand.Read(b[:])
	return strings.ToLower(hex.EncodeToString(b[:]))
}
