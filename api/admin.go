package api

import (
	"context"
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"payouts/rules"
)

// adminAuth guards /admin/, /sandbox/ and /metrics (on the main listener; --metrics-addr
// serves it apart) with the bearer admin token. Wrong tokens count
// per client address: past the limit they are answered 429, while the right token is always
// served. A request with the right token carries the admin token's actor for the audit log
// (rules.Audit).
func adminAuth(token string, failures *FailureLimiter, auditor *rules.Auditor) func(http.Handler) http.Handler {
	want := []byte("Bearer " + token)
	actor := rules.AdminActor(rules.AdminPrincipal(token))
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !strings.HasPrefix(r.URL.Path, "/admin/") && !strings.HasPrefix(r.URL.Path, "/sandbox/") && r.URL.Path != "/metrics" {
				next.ServeHTTP(w, r)
				return
			}
			if token == "" || subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
				addr := clientAddr(r)
				if !failures.Fail(addr) {
					writeProblem(w, retryAfter(problemOf(rules.KindRateLimited, rules.CodeRateLimited,
						"too many wrong admin tokens from this address"), int(failures.RetryAfter(addr).Seconds()+0.5)))
					return
				}
				w.Header().Set("WWW-Authenticate", `Bearer realm="payouts admin"`)
				writeProblem(w, problemOf(rules.KindUnauthorized, rules.CodeAuthentication, "the admin API needs Authorization: Bearer <admin token>"))
				return
			}
			if auditor != nil {
				r = r.WithContext(rules.WithAudit(r.Context(), auditor, actor, clientAddr(r), r.UserAgent()))
			}
			next.ServeHTTP(w, r)
		})
	}
}

// MerchantView is a merchant as the admin API shows it (never the key or the secret).
type MerchantView struct {
	MerchantID string         `json:"merchantId"`
	Name       string         `json:"name"`
	Settings   rules.Settings `json:"settings"`
	CreatedAt  string         `json:"createdAt"`
}

// NewMerchantView is the creation answer, the only one that shows the credentials.
type NewMerchantView struct {
	MerchantID string         `json:"merchantId"`
	APIKey     string         `json:"apiKey"`
	APISecret  string         `json:"apiSecret" doc:"Shown once"`
	Name       string         `json:"name"`
	Settings   rules.Settings `json:"settings"`
}

// SettingsPatch changes some settings; absent fields stay as they are.
type SettingsPatch struct {
	PSP                  *bool     `json:"psp,omitempty"`
	EmailNotifications   *bool     `json:"emailNotifications,omitempty"`
	CardPayouts          *bool     `json:"cardPayouts,omitempty"`
	CardOnFile           *bool     `json:"cardOnFile,omitempty"`
	CashPayouts          *bool     `json:"cashPayouts,omitempty"`
	RealTimePhoneAccount *bool     `json:"realTimePhoneAccount,omitempty"`
	RealTimeKey          *bool     `json:"realTimeKey,omitempty"`
	PendingOnNoBalance   *bool     `json:"pendingOnNoBalance,omitempty"`
	NotificationURL      *string   `json:"notificationUrl,omitempty" doc:"Where the merchant's notifications go: an absolute https URL (http where the server allows it; sandbox:inbox in the sandbox), or empty to send none"`
	AllowedOrigins       *[]string `json:"allowedOrigins,omitempty"`
}

func (p *SettingsPatch) apply(s *rules.Settings) {
	set := func(dst *bool, v *bool) {
		if v != nil {
			*dst = *v
		}
	}
	set(&s.PSP, p.PSP)
	set(&s.EmailNotifications, p.EmailNotifications)
	set(&s.CardPayouts, p.CardPayouts)
	set(&s.CardOnFile, p.CardOnFile)
	set(&s.CashPayouts, p.CashPayouts)
	set(&s.RealTimePhoneAccount, p.RealTimePhoneAccount)
	set(&s.RealTimeKey, p.RealTimeKey)
	set(&s.PendingOnNoBalance, p.PendingOnNoBalance)
	if p.NotificationURL != nil {
		s.NotificationURL = *p.NotificationURL
	}
	if p.AllowedOrigins != nil {
		s.AllowedOrigins = *p.AllowedOrigins
	}
}

var adminSecurity = []map[string][]string{{"admin": {}}}

func merchantView(m *rules.Merchant) MerchantView {
	return MerchantView{MerchantID: m.ID, Name: m.Name, Settings: m.Settings, CreatedAt: wireTime(m.CreatedAt)}
}

