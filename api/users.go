package api

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"payouts/rules"
)

// The named users of the dashboard and the audit log, for operators with the
// admin token. The users sign in to the dashboard only; this API creates, lists, disables,
// enables and resets them, and reads the audit log as JSON or CSV.

// UserView is a user as the admin API shows it: never a hash or a secret.
type UserView struct {
	ID         string `json:"id" example:"u_3f9a1c0d2b7e4a55"`
	Name       string `json:"name" example:"Ana Rojas"`
	Email      string `json:"email" example:"ana.rojas@tiendalima.pe"`
	Role       string `json:"role" enum:"operator,maker,checker,viewer"`
	MerchantID string `json:"merchantId,omitempty" doc:"The merchant of a maker, checker or viewer; none for an operator"`
	Status     string `json:"status" enum:"pending,active,disabled" doc:"pending until the set-up link is used (password and TOTP confirmed)"`
	CreatedAt  string `json:"createdAt"`
}

// UserWithLinkView is a user with its one-time set-up link, shown once.
type UserWithLinkView struct {
	UserView
	SetupLink      string `json:"setupLink" doc:"One-time link to set a password and enrol TOTP; shown once, only its hash is kept"`
	SetupExpiresAt string `json:"setupExpiresAt" doc:"72 hours after it was issued"`
}

// NewUserBody creates a user.
type NewUserBody struct {
	Name       string `json:"name" doc:"Shown in the dashboard and the audit log" example:"Ana Rojas"`
	Email      string `json:"email" doc:"Unique, compared without case" example:"ana.rojas@tiendalima.pe"`
	Role       string `json:"role" doc:"operator (every merchant), or maker, checker, viewer (of merchantId)" example:"maker"`
	MerchantID string `json:"merchantId,omitempty" doc:"Required for maker, checker and viewer; absent for operator"`
}

// UserList is every user, oldest first.
type UserList struct {
	Users []UserView `json:"users"`
}

// UserWithLink is a user with its set-up link under base (the admin API's answer, and the
// CLI's).
func UserWithLink(u *rules.User, base, token string) UserWithLinkView {
	return UserWithLinkView{UserView: userView(u), SetupLink: rules.SetupLink(base, token), SetupExpiresAt: wireTime(u.SetupExpires)}
}

func userView(u *rules.User) UserView {
	return UserView{ID: u.ID, Name: u.Name, Email: u.Email, Role: string(u.Role), MerchantID: u.MerchantID,
		Status: string(u.Status), CreatedAt: wireTime(u.CreatedAt)}
}

// publicBase is the base URL links are made under: the one the client reached (a trusted
// proxy's), else --public-url.
func (d Deps) publicBase(ctx context.Context) string {
	if b := rules.PublicBase(ctx); b != "" {
		return b
	}
	return d.PublicURL
}

