package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"payouts/internal/freeport"
)

// The latency figure: the payouts server and the bare chi+bbolt stack at fixed rates, open
// loop (openloop/), each request timed from when it was due. ratio.go's closed loop measures
// saturation, where p99 is the clients' queue; merchants send at a rate, and what they see is
// the tail at that rate.

type latencyConfig struct {
	mode     string // create or get
	rates    []float64
	duration time.Duration
	// rounds is how many times each rate drives each server, alternately; the verdict is on
	// the medians, so that one run disturbed by the machine's neighbours does not decide it.
	rounds   int
	seedFrom string
	// slowTrace, when set, is the payouts server's --slow-trace: the execution trace of each
	// request over the p99.9 goal lands there, to find what made it slow.
	slowTrace string
	goals     latencyGoals
}

// latencyGoals: at each rate the payouts server's p99 at most MaxP99Ratio times the bare
// stack's (but MinP99 ms is always allowed), its p99.9 at most MaxP999 ms, nothing failed.
type latencyGoals struct{ MaxP99Ratio, MinP99, MaxP999 float64 }

func latencyCommand(fs *flag.FlagSet, _ func(string) string) runFunc {
	c := &latencyConfig{}
	fs.StringVar(&c.mode, "mode", "create", "create: signed POST /payouts; get: signed GET /payouts/{id} of payouts created first")
	fs.Func("rates", "requests a second, comma-separated (default 500,1000,2000; get: 2000,5000)", func(v string) error {
		c.rates = nil
		for _, f := range strings.Split(v, ",") {
			r, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil || r <= 0 {
				return fmt.Errorf("a rate must be a positive number, not %q", f)
			}
			c.rates = append(c.rates, r)
		}
		return nil
	})
	fs.DurationVar(&c.duration, "duration", 20*time.Second, "how long each rate drives each server")
	fs.IntVar(&c.rounds, "rounds", 1, "how many times each rate drives each server, alternately; the goals are judged on the medians of the runs")
	fs.StringVar(&c.seedFrom, "seed-from", "", "start the payouts server on a copy of this data directory, made by payouts seed (the bare stack starts empty)")
	fs.Float64Var(&c.goals.MaxP99Ratio, "max-p99-ratio", 1.2, "goal: the payouts server's p99 at most this times the bare stack's")
	fs.Float64Var(&c.goals.MinP99, "min-p99-ms", 5, "goal: a p99 up to this many ms always meets the goal above")
	fs.Float64Var(&c.goals.MaxP999, "max-p999-ms", 25, "goal: the payouts server's p99.9 at most this, in ms")
	fs.StringVar(&c.slowTrace, "slow-trace", "", "keep the payouts server's execution trace of each request slower than the p99.9 goal in this directory (serve --slow-trace)")
	return c.run
}

