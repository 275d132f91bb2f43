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

// RefreshLifetime is how long a refresh token lives (refresh_expires_in, the published
// answer's field; 30 minutes, the usual default of the identity servers that answer so). A
// refresh token is single-use: a refresh answers a new one and ends the old.
const RefreshLifetime = 30 * time.Minute

// IntegrationStore keeps the integration users.
type IntegrationStore interface {
	IntegrationUser(ctx context.Context, user string) (*rules.IntegrationUser, error)
	IntegrationUserOf(ctx context.Context, merchantID string) (*rules.IntegrationUser, error)
	PutIntegrationUser(ctx context.Context, u *rules.IntegrationUser) error
}

// Tokens issues and checks access tokens. Tokens live in memory only (a restart makes
// clients ask for a new one, as an expiry would); only their SHA-256 is kept.
type Tokens struct {
	Store IntegrationStore
	Now   func() time.Time // real time

	cost     int    // bcrypt's
	dummy    []byte // compared with for an unknown user
	failures *FailureLimiter
	mu       sync.Mutex
	live     map[[32]byte]tokenEntry
	refresh  map[[32]byte]tokenEntry
}

type tokenEntry struct {
	merchantID string
	user       string
	expires    time.Time
}

// NewTokens makes the token issuer; now is real time. cost is bcrypt's for the integration
// users' passwords, zero for bcrypt.DefaultCost: the tests' servers give bcrypt.MinCost, as
// a hash at the default cost takes 0.07 s of CPU (1.3 s under the race detector) and they
// sign in hundreds of times.
func NewTokens(st IntegrationStore, now func() time.Time, cost int) *Tokens {
	if cost == 0 {
		cost = bcrypt.DefaultCost
	}
	failures := NewFailureLimiter(20)
	failures.Now = now
	// The dummy hash makes an unknown user cost the same bcrypt time as a wrong password.
	// Made here, with the server, rather than when the package loads: every process that
	// links the API (each command of the CLI, each test binary) paid for it at its start.
	dummy, err := bcrypt.GenerateFromPassword([]byte("no such user"), cost)
	if err != nil {
		panic(err) // only a cost outside bcrypt's range fails
	}
	return &Tokens{Store: st, Now: now, cost: cost, dummy: dummy, failures: failures,
		live: map[[32]byte]tokenEntry{}, refresh: map[[32]byte]tokenEntry{}}
}

// issued is a token answer: the access token and the refresh token that renews it.
type issued struct {
	access, refresh string
}

// issue checks the user's password and returns new tokens.
func (t *Tokens) issue(ctx context.Context, user, password string) (issued, bool, error) {
	u, err := t.Store.IntegrationUser(ctx, user)
	if err != nil && !errors.Is(err, rules.ErrNotFound) {
		return issued{}, false, err
	}
	hash := t.dummy
	if u != nil {
		hash = []byte(u.PasswordHash)
	}
	if bcrypt.CompareHashAndPassword(hash, []byte(password)) != nil || u == nil {
		return issued{}, false, nil
	}
	return t.mint(u.MerchantID, u.User), true, nil
}

// renew trades a live refresh token for new tokens; the old refresh token ends.
func (t *Tokens) renew(refresh string) (issued, bool) {
	k := sha256.Sum256([]byte(refresh))
	t.mu.Lock()
	e, ok := t.refresh[k]
	delete(t.refresh, k)
	t.mu.Unlock()
	if !ok || !t.Now().Before(e.expires) {
		return issued{}, false
	}
	return t.mint(e.merchantID, e.user), true
}

func (t *Tokens) mint(merchantID, user string) issued {
	tok := issued{access: "tk_" + randomToken(), refresh: "rt_" + randomToken()}
	now := t.Now()
	t.mu.Lock()
	for _, m := range []map[[32]byte]tokenEntry{t.live, t.refresh} { // bounded by the tokens of their lifetime
		for k, e := range m {
			if !now.Before(e.expires) {
				delete(m, k)
			}
		}
	}
	t.live[sha256.Sum256([]byte(tok.access))] = tokenEntry{merchantID: merchantID, user: user, expires: now.Add(TokenLifetime)}
	t.refresh[sha256.Sum256([]byte(tok.refresh))] = tokenEntry{merchantID: merchantID, user: user, expires: now.Add(RefreshLifetime)}
	t.mu.Unlock()
	return tok
}

