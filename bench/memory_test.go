package main

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestParseCounters(t *testing.T) {
	text := `# HELP go_memstats_alloc_bytes_total Total number of bytes allocated in heap until now, even if released already.
# TYPE go_memstats_alloc_bytes_total counter
go_memstats_alloc_bytes_total 1.048576e+09
go_memstats_mallocs_total 4.2e+06
payouts_created_total{channel="BANK_TRANSFER",country="PER"} 6000
payouts_created_total{channel="CASH",country="COL"} 4000
payouts_finished_total{country="PER",stage="SETTLED",status="SUCCESS"} 9000
payouts_finished_total{country="COL",stage="ROUTED",status="REJECTED"} 500
go_memstats_alloc_bytes 1.2e+07
`
	got, err := parseCounters(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	want := counters{Bytes: 1.048576e9, Allocs: 4.2e6, Created: 10000, Finished: 9500}
	if got != want {
		t.Errorf("parseCounters = %+v, want %+v", got, want)
	}
	if _, err := parseCounters(strings.NewReader("payouts_created_total 3\n")); err == nil {
		t.Error("metrics without the runtime's counters: no error")
	}
}

// perPayout and perCreate divide the counters' growth by the payouts created between two
// readings, and say so when there were none.
func TestPerPayoutAndCreate(t *testing.T) {
	for _, tc := range []struct {
		name string
		per  func(a, b counters) string
		a, b counters
		want string
	}{
		{"the server, a payout's life", perPayout, counters{Bytes: 1000, Allocs: 50, Created: 10},
			counters{Bytes: 1000 + 12000*32*1024, Allocs: 50 + 12000*148, Created: 12010, Finished: 11990},
			"allocated per payout: 32.0 KiB, 148 allocations (12,000 created, 11,990 finished)"},
		{"the bare stack, a create", perCreate, counters{Bytes: 1000, Allocs: 50, Created: 10, Finished: 10},
			counters{Bytes: 1000 + 60000*14.8*1024, Allocs: 50 + 60000*108, Created: 60010, Finished: 60010},
			"allocated per create: 14.8 KiB, 108 allocations (60,000 created)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.per(tc.a, tc.b); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			if got := tc.per(tc.a, tc.a); !strings.Contains(got, "no payout created") {
				t.Errorf("of no payouts: %q", got)
			}
		})
	}
}

func TestParseOpenLine(t *testing.T) {
	l, err := parseOpenLine("rate=500 sent=10000 ok=9998 bad=1 errors=1 dropped=0 p50_ms=2.61 p90_ms=8.67 p99_ms=35.93 p999_ms=88.21 max_ms=96.55 sender_late_ms=14.37")
	if err != nil {
		t.Fatal(err)
	}
	want := openLine{Rate: 500, Sent: 10000, OK: 9998, Bad: 1, Errors: 1, P50: 2.61, P90: 8.67, P99: 35.93, P999: 88.21, Max: 96.55, LateSender: 14.37}
	if l != want {
		t.Errorf("parseOpenLine = %+v, want %+v", l, want)
	}
	for _, bad := range []string{"rate=500 ok=1", "rate=x ok=1 bad=0 errors=0 dropped=0 p99_ms=1 p999_ms=1", "openloop: no"} {
		if _, err := parseOpenLine(bad); err == nil {
			t.Errorf("parseOpenLine(%q): no error", bad)
		}
	}
}

func TestLatencySummary(t *testing.T) {
	g := latencyGoals{MaxP99Ratio: 1.2, MinP99: 5, MaxP999: 25}
	for _, tc := range []struct {
		name string
		a, b openLine
		want string
		ok   bool
	}{
		{"within the floor", openLine{P99: 4.5, P999: 7.5}, openLine{P99: 2}, "ok rate 1000/s: payouts p99 4.5 ms vs bare 2.0 ms (goal <= 5.0), p99.9 7.5 ms (goal <= 25), failed or dropped 0", true},
		{"within the ratio", openLine{P99: 6.4, P999: 9}, openLine{P99: 5.4}, "ok rate 1000/s: payouts p99 6.4 ms vs bare 5.4 ms (goal <= 6.5), p99.9 9.0 ms (goal <= 25), failed or dropped 0", true},
		{"p99 over", openLine{P99: 8.8, P999: 9}, openLine{P99: 5.5}, "SHORT rate 1000/s: payouts p99 8.8 ms vs bare 5.5 ms (goal <= 6.6), p99.9 9.0 ms (goal <= 25), failed or dropped 0", false},
		{"p99.9 over", openLine{P99: 4, P999: 57.8}, openLine{P99: 5.5}, "SHORT rate 1000/s: payouts p99 4.0 ms vs bare 5.5 ms (goal <= 6.6), p99.9 57.8 ms (goal <= 25), failed or dropped 0", false},
		{"dropped", openLine{P99: 4, P999: 5, Dropped: 2, Errors: 1}, openLine{P99: 5.5}, "SHORT rate 1000/s: payouts p99 4.0 ms vs bare 5.5 ms (goal <= 6.6), p99.9 5.0 ms (goal <= 25), failed or dropped 3", false},
	} {
		got, ok := latencySummary(1000, tc.a, tc.b, g)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: latencySummary = %q, %v; want %q, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

// Several runs at a rate are judged on their medians: one run slowed by the machine's
// neighbours does not decide the verdict, and a failure in any run counts.
func TestMedianRuns(t *testing.T) {
	runs := []openLine{
		{Rate: 1000, Sent: 10, OK: 10, P50: 1, P90: 2, P99: 4, P999: 6, Max: 9, LateSender: 1},
		{Rate: 1000, Sent: 10, OK: 9, Dropped: 1, P50: 3, P90: 9, P99: 90, P999: 200, Max: 300, LateSender: 40},
		{Rate: 1000, Sent: 10, OK: 10, P50: 2, P90: 3, P99: 5, P999: 8, Max: 10, LateSender: 2},
	}
	want := openLine{Rate: 1000, Sent: 30, OK: 29, Dropped: 1, P50: 2, P90: 3, P99: 5, P999: 8, Max: 10, LateSender: 2}
	if got := medianRuns(runs); got != want {
		t.Errorf("three runs: %+v, want %+v", got, want)
	}
	if got := medianRuns(runs[:2]); got.P99 != 47 || got.P999 != 103 {
		t.Errorf("two runs: p99 %v and p99.9 %v, want the means of the two: 47 and 103", got.P99, got.P999)
	}
	if got := medianRuns(runs[2:]); got != runs[2] {
		t.Errorf("one run: %+v, want it unchanged", got)
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"256M": 256 << 20, "1G": 1 << 30, "512m": 512 << 20, "65536K": 64 << 20, "1048576": 1 << 20} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "M", "-1G", "lots"} {
		if _, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q): no error", in)
		}
	}
}

