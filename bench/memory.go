package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"payouts/internal/freeport"
)

// The memory figure: the payouts server, default settings, in a control group capped at a
// small machine's memory, under full create load then reads. It must live through it with
// nothing failed and its resident memory under a goal.

type memoryConfig struct {
	max      int64 // the group's cap, bytes
	duration time.Duration
	maxRSS   int64 // goal, MiB; 0: 80 % of max
}

func memoryCommand(fs *flag.FlagSet, _ func(string) string) runFunc {
	c := &memoryConfig{max: 256 << 20}
	fs.Func("memory-max", "the control group's memory cap: 256M, 512M, 1G (default 256M)", func(v string) error {
		n, err := parseSize(v)
		c.max = n
		return err
	})
	fs.DurationVar(&c.duration, "duration", 60*time.Second, "how long the creates run (the reads run half as long)")
	fs.Int64Var(&c.maxRSS, "max-rss-mb", 0, "goal: the server's peak resident memory at most this, in MiB (default 80 % of -memory-max)")
	return c.run
}

// parseSize reads a size as the control group files take it, with a K, M or G suffix.
func parseSize(v string) (int64, error) {
	mult := int64(1)
	switch strings.ToUpper(v[len(v)-min(len(v), 1):]) {
	case "K":
		mult = 1 << 10
	case "M":
		mult = 1 << 20
	case "G":
		mult = 1 << 30
	}
	if mult > 1 {
		v = v[:len(v)-1]
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("not a size: %q (256M, 1G)", v)
	}
	return n * mult, nil
}

// sizeText writes bytes back as 256M or 1G.
func sizeText(n int64) string {
	switch {
	case n%(1<<30) == 0:
		return strconv.FormatInt(n>>30, 10) + "G"
	case n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + "M"
	}
	return strconv.FormatInt(n, 10)
}

