package api_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"payouts/internal/servertest"
)

// GET /admin/v1/merchants lists every merchant with its live keys (ids only), and only
// with the admin token.
func TestAdminListsMerchants(t *testing.T) {
	t.Parallel()
	servertest.OnEachEngine(t, func(t *testing.T, e servertest.Engine) {
		s := servertest.Start(t, servertest.Setup{Engine: e})
		a := s.NewMerchant(t, map[string]any{"cardPayouts": true})
		b := s.NewMerchant(t, nil)
		s.Run(t, []servertest.Scenario{
			{Name: "with the admin token", Path: "/admin/v1/merchants", Admin: true, WantStatus: 200,
				WantNotContains: []string{a.Key, a.Secret, b.Key, b.Secret},
				Then: func(t *testing.T, _ http.Header, raw []byte) {
					var page struct {
						Items []struct {
							MerchantID string
							Name       string
							Settings   struct{ CardPayouts bool }
							Keys       []struct {
								KeyID   string
								Current bool
							}
						}
					}
					if json.Unmarshal(raw, &page) != nil || len(page.Items) != 2 {
						t.Fatalf("%s, want two merchants", raw)
					}
					if it := page.Items[0]; it.MerchantID != a.MerchantID || !it.Settings.CardPayouts || len(it.Keys) != 1 || !it.Keys[0].Current {
						t.Errorf("first item %+v, want merchant %s with its card setting and one current key", it, a.MerchantID)
					}
					if page.Items[1].MerchantID != b.MerchantID {
						t.Errorf("second item %s, want %s", page.Items[1].MerchantID, b.MerchantID)
					}
				}},
			{Name: "without the admin token", Path: "/admin/v1/merchants", WantStatus: 401},
			{Name: "with another token", Path: "/admin/v1/merchants", Headers: map[string]string{"Authorization": "Bearer not-the-token-0123456789"},
				WantStatus: 401},
		})
	})
}
