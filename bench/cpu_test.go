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
