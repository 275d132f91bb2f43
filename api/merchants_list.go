package api

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"
)

// MerchantListItem is a merchant as GET /admin/v1/merchants lists it: what GET
// /admin/v1/merchants/{id} answers, plus its live API keys (never a key nor a secret).
type MerchantListItem struct {
	MerchantView
	Keys []KeyView `json:"keys" doc:"The merchant's live API keys, the current one first"`
}

// MerchantList is the answer of GET /admin/v1/merchants (a named type: huma names an
// anonymous body after its operation's output type, which other lists share).
type MerchantList struct {
	Items []MerchantListItem `json:"items"`
}

// registerMerchantList adds GET /admin/v1/merchants: every merchant, by id as the
// store orders them, so that an operator finds the demo merchant's id without the dashboard.
func registerMerchantList(a huma.API, d Deps) {
	type listOut struct {
		Body MerchantList
	}
	huma.Register(a, huma.Operation{
		OperationID: "admin-list-merchants", Method: http.MethodGet, Path: "/admin/v1/merchants",
		Summary:     "List the merchants",
		Description: "Every merchant with its settings and its live API keys (ids only: never a key or a secret).",
		Tags:        []string{"Admin"}, Security: adminSecurity, Errors: []int{401},
	}, func(ctx context.Context, _ *struct{}) (*listOut, error) {
		ms, err := d.Store.Merchants(ctx)
		if err != nil {
			return nil, err
		}
		now := time.Now().UTC()
		if d.Auth != nil && d.Auth.Now != nil {
			now = d.Auth.Now().UTC()
		}
		out := &listOut{}
		out.Body.Items = make([]MerchantListItem, 0, len(ms))
		for _, m := range ms {
			out.Body.Items = append(out.Body.Items, MerchantListItem{MerchantView: merchantView(m), Keys: KeyViews(m, now)})
		}
		return out, nil
	})
}
