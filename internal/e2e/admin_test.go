package e2e

import (
	"encoding/json"
	"strings"
	"testing"
)

// GET /admin/v1/merchants lists every merchant with its live keys (ids
// only), and only with the admin token.
func TestAdminListsMerchants(t *testing.T) {
	t.Parallel()
	s := startServer(t, "")
	a := s.newMerchant(t, map[string]any{"cardPayouts": true})
	b := s.newMerchant(t, nil)
	code, _, raw := s.rawAdmin(t, "GET", "/admin/v1/merchants", nil)
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
	if code != 200 || json.Unmarshal(raw, &page) != nil || len(page.Items) != 2 {
		t.Fatalf("GET /admin/v1/merchants: %d %s", code, raw)
	}
	for _, c := range []*merchantClient{a, b} {
		if strings.Contains(string(raw), c.Secret) || strings.Contains(string(raw), c.Key) {
			t.Fatalf("the list shows a key or a secret: %s", raw)
		}
	}
	if it := page.Items[0]; it.MerchantID != a.MerchantID || !it.Settings.CardPayouts || len(it.Keys) != 1 || !it.Keys[0].Current {
		t.Errorf("first item %+v, want merchant %s with its card setting and one current key", it, a.MerchantID)
	}
	if page.Items[1].MerchantID != b.MerchantID {
		t.Errorf("second item %s, want %s", page.Items[1].MerchantID, b.MerchantID)
	}
	s.AdminToken = "not-the-token-0123456789"
	if code, _, _ := s.rawAdmin(t, "GET", "/admin/v1/merchants", nil); code != 401 {
		t.Errorf("without the admin token: %d", code)
	}
}
