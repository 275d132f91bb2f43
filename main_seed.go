package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"payouts/api"
	"payouts/rules"
)

// Benchmark support: `payouts seed` fills a data directory with settled payouts quickly
// (straight into the database, not through the API), and `serve --bench-seed-from DIR`
// starts an empty data directory as a copy of such a seed, so that the benchmark scripts,
// which make their own data directory, can run against a loaded store:
//
//	payouts seed --data /tmp/seed1m --payouts 1000000
//	PAYOUTS_BENCH_SEED_FROM=/tmp/seed1m ../shared/bench/ratio.sh

// seedCommand writes n settled Peru bank payouts of a new merchant "Seed" into the database
// of the data directory, with its indexes, in chunks of one transaction each.
func seedCommand(args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("seed", flag.ContinueOnError)
	fs.SetOutput(stderr)
	data := fs.String("data", "./data", "data directory")
	n := fs.Int("payouts", 1000, "how many settled payouts to store (the README's benchmarks use 1000000)")
	if err := envFlags(fs, args, getenv); err != nil {
		return err
	}
	db, sealer, err := openData(*data, false)
	if err != nil {
		return err
	}
	defer db.Close()
	m, _, err := api.CreateMerchant(db, sealFor(sealer), "", "Seed", rules.DefaultSettings(), time.Now())
	if err != nil {
		return err
	}
	body := `{"country":"PER","amount":150000,"currency":"PEN","orderId":"SEED","description":"seed",` +
		`"beneficiary":{"name":"Ana","lastName":"Rojas","email":"ana.rojas@correo.pe","document":{"type":1,"number":"45678912"}},` +
		`"destination":{"bankAccount":{"bankCode":"002","accountType":2,"accountNumber":"19312345678012"}}}`
	req, err := rules.DecodePayoutRequest([]byte(body))
	if err != nil {
		return err
	}
	route, err := rules.Check(req, m, time.Now(), rules.EndpointPayouts)
	if err != nil {
		return err
	}
	began := time.Now()
	start := began.Add(-time.Duration(*n) * time.Millisecond)
	const chunk = 20_000
	for done := 0; done < *n; done += chunk {
		ps := make([]*rules.Payout, 0, chunk)
		for i := done; i < min(done+chunk, *n); i++ {
			r := *req
			r.OrderID = "SEED-" + strconv.Itoa(i)
			at := start.Add(time.Duration(i) * time.Millisecond)
			p := rules.NewPayout(m.ID, &r, route, at)
			p.Move(rules.StatusAuthorized, at, "", "")
			p.Move(rules.StatusWaitingRouting, at, "", "")
			p.Move(rules.StatusPendingBank, at.Add(time.Millisecond), "", "submitted to "+string(p.Channel))
			p.Move(rules.StatusProcessed, at.Add(time.Second), "", "")
			p.RailRef = "SIM-SEED-" + strconv.Itoa(i)
			ps = append(ps, p)
		}
		if err := db.ImportPayouts(ps); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "seed: %d settled payouts of merchant %s stored in %s in %s\n", *n, m.ID, *data, time.Since(began).Round(time.Millisecond))
	return nil
}

// seedDataDir copies the files of a seeded data directory into dir when dir holds no
// database yet (serve --bench-seed-from).
func seedDataDir(dir, from string) error {
	if _, err := os.Stat(filepath.Join(dir, "payouts.db")); err == nil {
		return nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if _, err := os.Stat(filepath.Join(from, "payouts.db")); err != nil {
		return fmt.Errorf("--bench-seed-from: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	entries, err := os.ReadDir(from)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		if err := copyFile(filepath.Join(from, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