func (c *latencyConfig) run(ctx context.Context, s *session, out io.Writer) error {
	if c.mode != "create" && c.mode != "get" {
		return usagef("latency: -mode is create or get")
	}
	if c.duration <= 0 {
		return usagef("latency: -duration must be positive")
	}
	if c.rounds < 1 {
		return usagef("latency: -rounds must be at least 1")
	}
	if c.rates == nil {
		c.rates = []float64{500, 1000, 2000}
		if c.mode == "get" {
			c.rates = []float64{2000, 5000}
		}
	}
	if err := s.build(ctx, "openloop", "baseline"); err != nil {
		return err
	}
	s.header(ctx, out)
	dir, err := s.subdir("latency")
	if err != nil {
		return err
	}
	paddr, err := freeport.Addr()
	if err != nil {
		return err
	}
	baddr, err := freeport.Addr()
	if err != nil {
		return err
	}
	args := []string{"serve", "--addr", paddr, "--data", filepath.Join(dir, "data"), "--admin-token", benchToken}
	if c.seedFrom != "" {
		args = append(args, "--bench-seed-from", c.seedFrom)
	}
	if c.slowTrace != "" {
		over := time.Duration(c.goals.MaxP999 * float64(time.Millisecond))
		args = append(args, "--slow-trace", c.slowTrace, "--slow-trace-over", over.String())
	}
	p, err := s.start("payouts", filepath.Join(dir, "payouts.log"), append(args, serveFlags...)...)
	if err != nil {
		return err
	}
	defer s.stop(p)
	b, err := s.start("baseline", filepath.Join(dir, "baseline.log"), "-addr", baddr, "-db", filepath.Join(dir, "base.db"))
	if err != nil {
		return err
	}
	defer s.stop(b)
	pbase, bbase := "http://"+paddr, "http://"+baddr
	if err := waitReady(ctx, p, pbase+"/readyz"); err != nil {
		return err
	}
	if err := waitReady(ctx, b, bbase+"/hello"); err != nil {
		return err
	}
	ms, err := fundedMerchants(ctx, pbase, benchToken, 1)
	if err != nil {
		return err
	}
	m := ms[0]
	pwho := []string{"-base", pbase, "-merchant", m.ID, "-key", m.Key, "-secret", m.Secret}
	bwho := []string{"-base", bbase, "-merchant", "M1"}
	pargs := append(slices.Clip(pwho), "-mode", c.mode)
	bargs := append(slices.Clip(bwho), "-mode", c.mode)
	if c.mode == "get" {
		// payouts to read on both sides, created first at a rate both keep
		first, err := firstPayout(ctx, pbase, m)
		if err != nil {
			return err
		}
		fill := []string{"-mode", "create", "-rate", "1000", "-d", fillFor(c.duration).String()}
		a, _, err := s.openloop(ctx, append(slices.Clip(pwho), fill...)...)
		if err != nil {
			return fmt.Errorf("project seed failed: %v", err)
		}
		bb, _, err := s.openloop(ctx, append(slices.Clip(bwho), fill...)...)
		if err != nil {
			return fmt.Errorf("baseline seed failed: %v", err)
		}
		n := int(math.Min(float64(a.OK), float64(bb.OK)) * 0.9)
		if n < 1 {
			return fmt.Errorf("no payouts to read")
		}
		fmt.Fprintf(out, "reading %d ids of each\n", n)
		pargs = append(pargs, "-ids", strconv.Itoa(n), "-first-id", strconv.Itoa(first))
		bargs = append(bargs, "-ids", strconv.Itoa(n))
	}
	d := c.duration.String()
	var lines []string
	met := true
	for i, r := range c.rates {
		rate := strconv.FormatFloat(r, 'f', -1, 64)
		var as, bs []openLine
		var stolen float64 // the most the hypervisor took in a run of this rate, 0 to 1
		for round := range c.rounds {
			if i > 0 || round > 0 {
				// let the previous run's settlement and the page cache quiet down
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(min(2*time.Second, c.duration)):
				}
			}
			before, err := readCounters(ctx, pbase, benchToken)
			if err != nil {
				return err
			}
			m0 := machineNow()
			a, text, err := s.openloop(ctx, append(pargs, "-rate", rate, "-d", d)...)
			if err != nil {
				return fmt.Errorf("project load failed: %v", err)
			}
			steal := machineNow().stealSince(m0)
			stolen = max(stolen, steal)
			fmt.Fprintf(out, "rate %s payouts: %s host_steal=%.1f%%\n", rate, text, steal*100)
			if c.mode == "create" {
				after, err := settled(ctx, pbase, benchToken, before, settleWait)
				if err != nil {
					return err
				}
				fmt.Fprintf(out, "  %s\n", perPayout(before, after))
			}
			var bbefore counters
			if c.mode == "create" {
				if bbefore, err = readCounters(ctx, bbase, ""); err != nil {
					return err
				}
			}
			m0 = machineNow()
			bb, text, err := s.openloop(ctx, append(bargs, "-rate", rate, "-d", d)...)
			if err != nil {
				return fmt.Errorf("baseline load failed: %v", err)
			}
			steal = machineNow().stealSince(m0)
			stolen = max(stolen, steal)
			fmt.Fprintf(out, "rate %s bare:    %s host_steal=%.1f%%\n", rate, text, steal*100)
			if c.mode == "create" {
				bafter, err := readCounters(ctx, bbase, "")
				if err != nil {
					return err
				}
				fmt.Fprintf(out, "  bare stack %s\n", perCreate(bbefore, bafter))
			}
			as, bs = append(as, a), append(bs, bb)
		}
		a, bb := medianRuns(as), medianRuns(bs)
		line, ok := latencySummary(r, a, bb, c.goals)
		if c.rounds > 1 {
			line += fmt.Sprintf(" (medians of %d runs each)", c.rounds)
		}
		line += stealNote(stolen)
		fmt.Fprintln(out, line)
		lines = append(lines, line)
		met = met && ok
	}
	if hwm := statusMiB(p.pid(), "VmHWM"); hwm > 0 {
		fmt.Fprintf(out, "peak RSS of the payouts server: %d MiB\n", hwm)
	}
	fmt.Fprintf(out, "%s latency: %s\n", c.mode, strings.Join(lines, " | "))
	if !met {
		return errBelowGoals
	}
	return nil
}

// quietSteal is the most CPU time the hypervisor may take from a virtual machine during a run
// for the run to count as on a quiet machine. The tails are measured in milliseconds: on a
// shared 2-core guest, a run at 500 creates/s while the hypervisor took 22 % of the time had
// its p99 at 25 ms, five times that of the same binary on the same host in a quiet hour.
const quietSteal = 0.02

// stealNote says, after a rate's verdict, that the host was not quiet: the hypervisor took
// more than quietSteal of the processors' time in a run of it.
func stealNote(stolen float64) string {
	if stolen <= quietSteal {
		return ""
	}
	return fmt.Sprintf(" [not a quiet machine: the hypervisor took up to %.0f %% of the processors' time (steal)]", stolen*100)
}

