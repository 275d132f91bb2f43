package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"payouts/internal/freeport"
)

// The bbolt figures: the payouts binary as deployed (fsync on, logging to a file, the
// lifecycle worker settling every payout during the run on rails shortened to 200 ms and
// 1 s) and the bare chi+bbolt stack, side by side, driven alternately by the same external
// load generator, 64 clients signing as one merchant.

// serveFlags are the flags every payouts server of a run gets besides its addresses and
// storage: no demo merchant, and rails short enough that every payout is authorized,
// routed, submitted and settled during the run.
var serveFlags = []string{"--no-demo", "--sandbox-delay", "200ms", "--sandbox-batch-delay", "1s"}

// The bare stack's merchant credentials with -bare-signed.
const bareKey, bareSecret = "pk_bench_bare", "bench-bare-secret"

// settleWait is how long a run waits, after its creates, for the lifecycle to finish the
// payouts created, so that the garbage per payout is that of their whole life.
const settleWait = 30 * time.Second

// fillTime is how long reads first create payouts on each server, for them to read; no
// longer than a round (fillFor), so that a smoke run of a second is not mostly filling.
const fillTime = 3 * time.Second

// fillFor is how long a run of rounds of d fills the servers before it reads.
func fillFor(d time.Duration) time.Duration { return min(fillTime, d) }

type ratioConfig struct {
	mode     string // create or get
	duration time.Duration
	rounds   int
	seedFrom string // the payouts server starts on a copy of this data directory
	// serverCPU, when positive, caps each server at that many CPUs in a control group of its
	// own: each then has a machine of its own size, and the load generator does not compete
	// with it for the processors, so the ratio is that of the servers' CPU a request.
	serverCPU float64
	// bareSigned has the bare stack check each request's signature and log it, as the
	// payouts server does (baseline's -key and -secret).
	bareSigned bool
	goals      ratioGoals
}

func (c *ratioConfig) flags(fs *flag.FlagSet) {
	fs.DurationVar(&c.duration, "duration", 15*time.Second, "how long each round drives each server")
	fs.IntVar(&c.rounds, "rounds", 2, "rounds, each driving the payouts server, then the bare stack")
	fs.Float64Var(&c.goals.MinRatio, "min-ratio", 0.7, "goal: payouts at least this times the bare stack (sums of the rounds)")
	fs.Float64Var(&c.goals.MaxP99, "max-p99-ms", 25, "goal: the payouts server's worst p99 of a round under this, in ms")
	fs.BoolVar(&c.bareSigned, "bare-signed", false, "the bare stack checks each request's signature and logs it, as the payouts server does")
	fs.Float64Var(&c.serverCPU, "server-cpu", 0, "cap each server, the payouts one and the bare stack, at this many CPUs, each in a control group of its own (as root); 0 for no cap")
}

func (c ratioConfig) check() error {
	if c.duration <= 0 || c.rounds < 1 || c.serverCPU < 0 {
		return usagef("-duration must be positive, -rounds at least 1 and -server-cpu not negative")
	}
	return nil
}

func createsCommand(fs *flag.FlagSet, _ func(string) string) runFunc {
	c := &ratioConfig{mode: "create"}
	c.flags(fs)
	fs.StringVar(&c.seedFrom, "seed-from", "", "start the payouts server on a copy of this data directory, made by payouts seed (the bare stack starts empty)")
	return c.run
}

func readsCommand(fs *flag.FlagSet, _ func(string) string) runFunc {
	c := &ratioConfig{mode: "get"}
	c.flags(fs)
	fs.StringVar(&c.seedFrom, "seed-from", "", "start the payouts server on a copy of this data directory, made by payouts seed (the bare stack starts empty)")
	return c.run
}

func (c *ratioConfig) run(ctx context.Context, s *session, out io.Writer) error {
	if err := c.check(); err != nil {
		return err
	}
	if err := s.build(ctx, "loadgen", "baseline"); err != nil {
		return err
	}
	s.header(ctx, out)
	met, err := runRatio(ctx, s, out, *c)
	if err == nil && !met {
		err = errBelowGoals
	}
	return err
}

