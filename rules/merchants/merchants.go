// Package merchants owns what is done to a merchant's record outside a payout: creating it
// with fresh credentials, rotating, adding and revoking its API keys, and sealing and opening
// its secrets. The admin API, the dashboard, the CLI and the demo seed all go through it.
package merchants

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"regexp"
	"strings"
	"time"

	"payouts/rules"
)

// DefaultKeyGrace is how long a replaced API key keeps working after a rotation, unless the
// caller says otherwise.
const DefaultKeyGrace = 24 * time.Hour

// Sealer encrypts a secret bound to additional data, so that a sealed secret copied onto
// another merchant does not open; store.Sealer is the one the server holds.
type Sealer interface {
	Seal(plain, additional []byte) []byte
	Open(sealed, additional []byte) ([]byte, error)
}

// Store is what the service reads and writes.
type Store interface {
	CreateMerchant(ctx context.Context, m *rules.Merchant, prepare func(*rules.Merchant) error) error
	UpdateMerchant(ctx context.Context, id string, fn func(*rules.Merchant) error) (*rules.Merchant, error)
}

// Service creates merchants and manages their keys over a store, holding the sealer: nothing
// else needs to know how a secret is bound to its merchant.
type Service struct {
	store  Store
	sealer Sealer
}

// New makes the service over st, sealing secrets with sealer.
func New(st Store, sealer Sealer) *Service {
	return &Service{store: st, sealer: sealer}
}

// Credentials are a merchant's API key and secret, shown once at creation.
type Credentials struct {
	APIKey    string
	APISecret string
}

// NewCredentials makes a random API key (24 bytes: 32 characters after pk_) and secret (32
// bytes).
func NewCredentials() Credentials {
	k, s := make([]byte, 24), make([]byte, 32)
	rand.Read(k)
	rand.Read(s)
	return Credentials{APIKey: "pk_" + base64.RawURLEncoding.EncodeToString(k), APISecret: base64.StdEncoding.EncodeToString(s)}
}

// HashAPIKey is how an API key is stored: its SHA-256 in hex. Keys are 24 random bytes, so
// a fast hash is enough; the secret cannot be hashed because the server recomputes the HMAC.
func HashAPIKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// ReservedIDs are path segments of /api/v1/ that are not merchants: no merchant may take them
// as its id.
var ReservedIDs = []string{"notifications"}

var idPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,40}$`)

// CheckNew is what a new merchant's id (empty: the next number) and name must be, checked
// before anything is stored, so that a command can refuse them before it opens a store.
func CheckNew(id, name string) error {
	if err := rules.CheckIdentifier("merchantId", id); err != nil {
		return err
	}
	if id != "" && !idPattern.MatchString(id) {
		return &rules.Error{Kind: rules.KindInvalid, Code: rules.CodeWrongType, Field: "merchantId", Value: id,
			Message: "must be 1 to 40 letters, digits, - or _"}
	}
	for _, r := range ReservedIDs {
		if strings.EqualFold(id, r) {
			return &rules.Error{Kind: rules.KindInvalid, Code: rules.CodeReservedMerchantID, Field: "merchantId", Value: id,
				Message: "is reserved by the API's paths (/api/v1/" + r + "/…)"}
		}
	}
	if strings.TrimSpace(name) == "" {
		return &rules.Error{Kind: rules.KindInvalid, Code: rules.CodeAdminField, Field: "name", Message: "is required"}
	}
	return nil
}

// Create makes a merchant with fresh credentials at now: the key stored hashed, the secret
// sealed. An empty id takes the next number.
func (s *Service) Create(ctx context.Context, id, name string, settings rules.Settings, now time.Time) (*rules.Merchant, Credentials, error) {
	return s.Import(ctx, id, name, settings, NewCredentials(), now)
}

// Import makes a merchant with credentials it already has (a merchant moving from the
// original API keeps its key and secret; the tests use the published signing vectors).
func (s *Service) Import(ctx context.Context, id, name string, settings rules.Settings, c Credentials, now time.Time) (*rules.Merchant, Credentials, error) {
	if err := CheckNew(id, name); err != nil {
		return nil, Credentials{}, err
	}
	m := &rules.Merchant{ID: id, Name: name, APIKeyHash: HashAPIKey(c.APIKey), Settings: settings, CreatedAt: now.UTC()}
	err := s.store.CreateMerchant(ctx, m, func(m *rules.Merchant) error {
		// The id is known only here when the store numbers the merchant.
		m.SealedSecret = s.seal(c.APISecret, m.ID)
		return nil
	})
	if err != nil {
		if errors.Is(err, rules.ErrExists) {
			return nil, Credentials{}, rules.Errorf(rules.KindConflict, rules.CodeWrongState, "merchant %s already exists", id)
		}
		return nil, Credentials{}, err
	}
	return m, c, nil
}

// RotateKey gives merchant id a new API key and secret at now; the old pair keeps working for
// grace (zero ends it at once).
func (s *Service) RotateKey(ctx context.Context, id string, grace time.Duration, now time.Time) (*rules.Merchant, Credentials, error) {
	c := NewCredentials()
	m, err := s.store.UpdateMerchant(ctx, id, func(m *rules.Merchant) error {
		old := m.LiveOldKeys(now)
		if grace > 0 {
			created := m.KeyCreatedAt
			if created.IsZero() {
				created = m.CreatedAt
			}
			old = append(old, rules.OldKey{APIKeyHash: m.APIKeyHash, SealedSecret: m.SealedSecret, CreatedAt: created, ExpiresAt: now.Add(grace)})
		}
		m.OldKeys = old
		m.APIKeyHash, m.SealedSecret, m.KeyCreatedAt = HashAPIKey(c.APIKey), s.seal(c.APISecret, m.ID), now
		return nil
	})
	return m, c, err
}

// AddRoleKey gives merchant id a new key pair with role (not full) beside its current key,
// valid until revoked, unlike the old key of a rotation.
func (s *Service) AddRoleKey(ctx context.Context, id string, role rules.KeyRole, now time.Time) (*rules.Merchant, Credentials, error) {
	c := NewCredentials()
	m, err := s.store.UpdateMerchant(ctx, id, func(m *rules.Merchant) error {
		m.RoleKeys = append(m.RoleKeys, rules.RoleKey{APIKeyHash: HashAPIKey(c.APIKey), SealedSecret: s.seal(c.APISecret, m.ID), Role: role, CreatedAt: now})
		return nil
	})
	return m, c, err
}

// RevokeKey ends an old key or a role key of merchant id at once; the current key cannot be
// revoked (rotate it).
func (s *Service) RevokeKey(ctx context.Context, id, keyID string, now time.Time) error {
	_, err := s.store.UpdateMerchant(ctx, id, func(m *rules.Merchant) error {
		if rules.KeyID(m.APIKeyHash) == keyID {
			return rules.Errorf(rules.KindConflict, rules.CodeWrongState, "%s is the merchant's current key: rotate it instead", keyID)
		}
		for i, k := range m.RoleKeys {
			if rules.KeyID(k.APIKeyHash) == keyID {
				m.RoleKeys = append(m.RoleKeys[:i:i], m.RoleKeys[i+1:]...)
				return nil
			}
		}
		live := m.LiveOldKeys(now)
		kept := live[:0]
		for _, k := range live {
			if rules.KeyID(k.APIKeyHash) != keyID {
				kept = append(kept, k)
			}
		}
		if len(kept) == len(live) {
			return rules.Errorf(rules.KindNotFound, rules.CodeAPIKeyNotFound, "merchant %s has no key %s", id, keyID)
		}
		m.OldKeys = kept
		return nil
	})
	return err
}

// OpenSecret opens a sealed secret of m (its current key's, an old key's or a role key's).
func (s *Service) OpenSecret(m *rules.Merchant, sealed []byte) (string, error) {
	b, err := s.sealer.Open(sealed, bound(m.ID))
	return string(b), err
}

func (s *Service) seal(secret, merchantID string) []byte {
	return s.sealer.Seal([]byte(secret), bound(merchantID))
}

// bound is what a secret is sealed to: its merchant, so that a sealed secret copied onto
// another merchant's record does not open.
func bound(merchantID string) []byte { return []byte("merchant-secret:" + merchantID) }