func TestMemorySummary(t *testing.T) {
	line, ok := memorySummary(256<<20, true, 0, 0, 173, 200)
	if want := "memory: cap 256M, server alive yes, oom kills 0, failed requests 0, peak RSS 173 MiB (goal <= 200)"; line != want || !ok {
		t.Errorf("memorySummary = %q, %v; want %q, true", line, ok, want)
	}
	for _, tc := range []struct {
		alive         bool
		failed, peak  int64
		wantInTheLine string
	}{
		{false, 0, 150, "server alive no"},
		{true, 3, 150, "failed requests 3"},
		{true, -1, 150, "failed requests all"},
		{true, 0, 201, "peak RSS 201 MiB"},
	} {
		line, ok := memorySummary(256<<20, tc.alive, 1, tc.failed, tc.peak, 200)
		if ok || !strings.Contains(line, tc.wantInTheLine) {
			t.Errorf("memorySummary(alive %v, failed %d, peak %d) = %q, %v; want a miss saying %q", tc.alive, tc.failed, tc.peak, line, ok, tc.wantInTheLine)
		}
	}
}

func TestPlanMemoryGroup(t *testing.T) {
	v1 := map[string]string{"memory/cgroup.procs": "", "memory/memory.limit_in_bytes": "9223372036854771712"}
	v2 := map[string]string{"cgroup.controllers": "cpuset cpu io memory pids", "cgroup.subtree_control": "cpu memory", "cgroup.procs": ""}
	v2off := map[string]string{"cgroup.controllers": "cpuset cpu io memory pids", "cgroup.subtree_control": "cpu", "cgroup.procs": ""}
	for _, tc := range []struct {
		name         string
		files        map[string]string
		wantDir      string
		wantWrites   []fileWrite
		wantOptional []fileWrite
		wantErr      bool
	}{
		{"cgroup v1: the memory controller's limit", v1, "memory/g",
			[]fileWrite{{"memory/g/memory.limit_in_bytes", "268435456"}}, []fileWrite{{"memory/g/memory.memsw.limit_in_bytes", "268435456"}}, false},
		{"cgroup v2: memory.max, no swap", v2, "g",
			[]fileWrite{{"g/memory.max", "268435456"}}, []fileWrite{{"g/memory.swap.max", "0"}}, false},
		{"cgroup v2 without memory for the children yet: enabled first", v2off, "g",
			[]fileWrite{{"cgroup.subtree_control", "+memory"}, {"g/memory.max", "268435456"}}, []fileWrite{{"g/memory.swap.max", "0"}}, false},
		{"no memory controller", map[string]string{"cgroup.controllers": "cpu pids"}, "", nil, nil, true},
	} {
		root := fakeCgroups(t, tc.files)
		plan, err := planMemoryGroup(root, "g", 256<<20)
		if tc.wantErr {
			if err == nil {
				t.Errorf("%s: no error", tc.name)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		rel := func(ws []fileWrite) []fileWrite {
			var out []fileWrite
			for _, w := range ws {
				r, _ := filepath.Rel(root, w.Path)
				out = append(out, fileWrite{r, w.Data})
			}
			return out
		}
		dir, _ := filepath.Rel(root, plan.Dir)
		if dir != tc.wantDir || !equalWrites(rel(plan.Writes), tc.wantWrites) || !equalWrites(rel(plan.Optional), tc.wantOptional) {
			t.Errorf("%s: plan %s %v optional %v; want %s %v optional %v", tc.name, dir, rel(plan.Writes), rel(plan.Optional), tc.wantDir, tc.wantWrites, tc.wantOptional)
		}
	}
}

func equalWrites(a, b []fileWrite) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
