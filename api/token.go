package api

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"regexp"
	"sync"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"golang.org/x/crypto/bcrypt"

	"payouts/rules"
)

// The original's bearer scheme (wire section 1): a merchant's integration user trades
// {"user","password"} for a token that lives 5 minutes and goes, without "Bearer", in the
// Authorization header of the newer endpoints (the Peru beneficiary lookup).

// TokenLifetime is how long an access token lives (wire: expires_in 300).
const TokenLifetime = 300 * time.Second

// IntegrationStore keeps the integration users.
type IntegrationStore interface {
	IntegrationUser(user string) (*rules.IntegrationUser, error)
	IntegrationUserOf(merchantID string) (*rules.IntegrationUser, error)
	PutIntegrationUser(u *rules.IntegrationUser) error
}

// Tokens issues and checks access tokens. Tokens live in memory only (a restart makes
// clients ask for a new one, as an expiry would); only their SHA-256 is kept.
type Tokens struct {
	Store IntegrationStore
	Now   func() time.Time // real time

	failures *FailureLimiter
	mu       sync.Mutex
	live     map[[32]byte]tokenEntry
}

type tokenEntry struct {
	merchantID string
	user       string
	expires    time.Time
}

// NewTokens makes the token issuer; now is real time.
func NewTokens(st IntegrationStore, now func() time.Time) *Tokens {
	return &Tokens{Store: st, Now: now, failures: NewFailureLimiter(20), live: map[[32]byte]tokenEntry{}}
}

// dummyHash makes a wrong user cost the same bcrypt time as a wrong password.
var dummyHash, _ = bcrypt.GenerateFromPassword([]byte("no such user"), bcrypt.DefaultCost)

// issue checks the user's password and returns a new token.
func (t *Tokens) issue(user, password string) (string, bool, error) {
	u, err := t.Store.IntegrationUser(user)
	if err != nil && !errors.Is(err, rules.ErrNotFound) {
		return "", false, err
	}
	hash := dummyHash
	if u != nil {
		hash = []byte(u.PasswordHash)
	}
	if bcrypt.CompareHashAndPassword(hash, []byte(password)) != nil || u == nil {
		return "", false, nil
	}
	b := make([]byte, 32)
	rand.Read(b)
	tok := "tk_" + base64.RawURLEncoding.EncodeToString(b)
	now := t.Now()
	t.mu.Lock()
	for k, e := range t.live { // bounded by the tokens of the last 5 minutes
		if !now.Before(e.expires) {
			delete(t.live, k)
		}
	}
	t.live[sha256.Sum256([]byte(tok))] = tokenEntry{merchantID: u.MerchantID, user: u.User, expires: now.Add(TokenLifetime)}
	t.mu.Unlock()
	return tok, true, nil
}

// Check returns the merchant a live token was issued to, or "".
func (t *Tokens) Check(token string) string {
	if token == "" {
		return ""
	}
	k := sha256.Sum256([]byte(token))
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.live[k]
	if !ok {
		return ""
	}
	if !t.Now().Before(e.expires) {
		delete(t.live, k)
		return ""
	}
	return e.merchantID
}

// revoke ends the tokens of a merchant (its user was rotated).
func (t *Tokens) revoke(merchantID string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for k, e := range t.live {
		if e.merchantID == merchantID {
			delete(t.live, k)
		}
	}
}

var integrationUserPattern = regexp.MustCompile(`^[A-Za-z0-9._@+-]{3,100}$`)

// IntegrationUserView is a merchant's integration user; the password only on creation.
type IntegrationUserView struct {
	MerchantID string `json:"merchantId"`
	User       string `json:"user"`
	Password   string `json:"password,omitempty" doc:"Shown once"`
	CreatedAt  string `json:"createdAt"`
}

// tokenIn is the token request; Resolve keeps the client's address for the failure limit.
type tokenIn struct {
	Body struct {
		User     string `json:"user" minLength:"1" maxLength:"100"`
		Password string `json:"password" minLength:"1" maxLength:"72"`
	}
	addr string
}

func (in *tokenIn) Resolve(ctx huma.Context) []error {
	r := &http.Request{RemoteAddr: ctx.RemoteAddr()}
	in.addr = clientAddr(r)
	return nil
}