func registerUsers(a huma.API, d Deps) {
	if d.Users == nil {
		return
	}
	const usersDoc = "This project's extension: named users of the dashboard. "
	type createUserIn struct {
		Body NewUserBody
	}
	type withLinkOut struct {
		Body UserWithLinkView
	}
	withLink := func(ctx context.Context, u *rules.User, token string) *withLinkOut {
		return &withLinkOut{Body: UserWithLink(u, d.publicBase(ctx), token)}
	}
	huma.Register(a, huma.Operation{
		OperationID: "admin-create-user", Method: http.MethodPost, Path: "/admin/v1/users",
		Summary: "Create a dashboard user", Tags: []string{"Users"}, Security: adminSecurity, DefaultStatus: http.StatusCreated,
		Errors: []int{400, 409}, Extensions: extension,
		Description: usersDoc + "The answer has a one-time set-up link (72 h) where the user sets a password (12 characters or more) " +
			"and enrols a TOTP second factor; the link is shown once. Invalid fields are 400 (" + rules.CodeUserField + ", with the field); " +
			"an email another user has is 409 (" + rules.CodeUserExists + ").",
	}, func(ctx context.Context, in *createUserIn) (*withLinkOut, error) {
		u, token, err := d.Users.Create(ctx, rules.NewUser{Name: in.Body.Name, Email: in.Body.Email, Role: rules.Role(in.Body.Role),
			MerchantID: in.Body.MerchantID})
		if err != nil {
			return nil, err
		}
		return withLink(ctx, u, token), nil
	})

	type listOut struct {
		Body UserList
	}
	huma.Register(a, huma.Operation{
		OperationID: "admin-list-users", Method: http.MethodGet, Path: "/admin/v1/users",
		Summary: "List the dashboard users", Tags: []string{"Users"}, Security: adminSecurity, Extensions: extension,
		Description: usersDoc + "Every user, oldest first.",
	}, func(ctx context.Context, _ *struct{}) (*listOut, error) {
		us, err := d.Users.Store.Users(ctx)
		if err != nil {
			return nil, err
		}
		out := &listOut{Body: UserList{Users: make([]UserView, len(us))}}
		for i, u := range us {
			out.Body.Users[i] = userView(u)
		}
		return out, nil
	})

	type idIn struct {
		ID string `path:"id"`
	}
	type userOut struct {
		Body UserView
	}
	huma.Register(a, huma.Operation{
		OperationID: "admin-get-user", Method: http.MethodGet, Path: "/admin/v1/users/{id}",
		Summary: "Read a dashboard user", Tags: []string{"Users"}, Security: adminSecurity, Errors: []int{404}, Extensions: extension,
		Description: usersDoc + "404 (" + rules.CodeUserNotFound + ") when there is no such user.",
	}, func(ctx context.Context, in *idIn) (*userOut, error) {
		u, err := d.Users.Get(ctx, in.ID)
		if err != nil {
			return nil, err
		}
		return &userOut{Body: userView(u)}, nil
	})
	for _, op := range []struct {
		id, verb, summary string
		enabled           bool
	}{
		{"admin-disable-user", "disable", "Disable a dashboard user: it can no longer sign in, and its sessions end", false},
		{"admin-enable-user", "enable", "Enable a disabled dashboard user again", true},
	} {
		huma.Register(a, huma.Operation{
			OperationID: op.id, Method: http.MethodPost, Path: "/admin/v1/users/{id}/" + op.verb,
			Summary: op.summary, Tags: []string{"Users"}, Security: adminSecurity, Errors: []int{404}, Extensions: extension,
			Description: usersDoc + "Idempotent. 404 (" + rules.CodeUserNotFound + ") when there is no such user.",
		}, func(ctx context.Context, in *idIn) (*userOut, error) {
			u, err := d.Users.SetEnabled(ctx, in.ID, op.enabled)
			if err != nil {
				return nil, err
			}
			return &userOut{Body: userView(u)}, nil
		})
	}
	huma.Register(a, huma.Operation{
		OperationID: "admin-reset-user", Method: http.MethodPost, Path: "/admin/v1/users/{id}/reset",
		Summary: "Send a dashboard user a new set-up link", Tags: []string{"Users"}, Security: adminSecurity, Errors: []int{404, 409},
		Extensions: extension,
		Description: usersDoc + "A new one-time link (72 h): the password and the second factor are set again, and every session " +
			"of the user ends. A disabled user is 409 (" + rules.CodeUserState + "): enable it first.",
	}, func(ctx context.Context, in *idIn) (*withLinkOut, error) {
		u, token, err := d.Users.Reset(ctx, in.ID)
		if err != nil {
			return nil, err
		}
		return withLink(ctx, u, token), nil
	})
	registerAudit(a, d)
}

// AuditView is an audit entry on the wire.
type AuditView struct {
	ID         int64           `json:"id"`
	At         string          `json:"at"`
	Principal  string          `json:"principal" doc:"admin-token:<fingerprint>, or user:<id>:<credential version>"`
	Actor      string          `json:"actor" doc:"The user's name, or admin token"`
	Action     string          `json:"action" example:"user.create"`
	Target     string          `json:"target,omitempty" example:"user:u_3f9a1c0d2b7e4a55"`
	MerchantID string          `json:"merchantId,omitempty"`
	Detail     json.RawMessage `json:"detail,omitempty" doc:"A small JSON object: never a secret, never card data"`
	RemoteAddr string          `json:"remoteAddr,omitempty"`
	UserAgent  string          `json:"userAgent,omitempty"`
}

