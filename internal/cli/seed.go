package cli

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"time"

	"payouts/internal/server"
	"payouts/rules"
	"payouts/rules/merchants"
)

// Benchmark support: `payouts seed` fills a data directory with settled payouts quickly
// (straight into the database, not through the API), and `serve --bench-seed-from DIR`
// starts an empty data directory as a copy of such a seed, so that the benchmark scripts,
// which make their own data directory, can run against a loaded store:
//
//	payouts seed --data /tmp/seed1m --payouts 1000000
//	go run ./bench creates -seed-from /tmp/seed1m

// seedCommand writes n settled Peru bank payouts of a new merchant "Seed" into the database
// of the data directory, with its indexes, in chunks of one transaction each.
var seedCommand = &Command{
	Name:  "seed",
	Usage: "--data DIR [--payouts N]",
	Short: "benchmarks: store N settled payouts straight into DIR (docs/guides/performance.md)",
	Flags: seedFlags,
}

func seedFlags(fs *flag.FlagSet) Runner {
	data := fs.String("data", "./data", "data directory")
	n := fs.Int("payouts", 1000, "how many settled payouts to store (the benchmarks of a loaded store use 1000000)")
	return func(ctx context.Context, env Env, _ []string) error {
		db, sealer, err := server.Open(context.Background(), server.Config{Storage: server.StorageConfig{Data: *data}})
		if err != nil {
			return err
		}
		defer db.Close(ctx)
		m, _, err := merchants.New(db, sealer).Create(ctx, "", "Seed", rules.DefaultSettings(), time.Now())
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
			if err := db.ImportPayouts(ctx, ps); err != nil {
				return err
			}
		}
		fmt.Fprintf(env.Stdout, "seed: %d settled payouts of merchant %s stored in %s in %s\n", *n, m.ID, *data, time.Since(began).Round(time.Millisecond))
		return nil
	}
}
