package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"

	"payouts/internal/server"
	"payouts/store/bolt"
)

// checkCommand is `payouts check`: bbolt's full consistency check of a data
// directory's file, then the ledger check of every balance from scratch; on PostgreSQL
// (--database) the ledger check. It prints what it found and fails (exit 1) on any finding.
// The server must be stopped: the file is opened read-only, behind the server's lock.
var checkCommand = &Command{
	Name:       "check",
	Usage:      "--data DIR",
	Short:      "full consistency check of a stopped server's database and its ledger (exit 1 on a finding)",
	ReadsStore: true,
	Flags:      checkFlags,
}

func checkFlags(fs *flag.FlagSet) Runner {
	data := fs.String("data", "./data", "data directory whose payouts.db to check (with the server stopped)")
	database := fs.String("database", "", "a postgres:// URL to check instead (the ledger check)")
	return func(ctx context.Context, env Env, _ []string) error {
		var findings []string
		where := filepath.Join(*data, "payouts.db")
		if *database != "" {
			if !server.IsPostgresURL(*database) {
				return errors.New("check: --database must be a postgres:// URL")
			}
			where = server.RedactURL(*database)
			db, err := server.OpenEngine(ctx, *database)
			if err != nil {
				return fmt.Errorf("check: %w", err)
			}
			defer db.Close(ctx)
			if err := db.CheckAllLedgers(ctx); err != nil {
				findings = append(findings, "ledger: "+err.Error())
			}
		} else {
			structure, err := bolt.Check(where)
			if err != nil {
				return fmt.Errorf("check: %w", err)
			}
			for _, f := range structure {
				findings = append(findings, "structure: "+f)
			}
			if len(structure) == 0 { // the ledger check reads records through a sound structure only
				fmt.Fprintf(env.Stdout, "check: %s: structure sound (bbolt's full consistency check)\n", where)
				db, err := bolt.Open(where, bolt.Options{ReadOnly: true})
				if err != nil {
					return fmt.Errorf("check: %w", err)
				}
				defer db.Close(ctx)
				if err := db.CheckAllLedgers(ctx); err != nil {
					findings = append(findings, "ledger: "+err.Error())
				}
			}
		}
		for _, f := range findings {
			fmt.Fprintf(env.Stdout, "check: %s: %s\n", where, f)
		}
		if len(findings) > 0 {
			return fmt.Errorf("check: %d finding(s) in %s: restore it from a backup (`payouts backup --out FILE` writes one)", len(findings), where)
		}
		fmt.Fprintf(env.Stdout, "check: %s: ledger sound (every balance against its payouts)\n", where)
		return nil
	}
}
