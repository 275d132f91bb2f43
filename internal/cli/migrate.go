package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"

	"payouts/internal/server"
	"payouts/rules"
)

// migrateCommand copies a store into an empty one, either engine to the other, and checks
// the copy: the same records of every kind, the same balances, the ledger invariant.
var migrateCommand = &Command{
	Name:     "migrate",
	Usage:    "--from SRC --to DST",
	Short:    "copy a store into an empty one: a data directory or a postgres:// URL, either way",
	Required: []string{"from", "to"},
	Flags:    migrateFlags,
}

func migrateFlags(fs *flag.FlagSet) Runner {
	from := fs.String("from", "", "the store to copy: a data directory (./data) or a postgres:// URL (required)")
	to := fs.String("to", "", "the empty store to fill: a postgres:// URL or a data directory (required)")
	return func(ctx context.Context, env Env, _ []string) error {
		if *from == *to {
			return errors.New("migrate: --from and --to are the same store")
		}
		if !server.IsPostgresURL(*from) {
			if _, err := os.Stat(filepath.Join(*from, "payouts.db")); err != nil {
				return fmt.Errorf("migrate: --from %s: no database there: %w", *from, err)
			}
		}
		src, err := server.OpenEngine(ctx, *from)
		if err != nil {
			return fmt.Errorf("migrate: open --from: %w", err)
		}
		defer src.Close(ctx)
		if !server.IsPostgresURL(*to) {
			if err := os.MkdirAll(*to, 0o700); err != nil {
				return err
			}
		}
		dst, err := server.OpenEngine(ctx, *to)
		if err != nil {
			return fmt.Errorf("migrate: open --to: %w", err)
		}
		defer dst.Close(ctx)
		counts, err := migrateStore(ctx, src, dst)
		if err != nil {
			return err
		}
		// The copy's secrets are sealed with the source's keys: it records their fingerprints,
		// so that a server started on it before the keys are copied refuses instead of making new ones.
		for _, name := range []string{"master", "card", "notification"} {
			fp, err := src.KeyFingerprint(ctx, name)
			if err == nil && fp != "" {
				_, err = dst.RecordKeyFingerprint(ctx, name, fp)
			}
			if err != nil {
				return fmt.Errorf("migrate: key fingerprints: %w", err)
			}
		}
		fmt.Fprintf(env.Stdout, "migrate: copied %s to %s and checked it:\n", describeStore(*from), describeStore(*to))
		for _, k := range rules.DumpKinds {
			if counts[k] > 0 {
				fmt.Fprintf(env.Stdout, "  %-17s %d\n", k, counts[k])
			}
		}
		fmt.Fprintln(env.Stdout, "  balances equal, ledger invariant holds on the copy")
		if !server.IsPostgresURL(*from) {
			fmt.Fprintf(env.Stdout, "Secrets stay sealed with the keys of %s: start every instance with --master-key-file %s "+
				"--card-key-file %s --notification-key-file %s (and --admin-token-file %s to keep the admin token).\n",
				*from, filepath.Join(*from, "master.key"), filepath.Join(*from, server.CardKeyFile),
				filepath.Join(*from, server.NotificationKeyFile), filepath.Join(*from, "admin-token"))
		} else {
			fmt.Fprintf(env.Stdout, "Secrets stay sealed with the instances' keys: copy them into %s as master.key, %s, %s and admin-token "+
				"(or pass the same --master-key-file, --card-key-file and --notification-key-file).\n", *to, server.CardKeyFile, server.NotificationKeyFile)
		}
		return nil
	}
}

// describeStore names a store for the output, without a password.
func describeStore(where string) string {
	if server.IsPostgresURL(where) {
		return server.RedactURL(where)
	}
	return where
}

// migrateStore copies src into the empty dst and checks the copy: the same number of
// records of every kind, the same balances (with their ledger totals), and the ledger
// invariant from scratch. It returns the counts.
func migrateStore(ctx context.Context, src, dst rules.Storage) (map[string]int, error) {
	var recs []rules.DumpRecord
	if err := src.Dump(ctx, func(r rules.DumpRecord) error { recs = append(recs, r); return nil }); err != nil {
		return nil, fmt.Errorf("migrate: read the source: %w", err)
	}
	if err := dst.Restore(ctx, recs); err != nil {
		return nil, fmt.Errorf("migrate: write the copy: %w", err)
	}
	want, wantBalances, err := summarize(recs)
	if err != nil {
		return nil, err
	}
	var copied []rules.DumpRecord
	if err := dst.Dump(ctx, func(r rules.DumpRecord) error { copied = append(copied, r); return nil }); err != nil {
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
	if err := dst.CheckAllLedgers(ctx); err != nil {
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
