package rules

import "time"

// Endpoint is the operation a request came through: Peru cards have their own.
type Endpoint int

const (
	EndpointPayouts Endpoint = iota // POST /payouts
	EndpointCard                    // POST /payouts/card
)

// Route is what the country rules decide for an accepted payout.
type Route struct {
	Amount      int64   // minor units
	Channel     Channel // the rail
	AccountType int     // numeric account type after defaults (Peru 003/004 → 2)
	BankCode    string  // the bank, also when only read from a Peru CCI
	// ClaimUntil ends a Colombia cash claim: the end of expirationDate in UTC-5.
	ClaimUntil time.Time
	// ExpirationMinutes is a Peru card session's length (default 15).
	ExpirationMinutes int
}

// Check applies the country rules and limits and the merchant's configuration
// to a request that passed the generic contract. It returns the route of an accepted payout
// or a Problem of KindRejected (HTTP 401) with every violation. now is the server clock.
func Check(req *PayoutRequest, m *Merchant, now time.Time, ep Endpoint) (Route, error) {
	var ps problems
	var r Route
	switch req.Country {
	case "COL":
		r = checkColombia(&ps, req, m, now, ep)
	case "PER":
		r = checkPeru(&ps, req, m, now, ep)
	default:
		ps.addf(CodeCountryNotSupported, "country", req.Country, "country %q is not supported: only COL and PER", req.Country)
	}
	if p := ps.problem(KindRejected, "Data validation error", "the "+countryName(req.Country)+" rules"); p != nil {
		return Route{}, p
	}
	return r, nil
}

func countryName(c string) string {
	switch c {
	case "COL":
		return "Colombia"
	case "PER":
		return "Peru"
	}
	return "country"
}
