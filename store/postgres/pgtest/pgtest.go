// Package pgtest gives tests a fresh PostgreSQL database of their own, on the server that
// PAYOUTS_TEST_DATABASE_URL names (.ci/run starts one); without it the test is skipped.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvURL names the server the PostgreSQL tests use.
const EnvURL = "PAYOUTS_TEST_DATABASE_URL"

var skipped atomic.Int64

// Available reports whether PostgreSQL tests can run.
func Available() bool { return os.Getenv(EnvURL) != "" }

// Database creates an empty database for t and returns its URL; it is dropped when t ends.
// Without PAYOUTS_TEST_DATABASE_URL, t is skipped with a message that says so.
func Database(t testing.TB) string {
	t.Helper()
	base := os.Getenv(EnvURL)
	if base == "" {
		skipped.Add(1)
		t.Skip("PostgreSQL tests skipped: set " + EnvURL + " (.ci/run starts a throw-away server)")
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s: %v", EnvURL, err)
	}
	var b [6]byte
	rand.Read(b[:])
	name := "payouts_test_" + hex.EncodeToString(b[:])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("connect to %s: %v", EnvURL, err)
	}
	defer admin.Close(context.Background())
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Logf("drop database %s: %v", name, err)
			return
		}
		defer c.Close(context.Background())
		if _, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Logf("drop database %s: %v", name, err)
		}
	})
	u.Path = "/" + name
	return u.String()
}