func (c *memoryConfig) run(ctx context.Context, s *session, out io.Writer) error {
	if c.duration <= 0 || c.max < 32<<20 {
		return usagef("memory: -duration must be positive and -memory-max at least 32M")
	}
	goal := c.maxRSS
	if goal == 0 {
		goal = c.max * 8 / 10 >> 20
	}
	if err := s.build(ctx, "loadgen"); err != nil {
		return err
	}
	s.header(ctx, out)
	dir, err := s.subdir("memory")
	if err != nil {
		return err
	}
	group, err := s.memoryGroup(c.max)
	if err != nil {
		return err
	}
	addr, err := freeport.Addr()
	if err != nil {
		return err
	}
	p, err := s.startIn(group.Dir, "payouts", filepath.Join(dir, "payouts.log"),
		append([]string{"serve", "--addr", addr, "--data", filepath.Join(dir, "data"), "--admin-token", benchToken}, serveFlags...)...)
	if err != nil {
		return err
	}
	defer s.stop(p)
	base := "http://" + addr
	if err := waitReady(ctx, p, base+"/readyz"); err != nil {
		return err
	}
	ms, err := fundedMerchants(ctx, base, benchToken, 1)
	if err != nil {
		return err
	}
	m := ms[0]
	first, err := firstPayout(ctx, base, m)
	if err != nil {
		return err
	}
	var mu sync.Mutex
	var peak int64
	sample := func() {
		if r := statusMiB(p.pid(), "VmRSS"); r > 0 {
			mu.Lock()
			peak = max(peak, r)
			mu.Unlock()
		}
	}
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() { // the resident memory, until the server dies or the run ends
		defer close(sampled)
		for {
			sample()
			select {
			case <-stop:
				return
			case <-p.done:
				return
			case <-time.After(500 * time.Millisecond):
			}
		}
	}()
	who := []string{"-base", base, "-merchant", m.ID, "-key", m.Key, "-secret", m.Secret}
	before, err := readCounters(ctx, base, benchToken)
	if err != nil {
		return err
	}
	var failed int64
	cl, ctext, cerr := s.load(ctx, append(who, "-d", c.duration.String())...)
	fmt.Fprintf(out, "create: %s\n", ctext)
	failed += cl.Bad + cl.Errors
	var rtext string
	if n := int(cl.Rate * c.duration.Seconds() * 0.9); cerr == nil && n > 0 {
		var rl loadLine
		var rerr error
		rl, rtext, rerr = s.load(ctx, append(who, "-mode", "get", "-ids", strconv.Itoa(n), "-first-id", strconv.Itoa(first), "-d", (c.duration/2).String())...)
		fmt.Fprintf(out, "read:   %s\n", rtext)
		if rerr != nil && ctx.Err() != nil {
			return ctx.Err()
		}
		failed += rl.Bad + rl.Errors
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if !p.exited() {
		if after, err := settled(ctx, base, benchToken, before, settleWait); err == nil {
			fmt.Fprintln(out, perPayout(before, after))
		}
	}
	close(stop)
	<-sampled // the sampler is done with peak
	if !p.exited() {
		peak = max(peak, statusMiB(p.pid(), "VmHWM"))
	}
	alive := !p.exited()
	if cl.Rate == 0 && failed == 0 { // the load generator saw nothing at all: the server was gone
		failed = -1
	}
	line, ok := memorySummary(c.max, alive, group.oomKills(), failed, peak, goal)
	fmt.Fprintln(out, line)
	if !ok {
		return errBelowGoals
	}
	return nil
}

// memorySummary is the last line of memory, and whether the goals were met: the server
// alive, no request failed (-1: the load generator got no answer at all), the peak RSS at
// most goal MiB.
func memorySummary(limit int64, alive bool, oomKills, failed, peakMiB, goalMiB int64) (string, bool) {
	yes := map[bool]string{true: "yes", false: "no"}
	f := strconv.FormatInt(failed, 10)
	if failed < 0 {
		f = "all"
	}
	return fmt.Sprintf("memory: cap %s, server alive %s, oom kills %d, failed requests %s, peak RSS %d MiB (goal <= %d)",
		sizeText(limit), yes[alive], oomKills, f, peakMiB, goalMiB), alive && failed == 0 && peakMiB <= goalMiB
}

// memoryGroupPlan is a control group capped at a memory size: cgroup v1's memory controller
// (memory.limit_in_bytes, and memory.memsw.limit_in_bytes where swap is accounted) when its
// directory is writable, else cgroup v2 (memory.max, memory.swap.max 0), enabling the memory
// controller for the root's children first when it is not yet. Optional writes may fail
// (a kernel without swap accounting).
type memoryGroupPlan struct {
	Dir      string
	Writes   []fileWrite
	Optional []fileWrite
	V1       bool
}

func planMemoryGroup(root, name string, bytes int64) (memoryGroupPlan, error) {
	n := strconv.FormatInt(bytes, 10)
	v1 := filepath.Join(root, "memory")
	if writable(v1) && exists(filepath.Join(v1, "cgroup.procs")) && exists(filepath.Join(v1, "memory.limit_in_bytes")) {
		dir := filepath.Join(v1, name)
		return memoryGroupPlan{Dir: dir, V1: true,
			Writes:   []fileWrite{{filepath.Join(dir, "memory.limit_in_bytes"), n}},
			Optional: []fileWrite{{filepath.Join(dir, "memory.memsw.limit_in_bytes"), n}}}, nil
	}
	if hasWord(filepath.Join(root, "cgroup.controllers"), "memory") {
		dir := filepath.Join(root, name)
		var ws []fileWrite
		if !hasWord(filepath.Join(root, "cgroup.subtree_control"), "memory") {
			ws = append(ws, fileWrite{filepath.Join(root, "cgroup.subtree_control"), "+memory"})
		}
		return memoryGroupPlan{Dir: dir,
			Writes:   append(ws, fileWrite{filepath.Join(dir, "memory.max"), n}),
			Optional: []fileWrite{{filepath.Join(dir, "memory.swap.max"), "0"}}}, nil
	}
	return memoryGroupPlan{}, errors.New("no writable memory control group here (cgroup v1 memory or v2 memory.max, as root)")
}

// memoryGroup makes a control group capped at bytes, removed when the session closes.
func (s *session) memoryGroup(bytes int64) (memoryGroupPlan, error) {
	plan, err := planMemoryGroup(cgroupRoot, fmt.Sprintf("payouts-bench-mem-%d", os.Getpid()), bytes)
	if err != nil {
		return plan, err
	}
	for _, w := range plan.Writes {
		if filepath.Dir(w.Path) != plan.Dir {
			if err := os.WriteFile(w.Path, []byte(w.Data), 0o644); err != nil {
				return plan, fmt.Errorf("memory control group: %w", err)
			}
		}
	}
	if err := os.Mkdir(plan.Dir, 0o755); err != nil {
		return plan, fmt.Errorf("memory control group: %w", err)
	}
	s.onClose(func() { os.Remove(plan.Dir) })
	for _, w := range plan.Writes {
		if filepath.Dir(w.Path) == plan.Dir {
			if err := os.WriteFile(w.Path, []byte(w.Data), 0o644); err != nil {
				return plan, fmt.Errorf("memory control group: %w", err)
			}
		}
	}
	for _, w := range plan.Optional {
		os.WriteFile(w.Path, []byte(w.Data), 0o644)
	}
	return plan, nil
}

// oomKills is how many processes of the group the kernel killed for want of memory
// (oom_kill in memory.oom_control, v1, or memory.events, v2).
func (g memoryGroupPlan) oomKills() int64 {
	file := "memory.events"
	if g.V1 {
		file = "memory.oom_control"
	}
	b, err := os.ReadFile(filepath.Join(g.Dir, file))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "oom_kill" {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n
		}
	}
	return 0
}
