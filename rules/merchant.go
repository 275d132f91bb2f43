package rules

import "time"

// Merchant is a merchant account. The API key is kept only as a hash and the secret only
// sealed (encrypted); store/ never sees either in plain text.
type Merchant struct {
	ID           string    `json:"id"`
	Name         string    `json:"name"`
	APIKeyHash   string    `json:"apiKeyHash"`
	SealedSecret []byte    `json:"sealedSecret"`
	Settings     Settings  `json:"settings"`
	CreatedAt    time.Time `json:"createdAt"`
}

// Settings are the merchant's switches (contract section 8), all off unless said.
type Settings struct {
	PSP                  bool     `json:"psp" doc:"a payment service provider: subMerchantInfo is required"`
	EmailNotifications   bool     `json:"emailNotifications" doc:"email the beneficiary on SUCCESS and REJECTED"`
	CardPayouts          bool     `json:"cardPayouts" doc:"Peru card push payments"`
	CardOnFile           bool     `json:"cardOnFile" doc:"keep cards for later payouts (on by default)"`
	CashPayouts          bool     `json:"cashPayouts" doc:"Colombia cash (spec: not available unless on)"`
	RealTimePhoneAccount bool     `json:"realTimePhoneAccount" doc:"Colombia real-time by phone/account, up to 5,000,000"`
	RealTimeKey          bool     `json:"realTimeKey" doc:"Colombia Bre-B keys, up to 12,110,000"`
	PendingOnNoBalance   bool     `json:"pendingOnNoBalance" doc:"wait as PENDING_BALANCE instead of NO_BALANCE"`
	NotificationURL      string   `json:"notificationUrl" doc:"where SUCCESS and REJECTED are POSTed, signed"`
	AllowedOrigins       []string `json:"allowedOrigins" doc:"origins that may embed the card iframe"`
}

// DefaultSettings are a new merchant's settings: all off but card on file.
func DefaultSettings() Settings {
	return Settings{CardOnFile: true}
}

// AllSettings are the demo merchant's: every product on. PSP stays off (it only adds the
// subMerchantInfo requirement), and so do holding on no balance and notifications.
func AllSettings() Settings {
	return Settings{PSP: false, EmailNotifications: true, CardPayouts: true, CardOnFile: true,
		CashPayouts: true, RealTimePhoneAccount: true, RealTimeKey: true}
}

// Balance is a merchant's money in one country and currency, in minor units.
// Available is Balance less what authorized payouts hold.
type Balance struct {
	Country   string `json:"country"`
	Currency  string `json:"currency"`
	Available int64  `json:"availableBalance"`
	Balance   int64  `json:"balance"`
}
