package main

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// cgroupRoot is where the control group file systems are mounted.
const cgroupRoot = "/sys/fs/cgroup"

// cgroupPlan is how to cap one process: the group to make and the files to write, in order.
type cgroupPlan struct {
	Dir    string
	Writes []fileWrite
}

type fileWrite struct{ Path, Data string }

// cpuPeriod is the scheduler period of a cap, in microseconds: a cap of C CPUs lets the
// group run C×period in each period.
const cpuPeriod = 100000

// planCgroup chooses how to cap process pid at cpus CPUs in a group of its own named name,
// from what is mounted at root: cgroup v1's cpu controller (cpu.cfs_quota_us) when its
// directory is writable, else cgroup v2 (cpu.max) when the cpu controller is available,
// enabling it for the root's children first when it is not yet.
func planCgroup(root, name string, pid int, cpus float64) (cgroupPlan, error) {
	if cpus <= 0 {
		return cgroupPlan{}, fmt.Errorf("a cap of %v CPUs", cpus)
	}
	quota := strconv.FormatInt(int64(math.Round(cpus*cpuPeriod)), 10)
	period := strconv.Itoa(cpuPeriod)
	v1 := filepath.Join(root, "cpu")
	if writable(v1) && exists(filepath.Join(v1, "cgroup.procs")) && exists(filepath.Join(v1, "cpu.cfs_quota_us")) {
		dir := filepath.Join(v1, name)
		return cgroupPlan{Dir: dir, Writes: []fileWrite{
			{filepath.Join(dir, "cpu.cfs_period_us"), period},
			{filepath.Join(dir, "cpu.cfs_quota_us"), quota},
			{filepath.Join(dir, "cgroup.procs"), strconv.Itoa(pid)},
		}}, nil
	}
	if hasWord(filepath.Join(root, "cgroup.controllers"), "cpu") {
		dir := filepath.Join(root, name)
		var ws []fileWrite
		if !hasWord(filepath.Join(root, "cgroup.subtree_control"), "cpu") {
			ws = append(ws, fileWrite{filepath.Join(root, "cgroup.subtree_control"), "+cpu"})
		}
		ws = append(ws,
			fileWrite{filepath.Join(dir, "cpu.max"), quota + " " + period},
			fileWrite{filepath.Join(dir, "cgroup.procs"), strconv.Itoa(pid)})
		return cgroupPlan{Dir: dir, Writes: ws}, nil
	}
	return cgroupPlan{}, errors.New("no writable cpu control group here to cap a server's CPU (cgroup v1 cpu or v2 cpu.max, as root)")
}

// capCPU moves process pid into a new control group capped at cpus CPUs, removed when the
// session closes.
func (s *session) capCPU(pid int, cpus float64) error {
	name := fmt.Sprintf("payouts-bench-%d-%d", os.Getpid(), pid)
	plan, err := planCgroup(cgroupRoot, name, pid, cpus)
	if err != nil {
		return err
	}
	if err := os.Mkdir(plan.Dir, 0o755); err != nil {
		return fmt.Errorf("cap pid %d at %v CPUs: %w", pid, cpus, err)
	}
	s.onClose(func() { os.Remove(plan.Dir) })
	for _, w := range plan.Writes {
		if err := os.WriteFile(w.Path, []byte(w.Data), 0o644); err != nil {
			return fmt.Errorf("cannot cap pid %d at %v CPUs: %w", pid, cpus, err)
		}
	}
	return nil
}

func writable(dir string) bool { return syscall.Access(dir, 2 /* W_OK */) == nil }

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// hasWord reports whether the file holds word among its space-separated words.
func hasWord(path, word string) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	for _, w := range strings.Fields(string(b)) {
		if w == word {
			return true
		}
	}
	return false
}
