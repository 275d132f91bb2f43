package rules

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/url"
	"strings"
	"time"
)

// UserAdmin is what an operator does to users, for the admin API, the dashboard's Users page
// and the CLI alike: each action is audited here, where it is decided.
type UserAdmin struct {
	Store UserStore
	// MerchantExists says whether a merchant id is known (a merchant user's merchant).
	MerchantExists func(id string) bool
	Now            func() time.Time
}

// AdminPrincipal is the principal of the admin token: a fingerprint, never the token. The
// dashboard's sessions and the audit log name the token by it.
func AdminPrincipal(token string) string {
	sum := sha256.Sum256([]byte("payouts dashboard session\x00" + token))
	return "admin-token:" + hex.EncodeToString(sum[:16])
}

// SetupHash is what is stored of a set-up token.
func SetupHash(token string) string {
	sum := sha256.Sum256([]byte("payouts user setup\x00" + token))
	return hex.EncodeToString(sum[:])
}

// SetupLink is the one-time link of a token under the server's public base URL. The token is
// in the query, which no log line or span records, never in the path.
func SetupLink(base, token string) string {
	return strings.TrimRight(base, "/") + "/dashboard/setup?t=" + url.QueryEscape(token)
}

// newSecret is 32 random bytes, URL-safe.
func newSecret() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func newUserID() string {
	b := make([]byte, 8)
	rand.Read(b)
	return "u_" + hex.EncodeToString(b)
}

// errUserNotFound answers an unknown user id.
func errUserNotFound(id string) error {
	return &Error{Kind: KindNotFound, Code: CodeUserNotFound, Field: "id", Value: id, Message: "no such user"}
}

func (ua *UserAdmin) notFound(err error, id string) error {
	if errors.Is(err, ErrNotFound) {
		return errUserNotFound(id)
	}
	return err
}

// Create makes a pending user and its one-time set-up token (shown once: only its hash is kept).
func (ua *UserAdmin) Create(ctx context.Context, n NewUser) (*User, string, error) {
	n.Name, n.Email = strings.TrimSpace(n.Name), strings.TrimSpace(n.Email)
	if err := CheckNewUser(n, ua.MerchantExists); err != nil {
		return nil, "", err
	}
	now := ua.Now().UTC()
	token := newSecret()
	u := &User{ID: newUserID(), Name: n.Name, Email: n.Email, Role: n.Role, MerchantID: n.MerchantID, Status: UserPending,
		CreatedAt: now, UpdatedAt: now, Version: 1, SetupHash: SetupHash(token), SetupExpires: now.Add(SetupLinkTTL)}
	if err := ua.Store.CreateUser(ctx, u); err != nil {
		if errors.Is(err, ErrExists) {
			return nil, "", &Error{Kind: KindConflict, Code: CodeUserExists, Field: "email", Value: n.Email, Message: "another user has this email"}
		}
		return nil, "", err
	}
	Audit(ctx, "user.create", "user:"+u.ID, u.MerchantID, map[string]string{"email": u.Email, "role": string(u.Role)})
	return u, token, nil
}

// SetEnabled disables a user (its sessions end: the version moves) or enables it again
// (active when it has credentials, pending otherwise).
func (ua *UserAdmin) SetEnabled(ctx context.Context, id string, enabled bool) (*User, error) {
	u, err := ua.Store.UpdateUser(ctx, id, func(u *User) error {
		u.UpdatedAt = ua.Now().UTC()
		switch {
		case !enabled && u.Status != UserDisabled:
			u.Status = UserDisabled
			u.Version++
		case enabled && u.Status == UserDisabled:
			u.Status = UserPending
			if u.PasswordHash != "" && len(u.TOTPSealed) > 0 {
				u.Status = UserActive
			}
		}
		return nil
	})
	if err != nil {
		return nil, ua.notFound(err, id)
	}
	action := "user.disable"
	if enabled {
		action = "user.enable"
	}
	Audit(ctx, action, "user:"+u.ID, u.MerchantID, map[string]string{"status": string(u.Status)})
	return u, nil
}

// Reset gives a user a new one-time set-up link: its password and second factor are
// cleared, to be set again, and its sessions end. A disabled user is enabled first.
func (ua *UserAdmin) Reset(ctx context.Context, id string) (*User, string, error) {
	token := newSecret()
	u, err := ua.Store.UpdateUser(ctx, id, func(u *User) error {
		if u.Status == UserDisabled {
			return &Error{Kind: KindConflict, Code: CodeUserState, Field: "id", Value: id, Message: "the user is disabled: enable it first"}
		}
		now := ua.Now().UTC()
		u.Status, u.PasswordHash, u.TOTPSealed, u.TOTPPending, u.TOTPLastStep = UserPending, "", nil, nil, 0
		u.SetupHash, u.SetupExpires, u.UpdatedAt = SetupHash(token), now.Add(SetupLinkTTL), now
		u.Version++
		return nil
	})
	if err != nil {
		return nil, "", ua.notFound(err, id)
	}
	Audit(ctx, "user.reset", "user:"+u.ID, u.MerchantID, nil)
	return u, token, nil
}

// Get reads a user, 2957 when none.
func (ua *UserAdmin) Get(ctx context.Context, id string) (*User, error) {
	u, err := ua.Store.User(ctx, id)
	if err != nil {
		return nil, ua.notFound(err, id)
	}
	return u, nil
}
