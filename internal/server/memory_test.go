package server

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeRoot writes files (path relative to the root: content) under a directory of the test's.
func fakeRoot(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

const meminfo4G = "MemTotal:        4194304 kB\nMemFree:         1000000 kB\n"

func TestReadMemoryBudget(t *testing.T) {
	cases := []struct {
		name       string
		files      map[string]string
		want       int64
		wantSource string
	}{
		{"no control group: the machine", map[string]string{"proc/meminfo": meminfo4G, "proc/self/cgroup": "0::/\n"},
			4 << 30, "/proc/meminfo"},
		{"cgroup v2 limit of the process's group", map[string]string{"proc/meminfo": meminfo4G,
			"proc/self/cgroup": "0::/system.slice/payouts.service\n",
			"sys/fs/cgroup/system.slice/payouts.service/memory.max": "536870912\n",
			"sys/fs/cgroup/system.slice/memory.max":                 "max\n"},
			512 << 20, "cgroup v2 /sys/fs/cgroup/system.slice/payouts.service/memory.max"},
		{"cgroup v2 limit of an ancestor, smaller", map[string]string{"proc/meminfo": meminfo4G,
			"proc/self/cgroup":             "0::/a/b\n",
			"sys/fs/cgroup/a/b/memory.max": "max\n",
			"sys/fs/cgroup/a/memory.max":   "268435456\n"},
			256 << 20, "cgroup v2 /sys/fs/cgroup/a/memory.max"},
		{"cgroup v2 in a container: the namespace's root", map[string]string{"proc/meminfo": meminfo4G,
			"proc/self/cgroup":         "0::/\n",
			"sys/fs/cgroup/memory.max": "1073741824\n"},
			1 << 30, "cgroup v2 /sys/fs/cgroup/memory.max"},
		{"cgroup v2 unlimited", map[string]string{"proc/meminfo": meminfo4G,
			"proc/self/cgroup": "0::/x\n", "sys/fs/cgroup/x/memory.max": "max\n"},
			4 << 30, "/proc/meminfo"},
		{"cgroup v1 limit", map[string]string{"proc/meminfo": meminfo4G,
			"proc/self/cgroup": "12:pids:/\n4:memory:/docker/abc\n3:cpu,cpuacct:/docker/abc\n0::/\n",
			"sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes": "805306368\n",
			"sys/fs/cgroup/memory/memory.limit_in_bytes":            "9223372036854771712\n"},
			768 << 20, "cgroup v1 /sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes"},
		{"cgroup v1 with memory among other controllers", map[string]string{"proc/meminfo": meminfo4G,
			"proc/self/cgroup": "4:cpuacct,memory:/g\n",
			"sys/fs/cgroup/memory/g/memory.limit_in_bytes": "268435456\n"},
			256 << 20, "cgroup v1 /sys/fs/cgroup/memory/g/memory.limit_in_bytes"},
		{"cgroup v1 unlimited", map[string]string{"proc/meminfo": meminfo4G,
			"proc/self/cgroup": "4:memory:/g\n",
			"sys/fs/cgroup/memory/g/memory.limit_in_bytes": "9223372036854771712\n"},
			4 << 30, "/proc/meminfo"},
		{"a limit above the machine's memory: the machine", map[string]string{"proc/meminfo": meminfo4G,
			"proc/self/cgroup": "0::/g\n", "sys/fs/cgroup/g/memory.max": "17179869184\n"},
			4 << 30, "/proc/meminfo"},
		{"the group's path not visible (another namespace): what is", map[string]string{"proc/meminfo": meminfo4G,
			"proc/self/cgroup":         "0::/kubepods/pod1/c1\n",
			"sys/fs/cgroup/memory.max": "402653184\n"},
			384 << 20, "cgroup v2 /sys/fs/cgroup/memory.max"},
		{"no /proc/self/cgroup", map[string]string{"proc/meminfo": meminfo4G}, 4 << 30, "/proc/meminfo"},
		{"a limit that is not a number is ignored", map[string]string{"proc/meminfo": meminfo4G,
			"proc/self/cgroup": "0::/g\n", "sys/fs/cgroup/g/memory.max": "lots\n"},
			4 << 30, "/proc/meminfo"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readMemoryBudget(fakeRoot(t, tc.files))
			if err != nil {
				t.Fatal(err)
			}
			if got.bytes != tc.want || got.source != tc.wantSource {
				t.Errorf("budget %d from %q, want %d from %q", got.bytes, got.source, tc.want, tc.wantSource)
			}
		})
	}
}

func TestReadMemoryBudgetWithoutMeminfo(t *testing.T) {
	for name, files := range map[string]map[string]string{
		"missing":      {},
		"no MemTotal":  {"proc/meminfo": "MemFree: 12 kB\n"},
		"not a number": {"proc/meminfo": "MemTotal: many kB\n"},
	} {
		if b, err := readMemoryBudget(fakeRoot(t, files)); err == nil {
			t.Errorf("%s: budget %+v, want an error", name, b)
		}
	}
}