func registerAdmin(a huma.API, d Deps) {
	type createIn struct {
		Body struct {
			MerchantID string         `json:"merchantId,omitempty" doc:"Generated, numeric, when absent"`
			Name       string         `json:"name" minLength:"1"`
			Settings   *SettingsPatch `json:"settings,omitempty"`
		}
	}
	type createOut struct {
		Body NewMerchantView
	}
	huma.Register(a, huma.Operation{
		OperationID: "admin-create-merchant", Method: http.MethodPost, Path: "/admin/v1/merchants",
		Summary: "Create a merchant", Tags: []string{"Admin"}, Security: adminSecurity, DefaultStatus: http.StatusCreated, Errors: []int{400, 409},
	}, func(ctx context.Context, in *createIn) (*createOut, error) {
		s := rules.DefaultSettings()
		if in.Body.Settings != nil {
			in.Body.Settings.apply(&s)
		}
		if err := checkSettings(s, d.AllowHTTPNotificationURL, d.Sandbox); err != nil {
			return nil, err
		}
		m, c, err := d.Merchants.Create(ctx, in.Body.MerchantID, in.Body.Name, s, time.Now())
		if err != nil {
			return nil, err
		}
		rules.Audit(ctx, "merchant.create", "merchant:"+m.ID, m.ID, map[string]any{"name": m.Name, "settings": in.Body.Settings})
		return &createOut{Body: NewMerchantView{MerchantID: m.ID, APIKey: c.APIKey, APISecret: c.APISecret, Name: m.Name, Settings: m.Settings}}, nil
	})

	type idIn struct {
		ID string `path:"id"`
	}
	type merchantOut struct {
		Body MerchantView
	}
	notFound := func(err error, id string) error {
		if errors.Is(err, rules.ErrNotFound) {
			return rules.Errorf(rules.KindNotFound, rules.CodeMerchantNotFound, "merchant %s not found", id)
		}
		return err
	}
	huma.Register(a, huma.Operation{
		OperationID: "admin-get-merchant", Method: http.MethodGet, Path: "/admin/v1/merchants/{id}",
		Summary: "Read a merchant", Tags: []string{"Admin"}, Security: adminSecurity, Errors: []int{404},
	}, func(ctx context.Context, in *idIn) (*merchantOut, error) {
		m, err := d.Store.Merchant(ctx, in.ID)
		if err != nil {
			return nil, notFound(err, in.ID)
		}
		return &merchantOut{Body: merchantView(m)}, nil
	})

	type patchIn struct {
		ID   string `path:"id"`
		Body struct {
			Name     string         `json:"name,omitempty"`
			Settings *SettingsPatch `json:"settings,omitempty"`
		}
	}
	huma.Register(a, huma.Operation{
		OperationID: "admin-update-merchant", Method: http.MethodPatch, Path: "/admin/v1/merchants/{id}",
		Summary: "Change a merchant's name or settings", Tags: []string{"Admin"}, Security: adminSecurity, Errors: []int{400, 404},
	}, func(ctx context.Context, in *patchIn) (*merchantOut, error) {
		m, err := d.Store.UpdateMerchant(ctx, in.ID, func(m *rules.Merchant) error {
			if in.Body.Name != "" {
				m.Name = in.Body.Name
			}
			if in.Body.Settings != nil {
				in.Body.Settings.apply(&m.Settings)
			}
			return checkSettings(m.Settings, d.AllowHTTPNotificationURL, d.Sandbox)
		})
		if err != nil {
			return nil, notFound(err, in.ID)
		}
		d.Keys.Forget(in.ID)
		rules.Audit(ctx, "merchant.update", "merchant:"+m.ID, m.ID, in.Body)
		return &merchantOut{Body: merchantView(m)}, nil
	})

	type fundIn struct {
		ID   string `path:"id"`
		Body struct {
			Country  string `json:"country" enum:"COL,PER"`
			Currency string `json:"currency" enum:"COP,PEN,USD"`
			Amount   int64  `json:"amount" doc:"Minor units; negative withdraws"`
		}
	}
	type fundOut struct {
		Body rules.Balance
	}
	huma.Register(a, huma.Operation{
		Errors:      []int{400, 404, 409},
		OperationID: "admin-fund-balance", Method: http.MethodPost, Path: "/admin/v1/merchants/{id}/balance",
		Summary: "Fund a merchant's balance", Tags: []string{"Admin"}, Security: adminSecurity,
		Description: "Adds amount (negative: withdraws) to the balance of a country in one of its currencies: COL in COP; " +
			"PER in PEN or USD (another pair is 400, " + rules.CodeFundCurrency + "). Held PENDING_BALANCE payouts are released.",
	}, func(ctx context.Context, in *fundIn) (*fundOut, error) {
		if _, err := d.Store.Merchant(ctx, in.ID); err != nil {
			return nil, notFound(err, in.ID)
		}
		if err := rules.CheckFundingOf(in.Body.Country, in.Body.Currency, in.Body.Amount); err != nil {
			return nil, err
		}
		b, err := d.Fund(ctx, in.ID, in.Body.Country, in.Body.Currency, in.Body.Amount)
		if err != nil {
			return nil, err
		}
		rules.Audit(ctx, "balance.fund", "merchant:"+in.ID, in.ID, in.Body)
		return &fundOut{Body: b}, nil
	})
}

// BackupHandler streams a consistent copy of the database (GET /admin/v1/backup).
func BackupHandler(st Store) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		bw := &backupWriter{w: w}
		if _, err := st.Backup(r.Context(), bw); err != nil {
			if !bw.started && errors.Is(err, rules.ErrNotSupported) {
				p := &Problem{Title: http.StatusText(http.StatusNotImplemented), Status: http.StatusNotImplemented, Detail: err.Error()}
				p.add(&rules.Error{Code: rules.CodeBackupUnsupported, Message: err.Error()})
				writeProblem(w, p)
				return
			}
			panic(http.ErrAbortHandler)
		}
	}
}

// backupWriter sends the backup's headers with its first bytes, so that an engine without
// a backup can still answer with a problem.
type backupWriter struct {
	w       http.ResponseWriter
	started bool
}

func (b *backupWriter) Write(p []byte) (int, error) {
	if !b.started {
		b.started = true
		b.w.Header().Set("Content-Type", "application/octet-stream")
		b.w.Header().Set("Content-Disposition", `attachment; filename="payouts.db"`)
	}
	return b.w.Write(p)
}
