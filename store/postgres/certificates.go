package postgres

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/caddyserver/certmagic"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// CertificateStorage keeps the HTTPS certificates that ACME obtains (--https) in the
// tls_certificates table, through certmagic's Storage interface, so that the instances on
// one database share them: the first to need a certificate obtains it under a lock, the
// others find it stored. Keys are slash-separated paths, as certmagic's file storage makes
// them; a key that prefixes others is a "directory".
type CertificateStorage struct {
	db *DB

	mu sync.Mutex
	// held is the connection holding each lock this instance took: a PostgreSQL advisory
	// lock belongs to a session, and a crashed instance's session ends with its locks.
	held map[string]*pgxpool.Conn
}

// CertificateStorage returns the store of the HTTPS certificates.
func (s *DB) CertificateStorage() *CertificateStorage {
	return &CertificateStorage{db: s, held: map[string]*pgxpool.Conn{}}
}

var _ certmagic.Storage = (*CertificateStorage)(nil)

// Store writes value at key, replacing what was there.
func (c *CertificateStorage) Store(ctx context.Context, key string, value []byte) error {
	_, err := c.db.pool.Exec(ctx, `INSERT INTO tls_certificates (key, value, modified) VALUES ($1, $2, now())
		ON CONFLICT (key) DO UPDATE SET value = excluded.value, modified = excluded.modified`, key, value)
	if err != nil {
		return fmt.Errorf("store %s: %w", key, err)
	}
	return nil
}

// Load reads the value at key; fs.ErrNotExist when there is none.
func (c *CertificateStorage) Load(ctx context.Context, key string) ([]byte, error) {
	var value []byte
	err := c.db.pool.QueryRow(ctx, `SELECT value FROM tls_certificates WHERE key = $1`, key).Scan(&value)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("load %s: %w", key, fs.ErrNotExist)
	}
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", key, err)
	}
	return value, nil
}

// Delete removes key and everything under it; a missing key is not an error.
func (c *CertificateStorage) Delete(ctx context.Context, key string) error {
	_, err := c.db.pool.Exec(ctx, `DELETE FROM tls_certificates WHERE key = $1 OR starts_with(key, $1 || '/')`, key)
	if err != nil {
		return fmt.Errorf("delete %s: %w", key, err)
	}
	return nil
}

// Exists reports whether key is stored, or prefixes what is.
func (c *CertificateStorage) Exists(ctx context.Context, key string) bool {
	var ok bool
	err := c.db.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM tls_certificates WHERE key = $1 OR starts_with(key, $1 || '/'))`,
		key).Scan(&ok)
	return err == nil && ok
}

// List returns the keys under prefix: its children (the files and "directories" right
// under it), or with recursive every key and directory below it, as certmagic's file
// storage walks them. A prefix with nothing under it is fs.ErrNotExist.
func (c *CertificateStorage) List(ctx context.Context, prefix string, recursive bool) ([]string, error) {
	prefix = strings.TrimSuffix(prefix, "/")
	under := prefix + "/"
	if prefix == "" {
		under = ""
	}
	rows, err := c.db.pool.Query(ctx, `SELECT key FROM tls_certificates WHERE starts_with(key, $1) ORDER BY key`, under)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", prefix, err)
	}
	keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", prefix, err)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("list %s: %w", prefix, fs.ErrNotExist)
	}
	seen := map[string]bool{}
	var out []string
	add := func(k string) {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	for _, k := range keys {
		parts := strings.Split(strings.TrimPrefix(k, under), "/")
		if !recursive {
			add(under + parts[0])
			continue
		}
		for i := range parts {
			add(under + strings.Join(parts[:i+1], "/"))
		}
	}
	slices.Sort(out)
	return out, nil
}

// Stat describes key: a stored value, or a directory when it only prefixes others.
func (c *CertificateStorage) Stat(ctx context.Context, key string) (certmagic.KeyInfo, error) {
	var size int64
	var modified time.Time
	err := c.db.pool.QueryRow(ctx, `SELECT octet_length(value), modified FROM tls_certificates WHERE key = $1`, key).
		Scan(&size, &modified)
	if err == nil {
		return certmagic.KeyInfo{Key: key, Modified: modified, Size: size, IsTerminal: true}, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return certmagic.KeyInfo{}, fmt.Errorf("stat %s: %w", key, err)
	}
	if c.Exists(ctx, key) {
		return certmagic.KeyInfo{Key: key, IsTerminal: false}, nil
	}
	return certmagic.KeyInfo{}, fmt.Errorf("stat %s: %w", key, fs.ErrNotExist)
}

// lockClass keeps these advisory locks apart from any other the database's users take
// (goose's migration lock uses the one-key form).
const lockClass = 0x70617973 // "pays"

// lockID is the second key of name's advisory lock: two names that hash alike only wait
// for each other.
func lockID(name string) int32 {
	h := fnv.New32a()
	h.Write([]byte(name))
	return int32(h.Sum32())
}

// Lock takes name's lock, waiting for an instance that holds it, on a connection it keeps
// until Unlock: the lock ends with that session, so a crashed instance's lock is released
// when its connection drops.
func (c *CertificateStorage) Lock(ctx context.Context, name string) error {
	conn, err := c.db.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("lock %s: %w", name, err)
	}
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1, $2)`, lockClass, lockID(name)); err != nil {
		// A cancelled wait may still have taken the lock: closing the session drops it.
		conn.Hijack().Close(context.Background())
		return fmt.Errorf("lock %s: %w", name, err)
	}
	c.mu.Lock()
	previous := c.held[name]
	c.held[name] = conn
	c.mu.Unlock()
	if previous != nil {
		// This instance took the lock twice without an Unlock between: keep the newest; the
		// other session's lock goes with it.
		previous.Hijack().Close(context.Background())
	}
	return nil
}

// Unlock releases name's lock and gives its connection back to the pool.
func (c *CertificateStorage) Unlock(ctx context.Context, name string) error {
	c.mu.Lock()
	conn := c.held[name]
	delete(c.held, name)
	c.mu.Unlock()
	if conn == nil {
		return fmt.Errorf("unlock %s: not locked by this instance", name)
	}
	var released bool
	err := conn.QueryRow(ctx, `SELECT pg_advisory_unlock($1, $2)`, lockClass, lockID(name)).Scan(&released)
	if err != nil || !released {
		// Whatever went wrong, the session ends, and the lock with it.
		conn.Hijack().Close(context.Background())
		if err != nil {
			return fmt.Errorf("unlock %s: %w", name, err)
		}
		return nil
	}
	conn.Release()
	return nil
}
