package main

import (
	"bytes"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

// clockTicks is the unit of /proc/PID/stat's times (USER_HZ, 100 on Linux).
const clockTicks = 100

// procTimes are a process's CPU times from /proc/PID/stat, in clock ticks: its own, and
// those of the children it has waited for.
type procTimes struct{ user, system, childUser, childSystem int64 }

// parseStat reads the times of a /proc/PID/stat line. The command name, in parentheses, may
// hold spaces and parentheses itself, so the fields are counted from the last ')'.
func parseStat(b []byte) (procTimes, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procTimes{}, fmt.Errorf("stat: no ')' in %q", b)
	}
	f := bytes.Fields(b[i+1:])
	// f[0] is field 3 (state); utime, stime, cutime, cstime are fields 14 to 17
	if len(f) < 15 {
		return procTimes{}, fmt.Errorf("stat: %d fields after the name", len(f))
	}
	var t [4]int64
	for j := range t {
		v, err := strconv.ParseInt(string(f[11+j]), 10, 64)
		if err != nil {
			return procTimes{}, fmt.Errorf("stat field %d: %v", 14+j, err)
		}
		t[j] = v
	}
	return procTimes{t[0], t[1], t[2], t[3]}, nil
}

// cpuOf is the CPU seconds the process has used so far (0 once it is gone).
func cpuOf(pid int) float64 {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0
	}
	t, err := parseStat(b)
	if err != nil {
		return 0
	}
	return float64(t.user+t.system) / clockTicks
}

// postgresUID is the uid of the local postgres user, or -1 when there is none (the server
// is elsewhere, or runs as another user).
func postgresUID() int {
	u, err := user.Lookup("postgres")
	if err != nil {
		return -1
	}
	uid, err := strconv.Atoi(u.Uid)
	if err != nil {
		return -1
	}
	return uid
}

// cpuOfUser is the CPU seconds used so far by the processes of uid, with the children they
// have waited for: a PostgreSQL backend that ends during a run is counted in its
// postmaster's times once it has gone from /proc, so none is lost between two readings.
// (../shared/bench/ratio-pg.sh summed `ps -o times`, whole seconds per process, and lost those.)
func cpuOfUser(uid int) float64 {
	if uid < 0 {
		return 0
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	var ticks int64
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		dir := filepath.Join("/proc", e.Name())
		fi, err := os.Stat(dir)
		if err != nil {
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != uid {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, "stat"))
		if err != nil {
			continue
		}
		if t, err := parseStat(b); err == nil {
			ticks += t.user + t.system + t.childUser + t.childSystem
		}
	}
	return float64(ticks) / clockTicks
}

// machineTimes are the machine's CPU times from the first line of /proc/stat, in clock ticks:
// busy (user, nice, system, irq, softirq, steal; guest time is inside user), in all, and
// stolen: the time a virtual machine's processors were ready to run and the hypervisor ran
// another guest instead, which no process of this machine sees but every one waits for.
type machineTimes struct{ busy, total, steal int64 }

// parseMachineStat reads the "cpu" line that /proc/stat begins with.
func parseMachineStat(b []byte) (machineTimes, error) {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := bytes.Fields(line)
	if len(f) < 9 || string(f[0]) != "cpu" {
		return machineTimes{}, fmt.Errorf("stat: not a cpu line: %q", line)
	}
	var t [8]int64 // user nice system idle iowait irq softirq steal
	for j := range t {
		v, err := strconv.ParseInt(string(f[1+j]), 10, 64)
		if err != nil {
			return machineTimes{}, fmt.Errorf("stat cpu field %d: %v", 1+j, err)
		}
		t[j] = v
	}
	busy := t[0] + t[1] + t[2] + t[5] + t[6] + t[7]
	return machineTimes{busy: busy, total: busy + t[3] + t[4], steal: t[7]}, nil
}

// machineNow reads the machine's CPU times; zero when /proc/stat cannot be read.
func machineNow() machineTimes {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return machineTimes{}
	}
	t, _ := parseMachineStat(b)
	return t
}

// busySince is the share of the machine's CPU time that was busy from then to t, 0 to 1.
func (t machineTimes) busySince(then machineTimes) float64 {
	total := t.total - then.total
	if total <= 0 || then.total == 0 {
		return 0
	}
	return float64(t.busy-then.busy) / float64(total)
}

// stealSince is the share of the machine's CPU time stolen by the hypervisor from then to
// t, 0 to 1.
func (t machineTimes) stealSince(then machineTimes) float64 {
	total := t.total - then.total
	if total <= 0 || then.total == 0 {
		return 0
	}
	return float64(t.steal-then.steal) / float64(total)
}

// roundCPU is where a round's CPU went: the server's and the load generator's seconds, the
// requests they served, and how busy the whole machine was.
type roundCPU struct {
	server, load float64 // CPU seconds
	requests     float64
	busy         float64 // 0 to 1
}

func (r roundCPU) String() string {
	return fmt.Sprintf("cpu per request: server %.0f us, load generator %.0f us; machine %.0f %% busy",
		cpuPerCreate(r.server, r.requests), cpuPerCreate(r.load, r.requests), r.busy*100)
}

// cpuSummary is the rounds' CPU per request on each side, and the rate that CPU alone would
// allow the server and its load generator on cpus processors: at that rate the machine has
// no time left, so a server measured near it is bound by the machine's processors, not by
// waiting.
func cpuSummary(payouts, bare []roundCPU, cpus int, serverCPU float64) string {
	per := func(rs []roundCPU) (server, load float64) {
		var s, l, n float64
		for _, r := range rs {
			s, l, n = s+r.server, l+r.load, n+r.requests
		}
		return cpuPerCreate(s, n), cpuPerCreate(l, n)
	}
	ceiling := func(server, load float64) float64 {
		if server+load <= 0 {
			return 0
		}
		return float64(cpus) * 1e6 / (server + load)
	}
	ps, pl := per(payouts)
	bs, bl := per(bare)
	if serverCPU > 0 { // each server has its cap to itself; the load generator is not in it
		capped := func(server float64) float64 {
			if server <= 0 {
				return 0
			}
			return serverCPU * 1e6 / server
		}
		return fmt.Sprintf("cpu per request: payouts %.0f us + load generator %.0f us, bare stack %.0f us + load generator %.0f us; "+
			"at %v CPU each, the servers' CPU alone allows at most %.0f/s and %.0f/s", ps, pl, bs, bl, serverCPU, capped(ps), capped(bs))
	}
	return fmt.Sprintf("cpu per request: payouts %.0f us + load generator %.0f us, bare stack %.0f us + load generator %.0f us; "+
		"on %d CPUs that alone allows at most %.0f/s and %.0f/s", ps, pl, bs, bl, cpus, ceiling(ps, pl), ceiling(bs, bl))
}
