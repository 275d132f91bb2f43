package rules

import "time"

// IntegrationUser is a merchant's user of the original's bearer scheme (wire section 1):
// {"user","password"} buys a 5-minute token for the newer endpoints (the Peru lookup). One
// per merchant; rotating replaces it. The password is kept only as a slow hash (api/).
type IntegrationUser struct {
	User         string    `json:"user"`
	MerchantID   string    `json:"merchantId"`
	PasswordHash string    `json:"passwordHash"`
	CreatedAt    time.Time `json:"createdAt"`
}
