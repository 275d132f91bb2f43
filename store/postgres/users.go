package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	gojson "github.com/goccy/go-json"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"payouts/rules"
)

// The named users (one row each, rules.User as JSON) and the audit log: see
// migrations/00004_users_audit.sql.

func scanDumpedUser(r pgx.CollectableRow) (any, error)  { return scanUser(r) }
func scanDumpedAudit(r pgx.CollectableRow) (any, error) { return scanAudit(r) }

func restoreUser(raw json.RawMessage) (string, []any, error) {
	var u rules.User
	if err := json.Unmarshal(raw, &u); err != nil {
		return "", nil, err
	}
	args, err := userArgs(&u)
	return `INSERT INTO users (id, email_key, setup_hash, created_at, doc) VALUES ($1, $2, $3, $4, $5)`, args, err
}

func restoreAudit(raw json.RawMessage) (string, []any, error) {
	var e rules.AuditEntry
	if err := json.Unmarshal(raw, &e); err != nil {
		return "", nil, err
	}
	if e.ID <= 0 {
		return "", nil, errors.New("an audit entry without its id")
	}
	doc, err := auditDoc(&e)
	return `WITH ins AS (INSERT INTO audit_log (id, at, principal, actor_name, action, merchant_id, doc)
			VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id)
		SELECT setval(pg_get_serial_sequence('audit_log', 'id'), GREATEST((SELECT id FROM ins),
			(SELECT last_value FROM audit_log_id_seq)))`,
		[]any{e.ID, e.At.UTC(), e.Principal, e.ActorName, e.Action, e.MerchantID, doc}, err
}

func userArgs(u *rules.User) ([]any, error) {
	doc, err := gojson.Marshal(u)
	if err != nil {
		return nil, fmt.Errorf("store: encode user %s: %w", u.ID, err)
	}
	var setup *string
	if u.SetupHash != "" {
		setup = &u.SetupHash
	}
	return []any{u.ID, rules.EmailKey(u.Email), setup, u.CreatedAt.UTC(), doc}, nil
}

func scanUser(r pgx.Row) (*rules.User, error) {
	var doc []byte
	if err := r.Scan(&doc); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, rules.ErrNotFound
		}
		return nil, fmt.Errorf("store: read user: %w", err)
	}
	u := new(rules.User)
	if err := gojson.Unmarshal(doc, u); err != nil {
		return nil, fmt.Errorf("store: decode user: %w", err)
	}
	return u, nil
}

func scanAudit(r pgx.Row) (*rules.AuditEntry, error) {
	var id int64
	var doc []byte
	if err := r.Scan(&id, &doc); err != nil {
		return nil, err
	}
	e := new(rules.AuditEntry)
	if err := gojson.Unmarshal(doc, e); err != nil {
		return nil, fmt.Errorf("store: decode audit entry: %w", err)
	}
	e.ID = id
	return e, nil
}

// CreateUser stores a new user; rules.ErrExists when its id or email is taken.
func (s *DB) CreateUser(ctx context.Context, u *rules.User) error {
	if !storable(u.ID, u.Email) || u.ID == "" {
		return rules.ErrExists
	}
	args, err := userArgs(u)
	if err != nil {
		return err
	}
	ctx, cancel := callContext(ctx)
	defer cancel()
	_, err = s.pool.Exec(ctx, `INSERT INTO users (id, email_key, setup_hash, created_at, doc) VALUES ($1, $2, $3, $4, $5)`, args...)
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23505" {
		return rules.ErrExists
	}
	if err != nil {
		return fmt.Errorf("store: create user %s: %w", u.ID, err)
	}
	return nil
}

func (s *DB) userWhere(ctx context.Context, cond string, arg string) (*rules.User, error) {
	if !storable(arg) {
		return nil, rules.ErrNotFound
	}
	ctx, cancel := callContext(ctx)
	defer cancel()
	return scanUser(s.pool.QueryRow(ctx, `SELECT doc FROM users WHERE `+cond, arg))
}

// User reads one user.
func (s *DB) User(ctx context.Context, id string) (*rules.User, error) {
	return s.userWhere(ctx, `id = $1`, id)
}

// UserByEmail reads the user of an email, compared by rules.EmailKey.
func (s *DB) UserByEmail(ctx context.Context, email string) (*rules.User, error) {
	return s.userWhere(ctx, `email_key = $1`, rules.EmailKey(email))
}

