package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"payouts/internal/freeport"
)

// The PostgreSQL figures: every connection to the database goes through the latency proxy,
// which delays each direction by -delay (250us: a select 1 takes 0.67 ms, a database in the
// same data centre); 64 clients in other processes, spread over the instances and merchants;
// fsync on, the lifecycle worker settling every payout during the run. Each run has a new
// database of its own.

// totalClients is the load of every figure, shared among the instances.
const totalClients = 64

type pgConfig struct {
	databaseURL string
	delay       string
	duration    time.Duration
	instances   int
	instanceCPU float64
	merchants   int
	// ownMerchant gives each of the N instances' clients a merchant of their own, so that no
	// balance row is shared between instances: against the same run without it, what the
	// instances lose waiting on each other's balance locks.
	ownMerchant bool
	goals       pgGoals
}

// sharedFlags are the flags of pg and curve.
func (c *pgConfig) sharedFlags(fs *flag.FlagSet, getenv func(string) string) {
	fs.StringVar(&c.databaseURL, "database-url", getenv("PAYOUTS_BENCH_DATABASE_URL"), "postgres:// URL of a throw-away server: databases named "+dbPrefix+"… are created and dropped on it (default $PAYOUTS_BENCH_DATABASE_URL)")
	fs.StringVar(&c.delay, "delay", "250us", "delay of each direction between the servers and PostgreSQL (0 for none)")
	fs.DurationVar(&c.duration, "duration", 15*time.Second, "how long each run drives the servers")
}

func (c pgConfig) check() error {
	if c.databaseURL == "" {
		return usagef("give -database-url or set PAYOUTS_BENCH_DATABASE_URL to a PostgreSQL server URL (a throw-away one: databases are created and dropped)")
	}
	if _, err := time.ParseDuration(c.delay); err != nil {
		return usagef("-delay: %v", err)
	}
	if c.duration <= 0 || c.instanceCPU < 0 {
		return usagef("-duration must be positive and -instance-cpu not negative")
	}
	return nil
}

func pgCommand(fs *flag.FlagSet, getenv func(string) string) runFunc {
	c := &pgConfig{}
	c.sharedFlags(fs, getenv)
	fs.IntVar(&c.instances, "instances", 2, "instances of the third run, 64/N clients on each")
	fs.Float64Var(&c.instanceCPU, "instance-cpu", 0, "cap each payouts instance at this many CPUs, each in a control group of its own (as root); 0 for no cap")
	fs.IntVar(&c.merchants, "merchants", 1, "merchants the clients are spread over (the bare stack's too)")
	fs.BoolVar(&c.ownMerchant, "merchant-per-instance", false, "in the N-instance run, instance i's clients sign as merchant i only (needs -merchants equal to -instances): no balance row shared between instances")
	fs.Float64Var(&c.goals.MinRatio, "min-ratio", 3.0, "goal: one instance at least this times the bare stack")
	fs.Float64Var(&c.goals.MinScale, "min-scale", 1.0, "goal: N instances at least this times one")
	fs.Float64Var(&c.goals.MaxP99, "max-p99-ms", 100, "goal: one instance's p99 under this, in ms")
	return c.run
}