// openLine is what one openloop run printed.
type openLine struct {
	Rate                                 float64
	Sent, OK, Bad, Errors, Dropped       int64
	P50, P90, P99, P999, Max, LateSender float64 // milliseconds
}

func parseOpenLine(s string) (openLine, error) {
	var l openLine
	seen := map[string]bool{}
	for _, f := range strings.Fields(s) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return l, fmt.Errorf("openloop line %q: %q is not key=value", s, f)
		}
		var fp *float64
		var ip *int64
		switch k {
		case "rate":
			fp = &l.Rate
		case "sent":
			ip = &l.Sent
		case "ok":
			ip = &l.OK
		case "bad":
			ip = &l.Bad
		case "errors":
			ip = &l.Errors
		case "dropped":
			ip = &l.Dropped
		case "p50_ms":
			fp = &l.P50
		case "p90_ms":
			fp = &l.P90
		case "p99_ms":
			fp = &l.P99
		case "p999_ms":
			fp = &l.P999
		case "max_ms":
			fp = &l.Max
		case "sender_late_ms":
			fp = &l.LateSender
		default:
			continue
		}
		var err error
		if fp != nil {
			*fp, err = strconv.ParseFloat(v, 64)
		} else {
			*ip, err = strconv.ParseInt(v, 10, 64)
		}
		if err != nil {
			return l, fmt.Errorf("openloop line %q: %s: %v", s, f, err)
		}
		seen[k] = true
	}
	for _, k := range []string{"rate", "ok", "bad", "errors", "dropped", "p99_ms", "p999_ms"} {
		if !seen[k] {
			return l, fmt.Errorf("openloop line %q: no %s", s, k)
		}
	}
	return l, nil
}

// medianRuns is what several runs at one rate say together: each percentile the median of
// the runs' (the mean of the middle two for an even number), the failures of all of them.
func medianRuns(runs []openLine) openLine {
	med := func(f func(openLine) float64) float64 {
		v := make([]float64, len(runs))
		for i, r := range runs {
			v[i] = f(r)
		}
		slices.Sort(v)
		if n := len(v); n%2 == 0 {
			return (v[n/2-1] + v[n/2]) / 2
		}
		return v[len(v)/2]
	}
	m := openLine{
		Rate:       runs[0].Rate,
		P50:        med(func(r openLine) float64 { return r.P50 }),
		P90:        med(func(r openLine) float64 { return r.P90 }),
		P99:        med(func(r openLine) float64 { return r.P99 }),
		P999:       med(func(r openLine) float64 { return r.P999 }),
		Max:        med(func(r openLine) float64 { return r.Max }),
		LateSender: med(func(r openLine) float64 { return r.LateSender }),
	}
	for _, r := range runs {
		m.Sent += r.Sent
		m.OK += r.OK
		m.Bad += r.Bad
		m.Errors += r.Errors
		m.Dropped += r.Dropped
	}
	return m
}

// latencySummary is one rate's verdict: "ok rate 500/s: payouts p99 3.5 ms vs bare 5.3 ms
// (goal <= 6.4), p99.9 5.8 ms (goal <= 25), failed or dropped 0" (SHORT instead of ok when
// a goal was missed).
func latencySummary(rate float64, a, b openLine, g latencyGoals) (string, bool) {
	failed := a.Bad + a.Errors + a.Dropped
	limit := math.Max(g.MaxP99Ratio*b.P99, g.MinP99)
	ok := a.P99 <= limit && a.P999 <= g.MaxP999 && failed == 0
	verdict := "ok"
	if !ok {
		verdict = "SHORT"
	}
	return fmt.Sprintf("%s rate %s/s: payouts p99 %.1f ms vs bare %.1f ms (goal <= %.1f), p99.9 %.1f ms (goal <= %s), failed or dropped %d",
		verdict, strconv.FormatFloat(rate, 'f', -1, 64), a.P99, b.P99, limit, a.P999, strconv.FormatFloat(g.MaxP999, 'f', -1, 64), failed), ok
}

// openloop runs the open-loop generator with args and returns its line.
func (s *session) openloop(ctx context.Context, args ...string) (openLine, string, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(s.bin, "openloop"), args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = childAttr()
	err := cmd.Run()
	text := strings.TrimSpace(out.String())
	if ctx.Err() != nil {
		return openLine{}, text, ctx.Err()
	}
	if err != nil {
		return openLine{}, text, fmt.Errorf("%v: %s", err, text)
	}
	lines := strings.Split(text, "\n")
	l, err := parseOpenLine(lines[len(lines)-1])
	return l, lines[len(lines)-1], err
}

// statusMiB is a field of /proc/PID/status in kB (VmRSS, VmHWM), in MiB; 0 when unknown.
func statusMiB(pid int, field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == field+":" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb >> 10
		}
	}
	return 0
}
