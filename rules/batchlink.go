package rules

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// A batch item without destination is a payout link: approved, it is created as
// POST /payouts/link would create it (its amount reserved, its email sent with
// emailNotifications), and its beneficiary gives the destination on the link's page. A
// batch reaches its beneficiaries by email, so such an item needs beneficiary.email.

// IsLinkItem reports whether a batch item's body is a payout link: a JSON object with no
// destination.
func IsLinkItem(body []byte) bool {
	var raw map[string]json.RawMessage
	if json.Unmarshal(body, &raw) != nil || raw == nil {
		return false
	}
	_, ok := raw["destination"]
	return !ok
}

// checkLinkItem checks a link item as the link endpoint checks its body (ValidateLink),
// with the beneficiary's email required besides: every error at once.
func checkLinkItem(body []byte, m *Merchant, now time.Time) (*Payout, error) {
	p, err := ValidateLink(body, m, now)
	var b struct {
		Beneficiary struct {
			Email any `json:"email"`
		} `json:"beneficiary"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	dec.Decode(&b)
	if s, ok := b.Beneficiary.Email.(string); ok && strings.TrimSpace(s) != "" {
		return p, err
	}
	if b.Beneficiary.Email != nil {
		return p, err // not a string: the rules already say so
	}
	missing := &Error{Kind: KindInvalid, Code: CodeLinkNeedsEmail, Field: "beneficiary.email",
		Message: "an item without destination becomes a payout link, which reaches its beneficiary by email: beneficiary.email is required"}
	var prob *Problem
	switch {
	case err == nil:
		return nil, &Problem{Kind: KindInvalid, Title: "Missing or invalid data", Errors: []*Error{missing}}
	case errors.As(err, &prob):
		prob.Errors = append(prob.Errors, missing)
		return nil, prob
	}
	return nil, err
}
