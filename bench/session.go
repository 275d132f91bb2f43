package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// session is one run's world: a work directory with the binaries built into it and the
// processes' logs and data, the processes started, and what else must be undone (control
// groups, databases). close undoes all of it, on success, failure and interrupt alike.
type session struct {
	root   string // the repository: where go.mod is
	dir    string // the work directory
	bin    string // the binaries built
	keep   bool   // keep dir after close (logs, data)
	stderr io.Writer

	procs    []*proc
	cleanups []func() // undone in reverse, after every process has stopped
}

// newSession makes a work directory under parent (the system's temporary directory when
// empty) for a run of the repository at root.
func newSession(root, parent string, keep bool, stderr io.Writer) (*session, error) {
	dir, err := os.MkdirTemp(parent, "payouts-bench-")
	if err != nil {
		return nil, err
	}
	s := &session{root: root, dir: dir, bin: filepath.Join(dir, "bin"), keep: keep, stderr: stderr}
	return s, os.Mkdir(s.bin, 0o755)
}

// close stops every process still running, undoes the rest, and removes the work directory
// unless asked to keep it.
func (s *session) close() {
	for i := len(s.procs) - 1; i >= 0; i-- {
		s.procs[i].stop()
	}
	for i := len(s.cleanups) - 1; i >= 0; i-- {
		s.cleanups[i]()
	}
	if s.keep {
		fmt.Fprintf(s.stderr, "bench: kept %s\n", s.dir)
		return
	}
	os.RemoveAll(s.dir)
}

// onClose runs f when the session closes, after every process has stopped.
func (s *session) onClose(f func()) { s.cleanups = append(s.cleanups, f) }

// subdir makes a new directory in the work directory, named after prefix.
func (s *session) subdir(prefix string) (string, error) {
	return os.MkdirTemp(s.dir, prefix+"-")
}

// findRoot walks up from dir to the directory of the payouts module's go.mod.
func findRoot(dir string) (string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		b, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil && moduleOf(b) == "payouts" {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod of module payouts in %s or above it: run from the repository", dir)
		}
	}
}

