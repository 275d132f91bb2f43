package main

import (
	"os"
	"testing"
)

func TestParseStat(t *testing.T) {
	for _, tc := range []struct {
		name, stat string
		want       procTimes
		wantErr    bool
	}{
		{"a server", "4242 (payouts) S 1 4242 4242 0 -1 4194560 900 0 0 0 1234 567 89 10 20 0 12 0 100 1 2 3",
			procTimes{1234, 567, 89, 10}, false},
		{"a name with spaces and parentheses", "77 (postgres: (walwriter) x) S 1 77 77 0 -1 4194560 900 0 0 0 5 6 7 8 20 0 1 0 100 1 2 3",
			procTimes{5, 6, 7, 8}, false},
		{"cut short", "77 (postgres) S 1 77 77 0", procTimes{}, true},
		{"no name", "77 postgres S 1", procTimes{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseStat([]byte(tc.stat))
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("got %+v, %v; want %+v (an error: %v)", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestCPUOfThisProcessGrows(t *testing.T) {
	before := cpuOf(os.Getpid())
	for i := 0; cpuOf(os.Getpid()) < before+0.02 && i < 1e9; i++ {
	}
	if after := cpuOf(os.Getpid()); after < before+0.02 {
		t.Errorf("cpuOf: %v then %v", before, after)
	}
	if cpuOf(-1) != 0 || cpuOfUser(-1) != 0 {
		t.Error("a process or user that is not there has used CPU")
	}
}

func TestParseMachineStat(t *testing.T) {
	for _, tc := range []struct {
		name, stat string
		want       machineTimes
		wantErr    bool
	}{
		// user nice system idle iowait irq softirq steal guest guest_nice
		{"a kernel of today", "cpu  100 2 30 500 40 0 5 3 0 0\ncpu0 50 1 15 250 20 0 2 1 0 0\n",
			machineTimes{busy: 140, total: 680, steal: 3}, false},
		{"an older kernel, steal last", "cpu 10 0 10 80 0 0 0 4\n", machineTimes{busy: 24, total: 104, steal: 4}, false},
		{"a cpu's own line", "cpu0 10 0 10 80 0 0 0 0 0 0\n", machineTimes{}, true},
		{"cut short", "cpu 10 0 10\n", machineTimes{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseMachineStat([]byte(tc.stat))
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("got %+v, %v; want %+v (an error: %v)", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestStealSince(t *testing.T) {
	then, now := machineTimes{busy: 100, total: 1000, steal: 10}, machineTimes{busy: 250, total: 1200, steal: 60}
	if got := now.stealSince(then); got != 0.25 {
		t.Errorf("steal %v, want 0.25", got)
	}
	if got := now.stealSince(machineTimes{}); got != 0 { // /proc/stat unreadable at the start
		t.Errorf("steal %v from nothing, want 0", got)
	}
}

// A rate's verdict says when the host was not quiet, and nothing when it was.
func TestStealNote(t *testing.T) {
	for _, tc := range []struct {
		stolen float64
		want   string
	}{
		{0, ""},
		{quietSteal, ""},
		{0.22, " [not a quiet machine: the hypervisor took up to 22 % of the processors' time (steal)]"},
	} {
		if got := stealNote(tc.stolen); got != tc.want {
			t.Errorf("stealNote(%v) = %q, want %q", tc.stolen, got, tc.want)
		}
	}
}

func TestBusySince(t *testing.T) {
	then, now := machineTimes{busy: 100, total: 1000}, machineTimes{busy: 250, total: 1200}
	if got := now.busySince(then); got != 0.75 {
		t.Errorf("busy %v, want 0.75", got)
	}
	if got := now.busySince(machineTimes{}); got != 0 { // /proc/stat unreadable at the start
		t.Errorf("busy %v from nothing, want 0", got)
	}
	if now := machineNow(); now.total == 0 || now.busy > now.total {
		t.Errorf("this machine's times: %+v", now)
	}
}

func TestCPUSummary(t *testing.T) {
	payouts := []roundCPU{{server: 1.5, load: 0.5, requests: 10000}, {server: 1.7, load: 0.5, requests: 10000}}
	bare := []roundCPU{{server: 0.8, load: 0.5, requests: 10000}}
	for _, tc := range []struct {
		serverCPU float64
		want      string
	}{
		{0, "cpu per request: payouts 160 us + load generator 50 us, bare stack 80 us + load generator 50 us; on 2 CPUs that alone allows at most 9524/s and 15385/s"},
		{0.5, "cpu per request: payouts 160 us + load generator 50 us, bare stack 80 us + load generator 50 us; at 0.5 CPU each, the servers' CPU alone allows at most 3125/s and 6250/s"},
	} {
		if got := cpuSummary(payouts, bare, 2, tc.serverCPU); got != tc.want {
			t.Errorf("capped at %v:\ngot  %s\nwant %s", tc.serverCPU, got, tc.want)
		}
	}
	if r := (roundCPU{server: 1.5, load: 0.5, requests: 10000, busy: 0.93}).String(); r != "cpu per request: server 150 us, load generator 50 us; machine 93 % busy" {
		t.Errorf("round: %s", r)
	}
}
