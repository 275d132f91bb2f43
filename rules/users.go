package rules

import (
	"context"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// Named users of the dashboard: an operator creates them, each sets a
// password and enrols a TOTP second factor on a one-time link, and signs in as itself. The
// admin token stays as the break-glass sign-in.

// Role is what a user may do: an operator everything, on every merchant; the others only on
// their own merchant.
type Role string

// Roles.
const (
	RoleOperator Role = "operator" // all merchants, no merchantId: what the admin token can do
	RoleMaker    Role = "maker"    // a merchant's: creates and cancels payouts
	RoleChecker  Role = "checker"  // a merchant's: approves what a maker prepared
	RoleViewer   Role = "viewer"   // a merchant's: reads only
)

// Roles lists the roles in the order the forms offer them.
var Roles = []Role{RoleOperator, RoleMaker, RoleChecker, RoleViewer}

// UserStatus is where a user is in its life.
type UserStatus string

// User statuses.
const (
	UserPending  UserStatus = "pending"  // created; the set-up link not yet used
	UserActive   UserStatus = "active"   // password set and TOTP confirmed
	UserDisabled UserStatus = "disabled" // may not sign in; its sessions ended
)

// SetupLinkTTL is how long a one-time set-up link works.
const SetupLinkTTL = 72 * time.Hour

// MinPasswordLength is the shortest password a user may set.
const MinPasswordLength = 12

// User is a named user. Secrets are kept only as what cannot sign anyone in: the password's
// argon2id hash, the TOTP secret sealed, the set-up token's SHA-256.
type User struct {
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	Email      string     `json:"email"` // as given; unique case-insensitively (EmailKey)
	Role       Role       `json:"role"`
	MerchantID string     `json:"merchantId,omitempty"`
	Status     UserStatus `json:"status"`
	CreatedAt  time.Time  `json:"createdAt"`
	UpdatedAt  time.Time  `json:"updatedAt"`
	// Version is the credential version, in the sessions' principal: a password change, a
	// disable or a reset moves it, and every session holding the old one ends.
	Version int64 `json:"version"`

	PasswordHash string `json:"passwordHash,omitempty"`
	TOTPSealed   []byte `json:"totpSealed,omitempty"`
	// TOTPPending is the secret offered on the set-up page, until a code confirms it.
	TOTPPending []byte `json:"totpPending,omitempty"`
	// TOTPLastStep is the 30-second step of the last code accepted: a code of that step or
	// an earlier one is a replay.
	TOTPLastStep int64 `json:"totpLastStep,omitempty"`

	SetupHash    string    `json:"setupHash,omitempty"`
	SetupExpires time.Time `json:"setupExpires,omitzero"`
}

// EmailKey is the form of an email that uniqueness compares.
func EmailKey(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// Principal is the sessions' principal of the user at its current version.
func (u *User) Principal() string {
	return "user:" + u.ID + ":" + itoa(u.Version)
}

// Actor is the user as the dashboard and the audit log see it.
func (u *User) Actor() Actor {
	return Actor{Principal: u.Principal(), UserID: u.ID, Name: u.Name, Role: u.Role, MerchantID: u.MerchantID}
}

// SortUsers orders users oldest first (then by id).
func SortUsers(us []*User) {
	sort.Slice(us, func(i, j int) bool {
		if !us[i].CreatedAt.Equal(us[j].CreatedAt) {
			return us[i].CreatedAt.Before(us[j].CreatedAt)
		}
		return us[i].ID < us[j].ID
	})
}

// NewUser is what an operator gives to create a user.
type NewUser struct {
	Name       string `json:"name"`
	Email      string `json:"email"`
	Role       Role   `json:"role"`
	MerchantID string `json:"merchantId,omitempty"`
}

// CheckNewUser reports every problem of a new user at once (code 2955, with the field);
// merchantExists says whether a merchant id is known.
func CheckNewUser(n NewUser, merchantExists func(id string) bool) error {
	var ps problems
	switch name := strings.TrimSpace(n.Name); {
	case name == "":
		ps.add(CodeUserField, "name", "is required", nil)
	case utf8.RuneCountInString(name) > 100:
		ps.add(CodeUserField, "name", "is at most 100 characters", nil)
	case hasControl(name):
		ps.add(CodeUserField, "name", "holds a control character", nil)
	}
	switch {
	case n.Email == "":
		ps.add(CodeUserField, "email", "is required", nil)
	case len(n.Email) > 254 || !isEmail(n.Email):
		ps.add(CodeUserField, "email", "is not an email address", n.Email)
	}
	switch n.Role {
	case RoleOperator:
		if n.MerchantID != "" {
			ps.add(CodeUserField, "merchantId", "an operator works on every merchant: leave merchantId out", n.MerchantID)
		}
	case RoleMaker, RoleChecker, RoleViewer:
		if n.MerchantID == "" {
			ps.add(CodeUserField, "merchantId", "is required for the role "+string(n.Role), nil)
		} else if !merchantExists(n.MerchantID) {
			ps.add(CodeUserField, "merchantId", "no such merchant", n.MerchantID)
		}
	case "":
		ps.add(CodeUserField, "role", "is required: operator, maker, checker or viewer", nil)
	default:
		ps.add(CodeUserField, "role", "must be operator, maker, checker or viewer", string(n.Role))
	}
	if len(ps.list) == 0 {
		return nil
	}
	for _, e := range ps.list {
		e.Kind = KindInvalid
	}
	return &Problem{Kind: KindInvalid, Title: "Invalid user", Detail: "the user is invalid", Errors: ps.list}
}

// CheckPassword says what is wrong with a new password, or "".
func CheckPassword(pw string) string {
	if utf8.RuneCountInString(pw) < MinPasswordLength {
		return "at least 12 characters"
	}
	if len(pw) > 1024 {
		return "at most 1024 bytes"
	}
	return ""
}

func hasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return true
		}
	}
	return false
}

