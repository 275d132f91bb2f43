package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// machineLine says when, on what and of which code a figure was measured, so that a figure
// quoted in the docs carries it:
//
//	# measured 2026-11-26 17:30 UTC on Linux 6.18.44, AMD EPYC, 2 cores, go1.26.8, commit 688e5e0
func machineLine(ctx context.Context, root string, now time.Time) string {
	return fmt.Sprintf("# measured %s UTC on %s, %s, %d cores, %s, commit %s",
		now.UTC().Format("2006-01-02 15:04"), kernel(), cpuModel(), runtime.NumCPU(), goVersion(ctx, root), commit(ctx, root))
}

// kernel is what `uname -sr` prints.
func kernel() string {
	sys, err1 := os.ReadFile("/proc/sys/kernel/ostype")
	rel, err2 := os.ReadFile("/proc/sys/kernel/osrelease")
	if err1 != nil || err2 != nil {
		return runtime.GOOS
	}
	return strings.TrimSpace(string(sys)) + " " + strings.TrimSpace(string(rel))
}

// cpuModel is the first "model name" of /proc/cpuinfo.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

// goVersion is the version of the go command that builds the binaries measured.
func goVersion(ctx context.Context, root string) string {
	out, err := output(ctx, root, "go", "env", "GOVERSION")
	if err != nil || out == "" {
		return runtime.Version()
	}
	return out
}

// commit is the tree's commit, "with changes" when tracked files differ from it.
func commit(ctx context.Context, root string) string {
	c, err := output(ctx, root, "git", "rev-parse", "--short", "HEAD")
	if err != nil || c == "" {
		return "unknown (no git)"
	}
	if st, err := output(ctx, root, "git", "status", "--porcelain", "--untracked-files=no"); err == nil && st != "" {
		c += " with uncommitted changes"
	}
	return c
}

// output runs name args in dir and returns its standard output, trimmed.
func output(ctx context.Context, dir, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	return strings.TrimSpace(string(out)), err
}