func (c *pgConfig) run(ctx context.Context, s *session, out io.Writer) error {
	if err := c.check(); err != nil {
		return err
	}
	if c.instances < 1 || c.instances > totalClients || c.merchants < 1 {
		return usagef("-instances must be 1 to %d and -merchants at least 1", totalClients)
	}
	if c.ownMerchant && c.merchants != c.instances {
		return usagef("-merchant-per-instance needs -merchants equal to -instances (%d)", c.instances)
	}
	if err := s.build(ctx, "loadgen", "baseline-pg", "latproxy"); err != nil {
		return err
	}
	r, err := newPGRig(ctx, s, c.databaseURL, c.delay)
	if err != nil {
		return err
	}
	s.header(ctx, out)
	f := pgFigures{Delay: c.delay, InstanceCPU: c.instanceCPU, Merchants: c.merchants, OwnMerchant: c.ownMerchant}

	bare, text, err := r.bare(ctx, c.merchants, c.duration)
	if err != nil {
		return fmt.Errorf("bare stack load failed: %v", err)
	}
	fmt.Fprintf(out, "bare chi+pgx:            %s\n", text)
	f.Bare = bare

	one, err := r.instances(ctx, 1, c.merchants, false, c.instanceCPU, c.duration)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "payouts, one instance:   %s\n", one.texts[0])
	fmt.Fprintf(out, "  cpu per create: instance %.0f us, local postgres %.0f us (0 when the server is elsewhere)\n",
		cpuPerCreate(one.cpuInstances, one.creates()), cpuPerCreate(one.cpuPostgres, one.creates()))
	f.One = one.lines[0]

	many, err := r.instances(ctx, c.instances, c.merchants, c.ownMerchant, c.instanceCPU, c.duration)
	if err != nil {
		return err
	}
	for i, t := range many.texts {
		if i == 0 {
			fmt.Fprintf(out, "payouts, %d instances: %s\n", c.instances, t)
		} else {
			fmt.Fprintf(out, "                      %s\n", t)
		}
	}
	fmt.Fprintf(out, "  cpu per create: instances %.0f us, local postgres %.0f us\n",
		cpuPerCreate(many.cpuInstances, many.creates()), cpuPerCreate(many.cpuPostgres, many.creates()))
	f.Many = many.lines

	line, met := pgSummary(f, c.goals)
	fmt.Fprintln(out, line)
	if !met {
		return errBelowGoals
	}
	return nil
}

// pgRig is what the PostgreSQL runs share: the server, the proxy in front of it, the keys
// every instance is given, and the local postgres user whose processes' CPU is counted.
type pgRig struct {
	s        *session
	adminURL string
	proxy    string // the proxy's address
	keys     string // the directory `payouts keys` wrote
	token    string // the admin token among them
	pgUID    int
}

