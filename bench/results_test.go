package main

import (
	"testing"
	"time"
)

func TestParseLoadLine(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		want       loadLine
		wantErr    bool
	}{
		{"creates", "created_per_s=5192 non201=0 errors=0 p50_ms=11.64 p99_ms=25.73",
			loadLine{Rate: 5192, P50: 11.64, P99: 25.73}, false},
		{"reads with failures", "read_per_s=31404 non200=3 errors=2 p50_ms=1.50 p99_ms=7.80",
			loadLine{Rate: 31404, Bad: 3, Errors: 2, P50: 1.5, P99: 7.8}, false},
		{"a field it does not know is skipped", "created_per_s=1 non201=0 errors=0 p50_ms=1 p99_ms=2 p999_ms=9",
			loadLine{Rate: 1, P50: 1, P99: 2}, false},
		{"no p99", "created_per_s=5192 non201=0 errors=0 p50_ms=11.64", loadLine{}, true},
		{"no rate", "non201=0 errors=0 p50_ms=1 p99_ms=2", loadLine{}, true},
		{"not a number", "created_per_s=fast non201=0 errors=0 p50_ms=1 p99_ms=2", loadLine{}, true},
		{"an error message", "Get http://127.0.0.1:1: connection refused", loadLine{}, true},
		{"empty", "", loadLine{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseLoadLine(tc.line)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want an error: %v", err, tc.wantErr)
			}
			if err == nil && got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestPyFloatPrintsGoalsAsTheScriptsDid(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{{25, "25.0"}, {0.7, "0.7"}, {3, "3.0"}, {1.6, "1.6"}, {100, "100.0"}, {0, "0.0"}, {0.35, "0.35"}} {
		if got := pyFloat(tc.v); got != tc.want {
			t.Errorf("pyFloat(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

func rates(rs ...float64) []loadLine {
	ls := make([]loadLine, len(rs))
	for i, r := range rs {
		ls[i] = loadLine{Rate: r, P99: 10}
	}
	return ls
}

func TestRatioSummary(t *testing.T) {
	g := ratioGoals{MinRatio: 0.7, MaxP99: 25}
	for _, tc := range []struct {
		name          string
		mode          string
		payouts, bare []loadLine
		want          string
		met           bool
	}{
		{"the ratio is of the sums, the p99 the worst", "create",
			[]loadLine{{Rate: 9000, P99: 12}, {Rate: 11000, P99: 17.26}}, rates(12000, 13000),
			"create: payouts 10000/s vs bare stack 12500/s: ratio 0.80 (goal 0.7), payouts p99 17.3 ms (goal < 25.0)", true},
		{"reads", "get", rates(31404), rates(38074),
			"get: payouts 31404/s vs bare stack 38074/s: ratio 0.82 (goal 0.7), payouts p99 10.0 ms (goal < 25.0)", true},
		{"a ratio at the goal meets it", "create", rates(7000), rates(10000),
			"create: payouts 7000/s vs bare stack 10000/s: ratio 0.70 (goal 0.7), payouts p99 10.0 ms (goal < 25.0)", true},
		{"below the ratio", "create", rates(6990), rates(10000),
			"create: payouts 6990/s vs bare stack 10000/s: ratio 0.70 (goal 0.7), payouts p99 10.0 ms (goal < 25.0)", false},
		{"a p99 at the goal misses it", "create", []loadLine{{Rate: 10000, P99: 25}}, rates(10000),
			"create: payouts 10000/s vs bare stack 10000/s: ratio 1.00 (goal 0.7), payouts p99 25.0 ms (goal < 25.0)", false},
		{"a bare stack that served nothing is a ratio of 0", "create", rates(100), rates(0),
			"create: payouts 100/s vs bare stack 0/s: ratio 0.00 (goal 0.7), payouts p99 10.0 ms (goal < 25.0)", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line, met := ratioSummary(tc.mode, tc.payouts, tc.bare, g)
			if line != tc.want || met != tc.met {
				t.Errorf("got %q, met %v\nwant %q, met %v", line, met, tc.want, tc.met)
			}
			if _, err := parseRatioLine(line); err != nil {
				t.Errorf("the line does not parse back: %v", err)
			}
		})
	}
}

func TestPGSummary(t *testing.T) {
	g := pgGoals{MinRatio: 3, MinScale: 1, MaxP99: 100}
	one := loadLine{Rate: 5500, P99: 26.04}
	for _, tc := range []struct {
		name string
		f    pgFigures
		want string
		met  bool
	}{
		{"ratio-pg.sh's line", pgFigures{Delay: "250us", Merchants: 1, Bare: loadLine{Rate: 380}, One: one,
			Many: []loadLine{{Rate: 2600, P99: 30}, {Rate: 2700, P99: 41.55}}},
			"postgres at 250us each way: bare 380/s; one instance 5500/s (p99 26.0 ms), 2 instances 5300/s (p99 41.5 ms): one/bare 14.47 (goal 3.0), 2/one 0.96 (goal 1.0), p99 goal < 100.0 ms", false},
		{"capped, eight merchants, scaling", pgFigures{Delay: "250us", InstanceCPU: 0.35, Merchants: 8, Bare: loadLine{Rate: 380}, One: one,
			Many: []loadLine{{Rate: 3000}, {Rate: 3000}, {Rate: 3000}}},
			"postgres at 250us each way, each instance capped at 0.35 CPU, 8 merchants: bare 380/s; one instance 5500/s (p99 26.0 ms), 3 instances 9000/s (p99 0.0 ms): one/bare 14.47 (goal 3.0), 3/one 1.64 (goal 1.0), p99 goal < 100.0 ms", true},
		{"a merchant per instance", pgFigures{Delay: "250us", InstanceCPU: 0.3, Merchants: 3, OwnMerchant: true, Bare: loadLine{Rate: 380}, One: one,
			Many: []loadLine{{Rate: 3000}, {Rate: 3000}, {Rate: 3000}}},
			"postgres at 250us each way, each instance capped at 0.3 CPU, 3 merchants (one per instance in the last run): bare 380/s; one instance 5500/s (p99 26.0 ms), 3 instances 9000/s (p99 0.0 ms): one/bare 14.47 (goal 3.0), 3/one 1.64 (goal 1.0), p99 goal < 100.0 ms", true},
		{"below the bare stack ratio", pgFigures{Delay: "0", Merchants: 1, Bare: loadLine{Rate: 2000}, One: one, Many: []loadLine{{Rate: 6000}}},
			"postgres at 0 each way: bare 2000/s; one instance 5500/s (p99 26.0 ms), 1 instances 6000/s (p99 0.0 ms): one/bare 2.75 (goal 3.0), 1/one 1.09 (goal 1.0), p99 goal < 100.0 ms", false},
		{"one instance's p99 over the goal", pgFigures{Delay: "250us", Merchants: 1, Bare: loadLine{Rate: 380}, One: loadLine{Rate: 5500, P99: 100}, Many: []loadLine{{Rate: 6000}}},
			"postgres at 250us each way: bare 380/s; one instance 5500/s (p99 100.0 ms), 1 instances 6000/s (p99 0.0 ms): one/bare 14.47 (goal 3.0), 1/one 1.09 (goal 1.0), p99 goal < 100.0 ms", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line, met := pgSummary(tc.f, g)
			if line != tc.want || met != tc.met {
				t.Errorf("got %q, met %v\nwant %q, met %v", line, met, tc.want, tc.met)
			}
			if _, err := parsePGLine(line); err != nil {
				t.Errorf("the line does not parse back: %v", err)
			}
		})
	}
}

func TestParseLastLines(t *testing.T) {
	r, err := parseRatioLine("create: payouts 5192/s vs bare stack 4583/s: ratio 1.13 (goal 0.7), payouts p99 25.7 ms (goal < 25.0)")
	want := ratioLine{Mode: "create", Payouts: 5192, Bare: 4583, Ratio: 1.13, MinRatio: 0.7, P99: 25.7, MaxP99: 25}
	if err != nil || r != want {
		t.Errorf("got %+v, %v; want %+v", r, err, want)
	}
	p, err := parsePGLine("postgres at 250us each way: bare 380/s; one instance 5500/s (p99 26.0 ms), 2 instances 5300/s (p99 41.5 ms): one/bare 14.47 (goal 3.0), 2/one 0.96 (goal 1.0), p99 goal < 100.0 ms")
	wantPG := pgLine{Bare: 380, One: 5500, OneP99: 26, Instances: 2, Many: 5300, ManyP99: 41.5, OneOverBare: 14.47, ManyOverOne: 0.96}
	if err != nil || p != wantPG {
		t.Errorf("got %+v, %v; want %+v", p, err, wantPG)
	}
	for _, bad := range []string{"", "payouts  round 1: created_per_s=1 non201=0 errors=0 p50_ms=1 p99_ms=1", "bench: interrupted"} {
		if _, err := parseRatioLine(bad); err == nil {
			t.Errorf("parseRatioLine(%q) took it", bad)
		}
		if _, err := parsePGLine(bad); err == nil {
			t.Errorf("parsePGLine(%q) took it", bad)
		}
	}
}

func TestReadCountAndCPUPerCreate(t *testing.T) {
	// ../shared/bench/ratio.sh: int(min(a, b) * 3 * 0.9)
	for _, tc := range []struct {
		a, b float64
		want int
	}{{5000, 4000, 10800}, {4000, 5000, 10800}, {1, 1, 2}, {0, 5000, 0}} {
		if got := readCount(tc.a, tc.b, 3*time.Second); got != tc.want {
			t.Errorf("readCount(%v, %v) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
	for _, tc := range []struct{ seconds, creates, want float64 }{{1.5, 15000, 100}, {3, 0, 0}, {0, 100, 0}} {
		if got := cpuPerCreate(tc.seconds, tc.creates); got != tc.want {
			t.Errorf("cpuPerCreate(%v, %v) = %v, want %v", tc.seconds, tc.creates, got, tc.want)
		}
	}
	run := instancesRun{lines: rates(2600, 2700), duration: 15 * time.Second}
	if got := run.creates(); got != 79500 {
		t.Errorf("creates() = %v, want 79500", got)
	}
}

func TestCurveTable(t *testing.T) {
	got := curveTable([]curvePoint{
		{instances: 1, merchants: 1, rate: 2000, p99: 30, cpuInstances: 110, cpuPostgres: 100},
		{instances: 2, merchants: 1, rate: 3500.4, p99: 41.25, cpuInstances: 120, cpuPostgres: 105},
		{instances: 1, merchants: 8, rate: 2100, p99: 20},
		{instances: 2, merchants: 8, rate: 4200, p99: 20},
	})
	want := "| instances | merchants | creates/s | × one | p99 | CPU per create (instances + postgres) |\n" +
		"|---|---|---|---|---|---|\n" +
		"| 1 | 1 | 2,000 | 1.00 | 30.0 ms | 110 + 100 µs |\n" +
		"| 2 | 1 | 3,500 | 1.75 | 41.2 ms | 120 + 105 µs |\n" +
		"| 1 | 8 | 2,100 | 1.00 | 20.0 ms | 0 + 0 µs |\n" +
		"| 2 | 8 | 4,200 | 2.00 | 20.0 ms | 0 + 0 µs |\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	for _, tc := range []struct {
		v    float64
		want string
	}{{0, "0"}, {999, "999"}, {1000, "1,000"}, {56000.4, "56,000"}, {1234567, "1,234,567"}} {
		if got := thousands(tc.v); got != tc.want {
			t.Errorf("thousands(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

func TestParseCounts(t *testing.T) {
	for _, tc := range []struct {
		s       string
		want    []int
		wantErr bool
	}{{"1,8", []int{1, 8}, false}, {"4", []int{4}, false}, {" 1, 2 ", []int{1, 2}, false}, {"1,,8", nil, true}, {"0", nil, true}, {"eight", nil, true}} {
		got, err := parseCounts(tc.s)
		if (err != nil) != tc.wantErr || len(got) != len(tc.want) {
			t.Errorf("parseCounts(%q) = %v, %v", tc.s, got, err)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("parseCounts(%q) = %v, want %v", tc.s, got, tc.want)
			}
		}
	}
}
