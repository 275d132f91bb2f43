package server

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// defaultGCPercent is the collector's target when GOGC is not set. The live heap is small
// (records live in the mapped file), so at Go's 100 % the collector would run several times a
// second under load; at 1600 % the heap grew tenfold between collections, 800 MiB at 500
// creates/s, which a small machine or a container's limit cannot carry. 200 % keeps the heap
// near three times what is live, and the soft limit below keeps it within the machine.
const defaultGCPercent = 200

// maxGCPercent bounds what the heap floor (below) may raise the target to: the heap grows at
// most ninefold between collections, whatever is live.
const maxGCPercent = 800

// The heap floor: under load the live heap is about 5 MiB, so at 200 % the collector ran 13
// to 16 times a second at 1,000 creates/s, each cycle scanning every goroutine's stack,
// for a heap of 15 MiB on a machine of gigabytes. After each collection the target is
// raised so that the next one comes when the heap reaches the floor (a sixteenth of the
// budget, at most 128 MiB), within 200 % and maxGCPercent of what is live: a small machine
// keeps 200 % (its floor, 16 MiB in 256 MiB, is what 200 % gives already), and a live heap
// larger than a third of the floor keeps 200 % too.
const (
	heapFloorShare = 16
	maxHeapFloor   = 128 << 20
)

// heapFloorFor is the heap floor within a memory budget.
func heapFloorFor(budget int64) int64 { return min(budget/heapFloorShare, maxHeapFloor) }

// gcPercentFor is the collector's target that lets a live heap grow to floor before the next
// collection, within defaultGCPercent and maxGCPercent.
func gcPercentFor(live, floor int64) int {
	if live <= 0 {
		return maxGCPercent
	}
	return int(min(max(floor*100/live-100, defaultGCPercent), maxGCPercent))
}

// heapFloor sets the collector's target after each collection (gcPercentFor). Its floor is
// 0 (it sets nothing) until start, and again when the operator's GOGC decides.
type heapFloor struct {
	floor atomic.Int64
	set   func(percent int) int // debug.SetGCPercent
	once  sync.Once
}

// processHeapFloor is the process's: the collector's target is the process's.
var processHeapFloor = &heapFloor{set: debug.SetGCPercent}

// start sets the floor and, the first time, begins following collections.
func (h *heapFloor) start(floor int64) {
	h.floor.Store(floor)
	if floor > 0 {
		h.once.Do(h.arm)
	}
}

// gcSentinel is garbage on purpose: its cleanup runs after the collection that finds it
// unreachable. Larger than the tiny allocator's 16 bytes, so that it is an object of its own.
type gcSentinel struct{ _ [32]byte }

// arm leaves a sentinel whose cleanup follows the next collection and arms the one after.
func (h *heapFloor) arm() {
	runtime.AddCleanup(new(gcSentinel), func(h *heapFloor) {
		h.collected()
		h.arm()
	}, h)
}

const liveHeapMetric = "/gc/heap/live:bytes"

// collected sets the target from the heap that the last collection found live.
func (h *heapFloor) collected() {
	floor := h.floor.Load()
	if floor <= 0 {
		return
	}
	sample := []metrics.Sample{{Name: liveHeapMetric}}
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	h.set(gcPercentFor(int64(sample[0].Value.Uint64()), floor))
}

// memoryShare is the part of the memory budget the Go runtime may use before the collector
// works harder to stay under it. The rest is for what the runtime does not count but the
// kernel charges to the process or its control group: the database file's pages mapped in,
// the page cache of the file's writes, the binary itself, the sockets' buffers.
const memoryShare = 0.75

// memoryBudget is the memory this process may use and where that figure came from.
type memoryBudget struct {
	bytes  int64
	source string // "cgroup v2 /sys/fs/cgroup/…/memory.max", "/proc/meminfo"
}

