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
	// KeyCreatedAt is when the current key was issued (zero: at CreatedAt).
	KeyCreatedAt time.Time `json:"keyCreatedAt,omitzero"`
	// OldKeys are earlier key pairs still accepted until they expire (key rotation).
	OldKeys []OldKey `json:"oldKeys,omitempty"`
	// RoleKeys are the additional key pairs with a role other than full (keyrole.go), valid
	// until revoked.
	RoleKeys []RoleKey `json:"roleKeys,omitempty"`
}

// OldKey is a replaced API key pair, accepted until ExpiresAt, stored like the current one.
type OldKey struct {
	APIKeyHash   string    `json:"apiKeyHash"`
	SealedSecret []byte    `json:"sealedSecret"`
	CreatedAt    time.Time `json:"createdAt"`
	ExpiresAt    time.Time `json:"expiresAt"`
}

// KeyID names a key in the admin API without revealing it: "key_" and the first 12 hex
// characters of its hash.
func KeyID(apiKeyHash string) string {
	if len(apiKeyHash) > 12 {
		apiKeyHash = apiKeyHash[:12]
	}
	return "key_" + apiKeyHash
}

// LiveOldKeys drops the old keys expired at now and returns the rest.
func (m *Merchant) LiveOldKeys(now time.Time) []OldKey {
	var live []OldKey
	for _, k := range m.OldKeys {
		if now.Before(k.ExpiresAt) {
			live = append(live, k)
		}
	}
	return live
}

// Settings are the merchant's switches, all off unless said.
type Settings struct {
	PSP                  bool     `json:"psp" doc:"a payment service provider: subMerchantInfo is required"`
	EmailNotifications   bool     `json:"emailNotifications" doc:"email the beneficiary on SUCCESS and REJECTED"`
	CardPayouts          bool     `json:"cardPayouts" doc:"Peru card push payments"`
	CardOnFile           bool     `json:"cardOnFile" doc:"keep cards for later payouts (on by default)"`
	CashPayouts          bool     `json:"cashPayouts" doc:"Colombia cash payouts (accountType 3), refused unless on"`
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
	// Running totals of the ledger: Balance = Funded − Processed + Reversed always
	// (rules/ledger.go: every write that changes a balance checks it). Not on the wire.
	Funded    int64 `json:"-"`
	Processed int64 `json:"-"`
	Reversed  int64 `json:"-"`
	// Entries is the id of the balance's last ledger entry (entries.go): 0 before its first.
	Entries int64 `json:"-"`
}
