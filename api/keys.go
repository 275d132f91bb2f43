package api

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"payouts/rules"
	"payouts/rules/merchants"
)

// KeyView is one of a merchant's API keys as the admin API lists it: never the key itself
// nor its secret.
type KeyView struct {
	KeyID     string  `json:"keyId"`
	Role      string  `json:"role" enum:"full,maker,checker,read" doc:"What the key may do (x-payouts-extension): full everything; maker reads, creates, cancels and resends; checker reads and approves batches; read only reads"`
	Current   bool    `json:"current"`
	CreatedAt string  `json:"createdAt"`
	ExpiresAt *string `json:"expiresAt" doc:"When an old key stops working; null for the current key"`
}

// NewKeyView is a rotation's answer: the new pair, shown once.
type NewKeyView struct {
	KeyID     string    `json:"keyId"`
	Role      string    `json:"role" doc:"The new key's role (x-payouts-extension)"`
	APIKey    string    `json:"apiKey"`
	APISecret string    `json:"apiSecret" doc:"Shown once"`
	Keys      []KeyView `json:"keys" doc:"All the merchant's keys after the rotation"`
}

// KeyViews lists a merchant's live keys at now, the current one first.
func KeyViews(m *rules.Merchant, now time.Time) []KeyView {
	created := m.KeyCreatedAt
	if created.IsZero() {
		created = m.CreatedAt
	}
	full := string(rules.KeyRoleFull)
	out := []KeyView{{KeyID: rules.KeyID(m.APIKeyHash), Role: full, Current: true, CreatedAt: wireTime(created)}}
	for _, k := range m.LiveOldKeys(now) {
		exp := wireTime(k.ExpiresAt)
		out = append(out, KeyView{KeyID: rules.KeyID(k.APIKeyHash), Role: full, CreatedAt: wireTime(k.CreatedAt), ExpiresAt: &exp})
	}
	for _, k := range m.RoleKeys {
		out = append(out, KeyView{KeyID: rules.KeyID(k.APIKeyHash), Role: string(k.Role), CreatedAt: wireTime(k.CreatedAt)})
	}
	return out
}

// registerKeys adds key rotation to the admin API: issue a new pair (the old one works for a
// grace period), list the keys, revoke an old key at once.
func registerKeys(a huma.API, d Deps) {
	now := func() time.Time { return time.Now().UTC() }
	if d.Auth != nil && d.Auth.Now != nil {
		now = func() time.Time { return d.Auth.Now().UTC() }
	}
	notFound := func(err error, id string) error {
		if errors.Is(err, rules.ErrNotFound) {
			return rules.Errorf(rules.KindNotFound, rules.CodeMerchantNotFound, "merchant %s not found", id)
		}
		return err
	}

	type rotateIn struct {
		ID   string `path:"id"`
		Body *struct {
			GraceSeconds *int64 `json:"graceSeconds,omitempty" minimum:"0" maximum:"2592000" doc:"How long the old key keeps working (default 86400; 0 revokes it at once)"`
			Role         string `json:"role,omitempty" doc:"full (default) rotates the merchant's key; maker, checker or read adds a key with that role beside it, kept until revoked (x-payouts-extension)"`
		}
	}
	type rotateOut struct {
		Body NewKeyView
	}
	huma.Register(a, huma.Operation{
		OperationID: "admin-rotate-key", Method: http.MethodPost, Path: "/admin/v1/merchants/{id}/keys",
		Summary: "Issue a new API key and secret",
		Description: "With role full (the default) the key is rotated: the old pair keeps working for graceSeconds (default 24 h), then stops; DELETE revokes it at once. " +
			"With role maker, checker or read (x-payouts-extension) a new pair with that role is added beside the current key, which stays; it works until DELETE revokes it (graceSeconds does not apply).",
		Tags: []string{"Admin"}, Security: adminSecurity, DefaultStatus: http.StatusCreated, Errors: []int{400, 404},
	}, func(ctx context.Context, in *rotateIn) (*rotateOut, error) {
		grace := merchants.DefaultKeyGrace
		role := rules.KeyRoleFull
		if in.Body != nil {
			if in.Body.GraceSeconds != nil {
				grace = time.Duration(*in.Body.GraceSeconds) * time.Second
			}
			r, ok := rules.ParseKeyRole(in.Body.Role)
			if !ok {
				return nil, &rules.Error{Kind: rules.KindInvalid, Code: rules.CodeKeyRole, Field: "role", Value: in.Body.Role,
					Message: "role must be full, maker, checker or read"}
			}
			role = r
		}
		t := now()
		var m *rules.Merchant
		var c merchants.Credentials
		var err error
		if role == rules.KeyRoleFull {
			m, c, err = d.Merchants.RotateKey(ctx, in.ID, grace, t)
		} else {
			m, c, err = d.Merchants.AddRoleKey(ctx, in.ID, role, t)
		}
		if err != nil {
			return nil, notFound(err, in.ID)
		}
		d.Keys.Forget(in.ID)
		keyID := rules.KeyID(merchants.HashAPIKey(c.APIKey))
		if role == rules.KeyRoleFull {
			rules.Audit(ctx, "key.rotate", "merchant:"+in.ID, in.ID, map[string]any{"keyId": keyID, "graceSeconds": int64(grace / time.Second)})
		} else {
			rules.Audit(ctx, "key.add", "merchant:"+in.ID, in.ID, map[string]any{"keyId": keyID, "role": string(role)})
		}
		return &rotateOut{Body: NewKeyView{KeyID: keyID, Role: string(role), APIKey: c.APIKey, APISecret: c.APISecret, Keys: KeyViews(m, t)}}, nil
	})

	type listIn struct {
		ID string `path:"id"`
	}
	type listOut struct {
		Body []KeyView
	}
	huma.Register(a, huma.Operation{
		OperationID: "admin-list-keys", Method: http.MethodGet, Path: "/admin/v1/merchants/{id}/keys",
		Summary: "List a merchant's API keys (never the secrets)", Tags: []string{"Admin"}, Security: adminSecurity, Errors: []int{404},
	}, func(ctx context.Context, in *listIn) (*listOut, error) {
		m, err := d.Store.Merchant(ctx, in.ID)
		if err != nil {
			return nil, notFound(err, in.ID)
		}
		return &listOut{Body: KeyViews(m, now())}, nil
	})

	type revokeIn struct {
		ID    string `path:"id"`
		KeyID string `path:"keyId"`
	}
	huma.Register(a, huma.Operation{
		OperationID: "admin-revoke-key", Method: http.MethodDelete, Path: "/admin/v1/merchants/{id}/keys/{keyId}",
		Summary:     "Revoke an old API key, or a role key, at once",
		Description: "The current key cannot be revoked (409): rotate first, with graceSeconds 0 to end the old one at once.",
		Tags:        []string{"Admin"}, Security: adminSecurity, DefaultStatus: http.StatusNoContent, Errors: []int{404, 409},
	}, func(ctx context.Context, in *revokeIn) (*struct{}, error) {
		if err := d.Merchants.RevokeKey(ctx, in.ID, in.KeyID, now()); err != nil {
			return nil, notFound(err, in.ID)
		}
		d.Keys.Forget(in.ID)
		rules.Audit(ctx, "key.revoke", "merchant:"+in.ID, in.ID, map[string]string{"keyId": in.KeyID})
		return nil, nil
	})
}