// setMemory sets the collector's target (with floor, the heap floor that follows it) and the
// runtime's soft memory limit from the memory budget, unless the operator's GOGC or
// GOMEMLIMIT says otherwise (each decides its own setting). It logs what it set, so that an
// operator can see what the server assumed, and returns the budget (0: none found).
func setMemory(getenv func(string) string, logger *slog.Logger, floor *heapFloor) int64 {
	gogc, limit := getenv("GOGC"), getenv("GOMEMLIMIT")
	b, err := readMemoryBudget("/")
	attrs := []any{"gogc", gogc}
	if gogc == "" {
		debug.SetGCPercent(defaultGCPercent)
		attrs[1] = strconv.Itoa(defaultGCPercent)
		if err == nil {
			floor.start(heapFloorFor(b.bytes))
			attrs = append(attrs, "gogc_max", maxGCPercent, "heap_floor_mib", heapFloorFor(b.bytes)>>20)
		}
	} else {
		floor.start(0)
	}
	if limit != "" {
		logger.Info("memory", append(attrs, "gomemlimit", limit, "budget_mib", b.bytes>>20)...)
		return b.bytes
	}
	if err != nil {
		// Without a budget the runtime's own default (no limit) stays: the collector's
		// target alone bounds the heap.
		logger.Warn("memory: no budget found; no soft memory limit set (set GOMEMLIMIT)", append(attrs, "err", err)...)
		return 0
	}
	soft := int64(float64(b.bytes) * memoryShare)
	debug.SetMemoryLimit(soft)
	logger.Info("memory", append(attrs, "budget_mib", b.bytes>>20, "budget_from", b.source, "soft_limit_mib", soft>>20,
		"mapped_limit_mib", mappedBudget(b.bytes)>>20)...)
	return b.bytes
}

// mappedBudget is how much of the database file the bbolt engine may keep mapped in the
// resident set (store/bolt's trimmer) within a memory budget: what the runtime's share
// leaves. On a machine of 256 MiB that is 64 MiB; of 24 GiB, more than the file.
func mappedBudget(budget int64) int64 {
	return int64(float64(budget) * (1 - memoryShare))
}

// readMemoryBudget reads the memory the process may use, under root (the file system's root;
// tests give a directory of their own): the smallest limit of the control group the process
// is in and of its ancestors (cgroup v2 memory.max, or v1 memory.limit_in_bytes), else, or
// when that is larger, the machine's memory (MemTotal in /proc/meminfo).
func readMemoryBudget(root string) (memoryBudget, error) {
	machine, err := machineMemory(root)
	if err != nil {
		return memoryBudget{}, err
	}
	best := memoryBudget{bytes: machine, source: "/proc/meminfo"}
	limits, err := cgroupLimits(root)
	if err != nil {
		return best, nil // no control group to read: the machine is the budget
	}
	for _, l := range limits {
		if l.bytes < best.bytes {
			best = l
		}
	}
	return best, nil
}

// machineMemory is MemTotal of /proc/meminfo, in bytes.
func machineMemory(root string) (int64, error) {
	raw, err := os.ReadFile(filepath.Join(root, "proc/meminfo"))
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "MemTotal:" {
			kib, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil || kib <= 0 {
				return 0, fmt.Errorf("/proc/meminfo: MemTotal %q", f[1])
			}
			return kib << 10, nil
		}
	}
	return 0, errors.New("/proc/meminfo: no MemTotal")
}

// cgroupLimits lists the memory limits set on the process's control group and its ancestors,
// from /proc/self/cgroup: the unified hierarchy's memory.max ("max": none) and version 1's
// memory.limit_in_bytes (a number near 2^63: none).
func cgroupLimits(root string) ([]memoryBudget, error) {
	raw, err := os.ReadFile(filepath.Join(root, "proc/self/cgroup"))
	if err != nil {
		return nil, err
	}
	var out []memoryBudget
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		// hierarchy-ID:controllers:path; version 2 is "0::/path"
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		var dir, file, version string
		switch {
		case parts[0] == "0" && parts[1] == "":
			dir, file, version = "sys/fs/cgroup", "memory.max", "cgroup v2"
		case hasController(parts[1], "memory"):
			dir, file, version = "sys/fs/cgroup/memory", "memory.limit_in_bytes", "cgroup v1"
		default:
			continue
		}
		// Inside a container the path is often "/" (its own namespace) or one the container
		// cannot see: each directory from the group up to the mount's root that exists.
		for p := filepath.Clean("/" + parts[2]); ; p = filepath.Dir(p) {
			name := filepath.Join(root, dir, p, file)
			if n, ok := readLimit(name); ok {
				out = append(out, memoryBudget{bytes: n, source: version + " " + filepath.Join("/", dir, p, file)})
			}
			if p == "/" {
				break
			}
		}
	}
	return out, nil
}

func hasController(list, name string) bool {
	for _, c := range strings.Split(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}

// readLimit reads a limit in bytes from a control group file; ok is false when there is no
// such file or no limit in it.
func readLimit(name string) (int64, bool) {
	raw, err := os.ReadFile(name)
	if err != nil {
		return 0, false
	}
	s := strings.TrimSpace(string(raw))
	if s == "max" {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	// version 1 writes "no limit" as the largest page-aligned int64
	if err != nil || n <= 0 || n >= math.MaxInt64&^(1<<12-1) {
		return 0, false
	}
	return n, true
}