// RegisterTokens adds the token endpoint and the admin operations of integration users.
// merchant reads a merchant (ErrNotFound when none).
func RegisterTokens(a huma.API, t *Tokens, merchant func(id string) (*rules.Merchant, error)) {
	type tokenOut struct {
		CacheControl string `header:"Cache-Control"`
		Body         struct {
			AccessToken string `json:"access_token"`
			ExpiresIn   int    `json:"expires_in"`
			TokenType   string `json:"token_type"`
		}
	}
	huma.Register(a, huma.Operation{
		OperationID: "integration-token", Method: http.MethodPost, Path: "/ms-authentication-service/authentication/api-integration/token",
		Summary: "Get an access token (the original's bearer scheme)",
		Description: "The merchant's integration user (created by the admin API) trades {\"user\",\"password\"} for a token that lives " +
			"300 seconds. Send it as `Authorization: <token>`, without `Bearer`, with header `MID`, to the beneficiary lookup. " +
			"Wrong credentials answer 401 (" + rules.CodeAuthentication + "); more than 20 failures a minute from one address for one user 429.",
		Tags: []string{"Lookup"}, Errors: []int{400, 401, 429},
	}, func(ctx context.Context, in *tokenIn) (*tokenOut, error) {
		// Failures count per (client address, user presented), as the signed API's do.
		key := in.addr + "\x00" + in.Body.User
		if !t.failures.Allow(key) {
			return nil, retryAfter(problemOf(rules.KindRateLimited, rules.CodeRateLimited, "too many failed authentications from this address"),
				int(t.failures.RetryAfter(key).Seconds()+0.5))
		}
		tok, ok, err := t.issue(in.Body.User, in.Body.Password)
		if err != nil {
			return nil, err
		}
		if !ok {
			t.failures.Fail(key)
			return nil, rules.Errorf(rules.KindUnauthorized, rules.CodeAuthentication, "user or password is wrong")
		}
		out := &tokenOut{CacheControl: "no-store"}
		out.Body.AccessToken, out.Body.ExpiresIn, out.Body.TokenType = tok, int(TokenLifetime/time.Second), "Bearer"
		return out, nil
	})

	type userIn struct {
		ID   string `path:"id"`
		Body *struct {
			User string `json:"user,omitempty" doc:"Default: the current user's name, or integration-<merchantId>"`
		}
	}
	type userOut struct {
		Body IntegrationUserView
	}
	exists := func(id string) error {
		if _, err := merchant(id); err != nil {
			if errors.Is(err, rules.ErrNotFound) {
				return rules.Errorf(rules.KindNotFound, rules.CodeMerchantNotFound, "merchant %s not found", id)
			}
			return err
		}
		return nil
	}
	huma.Register(a, huma.Operation{
		OperationID: "admin-put-integration-user", Method: http.MethodPost, Path: "/admin/v1/merchants/{id}/integration-user",
		Summary: "Create or rotate a merchant's integration user",
		Description: "Makes a new password (shown once, stored only as a bcrypt hash) and ends every token of the merchant. " +
			"A merchant has one integration user; a new name replaces the old one.",
		Tags: []string{"Admin"}, Security: adminSecurity, DefaultStatus: http.StatusCreated, Errors: []int{400, 401, 404, 409},
	}, func(ctx context.Context, in *userIn) (*userOut, error) {
		if err := exists(in.ID); err != nil {
			return nil, err
		}
		name := "integration-" + in.ID
		if old, err := t.Store.IntegrationUserOf(in.ID); err == nil {
			name = old.User
		} else if !errors.Is(err, rules.ErrNotFound) {
			return nil, err
		}
		if in.Body != nil && in.Body.User != "" {
			name = in.Body.User
		}
		if !integrationUserPattern.MatchString(name) {
			return nil, &rules.Error{Kind: rules.KindInvalid, Code: rules.CodeWrongType, Field: "user", Value: name,
				Message: "3 to 100 letters, digits or . _ @ + -"}
		}
		pw := make([]byte, 24)
		rand.Read(pw)
		password := base64.RawURLEncoding.EncodeToString(pw)
		hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
		if err != nil {
			return nil, err
		}
		u := &rules.IntegrationUser{User: name, MerchantID: in.ID, PasswordHash: string(hash), CreatedAt: time.Now().UTC()}
		if err := t.Store.PutIntegrationUser(u); err != nil {
			if errors.Is(err, rules.ErrExists) {
				return nil, &rules.Error{Kind: rules.KindConflict, Code: rules.CodeWrongState, Field: "user", Value: name,
					Message: "another merchant has an integration user of this name"}
			}
			return nil, err
		}
		t.revoke(in.ID)
		return &userOut{Body: IntegrationUserView{MerchantID: in.ID, User: name, Password: password, CreatedAt: wireTime(u.CreatedAt)}}, nil
	})
	huma.Register(a, huma.Operation{
		OperationID: "admin-get-integration-user", Method: http.MethodGet, Path: "/admin/v1/merchants/{id}/integration-user",
		Summary: "Read a merchant's integration user (never the password)",
		Tags:    []string{"Admin"}, Security: adminSecurity, Errors: []int{401, 404},
	}, func(ctx context.Context, in *struct {
		ID string `path:"id"`
	}) (*userOut, error) {
		if err := exists(in.ID); err != nil {
			return nil, err
		}
		u, err := t.Store.IntegrationUserOf(in.ID)
		if errors.Is(err, rules.ErrNotFound) {
			return nil, rules.Errorf(rules.KindNotFound, rules.CodeMerchantNotFound, "merchant %s has no integration user", in.ID)
		}
		if err != nil {
			return nil, err
		}
		return &userOut{Body: IntegrationUserView{MerchantID: u.MerchantID, User: u.User, CreatedAt: wireTime(u.CreatedAt)}}, nil
	})
}
