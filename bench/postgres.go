package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// dbPrefix begins the name of every database the runner makes, and of none other it drops.
const dbPrefix = "payouts_bench_"

// upstreamOf is the host:port of the server of a postgres:// URL, for the proxy to dial.
func upstreamOf(dbURL string) (string, error) {
	u, err := parsePostgresURL(dbURL)
	if err != nil {
		return "", err
	}
	port := u.Port()
	if port == "" {
		port = "5432"
	}
	return net.JoinHostPort(u.Hostname(), port), nil
}

// throughProxy is dbURL pointing at database name through the proxy at proxyAddr: same
// user, password and parameters.
func throughProxy(dbURL, proxyAddr, name string) (string, error) {
	u, err := parsePostgresURL(dbURL)
	if err != nil {
		return "", err
	}
	u.Host = proxyAddr
	u.Path = "/" + name
	u.RawPath = ""
	return u.String(), nil
}

func parsePostgresURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("database URL: %v", err)
	}
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return nil, fmt.Errorf("database URL: want postgres://user@host:port/db, got scheme %q", u.Scheme)
	}
	if u.Hostname() == "" || strings.Contains(u.Host, ",") {
		return nil, fmt.Errorf("database URL: want one host (a TCP address the proxy can dial), got %q", u.Host)
	}
	return u, nil
}

// newDatabase creates a database of a new name on the server of adminURL, dropped when the
// session closes, and returns its name.
func (s *session) newDatabase(ctx context.Context, adminURL string) (string, error) {
	b := make([]byte, 6)
	rand.Read(b)
	name := dbPrefix + hex.EncodeToString(b)
	if err := adminExec(ctx, adminURL, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", fmt.Errorf("cannot create a database on the server: %w", err)
	}
	s.onClose(func() {
		// the run's context may be cancelled already: the drop gets its own time
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := dropDatabase(ctx, adminURL, name); err != nil {
			fmt.Fprintf(s.stderr, "bench: database %s not dropped: %v\n", name, err)
		}
	})
	return name, nil
}

func dropDatabase(ctx context.Context, adminURL, name string) error {
	if !strings.HasPrefix(name, dbPrefix) {
		return fmt.Errorf("not a database of the runner: %s", name)
	}
	return adminExec(ctx, adminURL, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
}

func adminExec(ctx context.Context, adminURL, sql string) error {
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, sql)
	return err
}
