package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"payouts/internal/server"
	"payouts/rules"
	"payouts/store/bolt"
)

// reconcileCommand is `payouts reconcile`: for one merchant's balance and
// a range of days (UTC−5), it proves that each day's closing is the next day's opening, that
// the ledger entries add up to the balance, and that each payout moved as its final state
// says (rules.Reconcile); it names every difference and exits 1 when there is one. On a data
// directory the server must be stopped (the file is read behind its lock); on PostgreSQL it
// reads while the service runs.
var reconcileCommand = &Command{
	Name:       "reconcile",
	Usage:      "--merchant M --currency C [--from D --to D]",
	Short:      "prove a balance's days add up from its ledger entries (exit 1 on a difference)",
	Required:   []string{"merchant", "currency"},
	ReadsStore: true,
	Flags:      reconcileFlags,
}

func reconcileFlags(fs *flag.FlagSet) Runner {
	data := fs.String("data", "./data", "data directory whose payouts.db to reconcile (with the server stopped)")
	var database string
	fs.StringVar(&database, "database-url", "", "a postgres:// URL to reconcile instead")
	fs.StringVar(&database, "database", "", "the same as --database-url")
	merchant := fs.String("merchant", "", "the merchant's id (required)")
	currency := fs.String("currency", "", "the balance's currency: COP, PEN or USD (required)")
	from := fs.String("from", "", "first day, YYYY-MM-DD in UTC−5 (default: the day of the balance's first entry)")
	to := fs.String("to", "", "last day, YYYY-MM-DD in UTC−5 (default: the ledger's day: today on the service's clock, or the day of the last entry if later)")
	asJSON := fs.Bool("json", false, "print the reconciliation as JSON (days, findings) instead of text")
	return func(ctx context.Context, env Env, _ []string) error {
		var db rules.Storage
		var err error
		if database != "" {
			if !server.IsPostgresURL(database) {
				return errors.New("reconcile: --database-url must be a postgres:// URL")
			}
			db, err = server.OpenEngine(ctx, database)
		} else {
			db, err = bolt.Open(filepath.Join(*data, "payouts.db"), bolt.Options{ReadOnly: true})
		}
		if err != nil {
			return fmt.Errorf("reconcile: %w", err)
		}
		defer db.Close(ctx)
		if _, err := db.Merchant(ctx, *merchant); err != nil {
			return fmt.Errorf("reconcile: merchant %s: %w", *merchant, err)
		}
		// The service's clock, the sandbox's test clock when it runs ahead, as the statements
		// read it; the ledger's days reach the last entry's in any case (rules.LedgerNow).
		now := time.Now()
		if off, err := db.SandboxClockOffset(ctx); err == nil && off > 0 {
			now = now.Add(off)
		}
		r, err := rules.ReconcileBalance(ctx, db, *merchant, *currency, *from, *to, now)
		if err != nil {
			return fmt.Errorf("reconcile: %w", err)
		}
		if *asJSON {
			enc := json.NewEncoder(env.Stdout)
			enc.SetIndent("", "  ")
			if err := enc.Encode(r); err != nil {
				return err
			}
		} else {
			printReconciliation(env.Stdout, r)
		}
		if len(r.Findings) > 0 {
			return fmt.Errorf("reconcile: %d difference(s) in merchant %s's %s ledger", len(r.Findings), r.MerchantID, r.Currency)
		}
		return nil
	}
}

// printReconciliation writes the days and the findings as text.
func printReconciliation(w io.Writer, r rules.Reconciliation) {
	fmt.Fprintf(w, "reconcile: merchant %s, %s, %s to %s (days of UTC−5): %d entries, %d payouts checked\n",
		r.MerchantID, r.Currency, r.From, r.To, r.Entries, r.Payouts)
	for _, d := range r.Days {
		fmt.Fprintf(w, "  %s  opening %d  funded %d  withdrawn %d  paid %d  reversed %d  opened %d  closing %d  (available %d → %d)\n",
			d.Date, d.Opening, d.Funded, d.Withdrawn, d.Paid, d.Reversed, d.Opened, d.Closing, d.OpeningAvailable, d.ClosingAvailable)
	}
	for _, f := range r.Findings {
		fmt.Fprintf(w, "difference: %s\n", f)
	}
	if len(r.Findings) == 0 {
		fmt.Fprintf(w, "reconcile: it adds up: each day's closing is the next day's opening, the entries end on the balance, "+
			"and every payout moved as its state says\n")
	}
}