// runRatio is one creates or reads measure: both servers started afresh, ROUNDS rounds of
// DURATION on each, alternately; it prints each round and the summary, and reports whether
// the goals were met.
func runRatio(ctx context.Context, s *session, out io.Writer, c ratioConfig) (bool, error) {
	dir, err := s.subdir(c.mode)
	if err != nil {
		return false, err
	}
	paddr, err := freeport.Addr()
	if err != nil {
		return false, err
	}
	baddr, err := freeport.Addr()
	if err != nil {
		return false, err
	}
	args := []string{"serve", "--addr", paddr, "--data", filepath.Join(dir, "data"), "--admin-token", benchToken}
	if c.seedFrom != "" {
		args = append(args, "--bench-seed-from", c.seedFrom)
	}
	p, err := s.start("payouts", filepath.Join(dir, "payouts.log"), append(args, serveFlags...)...)
	if err != nil {
		return false, err
	}
	defer s.stop(p)
	bareFlags := []string{"-addr", baddr, "-db", filepath.Join(dir, "base.db")}
	if c.bareSigned {
		bareFlags = append(bareFlags, "-key", bareKey, "-secret", bareSecret)
	}
	b, err := s.start("baseline", filepath.Join(dir, "baseline.log"), bareFlags...)
	if err != nil {
		return false, err
	}
	defer s.stop(b)
	if c.serverCPU > 0 {
		for _, x := range []*proc{p, b} {
			if err := s.capCPU(x.pid(), c.serverCPU); err != nil {
				return false, err
			}
		}
		fmt.Fprintf(out, "each server capped at %v CPU in a control group of its own\n", c.serverCPU)
	}
	pbase, bbase := "http://"+paddr, "http://"+baddr
	if err := waitReady(ctx, p, pbase+"/readyz"); err != nil {
		return false, err
	}
	if err := waitReady(ctx, b, bbase+"/hello"); err != nil {
		return false, err
	}
	ms, err := fundedMerchants(ctx, pbase, benchToken, 1)
	if err != nil {
		return false, err
	}
	m := ms[0]
	pargs := []string{"-base", pbase, "-merchant", m.ID, "-key", m.Key, "-secret", m.Secret}
	bargs := []string{"-base", bbase, "-merchant", "M1"}
	if c.bareSigned {
		bargs = append(bargs, "-key", bareKey, "-secret", bareSecret)
		fmt.Fprintln(out, "the bare stack checks each request's signature and logs it, as the payouts server does")
	}

	if c.mode == "get" {
		// create payouts on both first; read n ids of each, n the smaller count
		first, err := firstPayout(ctx, pbase, m)
		if err != nil {
			return false, err
		}
		fill := fillFor(c.duration)
		a, text, err := s.load(ctx, append(pargs, "-d", fill.String())...)
		if err != nil {
			return false, fmt.Errorf("project seed failed: %v %s", err, text)
		}
		bb, text, err := s.load(ctx, append(bargs, "-d", fill.String())...)
		if err != nil {
			return false, fmt.Errorf("baseline seed failed: %v %s", err, text)
		}
		n := readCount(a.Rate, bb.Rate, fill)
		if n < 1 {
			return false, fmt.Errorf("no payouts to read: %.0f/s and %.0f/s created", a.Rate, bb.Rate)
		}
		if first == 1 {
			fmt.Fprintf(out, "reading ids 1..%d\n", n)
		} else {
			fmt.Fprintf(out, "reading ids %d..%d of the payouts server (after the stored ones), 1..%d of the bare stack\n", first, first+n-1, n)
		}
		pargs = append(pargs, "-mode", "get", "-ids", strconv.Itoa(n), "-first-id", strconv.Itoa(first))
		bargs = append(bargs, "-mode", "get", "-ids", strconv.Itoa(n))
	}

	var pr, br []loadLine
	var pcpu, bcpu []roundCPU
	d := c.duration.String()
	// drive runs one round against server x and says where its CPU went.
	drive := func(x *proc, args []string) (loadLine, string, roundCPU, error) {
		c0, m0 := cpuOf(x.pid()), machineNow()
		l, text, err := s.load(ctx, append(args, "-d", d)...)
		use := roundCPU{server: cpuOf(x.pid()) - c0, load: l.CPU, requests: l.Rate * c.duration.Seconds(), busy: machineNow().busySince(m0)}
		return l, text, use, err
	}
	before, err := readCounters(ctx, pbase, benchToken)
	if err != nil {
		return false, err
	}
	for round := 1; round <= c.rounds; round++ {
		l, text, use, err := drive(p, pargs)
		if err != nil {
			return false, fmt.Errorf("project load failed: %v", err)
		}
		fmt.Fprintf(out, "payouts  round %d: %s\n  %s\n", round, text, use)
		pr, pcpu = append(pr, l), append(pcpu, use)
		l, text, use, err = drive(b, bargs)
		if err != nil {
			return false, fmt.Errorf("baseline load failed: %v", err)
		}
		fmt.Fprintf(out, "baseline round %d: %s\n  %s\n", round, text, use)
		br, bcpu = append(br, l), append(bcpu, use)
	}
	if c.mode == "create" {
		// the payouts created during the rounds, settled (or as many as are within settleWait)
		after, err := settled(ctx, pbase, benchToken, before, settleWait)
		if err != nil {
			return false, err
		}
		fmt.Fprintln(out, perPayout(before, after))
	}
	fmt.Fprintln(out, cpuSummary(pcpu, bcpu, runtime.NumCPU(), c.serverCPU))
	line, met := ratioSummary(c.mode, pr, br, c.goals)
	fmt.Fprintln(out, line)
	return met, nil
}

