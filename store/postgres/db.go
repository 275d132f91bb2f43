// Package postgres is the storage engine for several instances of the service on one
// PostgreSQL database (github.com/jackc/pgx/v5, pgxpool). Its schema migrations are
// embedded and applied at Open with github.com/pressly/goose/v3, under a PostgreSQL
// advisory lock so that instances starting together migrate once. Every write that the
// bbolt engine does in one transaction is one PostgreSQL transaction here; work queues (the
// lifecycle steps, the outbox) are claimed with FOR UPDATE SKIP LOCKED and a lease, so that
// two instances never run the same step or send the same event, and a crashed instance's
// claims are taken over when their lease ends. It implements rules.Storage.
package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"payouts/rules"
	"payouts/store/postgres/migrations"
)

// Options tune Open.
type Options struct {
	// Instance names this instance's claims (default: host name, process id and a random
	// suffix). Two instances must not share it.
	Instance string
	// MaxConns caps the pool (default 16).
	MaxConns int32
	// Lease is how long a claim stays this instance's (default rules.ClaimLease).
	Lease time.Duration
	// Tracer, when set, is told of every query and batch sent (the tests count round trips).
	Tracer pgx.QueryTracer

	// Trace, when set, spans the payout writes: the group writer's commits and the writes
	// waiting for them, and the lifecycle's steps (trace.go); nil traces nothing.
	Trace rules.Tracer
}

// DB is the service's database on PostgreSQL.
type DB struct {
	pool     *pgxpool.Pool
	instance string
	lease    time.Duration

	// claimed counts the claims this instance holds now (gauges), and takenOver the
	// expired claims of another instance it took.
	claimedSteps, claimedEvents, takenOver atomic.Int64

	// writer commits the payout writes in groups (group.go); steps are the lifecycle
	// claims this instance holds (payouts.go).
	writer *groupWriter
	steps  claimSet
	// trace spans the payout writes (trace.go); nil when tracing is off.
	trace rules.Tracer
}

// Open connects to url, applies the pending migrations, and returns the store.
func Open(ctx context.Context, url string, opt Options) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("database url: %w", err)
	}
	cfg.MaxConns = 16
	if opt.Tracer != nil {
		cfg.ConnConfig.Tracer = opt.Tracer
	}
	if opt.MaxConns > 0 {
		cfg.MaxConns = opt.MaxConns
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open database: %w", err)
	}
	if err := migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, fmt.Errorf("migrate database: %w", err)
	}
	s := &DB{pool: pool, instance: opt.Instance, lease: opt.Lease}
	if s.instance == "" {
		host, _ := os.Hostname()
		var b [4]byte
		rand.Read(b[:])
		s.instance = fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
	}
	if s.lease <= 0 {
		s.lease = rules.ClaimLease
	}
	s.writer = newGroupWriter(pool, s.queueLease(), opt.Trace)
	s.trace = opt.Trace
	return s, nil
}

// migrate applies the embedded migrations, holding an advisory lock so that instances
// starting at once take turns.
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	sqlDB := stdlib.OpenDBFromPool(pool)
	defer sqlDB.Close()
	return migrations.Up(ctx, sqlDB)
}

// Instance is the name of this instance's claims.
func (s *DB) Instance() string { return s.instance }

// Close stops the writer after the group it is committing, gives up the steps this instance
// queued for itself (queueLease), so that another instance takes them when due rather than
// when their lease ends, and closes the pool. The caller has stopped the lifecycle.
func (s *DB) Close(ctx context.Context) error {
	s.writer.close()
	s.releaseQueued()
	s.releaseEvents()
	s.pool.Close()
	return nil
}

// Ping reports whether the pool reaches the database (/readyz).
func (s *DB) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return s.pool.Ping(ctx)
}

// Backup is pg_dump's job on PostgreSQL.
func (s *DB) Backup(ctx context.Context, _ io.Writer) (int64, error) {
	return 0, fmt.Errorf("%w: back up a PostgreSQL database with pg_dump", rules.ErrNotSupported)
}

// Gauges are the pool's and the claims' figures for /metrics.
func (s *DB) Gauges() []rules.Gauge {
	st := s.pool.Stat()
	return []rules.Gauge{
		{Name: "payouts_db_pool_connections", Help: "Connections of the PostgreSQL pool.", Value: float64(st.TotalConns())},
		{Name: "payouts_db_pool_acquired_connections", Help: "Connections of the pool in use.", Value: float64(st.AcquiredConns())},
		{Name: "payouts_db_pool_idle_connections", Help: "Idle connections of the pool.", Value: float64(st.IdleConns())},
		{Name: "payouts_db_pool_max_connections", Help: "The pool's maximum.", Value: float64(st.MaxConns())},
		{Name: "payouts_db_pool_empty_acquires", Help: "Acquires since start that waited for a connection (a pool too small).", Value: float64(st.EmptyAcquireCount())},
		{Name: "payouts_claimed_steps", Help: "Lifecycle steps this instance has claimed and not yet written.", Value: float64(s.claimedSteps.Load())},
		{Name: "payouts_claimed_events", Help: "Outbox events this instance has claimed and not yet settled.", Value: float64(s.claimedEvents.Load())},
		{Name: "payouts_claims_taken_over_total", Help: "Expired claims of another instance this instance took over.", Value: float64(s.takenOver.Load())},
	}
}

// storable reports whether PostgreSQL's text can hold every s: valid UTF-8 without NUL. A
// lookup by a key that is not storable finds nothing (nothing can be stored under it), where
// the query would otherwise fail; the API refuses such values in what it writes.
func storable(ss ...string) bool {
	for _, s := range ss {
		if !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 {
			return false
		}
	}
	return true
}
