package main

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// loadLine is what one load generator run printed:
// created_per_s=N non201=N errors=N p50_ms=X p99_ms=X (read_per_s and non200 for reads).
type loadLine struct {
	Rate     float64 // successful requests a second
	Bad      int64   // answers other than 201 (creates) or 200 (reads)
	Errors   int64   // requests that got no answer
	P50, P99 float64 // milliseconds
	CPU      float64 // the load generator's CPU seconds (set by session.load, not in the line)
}

func parseLoadLine(s string) (loadLine, error) {
	var l loadLine
	seen := map[string]bool{}
	for _, f := range strings.Fields(s) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return l, fmt.Errorf("load line %q: %q is not key=value", s, f)
		}
		var err error
		switch k {
		case "created_per_s", "read_per_s":
			l.Rate, err = strconv.ParseFloat(v, 64)
			k = "rate"
		case "non201", "non200":
			l.Bad, err = strconv.ParseInt(v, 10, 64)
			k = "bad"
		case "errors":
			l.Errors, err = strconv.ParseInt(v, 10, 64)
		case "p50_ms":
			l.P50, err = strconv.ParseFloat(v, 64)
		case "p99_ms":
			l.P99, err = strconv.ParseFloat(v, 64)
		default:
			continue
		}
		if err != nil {
			return l, fmt.Errorf("load line %q: %s: %v", s, f, err)
		}
		seen[k] = true
	}
	for _, k := range []string{"rate", "bad", "errors", "p50_ms", "p99_ms"} {
		if !seen[k] {
			return l, fmt.Errorf("load line %q: no %s", s, k)
		}
	}
	return l, nil
}

// pyFloat prints a goal as ../shared/bench/ratio.sh and ratio-pg.sh do (Python's str of a
// float: 25.0, 0.7), so that a line reads the same from either harness.
func pyFloat(v float64) string {
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if !strings.ContainsAny(s, ".eInfNaN") {
		s += ".0"
	}
	return s
}

// ratioGoals are what creates, reads and million hold the payouts server to: its rate at
// least MinRatio times the bare stack's, and its worst p99 under MaxP99 ms.
type ratioGoals struct{ MinRatio, MaxP99 float64 }

// ratioSummary is the last line of creates, reads and million: the means of the rounds, the
// ratio of the sums, the worst p99 of the payouts rounds; and whether the goals were met.
func ratioSummary(mode string, payouts, bare []loadLine, g ratioGoals) (string, bool) {
	var sp, sb, p99 float64
	for _, l := range payouts {
		sp += l.Rate
		p99 = math.Max(p99, l.P99)
	}
	for _, l := range bare {
		sb += l.Rate
	}
	r := ratio(sp, sb)
	line := fmt.Sprintf("%s: payouts %.0f/s vs bare stack %.0f/s: ratio %.2f (goal %s), payouts p99 %.1f ms (goal < %s)",
		mode, mean(sp, len(payouts)), mean(sb, len(bare)), r, pyFloat(g.MinRatio), p99, pyFloat(g.MaxP99))
	return line, r >= g.MinRatio && p99 < g.MaxP99
}

// pgGoals are what pg holds the payouts server on PostgreSQL to: one instance at least
// MinRatio times the bare stack, N instances at least MinScale times one, and the one
// instance's p99 under MaxP99 ms.
type pgGoals struct{ MinRatio, MinScale, MaxP99 float64 }

// pgFigures are the runs of one pg measure.
type pgFigures struct {
	Delay       string  // one way, as given (250us)
	InstanceCPU float64 // each instance's cap in CPUs; 0 for none
	Merchants   int
	OwnMerchant bool // each of the N instances had a merchant of its own
	Bare, One   loadLine
	Many        []loadLine // one line per instance
}

