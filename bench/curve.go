package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// The scaling curve: 1 to -max-instances payouts instances on PostgreSQL, each capped at
// -instance-cpu CPUs (a machine of its own size, as in production, while the database, the
// proxy and the load generators share the rest of this one), for each merchant count; a
// Markdown table for the docs at the end.

type curveConfig struct {
	pgConfig
	maxInstances int
	merchantList string
}

func curveCommand(fs *flag.FlagSet, getenv func(string) string) runFunc {
	c := &curveConfig{}
	c.sharedFlags(fs, getenv)
	fs.Float64Var(&c.instanceCPU, "instance-cpu", 0.35, "cap each payouts instance at this many CPUs (as root); 0 for no cap")
	fs.IntVar(&c.maxInstances, "max-instances", 4, "run 1, 2, … this many instances")
	fs.StringVar(&c.merchantList, "merchants", "1,8", "merchant counts, comma-separated: the curve is run for each")
	return c.run
}

// curvePoint is one run of the curve.
type curvePoint struct {
	instances, merchants int
	rate, p99            float64
	cpuInstances         float64 // µs a create
	cpuPostgres          float64
}

func (c *curveConfig) run(ctx context.Context, s *session, out io.Writer) error {
	if err := c.check(); err != nil {
		return err
	}
	merchants, err := parseCounts(c.merchantList)
	if err != nil || c.maxInstances < 1 || c.maxInstances > totalClients {
		return usagef("-merchants must be counts such as 1,8 and -max-instances 1 to %d", totalClients)
	}
	if err := s.build(ctx, "loadgen", "latproxy"); err != nil {
		return err
	}
	r, err := newPGRig(ctx, s, c.databaseURL, c.delay)
	if err != nil {
		return err
	}
	header := machineLine(ctx, s.root, time.Now())
	fmt.Fprintln(out, header)
	var points []curvePoint
	for _, k := range merchants {
		for n := 1; n <= c.maxInstances; n++ {
			run, err := r.instances(ctx, n, k, false, c.instanceCPU, c.duration)
			if err != nil {
				return err
			}
			pt := curvePoint{instances: n, merchants: k,
				cpuInstances: cpuPerCreate(run.cpuInstances, run.creates()),
				cpuPostgres:  cpuPerCreate(run.cpuPostgres, run.creates())}
			for i, l := range run.lines {
				pt.rate += l.Rate
				pt.p99 = math.Max(pt.p99, l.P99)
				fmt.Fprintf(out, "%d instances, %d merchants, instance %d: %s\n", n, k, i+1, run.texts[i])
			}
			points = append(points, pt)
		}
	}
	fmt.Fprintln(out)
	fmt.Fprintln(out, header)
	cpu := "no CPU cap"
	if c.instanceCPU > 0 {
		cpu = "each instance capped at " + strconv.FormatFloat(c.instanceCPU, 'f', -1, 64) + " CPU"
	}
	fmt.Fprintf(out, "# postgres at %s each way, %s, %d clients, %s a run\n", c.delay, cpu, totalClients, c.duration)
	fmt.Fprint(out, curveTable(points))
	return nil
}

// curveTable is the curve as a Markdown table; × one is against the one-instance run of
// the same merchant count.
func curveTable(points []curvePoint) string {
	var b strings.Builder
	b.WriteString("| instances | merchants | creates/s | × one | p99 | CPU per create (instances + postgres) |\n")
	b.WriteString("|---|---|---|---|---|---|\n")
	one := map[int]float64{}
	for _, p := range points {
		if p.instances == 1 {
			one[p.merchants] = p.rate
		}
	}
	for _, p := range points {
		fmt.Fprintf(&b, "| %d | %d | %s | %.2f | %.1f ms | %.0f + %.0f µs |\n",
			p.instances, p.merchants, thousands(p.rate), ratio(p.rate, one[p.merchants]), p.p99, p.cpuInstances, p.cpuPostgres)
	}
	return b.String()
}

// thousands prints a rate rounded to a whole number with thousands separated, as the docs do.
func thousands(v float64) string {
	s := strconv.FormatInt(int64(math.Round(v)), 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func parseCounts(s string) ([]int, error) {
	var ns []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("not a count: %q", f)
		}
		ns = append(ns, n)
	}
	return ns, nil
}