// The operator's GOGC and GOMEMLIMIT decide; without them the collector's target is
// defaultGCPercent, raised after collections up to the heap floor, and a soft limit is set
// below the machine's memory.
func TestSetMemory(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	budget, err := readMemoryBudget("/")
	if err != nil {
		t.Skipf("no memory budget on this machine: %v", err)
	}
	env := func(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }
	var log bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&log, nil))
	// A heap floor of the test's own: the process's collector target stays what each case
	// set, whatever collections happen meanwhile.
	floor := &heapFloor{set: func(int) int { return 0 }}

	debug.SetGCPercent(100)
	debug.SetMemoryLimit(1 << 40)
	setMemory(env(nil), logger, floor)
	if got := debug.SetGCPercent(100); got != defaultGCPercent {
		t.Errorf("GOGC unset: collector target %d %%, want %d", got, defaultGCPercent)
	}
	if got, want := debug.SetMemoryLimit(-1), int64(float64(budget.bytes)*memoryShare); got != want {
		t.Errorf("GOMEMLIMIT unset: soft limit %d, want %d (%.2f of %d)", got, want, memoryShare, budget.bytes)
	}
	if !strings.Contains(log.String(), "soft_limit_mib=") || !strings.Contains(log.String(), "heap_floor_mib=") {
		t.Errorf("the log does not say what was set: %s", log.String())
	}
	if got, want := floor.floor.Load(), heapFloorFor(budget.bytes); got != want {
		t.Errorf("GOGC unset: heap floor %d, want %d", got, want)
	}

	debug.SetGCPercent(123) // as the runtime would from GOGC=123
	debug.SetMemoryLimit(1 << 40)
	setMemory(env(map[string]string{"GOGC": "123", "GOMEMLIMIT": "1TiB"}), logger, floor)
	if got := debug.SetGCPercent(100); got != 123 {
		t.Errorf("GOGC=123: collector target %d %%, want 123", got)
	}
	if got := debug.SetMemoryLimit(-1); got != 1<<40 {
		t.Errorf("GOMEMLIMIT set: soft limit %d, want it untouched", got)
	}
	if got := floor.floor.Load(); got != 0 {
		t.Errorf("GOGC=123: heap floor %d, want none (0): the operator's target stays", got)
	}

	debug.SetGCPercent(123)
	debug.SetMemoryLimit(1 << 40)
	setMemory(env(map[string]string{"GOGC": "123"}), logger, floor)
	if got := debug.SetGCPercent(100); got != 123 {
		t.Errorf("GOGC=123 alone: collector target %d %%, want 123", got)
	}
	if got := debug.SetMemoryLimit(-1); got == 1<<40 {
		t.Errorf("GOGC alone: no soft limit set from the budget")
	}
}

// The collector's target after a collection: what lets the live heap grow to the floor,
// within 200 % and 800 %.
func TestGCPercentFor(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		live, floor int64
		want        int
	}{
		{5 * mib, 128 * mib, 800},  // a small heap on a large machine: ninefold at most
		{16 * mib, 128 * mib, 700}, // the next collection at 128 MiB
		{40 * mib, 128 * mib, 220},
		{64 * mib, 128 * mib, 200}, // a heap past a third of the floor: 200 %
		{5 * mib, 16 * mib, 220},   // 256 MiB of budget: what 200 % gives already
		{8 * mib, 16 * mib, 200},
		{0, 16 * mib, 800}, // nothing live (never read so): the bound
	} {
		if got := gcPercentFor(tc.live, tc.floor); got != tc.want {
			t.Errorf("gcPercentFor(%d MiB live, floor %d MiB) = %d, want %d", tc.live/mib, tc.floor/mib, got, tc.want)
		}
	}
	for budget, want := range map[int64]int64{256 * mib: 16 * mib, 512 * mib: 32 * mib, 1024 * mib: 64 * mib, 24 << 30: 128 * mib} {
		if got := heapFloorFor(budget); got != want {
			t.Errorf("heapFloorFor(%d MiB) = %d MiB, want %d", budget/mib, got/mib, want/mib)
		}
	}
}

// The floor follows collections: after one, the target is set from what it found live; a
// new floor takes effect at the next.
func TestHeapFloorFollowsCollections(t *testing.T) {
	var got atomic.Int64
	h := &heapFloor{set: func(p int) int { got.Store(int64(p)); return 0 }}
	defer h.start(0)
	await := func(want int64) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); got.Load() != want; {
			if time.Now().After(deadline) {
				t.Fatalf("after collections the target is %d, want %d", got.Load(), want)
			}
			runtime.GC() // the sentinel's cleanup runs after the collection that finds it
		}
	}
	h.start(1 << 40) // far above this test binary's live heap
	await(maxGCPercent)
	h.start(1) // far below it
	await(defaultGCPercent)
}
