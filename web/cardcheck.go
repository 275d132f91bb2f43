package web

import (
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"payouts/rules"
	"payouts/templates"
)

// cardInput is what the beneficiary typed. It lives only for the request: the number is
// sealed before it is stored, the CVV is checked and dropped.
type cardInput struct {
	Holder, PAN, Expiry, CVV string
}

// card is a card that passed the checks.
type card struct {
	Holder   string
	PAN      string // digits only
	ExpMonth int
	ExpYear  int
}

// lima is Peru's time (UTC-5, no daylight saving): a card expires at the end of its month there.
var lima = time.FixedZone("PET", -5*60*60)

// checkCard applies the card form's rules: VISA only (starts with 4), 13 to
// 19 digits, Luhn-valid, not expired, CVV of 3 digits. It returns every problem, as a
// message key per field (templates.Texts.Errors).
func checkCard(in cardInput, now time.Time) (card, map[string]string) {
	errs := map[string]string{}
	var c card

	holder := strings.Join(strings.Fields(in.Holder), " ")
	switch {
	case holder == "":
		errs[templates.FieldHolder] = "holder.required"
	case !validHolder(holder):
		errs[templates.FieldHolder] = "holder.format"
	}
	c.Holder = holder

	pan := strings.Map(func(r rune) rune {
		if r == ' ' || r == '-' {
			return -1
		}
		return r
	}, in.PAN)
	switch {
	case pan == "":
		errs[templates.FieldPAN] = "pan.required"
	case !rules.IsDigits(pan):
		errs[templates.FieldPAN] = "pan.digits"
	case pan[0] != '4':
		errs[templates.FieldPAN] = "pan.visa"
	case len(pan) < 13 || len(pan) > 19:
		errs[templates.FieldPAN] = "pan.length"
	case !luhn(pan):
		errs[templates.FieldPAN] = "pan.luhn"
	}
	c.PAN = pan

	if key := checkExpiry(in.Expiry, now, &c); key != "" {
		errs[templates.FieldExpiry] = key
	}

	switch cvv := strings.TrimSpace(in.CVV); {
	case cvv == "":
		errs[templates.FieldCVV] = "cvv.required"
	case len(cvv) != 3 || !rules.IsDigits(cvv):
		errs[templates.FieldCVV] = "cvv.format"
	}
	return c, errs
}

// checkExpiry reads MM/YY, MM/YYYY, MMYY or MMYYYY; a card is valid through the last day of
// its month in Lima.
func checkExpiry(s string, now time.Time, c *card) string {
	s = strings.ReplaceAll(s, " ", "")
	if s == "" {
		return "expiry.required"
	}
	mm, yy, ok := strings.Cut(s, "/")
	if !ok {
		if len(s) != 4 && len(s) != 6 {
			return "expiry.format"
		}
		mm, yy = s[:2], s[2:]
	}
	if len(mm) < 1 || len(mm) > 2 || (len(yy) != 2 && len(yy) != 4) || !rules.IsDigits(mm) || !rules.IsDigits(yy) {
		return "expiry.format"
	}
	month, _ := strconv.Atoi(mm)
	year, _ := strconv.Atoi(yy)
	if len(yy) == 2 {
		year += 2000
	}
	if month < 1 || month > 12 {
		return "expiry.month"
	}
	local := now.In(lima)
	if year < local.Year() || year == local.Year() && month < int(local.Month()) {
		return "expiry.past"
	}
	if year > local.Year()+25 {
		return "expiry.format"
	}
	c.ExpMonth, c.ExpYear = month, year
	return ""
}

// validHolder: letters (any script), spaces and . ' -, with at least one letter, up to 45.
func validHolder(s string) bool {
	if utf8.RuneCountInString(s) > 45 {
		return false
	}
	letter := false
	for _, r := range s {
		switch {
		case unicode.IsLetter(r):
			letter = true
		case r == ' ' || r == '.' || r == '\'' || r == '-' || r == '’':
		default:
			return false
		}
	}
	return letter
}

// luhn is the ISO/IEC 7812 check digit test.
func luhn(digits string) bool {
	sum := 0
	double := false
	for i := len(digits) - 1; i >= 0; i-- {
		d := int(digits[i] - '0')
		if double {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
		double = !double
	}
	return sum%10 == 0
}