func moduleOf(gomod []byte) string {
	for _, line := range strings.Split(string(gomod), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`)
		}
	}
	return ""
}

// build builds the project binary (as payouts) and the given tools of bench/ into the
// session's bin directory; with a build cache (builtIn), each is built once per process
// and linked from there.
func (s *session) build(ctx context.Context, tools ...string) error {
	fmt.Fprintln(s.stderr, "bench: building payouts and", strings.Join(tools, ", "))
	if builtIn != "" {
		for _, name := range append([]string{"payouts"}, tools...) {
			path, err := cachedBuild(ctx, s.root, name)
			if err != nil {
				return err
			}
			if err := linkOrCopy(path, filepath.Join(s.bin, name)); err != nil {
				return err
			}
		}
		return nil
	}
	if out, err := goBuild(ctx, s.root, "-o", filepath.Join(s.bin, "payouts"), "."); err != nil {
		return fmt.Errorf("project build failed: %v\n%s", err, out)
	}
	pkgs := make([]string, len(tools))
	for i, t := range tools {
		pkgs[i] = "payouts/bench/" + t
	}
	if len(pkgs) == 0 {
		return nil
	}
	if out, err := goBuild(ctx, s.root, append([]string{"-o", s.bin + string(filepath.Separator)}, pkgs...)...); err != nil {
		return fmt.Errorf("tools build failed: %v\n%s", err, out)
	}
	return nil
}

// builtIn is a directory where the binaries a process builds are kept for its later
// sessions ("": none, each session builds its own). The tests set it: they run the
// harness a few times over one tree, and linking the same binaries again is most of a
// short run.
var builtIn string

var (
	buildsMu sync.Mutex
	builds   = map[string]func() (string, error){} // binary name → its build, run once
)

// cachedBuild is the path of the binary name ("payouts" or a tool of bench/) in builtIn,
// built by the first session that asks for it.
func cachedBuild(ctx context.Context, root, name string) (string, error) {
	buildsMu.Lock()
	build := builds[name]
	if build == nil {
		build = sync.OnceValues(func() (string, error) {
			path := filepath.Join(builtIn, name)
			pkg := "."
			if name != "payouts" {
				pkg = "payouts/bench/" + name
			}
			if out, err := goBuild(ctx, root, "-o", path, pkg); err != nil {
				return "", fmt.Errorf("%s build failed: %v\n%s", name, err, out)
			}
			return path, nil
		})
		builds[name] = build
	}
	buildsMu.Unlock()
	return build()
}

// linkOrCopy links the file from to to, or copies it where a link cannot be made (another
// file system).
func linkOrCopy(from, to string) error {
	if os.Link(from, to) == nil {
		return nil
	}
	raw, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, raw, 0o755)
}

func goBuild(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "go", append([]string{"build"}, args...)...)
	cmd.Dir = dir
	return cmd.CombinedOutput()
}

// proc is a process the session started: its output goes to a log file of the work directory.
type proc struct {
	name string
	log  string
	cmd  *exec.Cmd
	done chan struct{} // closed when it has exited
}

// start starts the binary bin built into the session with args, its output to the file log.
func (s *session) start(bin, log string, args ...string) (*proc, error) {
	return s.startIn("", bin, log, args...)
}

// startIn is start with the process in the control group directory group (none when empty)
// from before the binary runs, so that its runtime sees the group's limit.
func (s *session) startIn(group, bin, log string, args ...string) (*proc, error) {
	f, err := os.OpenFile(log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cmd := exec.Command(filepath.Join(s.bin, bin), args...)
	if group != "" {
		cmd = exec.Command("/bin/sh", append([]string{"-c", `echo $$ > "$0/cgroup.procs" && exec "$@"`, group, cmd.Path}, args...)...)
	}
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = childEnv(os.Environ())
	cmd.SysProcAttr = childAttr()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &proc{name: strings.TrimSuffix(filepath.Base(log), ".log"), log: log, cmd: cmd, done: make(chan struct{})}
	go func() { cmd.Wait(); close(p.done) }()
	s.procs = append(s.procs, p)
	return p, nil
}

// childEnv is the environment without PAYOUTS_ variables: the payouts binary reads a flag's
// PAYOUTS_ variable, and a PAYOUTS_DATABASE left in a shell must not move the bbolt figures
// onto PostgreSQL.
func childEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "PAYOUTS_") {
			out = append(out, kv)
		}
	}
	return out
}

// childAttr puts a child in a process group of its own, so that a Ctrl-C reaches only the
// runner, which stops the children in order; and kills it if the runner dies first.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop asks the process to end (SIGTERM: a server drains) and kills it after 15 s.
func (p *proc) stop() {
	if p.exited() {
		return
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
}

// stop stops the given processes and forgets them.
func (s *session) stop(ps ...*proc) {
	for _, p := range ps {
		p.stop()
	}
	kept := s.procs[:0]
	for _, p := range s.procs {
		if !p.exited() {
			kept = append(kept, p)
		}
	}
	s.procs = kept
}

// tail is the end of the process's log, for an error message.
func (p *proc) tail() string {
	b, _ := os.ReadFile(p.log)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return strings.TrimSpace(string(b))
}

// waitReady polls url until it answers 200, p exits, or a minute passes (a store of a
// million payouts is copied before the server listens).
func waitReady(ctx context.Context, p *proc, url string) error {
	c := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(time.Minute)
	for {
		req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
		if resp, err := c.Do(req); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		switch {
		case p.exited():
			return fmt.Errorf("%s exited before it was ready: %s", p.name, p.tail())
		case time.Now().After(deadline):
			return fmt.Errorf("not ready after a minute: %s; %s's log ends: %s", url, p.name, p.tail())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// load runs the load generator with args and returns its line.
func (s *session) load(ctx context.Context, args ...string) (loadLine, string, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(s.bin, "loadgen"), args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = childAttr()
	err := cmd.Run()
	text := strings.TrimSpace(out.String())
	if ctx.Err() != nil {
		return loadLine{}, text, ctx.Err()
	}
	if err != nil {
		return loadLine{}, text, fmt.Errorf("%v: %s", err, text)
	}
	lines := strings.Split(text, "\n")
	l, err := parseLoadLine(lines[len(lines)-1])
	if ps := cmd.ProcessState; ps != nil {
		l.CPU = (ps.UserTime() + ps.SystemTime()).Seconds()
	}
	return l, lines[len(lines)-1], err
}

// loadEach runs one load generator per argument list at once, and returns their lines in order.
func (s *session) loadEach(ctx context.Context, argss [][]string) ([]loadLine, []string, error) {
	type result struct {
		l    loadLine
		text string
		err  error
	}
	rs := make([]result, len(argss))
	done := make(chan int)
	for i, args := range argss {
		go func() {
			rs[i].l, rs[i].text, rs[i].err = s.load(ctx, args...)
			done <- i
		}()
	}
	for range argss {
		<-done
	}
	ls, texts := make([]loadLine, len(rs)), make([]string, len(rs))
	var errs []error
	for i, r := range rs {
		ls[i], texts[i] = r.l, r.text
		if r.err != nil {
			errs = append(errs, r.err)
		}
	}
	return ls, texts, errors.Join(errs...)
}