// UserBySetupHash reads the user whose set-up link hashes to hash.
func (s *DB) UserBySetupHash(ctx context.Context, hash string) (*rules.User, error) {
	if hash == "" {
		return nil, rules.ErrNotFound
	}
	return s.userWhere(ctx, `setup_hash = $1`, hash)
}

// Users lists every user, oldest first.
func (s *DB) Users(ctx context.Context) ([]*rules.User, error) {
	ctx, cancel := callContext(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, `SELECT doc FROM users`)
	if err != nil {
		return nil, fmt.Errorf("store: list users: %w", err)
	}
	us, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*rules.User, error) { return scanUser(r) })
	if err != nil {
		return nil, err
	}
	rules.SortUsers(us)
	return us, nil
}

// UpdateUser changes a user in one transaction, holding its row's lock; its id and email stay.
func (s *DB) UpdateUser(ctx context.Context, id string, fn func(*rules.User) error) (*rules.User, error) {
	if !storable(id) {
		return nil, rules.ErrNotFound
	}
	ctx, cancel := callContext(ctx)
	defer cancel()
	var u *rules.User
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		if u, err = scanUser(tx.QueryRow(ctx, `SELECT doc FROM users WHERE id = $1 FOR UPDATE`, id)); err != nil {
			return err
		}
		email := u.Email
		if err := fn(u); err != nil {
			return err
		}
		u.ID, u.Email = id, email
		args, err := userArgs(u)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE users SET setup_hash = $2, doc = $3 WHERE id = $1`, args[0], args[2], args[4])
		if err != nil {
			return fmt.Errorf("store: write user %s: %w", id, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return u, nil
}

// AppendAudit stores e under the next id: one round trip (the document leaves the id to
// its column).
func (s *DB) AppendAudit(ctx context.Context, e *rules.AuditEntry) error {
	doc, err := auditDoc(e)
	if err != nil {
		return err
	}
	ctx, cancel := callContext(ctx)
	defer cancel()
	err = s.pool.QueryRow(ctx, `INSERT INTO audit_log (at, principal, actor_name, action, merchant_id, doc)
		VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`, e.At.UTC(), e.Principal, e.ActorName, e.Action, e.MerchantID, doc).Scan(&e.ID)
	if err != nil {
		return fmt.Errorf("store: append audit entry: %w", err)
	}
	return nil
}

// auditDoc is an entry's document, without its id.
func auditDoc(e *rules.AuditEntry) ([]byte, error) {
	c := *e
	c.ID = 0
	return gojson.Marshal(&c)
}

// AuditEntries reads a page of entries, newest first, filtered as rules.AuditFilter.Match.
func (s *DB) AuditEntries(ctx context.Context, f rules.AuditFilter) (rules.AuditPage, error) {
	if !storable(f.Actor, f.Action, f.MerchantID) {
		return rules.AuditPage{Entries: []rules.AuditEntry{}}, nil
	}
	limit := f.PageLimit()
	var where []string
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	if f.Actor != "" {
		a := arg(f.Actor)
		where = append(where, `(principal = `+a+` OR starts_with(principal, `+a+` || ':') OR lower(actor_name) = lower(`+a+`))`)
	}
	if f.Action != "" {
		a := arg(f.Action)
		where = append(where, `(action = `+a+` OR starts_with(action, `+a+` || '.'))`)
	}
	if f.MerchantID != "" {
		where = append(where, `merchant_id = `+arg(f.MerchantID))
	}
	if !f.From.IsZero() {
		where = append(where, `at >= `+arg(f.From.UTC()))
	}
	if !f.To.IsZero() {
		where = append(where, `at < `+arg(f.To.UTC()))
	}
	if f.Before > 0 {
		where = append(where, `id < `+arg(f.Before))
	}
	q := `SELECT id, doc FROM audit_log`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, ` AND `)
	}
	q += ` ORDER BY id DESC LIMIT ` + arg(limit+1)
	ctx, cancel := callContext(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return rules.AuditPage{}, fmt.Errorf("store: read the audit log: %w", err)
	}
	es, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (rules.AuditEntry, error) {
		e, err := scanAudit(r)
		if err != nil {
			return rules.AuditEntry{}, err
		}
		return *e, nil
	})
	if err != nil {
		return rules.AuditPage{}, err
	}
	page := rules.AuditPage{Entries: es}
	if page.Entries == nil {
		page.Entries = []rules.AuditEntry{}
	}
	if len(es) > limit {
		page.Entries = es[:limit]
		page.Next = es[limit-1].ID
	}
	return page, nil
}