func randomToken() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
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
	for _, m := range []map[[32]byte]tokenEntry{t.live, t.refresh} {
		for k, e := range m {
			if e.merchantID == merchantID {
				delete(m, k)
			}
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
// The published field table names the user userName; the published example sends user: both
// are taken. grant_type refresh_token trades a refresh_token for new tokens.
type tokenIn struct {
	Body struct {
		User         string `json:"user,omitempty" maxLength:"100" doc:"The integration user (or userName)"`
		UserName     string `json:"userName,omitempty" maxLength:"100" doc:"The integration user, as the published field table names it"`
		Password     string `json:"password,omitempty" maxLength:"72"`
		GrantType    string `json:"grant_type,omitempty" enum:"password,refresh_token" doc:"password (the default: user and password) or refresh_token"`
		RefreshToken string `json:"refresh_token,omitempty" maxLength:"200" doc:"With grant_type refresh_token: the refresh_token of an earlier answer"`
	}
	addr string
}

func (in *tokenIn) Resolve(ctx huma.Context) []error {
	r := &http.Request{RemoteAddr: ctx.RemoteAddr()}
	in.addr = clientAddr(r)
	return nil
}

// credentialsProblem is the published refusal of the token endpoint, {"message": "Invalid
// credentials"}, with this service's code and errorType beside it.
type credentialsProblem struct {
	Message   string `json:"message"`
	Code      string `json:"code"`
	Status    int    `json:"status"`
	Title     string `json:"title"`
	Detail    string `json:"detail"`
	ErrorType string `json:"errorType"`
}

func (p *credentialsProblem) Error() string                { return p.Detail }
func (p *credentialsProblem) GetStatus() int               { return p.Status }
func (p *credentialsProblem) ContentType(ct string) string { return "application/problem+json" }
func (p *credentialsProblem) GetHeaders() http.Header {
	return http.Header{ErrorTypeHeader: {ErrorTypeAuthentication}, "Cache-Control": {"no-store"}}
}

func invalidCredentials(detail string) error {
	return &credentialsProblem{Message: "Invalid credentials", Code: rules.CodeAuthentication, Status: http.StatusUnauthorized,
		Title: "Unauthorized", Detail: detail, ErrorType: ErrorTypeAuthentication}
}

// registerTokens adds the token endpoint and the admin operations of integration users.
// merchant reads a merchant (ErrNotFound when none).
func registerTokens(a huma.API, t *Tokens, merchant func(ctx context.Context, id string) (*rules.Merchant, error)) {
	type tokenOut struct {
		CacheControl string `header:"Cache-Control"`
		Body         struct {
			AccessToken      string `json:"access_token"`
			ExpiresIn        int    `json:"expires_in"`
			RefreshToken     string `json:"refresh_token"`
			RefreshExpiresIn int    `json:"refresh_expires_in"`
			TokenType        string `json:"token_type"`
		}
	}
	huma.Register(a, huma.Operation{
		OperationID: "integration-token", Method: http.MethodPost, Path: "/ms-authentication-service/authentication/api-integration/token",
		Summary: "Get an access token (the original's bearer scheme)",
		Description: "The merchant's integration user (created by the admin API) trades {\"user\" (or \"userName\"),\"password\"} for a token that lives " +
			"300 seconds and a refresh_token that lives 1800 (refresh_expires_in); {\"grant_type\":\"refresh_token\",\"refresh_token\":…} trades a refresh token, once, for new ones. " +
			"Send the access token as `Authorization: <token>`, without `Bearer`, with header `MID`, to the beneficiary lookup. " +
			"Wrong credentials answer 401 with the published {\"message\": \"Invalid credentials\"} and code " + rules.CodeAuthentication +
			"; more than 20 failures a minute from one address for one user 429.",
		Tags: []string{"Lookup"}, Errors: []int{400, 401, 429},
	}, func(ctx context.Context, in *tokenIn) (*tokenOut, error) {
		b := in.Body
		user := b.User
		if user == "" {
			user = b.UserName
		}
		var tok issued
		switch b.GrantType {
		case "", "password":
			var missing []*rules.Error
			if user == "" {
				missing = append(missing, &rules.Error{Kind: rules.KindInvalid, Code: rules.CodeAdminField, Field: "user", Message: "user (or userName) is required"})
			}
			if b.Password == "" {
				missing = append(missing, &rules.Error{Kind: rules.KindInvalid, Code: rules.CodeAdminField, Field: "password", Message: "password is required"})
			}
			if len(missing) > 0 {
				return nil, &rules.Problem{Kind: rules.KindInvalid, Detail: "the token request lacks its credentials", Errors: missing}
			}
			// Failures count per (client address, user presented), as the signed API's do.
			key := in.addr + "\x00" + user
			if !t.failures.Allow(key) {
				return nil, retryAfter(problemOf(rules.KindRateLimited, rules.CodeRateLimited, "too many failed authentications from this address"),
					int(t.failures.RetryAfter(key).Seconds()+0.5))
			}
			var ok bool
			var err error
			if tok, ok, err = t.issue(ctx, user, b.Password); err != nil {
				return nil, err
			} else if !ok {
				t.failures.Fail(key)
				return nil, invalidCredentials("user or password is wrong")
			}
		case "refresh_token":
			if b.RefreshToken == "" {
				return nil, &rules.Error{Kind: rules.KindInvalid, Code: rules.CodeAdminField, Field: "refresh_token", Message: "refresh_token is required with grant_type refresh_token"}
			}
			key := in.addr + "\x00refresh"
			if !t.failures.Allow(key) {
				return nil, retryAfter(problemOf(rules.KindRateLimited, rules.CodeRateLimited, "too many failed authentications from this address"),
					int(t.failures.RetryAfter(key).Seconds()+0.5))
			}
			var ok bool
			if tok, ok = t.renew(b.RefreshToken); !ok {
				t.failures.Fail(key)
				return nil, invalidCredentials("the refresh token is unknown, used already or expired: ask with user and password")
			}
		}
		out := &tokenOut{CacheControl: "no-store"}
		out.Body.AccessToken, out.Body.ExpiresIn, out.Body.TokenType = tok.access, int(TokenLifetime/time.Second), "Bearer"
		out.Body.RefreshToken, out.Body.RefreshExpiresIn = tok.refresh, int(RefreshLifetime/time.Second)
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
	exists := func(ctx context.Context, id string) error {
		if _, err := merchant(ctx, id); err != nil {
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
		if err := exists(ctx, in.ID); err != nil {
			return nil, err
		}
		name := "integration-" + in.ID
		if old, err := t.Store.IntegrationUserOf(ctx, in.ID); err == nil {
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
		hash, err := bcrypt.GenerateFromPassword([]byte(password), t.cost)
		if err != nil {
			return nil, err
		}
		u := &rules.IntegrationUser{User: name, MerchantID: in.ID, PasswordHash: string(hash), CreatedAt: time.Now().UTC()}
		if err := t.Store.PutIntegrationUser(ctx, u); err != nil {
			if errors.Is(err, rules.ErrExists) {
				return nil, &rules.Error{Kind: rules.KindConflict, Code: rules.CodeWrongState, Field: "user", Value: name,
					Message: "another merchant has an integration user of this name"}
			}
			return nil, err
		}
		t.revoke(in.ID)
		rules.Audit(ctx, "integration-user.rotate", "merchant:"+in.ID, in.ID, map[string]string{"user": name})
		return &userOut{Body: IntegrationUserView{MerchantID: in.ID, User: name, Password: password, CreatedAt: wireTime(u.CreatedAt)}}, nil
	})
	huma.Register(a, huma.Operation{
		OperationID: "admin-get-integration-user", Method: http.MethodGet, Path: "/admin/v1/merchants/{id}/integration-user",
		Summary: "Read a merchant's integration user (never the password)",
		Tags:    []string{"Admin"}, Security: adminSecurity, Errors: []int{401, 404},
	}, func(ctx context.Context, in *struct {
		ID string `path:"id"`
	}) (*userOut, error) {
		if err := exists(ctx, in.ID); err != nil {
			return nil, err
		}
		u, err := t.Store.IntegrationUserOf(ctx, in.ID)
		if errors.Is(err, rules.ErrNotFound) {
			return nil, rules.Errorf(rules.KindNotFound, rules.CodeMerchantNotFound, "merchant %s has no integration user", in.ID)
		}
		if err != nil {
			return nil, err
		}
		return &userOut{Body: IntegrationUserView{MerchantID: u.MerchantID, User: u.User, CreatedAt: wireTime(u.CreatedAt)}}, nil
	})
}
