package main

// Smoke tests of the harness itself: each command runs briefly against the real binaries,
// with goals nobody misses, so that CI notices when a command no longer runs or a side stops
// answering; the figures themselves are not judged here, so the runs go in parallel (most
// of each is building and waiting for servers and settlements).

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "payouts-bench-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	builtIn = dir // every run below links the binaries of the first
	// The runs (latency, memory, million) all at once, where go test's default of
	// GOMAXPROCS ran two and then the third: in a whole run of the repository's tests the
	// package held one of go test's two slots 34 s instead of 24 s.
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		flag.Set("test.parallel", "4")
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// runBench runs the runner as `go run ./bench args…` would, its work directory under the
// test's, and returns what it printed.
func runBench(t *testing.T, args ...string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var out, errs bytes.Buffer
	args = append(args, "-work", t.TempDir())
	err := run(ctx, args, func(string) string { return "" }, &out, &errs)
	if err != nil {
		t.Fatalf("go run ./bench %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, out.String(), errs.String())
	}
	t.Logf("go run ./bench %s:\n%s", strings.Join(args, " "), out.String())
	return strings.Split(strings.TrimSpace(out.String()), "\n")
}

// checkServed checks the load lines printed under each of the prefixes: at least one each,
// every one with requests served and no failures.
func checkServed(t *testing.T, lines []string, prefixes ...string) {
	t.Helper()
	for _, prefix := range prefixes {
		n := 0
		for _, line := range lines {
			text, ok := strings.CutPrefix(line, prefix)
			if !ok {
				continue
			}
			n++
			l, err := parseLoadLine(strings.TrimSpace(text))
			if err != nil {
				t.Errorf("%s: %v", prefix, err)
				continue
			}
			if l.Rate <= 0 || l.Bad != 0 || l.Errors != 0 {
				t.Errorf("%s served %.0f/s with %d wrong answers and %d errors", prefix, l.Rate, l.Bad, l.Errors)
			}
		}
		if n == 0 {
			t.Errorf("no line begins %q", prefix)
		}
	}
}

// checkCPULines checks that a run said where its CPU went: a line under each round (the
// server's and the load generator's share, the machine's), and the summary before the last.
func checkCPULines(t *testing.T, lines []string) {
	t.Helper()
	rounds := regexp.MustCompile(`^  cpu per request: server [1-9]\d* us, load generator [1-9]\d* us; machine \d+ % busy$`)
	n := 0
	for _, l := range lines {
		if rounds.MatchString(l) {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d rounds' cpu lines, want 2 (one per server): %q", n, lines)
	}
	if len(lines) < 2 || !strings.HasPrefix(lines[len(lines)-2], "cpu per request: payouts ") {
		t.Errorf("no cpu summary before the last line: %q", lines)
	}
}

func checkHeader(t *testing.T, lines []string) {
	t.Helper()
	if len(lines) == 0 || !strings.HasPrefix(lines[0], "# measured ") || !strings.Contains(lines[0], " cores, go") || !strings.Contains(lines[0], ", commit ") {
		t.Errorf("no header line first: %q", lines)
	}
}

func TestCreatesAndReadsRun(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binaries and drives them for seconds")
	}
	for _, tc := range []struct {
		mode  string
		extra []string
	}{
		{"creates", nil},
		{"reads", nil},
		{"creates", []string{"-bare-signed"}}, // every request the bare stack answers 201 was signed right
		{"reads", []string{"-bare-signed"}},
	} {
		mode := tc.mode
		t.Run(strings.Join(append([]string{mode}, tc.extra...), " "), func(t *testing.T) {
			t.Parallel()
			lines := runBench(t, append([]string{mode, "-duration", "1s", "-rounds", "1", "-min-ratio", "0", "-max-p99-ms", "1e6"}, tc.extra...)...)
			checkHeader(t, lines)
			checkServed(t, lines, "payouts  round 1:", "baseline round 1:")
			checkCPULines(t, lines)
			if mode == "creates" {
				checkPerPayout(t, lines, 1)
			}
			last, err := parseRatioLine(lines[len(lines)-1])
			if err != nil {
				t.Fatal(err)
			}
			if want := map[string]string{"creates": "create", "reads": "get"}[mode]; last.Mode != want || last.Payouts <= 0 || last.Bare <= 0 {
				t.Errorf("last line %+v", last)
			}
		})
	}
}

func TestMillionSeedsOnceAndReadsAfterTheStoredPayouts(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binaries and drives them for seconds")
	}
	seed := filepath.Join(t.TempDir(), "seed")
	args := []string{"million", "-payouts", "2000", "-seed-dir", seed, "-duration", "1s", "-rounds", "1", "-min-ratio", "0", "-max-p99-ms", "1e6"}
	lines := runBench(t, args...)
	checkHeader(t, lines)
	checkServed(t, lines, "payouts  round 1:", "baseline round 1:")
	var modes []string
	for _, l := range lines {
		if r, err := parseRatioLine(l); err == nil {
			modes = append(modes, r.Mode)
		}
	}
	if strings.Join(modes, ",") != "create,get" {
		t.Errorf("summaries of %v, want create then get", modes)
	}
	if !strings.Contains(strings.Join(lines, "\n"), "reading ids 2001..") { // after the 2000 stored
		t.Errorf("reads do not begin after the stored payouts")
	}
	if _, err := os.Stat(filepath.Join(seed, "payouts.db")); err != nil {
		t.Fatal(err)
	}
	note, _ := os.ReadFile(filepath.Join(seed, seedNote))
	if !strings.Contains(string(note), "2000 settled payouts") {
		t.Errorf("seed note %q", note)
	}
}