// AuditPageView is a page of the audit log, newest first.
type AuditPageView struct {
	Entries    []AuditView `json:"entries"`
	NextCursor string      `json:"nextCursor,omitempty" doc:"cursor of the next (older) page; absent at the end"`
}

func auditView(e rules.AuditEntry) AuditView {
	return AuditView{ID: e.ID, At: e.At.UTC().Format(time.RFC3339Nano), Principal: e.Principal, Actor: e.ActorName, Action: e.Action,
		Target: e.Target, MerchantID: e.MerchantID, Detail: e.Detail, RemoteAddr: e.RemoteAddr, UserAgent: e.UserAgent}
}

func registerAudit(a huma.API, d Deps) {
	if d.AuditLog == nil {
		return
	}
	type auditIn struct {
		rules.AuditQuery
		Format string `query:"format" enum:"json,csv" doc:"csv: the same entries as CSV (also with Accept: text/csv)"`
		Accept string `header:"Accept"`
	}
	type auditOut struct {
		ContentType        string `header:"Content-Type"`
		ContentDisposition string `header:"Content-Disposition"`
		Body               []byte
	}
	pageSchema := a.OpenAPI().Components.Schemas.Schema(reflect.TypeOf(AuditPageView{}), true, "AuditPage")
	huma.Register(a, huma.Operation{
		OperationID: "admin-audit-log", Method: http.MethodGet, Path: "/admin/v1/audit",
		Summary: "Read the audit log", Tags: []string{"Users"}, Security: adminSecurity, Errors: []int{400}, Extensions: extension,
		Description: "This project's extension: every state-changing action of the admin API and the dashboard — who " +
			"(principal and name), when, what (action, target, a small detail), from where (address, user agent) — newest first, " +
			"paged by nextCursor. The signed merchant API's payout creates are not in it (a payout records itself). " +
			"format=csv or Accept: text/csv gives the page as CSV (header " + strings.Join(rules.AuditCSVHeader, ",") + "). " +
			"A bad filter is 400 (" + rules.CodeAuditQuery + ").",
		Responses: map[string]*huma.Response{"200": {Description: "A page of entries, newest first", Content: map[string]*huma.MediaType{
			"application/json": {Schema: pageSchema},
			"text/csv": {Schema: &huma.Schema{Type: "string"},
				Example: strings.Join(rules.AuditCSVHeader, ",") + "\n7,2026-11-25T08:01:02Z,admin-token:9c1e…,admin token,user.create,user:u_3f9a1c0d2b7e4a55,,\"{\"\"email\"\":\"\"ana.rojas@tiendalima.pe\"\",\"\"role\"\":\"\"operator\"\"}\",127.0.0.1,curl/8.5.0\n"},
		}}},
	}, func(ctx context.Context, in *auditIn) (*auditOut, error) {
		f, err := in.AuditQuery.Filter()
		if err != nil {
			return nil, err
		}
		page, err := d.AuditLog.AuditEntries(ctx, f)
		if err != nil {
			return nil, err
		}
		if in.Format == "csv" || (in.Format == "" && strings.Contains(in.Accept, "text/csv")) {
			var buf bytes.Buffer
			if err := rules.WriteAuditCSV(rules.NewCSVWriter(&buf), page.Entries, true); err != nil {
				return nil, err
			}
			return &auditOut{ContentType: "text/csv; charset=utf-8", ContentDisposition: `attachment; filename="audit.csv"`, Body: buf.Bytes()}, nil
		}
		v := AuditPageView{Entries: make([]AuditView, len(page.Entries))}
		for i, e := range page.Entries {
			v.Entries[i] = auditView(e)
		}
		if page.Next > 0 {
			v.NextCursor = strconv.FormatInt(page.Next, 10)
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		return &auditOut{ContentType: "application/json", Body: b}, nil
	})
}