// Permission is one kind of thing a dashboard user may do.
type Permission int

// Permissions.
const (
	PermView    Permission = iota // read a merchant's pages
	PermCreate                    // create and cancel payouts (maker)
	PermApprove                   // approve what a maker prepared (checker)
	PermFund                      // fund a balance
	PermManage                    // a merchant's settings, keys, notifications, sandbox scripts and chaos, simulated outcomes
	PermAdmin                     // every merchant at once: create merchants, users, the sandbox clock and directory, the audit of all
)

// Actor is who does something: the admin token (the break-glass sign-in and the admin API)
// or a named user.
type Actor struct {
	Principal  string `json:"principal"`
	UserID     string `json:"userId,omitempty"`
	Name       string `json:"name"`
	Role       Role   `json:"role"`
	MerchantID string `json:"merchantId,omitempty"`
}

// AdminActor is the admin token's actor, named by principal (a fingerprint of the token).
func AdminActor(principal string) Actor {
	return Actor{Principal: principal, Name: "admin token", Role: RoleOperator}
}

// Can says whether the actor may do perm on merchantID; "" asks whether it may on some
// merchant (its own). This is the one place that reads roles.
func (a Actor) Can(perm Permission, merchantID string) bool {
	if a.Role == RoleOperator {
		return true
	}
	if a.MerchantID == "" || (merchantID != "" && merchantID != a.MerchantID) {
		return false
	}
	switch perm {
	case PermView:
		return a.Role == RoleMaker || a.Role == RoleChecker || a.Role == RoleViewer
	case PermCreate:
		return a.Role == RoleMaker
	case PermApprove:
		return a.Role == RoleChecker
	}
	return false
}

// Sees says whether the actor may see a merchant's data (PermView on it).
func (a Actor) Sees(merchantID string) bool { return a.Can(PermView, merchantID) }

// UserStore keeps the named users.
type UserStore interface {
	// CreateUser stores a new user under its ID; ErrExists when the ID or the email
	// (EmailKey) is taken.
	CreateUser(ctx context.Context, u *User) error
	User(ctx context.Context, id string) (*User, error)              // ErrNotFound when none
	UserByEmail(ctx context.Context, email string) (*User, error)    // by EmailKey; ErrNotFound when none
	UserBySetupHash(ctx context.Context, hash string) (*User, error) // ErrNotFound when none
	// Users lists every user, oldest first.
	Users(ctx context.Context) ([]*User, error)
	// UpdateUser changes a user in one transaction (the email stays); fn's error aborts.
	UpdateUser(ctx context.Context, id string, fn func(*User) error) (*User, error)
}