// readCount is how many ids reads ask for: nine tenths of what the slower server created
// while filling, so that every id read exists on both.
func readCount(rateA, rateB float64, fill time.Duration) int {
	return int(math.Min(rateA, rateB) * fill.Seconds() * 0.9)
}

type millionConfig struct {
	ratioConfig
	payouts int
	seedDir string
}

func millionCommand(fs *flag.FlagSet, _ func(string) string) runFunc {
	c := &millionConfig{}
	c.flags(fs)
	fs.IntVar(&c.payouts, "payouts", 1_000_000, "payouts stored before the run")
	fs.StringVar(&c.seedDir, "seed-dir", "", "the seeded data directory, made once when it holds no store yet (default: seed-N in the user's cache directory, payouts-bench)")
	return c.run
}

func (c *millionConfig) run(ctx context.Context, s *session, out io.Writer) error {
	if err := c.check(); err != nil {
		return err
	}
	if c.payouts < 1 {
		return usagef("-payouts must be at least 1")
	}
	if c.seedDir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return fmt.Errorf("no cache directory for the seed (give -seed-dir): %w", err)
		}
		c.seedDir = filepath.Join(cache, "payouts-bench", "seed-"+strconv.Itoa(c.payouts))
	}
	if err := s.build(ctx, "loadgen", "baseline"); err != nil {
		return err
	}
	about, err := ensureSeed(ctx, s, c.seedDir, c.payouts)
	if err != nil {
		return err
	}
	s.header(ctx, out)
	fmt.Fprintf(out, "# store: %s (%s)\n", c.seedDir, about)
	c.seedFrom = c.seedDir
	var missed bool
	for _, mode := range []string{"create", "get"} {
		c.mode = mode
		met, err := runRatio(ctx, s, out, c.ratioConfig)
		if err != nil {
			return err
		}
		missed = missed || !met
	}
	if missed {
		return errBelowGoals
	}
	return nil
}

// seedNote is the file of a seeded directory that says how it was made.
const seedNote = "bench-seed.txt"

// ensureSeed makes dir a data directory of n settled payouts with `payouts seed`, unless it
// holds a store already, and returns how it was made. It seeds into a sibling directory and
// renames it into place, so that an interrupted seed never passes for a whole one.
func ensureSeed(ctx context.Context, s *session, dir string, n int) (string, error) {
	if exists(filepath.Join(dir, "payouts.db")) {
		note, err := os.ReadFile(filepath.Join(dir, seedNote))
		if err != nil {
			return "made before, by hand", nil
		}
		return "reused: " + strings.TrimSpace(string(note)), nil
	}
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
		return "", fmt.Errorf("-seed-dir %s holds files but no payouts.db: remove it or choose another", dir)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", err
	}
	tmp := fmt.Sprintf("%s.making-%d", dir, os.Getpid())
	defer os.RemoveAll(tmp)
	fmt.Fprintf(s.stderr, "bench: seeding %d payouts into %s (once)\n", n, dir)
	o, err := commandOutput(ctx, filepath.Join(s.bin, "payouts"), "seed", "--data", tmp, "--payouts", strconv.Itoa(n))
	if err != nil {
		return "", fmt.Errorf("payouts seed: %v: %s", err, o)
	}
	made := strings.ReplaceAll(o, tmp, dir)
	note := fmt.Sprintf("%s; commit %s, %s UTC", made, commit(ctx, s.root), time.Now().UTC().Format("2006-01-02 15:04"))
	if err := os.WriteFile(filepath.Join(tmp, seedNote), []byte(note+"\n"), 0o644); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return "", errors.Join(errors.New("the seed made, not moved into place"), err)
	}
	return "made now: " + note, nil
}