// pgSummary is the last line of pg, and whether the goals were met.
func pgSummary(f pgFigures, g pgGoals) (string, bool) {
	var many, manyP99 float64
	for _, l := range f.Many {
		many += l.Rate
		manyP99 = math.Max(manyP99, l.P99)
	}
	r, s := ratio(f.One.Rate, f.Bare.Rate), ratio(many, f.One.Rate)
	how := ""
	if f.InstanceCPU > 0 {
		how = fmt.Sprintf(", each instance capped at %s CPU", strconv.FormatFloat(f.InstanceCPU, 'f', -1, 64))
	}
	if f.Merchants > 1 {
		how += fmt.Sprintf(", %d merchants", f.Merchants)
		if f.OwnMerchant {
			how += " (one per instance in the last run)"
		}
	}
	n := len(f.Many)
	line := fmt.Sprintf("postgres at %s each way%s: bare %.0f/s; one instance %.0f/s (p99 %.1f ms), "+
		"%d instances %.0f/s (p99 %.1f ms): one/bare %.2f (goal %s), %d/one %.2f (goal %s), p99 goal < %s ms",
		f.Delay, how, f.Bare.Rate, f.One.Rate, f.One.P99, n, many, manyP99, r, pyFloat(g.MinRatio), n, s, pyFloat(g.MinScale), pyFloat(g.MaxP99))
	return line, r >= g.MinRatio && s >= g.MinScale && f.One.P99 < g.MaxP99
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func mean(sum float64, n int) float64 {
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// cpuPerCreate is CPU seconds spent over creates made, in microseconds.
func cpuPerCreate(seconds, creates float64) float64 {
	if creates <= 0 {
		return 0
	}
	return seconds / creates * 1e6
}

// ratioLine is a parsed last line of creates, reads or million.
type ratioLine struct {
	Mode                  string
	Payouts, Bare, Ratio  float64
	MinRatio, P99, MaxP99 float64
}

var ratioLineRE = regexp.MustCompile(`^(create|get): payouts (\d+)/s vs bare stack (\d+)/s: ratio ([0-9.]+) \(goal ([0-9.e+]+)\), payouts p99 ([0-9.]+) ms \(goal < ([0-9.e+]+)\)$`)

func parseRatioLine(s string) (ratioLine, error) {
	m := ratioLineRE.FindStringSubmatch(s)
	if m == nil {
		return ratioLine{}, fmt.Errorf("not a ratio line: %q", s)
	}
	f := floats(m[2:])
	return ratioLine{Mode: m[1], Payouts: f[0], Bare: f[1], Ratio: f[2], MinRatio: f[3], P99: f[4], MaxP99: f[5]}, nil
}

// pgLine is a parsed last line of pg.
type pgLine struct {
	Bare, One, OneP99, Many, ManyP99 float64
	Instances                        int
	OneOverBare, ManyOverOne         float64
}

var pgLineRE = regexp.MustCompile(`^postgres at \S+ each way[^:]*: bare (\d+)/s; one instance (\d+)/s \(p99 ([0-9.]+) ms\), (\d+) instances (\d+)/s \(p99 ([0-9.]+) ms\): one/bare ([0-9.]+) \(goal [0-9.e+]+\), \d+/one ([0-9.]+) \(goal [0-9.e+]+\), p99 goal < [0-9.e+]+ ms$`)

func parsePGLine(s string) (pgLine, error) {
	m := pgLineRE.FindStringSubmatch(s)
	if m == nil {
		return pgLine{}, fmt.Errorf("not a pg line: %q", s)
	}
	f := floats(m[1:])
	return pgLine{Bare: f[0], One: f[1], OneP99: f[2], Instances: int(f[3]), Many: f[4], ManyP99: f[5], OneOverBare: f[6], ManyOverOne: f[7]}, nil
}

// floats parses what a regular expression matched as numbers.
func floats(ss []string) []float64 {
	f := make([]float64, len(ss))
	for i, s := range ss {
		f[i], _ = strconv.ParseFloat(s, 64)
	}
	return f
}
