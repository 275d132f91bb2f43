package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"

	bbolt "go.etcd.io/bbolt"

	"payouts/rules"
)

// The named users and the audit log: users by id with an index of their emails
// (rules.EmailKey), and the audit entries under big-endian ids from the bucket's sequence.

var (
	bUsers      = []byte("users")       // user id → User JSON
	bUserEmails = []byte("user_emails") // EmailKey(email) → user id
	bAudit      = []byte("audit")       // be64(id) → AuditEntry JSON
)

func restoreUser(tx *bbolt.Tx, raw json.RawMessage) error {
	var u rules.User
	if err := json.Unmarshal(raw, &u); err != nil {
		return err
	}
	return putNewUser(tx, &u)
}

func restoreAudit(tx *bbolt.Tx, raw json.RawMessage) error {
	var e rules.AuditEntry
	if err := json.Unmarshal(raw, &e); err != nil {
		return err
	}
	if e.ID <= 0 {
		return fmt.Errorf("an audit entry without its id")
	}
	b := tx.Bucket(bAudit)
	if seq := b.Sequence(); uint64(e.ID) > seq {
		if err := b.SetSequence(uint64(e.ID)); err != nil {
			return err
		}
	}
	return putJSON(b, be64(uint64(e.ID)), &e)
}

// CreateUser stores a new user; rules.ErrExists when its id or email is taken.
func (s *DB) CreateUser(ctx context.Context, u *rules.User) error {
	return s.bdb.Update(func(tx *bbolt.Tx) error { return putNewUser(tx, u) })
}

func putNewUser(tx *bbolt.Tx, u *rules.User) error {
	users, emails := tx.Bucket(bUsers), tx.Bucket(bUserEmails)
	email := []byte(rules.EmailKey(u.Email))
	if u.ID == "" || users.Get([]byte(u.ID)) != nil || emails.Get(email) != nil {
		return rules.ErrExists
	}
	if err := emails.Put(email, []byte(u.ID)); err != nil {
		return err
	}
	return putJSON(users, []byte(u.ID), u)
}

// User reads one user.
func (s *DB) User(ctx context.Context, id string) (*rules.User, error) {
	u := new(rules.User)
	err := s.bdb.View(func(tx *bbolt.Tx) error { return getJSON(tx.Bucket(bUsers), []byte(id), u) })
	if err != nil {
		return nil, err
	}
	return u, nil
}

// UserByEmail reads the user of an email, compared by rules.EmailKey.
func (s *DB) UserByEmail(ctx context.Context, email string) (*rules.User, error) {
	u := new(rules.User)
	err := s.bdb.View(func(tx *bbolt.Tx) error {
		id := tx.Bucket(bUserEmails).Get([]byte(rules.EmailKey(email)))
		if id == nil {
			return rules.ErrNotFound
		}
		return getJSON(tx.Bucket(bUsers), id, u)
	})
	if err != nil {
		return nil, err
	}
	return u, nil
}

// UserBySetupHash reads the user whose set-up link hashes to hash. Users are few (a
// company's back office): a scan.
func (s *DB) UserBySetupHash(ctx context.Context, hash string) (*rules.User, error) {
	if hash == "" {
		return nil, rules.ErrNotFound
	}
	us, err := s.Users(ctx)
	if err != nil {
		return nil, err
	}
	for _, u := range us {
		if u.SetupHash == hash {
			return u, nil
		}
	}
	return nil, rules.ErrNotFound
}

// Users lists every user, oldest first.
func (s *DB) Users(ctx context.Context) ([]*rules.User, error) {
	var out []*rules.User
	err := s.bdb.View(func(tx *bbolt.Tx) error {
		return tx.Bucket(bUsers).ForEach(func(_, v []byte) error {
			u := new(rules.User)
			if err := unmarshal(v, u); err != nil {
				return err
			}
			out = append(out, u)
			return nil
		})
	})
	rules.SortUsers(out)
	return out, err
}

// UpdateUser changes a user in one transaction; its id and email stay.
func (s *DB) UpdateUser(ctx context.Context, id string, fn func(*rules.User) error) (*rules.User, error) {
	u := new(rules.User)
	err := s.bdb.Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bUsers)
		if err := getJSON(b, []byte(id), u); err != nil {
			return err
		}
		email := u.Email
		if err := fn(u); err != nil {
			return err
		}
		u.ID, u.Email = id, email
		return putJSON(b, []byte(id), u)
	})
	if err != nil {
		return nil, err
	}
	return u, nil
}

// AppendAudit stores e under the next id.
func (s *DB) AppendAudit(ctx context.Context, e *rules.AuditEntry) error {
	return s.bdb.Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bAudit)
		seq, err := b.NextSequence()
		if err != nil {
			return err
		}
		e.ID = int64(seq)
		return putJSON(b, be64(seq), e)
	})
}

// AuditEntries reads a page of entries, newest first, walking back from the cursor.
func (s *DB) AuditEntries(ctx context.Context, f rules.AuditFilter) (rules.AuditPage, error) {
	limit := f.PageLimit()
	page := rules.AuditPage{Entries: []rules.AuditEntry{}}
	err := s.bdb.View(func(tx *bbolt.Tx) error {
		c := tx.Bucket(bAudit).Cursor()
		var k, v []byte
		if f.Before > 0 {
			k, v = c.Seek(be64(uint64(f.Before)))
			if k == nil {
				k, v = c.Last()
			}
			for k != nil && binary.BigEndian.Uint64(k) >= uint64(f.Before) {
				k, v = c.Prev()
			}
		} else {
			k, v = c.Last()
		}
		for ; k != nil; k, v = c.Prev() {
			var e rules.AuditEntry
			if err := unmarshal(v, &e); err != nil {
				return err
			}
			if !f.Match(&e) {
				continue
			}
			if len(page.Entries) == limit {
				page.Next = page.Entries[limit-1].ID
				return nil
			}
			page.Entries = append(page.Entries, e)
		}
		return nil
	})
	return page, err
}

// The dumps read a file older than the users (opened read-only, so without their buckets)
// as one without any.

func dumpUsers(tx *bbolt.Tx, emit emitFunc) error {
	b := tx.Bucket(bUsers)
	if b == nil {
		return nil
	}
	return b.ForEach(func(_, v []byte) error {
		var u rules.User
		if err := unmarshal(v, &u); err != nil {
			return err
		}
		return emit(&u)
	})
}

func dumpAudit(tx *bbolt.Tx, emit emitFunc) error {
	b := tx.Bucket(bAudit)
	if b == nil {
		return nil
	}
	return b.ForEach(func(_, v []byte) error {
		var e rules.AuditEntry
		if err := unmarshal(bytes.Clone(v), &e); err != nil {
			return err
		}
		return emit(&e)
	})
}