func TestPGRuns(t *testing.T) {
	t.Parallel()
	url := os.Getenv("PAYOUTS_TEST_DATABASE_URL")
	if url == "" || testing.Short() {
		t.Skip("PAYOUTS_TEST_DATABASE_URL is not set (a PostgreSQL server whose databases may be created and dropped)")
	}
	lines := runBench(t, "pg", "-database-url", url, "-duration", "1s", "-instances", "2", "-merchants", "2",
		"-min-ratio", "0", "-min-scale", "0", "-max-p99-ms", "1e6")
	checkHeader(t, lines)
	checkServed(t, lines, "bare chi+pgx:", "payouts, one instance:", "payouts, 2 instances:", "                      ")
	last, err := parsePGLine(lines[len(lines)-1])
	if err != nil {
		t.Fatal(err)
	}
	if last.Instances != 2 || last.Bare <= 0 || last.One <= 0 || last.Many <= 0 {
		t.Errorf("last line %+v", last)
	}
}

func TestLatencyRuns(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binaries and drives them for seconds")
	}
	lines := runBench(t, "latency", "-rates", "100,200", "-duration", "500ms", "-rounds", "2", "-max-p99-ratio", "1e6", "-min-p99-ms", "1e6", "-max-p999-ms", "1e6")
	checkHeader(t, lines)
	for _, prefix := range []string{"rate 100 payouts: ", "rate 100 bare:    ", "rate 200 payouts: ", "rate 200 bare:    "} {
		found := 0
		for _, l := range lines {
			if text, ok := strings.CutPrefix(l, prefix); ok {
				found++
				if o, err := parseOpenLine(text); err != nil || o.OK == 0 || o.Bad+o.Errors+o.Dropped != 0 {
					t.Errorf("%s%s: %+v, %v", prefix, text, o, err)
				}
			}
		}
		if found != 2 {
			t.Errorf("%d lines begin %q, want one a round (2)", found, prefix)
		}
	}
	checkPerPayout(t, lines, 4)
	bare := regexp.MustCompile(`^\s*bare stack allocated per create: [0-9.]+ KiB, [1-9]\d* allocations \([1-9][0-9,]* created\)$`)
	if n := len(slices.DeleteFunc(slices.Clone(lines), func(l string) bool { return !bare.MatchString(l) })); n != 4 {
		t.Errorf("%d lines of the bare stack's garbage per create, want one a run (4): %q", n, lines)
	}
	// A rate measured while the hypervisor took its share is marked so after its verdict
	// (stealNote), which a test run on a busy host sees.
	const rate = `\(medians of 2 runs each\)( \[not a quiet machine: [^]]+\])?`
	if last := lines[len(lines)-1]; !regexp.MustCompile(`^create latency: ok rate 100/s: .*` + rate + ` \| ok rate 200/s: .*` + rate + `$`).MatchString(last) {
		t.Errorf("last line %q", last)
	}
}

// checkPerPayout checks that a run said n times what the server allocated per payout it
// created, with every payout created and settled.
func checkPerPayout(t *testing.T, lines []string, n int) {
	t.Helper()
	re := regexp.MustCompile(`^\s*allocated per payout: [0-9.]+ KiB, \d+ allocations \(([0-9,]+) created, ([0-9,]+) finished\)$`)
	got := 0
	for _, l := range lines {
		if m := re.FindStringSubmatch(l); m != nil {
			got++
			if m[1] == "0" {
				t.Errorf("no payout created: %q", l)
			}
		}
	}
	if got != n {
		t.Errorf("%d lines of the garbage per payout, want %d: %q", got, n, lines)
	}
}

func TestMemoryRuns(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binaries and drives them for seconds")
	}
	if os.Geteuid() != 0 {
		t.Skip("a memory control group needs root")
	}
	if _, err := planMemoryGroup(cgroupRoot, "probe", 1<<30); err != nil {
		t.Skip(err)
	}
	lines := runBench(t, "memory", "-memory-max", "1G", "-duration", "2s", "-max-rss-mb", "1024")
	checkHeader(t, lines)
	checkServed(t, lines, "create:", "read:")
	checkPerPayout(t, lines, 1)
	if last := lines[len(lines)-1]; !regexp.MustCompile(`^memory: cap 1G, server alive yes, oom kills 0, failed requests 0, peak RSS [1-9]\d* MiB \(goal <= 1024\)$`).MatchString(last) {
		t.Errorf("last line %q", last)
	}
}