func newPGRig(ctx context.Context, s *session, adminURL, delay string) (*pgRig, error) {
	upstream, err := upstreamOf(adminURL)
	if err != nil {
		return nil, err
	}
	r := &pgRig{s: s, adminURL: adminURL, keys: filepath.Join(s.dir, "keys"), pgUID: postgresUID()}
	if o, err := commandOutput(ctx, filepath.Join(s.bin, "payouts"), "keys", "--out", r.keys); err != nil {
		return nil, fmt.Errorf("payouts keys failed: %v %s", err, o)
	}
	tok, err := os.ReadFile(filepath.Join(r.keys, "admin-token"))
	if err != nil {
		return nil, err
	}
	r.token = strings.TrimSpace(string(tok))
	if r.proxy, err = freeport.Addr(); err != nil {
		return nil, err
	}
	p, err := s.start("latproxy", filepath.Join(s.dir, "latproxy.log"), "-listen", r.proxy, "-to", upstream, "-delay", delay)
	if err != nil {
		return nil, err
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		c, err := net.DialTimeout("tcp", r.proxy, time.Second)
		if err == nil {
			c.Close()
			break
		}
		if p.exited() || time.Now().After(deadline) {
			return nil, fmt.Errorf("the latency proxy does not listen: %s", p.tail())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return r, nil
}

// database is a new database's URL through the proxy.
func (r *pgRig) database(ctx context.Context) (string, error) {
	name, err := r.s.newDatabase(ctx, r.adminURL)
	if err != nil {
		return "", err
	}
	return throughProxy(r.adminURL, r.proxy, name)
}

// bare drives the bare chi+pgx stack on a new database with all the clients.
func (r *pgRig) bare(ctx context.Context, merchants int, d time.Duration) (loadLine, string, error) {
	db, err := r.database(ctx)
	if err != nil {
		return loadLine{}, "", err
	}
	dir, err := r.s.subdir("bare-pg")
	if err != nil {
		return loadLine{}, "", err
	}
	addr, err := freeport.Addr()
	if err != nil {
		return loadLine{}, "", err
	}
	p, err := r.s.start("baseline-pg", filepath.Join(dir, "baseline-pg.log"), "-addr", addr, "-db", db)
	if err != nil {
		return loadLine{}, "", err
	}
	defer r.s.stop(p)
	if err := waitReady(ctx, p, "http://"+addr+"/hello"); err != nil {
		return loadLine{}, "", err
	}
	// the bare stack takes any merchant id, and keeps a balance row for each
	names := make([]merchant, merchants)
	for i := range names {
		names[i] = merchant{ID: "M" + strconv.Itoa(i+1)}
	}
	return r.s.load(ctx, "-base", "http://"+addr, "-merchants", merchantsFlag(names), "-c", strconv.Itoa(totalClients), "-d", d.String())
}

// instancesRun is what a run of N instances measured.
type instancesRun struct {
	lines    []loadLine
	texts    []string
	duration time.Duration
	// CPU seconds during the load: the instances', and the local postgres processes'
	cpuInstances, cpuPostgres float64
}

// creates is how many payouts the run created, as ../shared/bench/ratio-pg.sh counts them.
func (r instancesRun) creates() float64 {
	var sum float64
	for _, l := range r.lines {
		sum += l.Rate
	}
	return sum * r.duration.Seconds()
}

// instances starts n payouts instances on a new database (each capped at cpu CPUs when cpu
// > 0), makes and funds the merchants, drives each instance with 64/n clients spread over
// the merchants (or, with own, instance i's over merchant i alone), and stops them.
func (r *pgRig) instances(ctx context.Context, n, merchants int, own bool, cpu float64, d time.Duration) (instancesRun, error) {
	run := instancesRun{duration: d}
	db, err := r.database(ctx)
	if err != nil {
		return run, err
	}
	dir, err := r.s.subdir(fmt.Sprintf("pg-%d", n))
	if err != nil {
		return run, err
	}
	var ps []*proc
	defer func() { r.s.stop(ps...) }()
	var bases []string
	for i := 1; i <= n; i++ {
		addr, err := freeport.Addr()
		if err != nil {
			return run, err
		}
		name := "payouts-" + strconv.Itoa(i)
		args := []string{"serve", "--addr", addr, "--data", filepath.Join(dir, "data-"+strconv.Itoa(i)),
			"--database", db, "--instance", "bench-" + strconv.Itoa(i),
			"--master-key-file", filepath.Join(r.keys, "master.key"), "--card-key-file", filepath.Join(r.keys, "card.key"),
			"--notification-key-file", filepath.Join(r.keys, "notification-key.pem"),
			"--admin-token-file", filepath.Join(r.keys, "admin-token")}
		p, err := r.s.start("payouts", filepath.Join(dir, name+".log"), append(args, serveFlags...)...)
		if err != nil {
			return run, err
		}
		ps = append(ps, p)
		if cpu > 0 {
			if err := r.s.capCPU(p.pid(), cpu); err != nil {
				return run, err
			}
		}
		bases = append(bases, "http://"+addr)
	}
	for i, p := range ps {
		if err := waitReady(ctx, p, bases[i]+"/readyz"); err != nil {
			return run, err
		}
	}
	ms, err := fundedMerchants(ctx, bases[0], r.token, merchants)
	if err != nil {
		return run, err
	}
	argss := make([][]string, n)
	for i, base := range bases {
		mine := ms
		if own {
			mine = ms[i : i+1]
		}
		argss[i] = []string{"-base", base, "-merchants", merchantsFlag(mine), "-c", strconv.Itoa(totalClients / n), "-d", d.String()}
	}
	i0, g0 := r.cpuOfInstances(ps), cpuOfUser(r.pgUID)
	run.lines, run.texts, err = r.s.loadEach(ctx, argss)
	if err != nil {
		return run, fmt.Errorf("project load failed: %v", err)
	}
	run.cpuInstances, run.cpuPostgres = r.cpuOfInstances(ps)-i0, cpuOfUser(r.pgUID)-g0
	return run, nil
}

func (r *pgRig) cpuOfInstances(ps []*proc) float64 {
	var sum float64
	for _, p := range ps {
		sum += cpuOf(p.pid())
	}
	return sum
}

// commandOutput runs a program of the session to its end and returns what it printed.
func commandOutput(ctx context.Context, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = childEnv(os.Environ())
	o, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(o)), err
}
