package main

import "testing"

func TestUpstreamAndThroughProxy(t *testing.T) {
	for _, tc := range []struct {
		name, url, upstream, proxied string
		wantErr                      bool
	}{
		{"the shared server", "postgres://postgres@127.0.0.1:5433/postgres?sslmode=disable", "127.0.0.1:5433",
			"postgres://postgres@127.0.0.1:6543/payouts_bench_x?sslmode=disable", false},
		{"a password and the default port", "postgresql://bench:s%40cret@db.internal/app", "db.internal:5432",
			"postgresql://bench:s%40cret@127.0.0.1:6543/payouts_bench_x", false},
		{"no database in the path", "postgres://u@[::1]:5432", "[::1]:5432", "postgres://u@127.0.0.1:6543/payouts_bench_x", false},
		{"a keyword string", "host=localhost user=postgres", "", "", true},
		{"a unix socket only", "postgres:///postgres?host=/var/run/postgresql", "", "", true},
		{"several hosts", "postgres://u@a:5432,b:5432/db", "", "", true},
		{"another scheme", "mysql://u@h/db", "", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up, err := upstreamOf(tc.url)
			if (err != nil) != tc.wantErr {
				t.Fatalf("upstreamOf: %v, want an error: %v", err, tc.wantErr)
			}
			p, err2 := throughProxy(tc.url, "127.0.0.1:6543", "payouts_bench_x")
			if (err2 != nil) != tc.wantErr {
				t.Fatalf("throughProxy: %v, want an error: %v", err2, tc.wantErr)
			}
			if up != tc.upstream || p != tc.proxied {
				t.Errorf("got %s and %s, want %s and %s", up, p, tc.upstream, tc.proxied)
			}
		})
	}
}

func TestOnlyTheRunnersDatabasesAreDropped(t *testing.T) {
	// refused before any connection is made
	if err := dropDatabase(t.Context(), "postgres://nobody@127.0.0.1:1/postgres", "postgres"); err == nil {
		t.Error("dropDatabase took a database not named " + dbPrefix + "…")
	}
}
