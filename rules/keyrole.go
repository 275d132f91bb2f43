package rules

import (
	"strings"
	"time"
)

// KeyRole is what a merchant's API key may do: full, maker, checker or read. The current key of a
// merchant, and the old keys of its rotations, are full keys; a key of another role is an
// additional pair beside them, kept until revoked.
type KeyRole string

// Key roles.
const (
	KeyRoleFull    KeyRole = "full"    // everything, as every key before roles
	KeyRoleMaker   KeyRole = "maker"   // reads, creates (payouts, card payouts, batches), cancels, resends
	KeyRoleChecker KeyRole = "checker" // reads and approves batches
	KeyRoleRead    KeyRole = "read"    // reads only
)

// KeyRoles are the roles in the order the admin API documents them.
var KeyRoles = []KeyRole{KeyRoleFull, KeyRoleMaker, KeyRoleChecker, KeyRoleRead}

// ParseKeyRole reads a role name; "" is KeyRoleFull.
func ParseKeyRole(s string) (KeyRole, bool) {
	if s == "" {
		return KeyRoleFull, true
	}
	for _, r := range KeyRoles {
		if string(r) == s {
			return r, true
		}
	}
	return "", false
}

// Action is what a signed request does, as far as key roles tell operations apart.
type Action string

// Actions.
const (
	ActionRead    Action = "read"    // GET
	ActionCreate  Action = "create"  // create a payout, card payout or batch; cancel; resend an event
	ActionApprove Action = "approve" // approve a batch
	ActionManage  Action = "manage"  // anything else that changes state (the sandbox's tools)
)

// Allows says whether a key of role r may do a.
func (r KeyRole) Allows(a Action) bool {
	switch r {
	case KeyRoleFull, "":
		return true
	case KeyRoleMaker:
		return a == ActionRead || a == ActionCreate
	case KeyRoleChecker:
		return a == ActionRead || a == ActionApprove
	case KeyRoleRead:
		return a == ActionRead
	}
	return false
}

// Refusal is the 403 a key of role r gets for a: it names the role and what it cannot do.
func (r KeyRole) Refusal(a Action, method, path string) *Error {
	what := map[Action]string{ActionRead: "read", ActionCreate: "create, cancel or resend",
		ActionApprove: "approve batches", ActionManage: "use the sandbox's tools or other state-changing operations"}[a]
	return Errorf(KindForbidden, CodeKeyRoleRefused, "this API key has the role %s, which cannot %s (%s %s): use a key whose role allows it",
		r, what, method, path)
}

// ActionOf classifies a signed request by method and path (below /api/v1/{merchantId}/, or
// the real-time prefix): GETs read; approving a batch approves; creating payouts, card
// payouts and batches, cancelling and resending create; everything else manages.
func ActionOf(method, rest string) Action {
	if method == "GET" || method == "HEAD" {
		return ActionRead
	}
	if method != "POST" {
		return ActionManage
	}
	parts := strings.Split(strings.Trim(rest, "/"), "/")
	last := parts[len(parts)-1]
	switch {
	case len(parts) == 3 && parts[0] == "batches" && last == "approve":
		return ActionApprove
	case len(parts) == 1 && (last == "payouts" || last == "batches" || last == ""): // "": the real-time path's card create
		return ActionCreate
	case len(parts) == 2 && parts[0] == "payouts" && last == "card":
		return ActionCreate
	case len(parts) == 3 && parts[0] == "payouts" && last == "cancel":
		return ActionCreate
	case len(parts) == 3 && parts[0] == "events" && last == "resend":
		return ActionCreate
	}
	return ActionManage
}

// RoleKey is an API key pair with a role other than full, stored like the current one and
// valid until revoked.
type RoleKey struct {
	APIKeyHash   string    `json:"apiKeyHash"`
	SealedSecret []byte    `json:"sealedSecret"`
	Role         KeyRole   `json:"role"`
	CreatedAt    time.Time `json:"createdAt"`
}
