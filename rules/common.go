package rules

import (
	"encoding/json"
	"net/mail"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Field paths of the country rules' errors (the JSON path without "body.").
const (
	fieldAmount        = "amount"
	fieldCurrency      = "currency"
	fieldDescription   = "description"
	fieldEmail         = "beneficiary.email"
	fieldDocType       = "beneficiary.document.type"
	fieldDocNumber     = "beneficiary.document.number"
	fieldBankCode      = "destination.bankAccount.bankCode"
	fieldAccountType   = "destination.bankAccount.accountType"
	fieldAccountNumber = "destination.bankAccount.accountNumber"
	fieldCCI           = "destination.bankAccount.cci"
	fieldExpDate       = "destination.bankAccount.expirationDate"
	fieldSubMerchant   = "subMerchantInfo"
	fieldTimeoutURL    = "timeoutUrl"
	fieldMerchantLogo  = "merchantLogo"
	fieldExpTime       = "expirationTime"
)

// maxAmountDigits is the length limit of amount in both countries.
const maxAmountDigits = 10

// parseAmount reads amount as the country rules want it: an integer of minor
// units, written without fraction or exponent (100.00 and 1e5 are refused: the last two
// digits already are the decimals), at most 10 digits, above zero.
func parseAmount(ps *problems, raw json.Number) (int64, bool) {
	s := raw.String()
	switch {
	case !IsDigits(s):
		ps.add(CodeAmountNotNumeric, fieldAmount, "must be an integer of minor units, without fraction or exponent: the last two digits are the decimals (100000 is 1,000.00)", raw)
		return 0, false
	case len(s) > maxAmountDigits:
		ps.addf(CodeAmountLength, fieldAmount, raw, "must have at most %d digits", maxAmountDigits)
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		ps.add(CodeAmountNotNumeric, fieldAmount, "must be greater than zero", raw)
		return 0, false
	}
	return n, true
}

// checkAmountRange reports an amount outside [lo, hi] (0 is no bound) with 2011 or 2010.
// what names the case of the limit in the message.
func checkAmountRange(ps *problems, amount, lo, hi int64, currency, what string) bool {
	return checkAmountRangeCodes(ps, amount, lo, hi, currency, what, CodeBelowMinimum, CodeAboveMaximum)
}

// checkAmountRangeCodes is checkAmountRange with the codes of a case that has its own
// (Colombia cash 1518/1515, Peru 1224 and 1227).
func checkAmountRangeCodes(ps *problems, amount, lo, hi int64, currency, what, belowCode, aboveCode string) bool {
	if lo > 0 && amount < lo {
		ps.addf(belowCode, fieldAmount, amount, "must be at least %s %s for %s", money(lo), currency, what)
		return false
	}
	if hi > 0 && amount > hi {
		ps.addf(aboveCode, fieldAmount, amount, "must be at most %s %s for %s", money(hi), currency, what)
		return false
	}
	return true
}

// money writes minor units with two decimals and thousands separators: 50000 → "500.00".
func money(minor int64) string {
	whole := strconv.FormatInt(minor/100, 10)
	var b strings.Builder
	for i, c := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	cents := minor % 100
	b.WriteByte('.')
	b.WriteByte(byte('0' + cents/10))
	b.WriteByte(byte('0' + cents%10))
	return b.String()
}

// IsDigits reports whether s is non-empty and only ASCII digits.
func IsDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// isAlnum reports whether s is non-empty and only ASCII letters and digits.
func isAlnum(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// isEmail reports whether s is a bare email address (no display name, no angle brackets)
// whose domain has a dot.
func isEmail(s string) bool {
	if !bareAddress(s) {
		return false
	}
	at := strings.LastIndexByte(s, '@')
	return at > 0 && strings.Contains(s[at+1:], ".")
}

// checkEmail applies the country limit to beneficiary.email (Colombia 100, Peru
// 50 characters) and refuses a dummy value. An absent email is for the caller to require.
func checkEmail(ps *problems, email string, max int, country string) {
	if email == "" {
		return
	}
	if n := utf8.RuneCountInString(email); n > max {
		ps.addf(CodeEmailTooLong, fieldEmail, email, "must be at most %d characters in %s, not %d", max, country, n)
		return
	}
	if isDummyEmail(email) {
		ps.add(CodeEmailDummy, fieldEmail, "must be the beneficiary's real address, not a dummy value", email)
	}
}

// Dummy emails ("Must not be a dummy value"). An address is dummy when, compared
// case-insensitively:
//   - the whole address is in dummyAddresses (correo@correo.com, a@a.com…);
//   - the domain, or a domain it is a subdomain of, is in dummyDomains: the RFC 2606 reserved
//     names (example.com/.org/.net and the .test, .example, .invalid, .localhost top-level
//     domains), placeholder domains (test.com, correo.com, noemail.com…) and well-known
//     disposable-mail services (mailinator.com, yopmail.com…);
//   - the local part (before '@', ignoring a "+tag") is in dummyLocalParts: words that say
//     "no email" or "test" (test, prueba, noemail, sinemail, sincorreo, no-reply, dummy, fake…).
//
// Words that a real mailbox might use (info, contacto, correo on a real domain) are not in
// the lists: a false refusal is worse than a missed dummy.
var (
	dummyAddresses = setOf(
		"a@a.com", "aa@aa.com", "abc@abc.com", "correo@correo.com", "email@email.com",
		"mail@mail.com", "test@test.com", "prueba@prueba.com", "x@x.com", "xxx@xxx.com",
		"usuario@dominio.com", "user@domain.com", "nombre@dominio.com", "cliente@cliente.com")
	dummyDomains = setOf(
		"example.com", "example.org", "example.net", "example", "test", "invalid", "localhost",
		"test.com", "prueba.com", "pruebas.com", "correo.com", "dominio.com", "domain.com",
		"noemail.com", "nomail.com", "sinemail.com", "sincorreo.com", "nocorreo.com",
		"fake.com", "dummy.com", "email.test",
		"mailinator.com", "yopmail.com", "guerrillamail.com", "10minutemail.com",
		"tempmail.com", "temp-mail.org", "sharklasers.com", "trashmail.com", "throwawaymail.com")
	dummyLocalParts = setOf(
		"test", "tests", "testing", "tester", "prueba", "pruebas",
		"noemail", "no-email", "no.email", "no_email", "nomail", "no-mail", "no.mail",
		"sinemail", "sin-email", "sin.email", "sin_email", "sincorreo", "sin-correo", "sin.correo",
		"nocorreo", "no-correo", "no.correo", "notiene", "no-tiene", "ninguno", "none", "null",
		"nil", "nobody", "noreply", "no-reply", "no.reply", "no_reply", "donotreply",
		"do-not-reply", "dummy", "fake", "falso", "example", "sample", "asdf", "qwerty")
)

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// isDummyEmail applies the lists above to an address.
func isDummyEmail(email string) bool {
	e := strings.ToLower(email)
	if dummyAddresses[e] {
		return true
	}
	at := strings.LastIndexByte(e, '@')
	if at < 0 {
		return false
	}
	local, domain := e[:at], e[at+1:]
	if i := strings.IndexByte(local, '+'); i > 0 {
		local = local[:i]
	}
	if dummyLocalParts[local] {
		return true
	}
	for d := domain; d != ""; {
		if dummyDomains[d] {
			return true
		}
		i := strings.IndexByte(d, '.')
		if i < 0 {
			break
		}
		d = d[i+1:]
	}
	return false
}

// checkSubMerchant requires subMerchantInfo.code, name and url of a PSP merchant, in
// both countries. nameWhy, when not empty, requires the name alone for another
// reason (Peru wallet 037) and says why; each missing field is reported once.
func checkSubMerchant(ps *problems, req *PayoutRequest, psp bool, nameWhy string) {
	sm := req.SubMerchantInfo
	if psp && sm == nil {
		ps.add(CodeFieldRequired, fieldSubMerchant, "a payment service provider (PSP) merchant sends subMerchantInfo with its code, name and url", nil)
		return
	}
	if sm == nil {
		sm = &SubMerchantInfo{}
	}
	if psp && strings.TrimSpace(sm.Code) == "" {
		ps.add(CodeFieldRequired, fieldSubMerchant+".code", "a payment service provider (PSP) merchant sends it", nil)
	}
	if strings.TrimSpace(sm.Name) == "" {
		switch {
		case nameWhy != "":
			ps.add(CodeFieldRequired, fieldSubMerchant+".name", nameWhy, nil)
		case psp:
			ps.add(CodeFieldRequired, fieldSubMerchant+".name", "a payment service provider (PSP) merchant sends it", nil)
		}
	}
	if psp && strings.TrimSpace(sm.URL) == "" {
		ps.add(CodeFieldRequired, fieldSubMerchant+".url", "a payment service provider (PSP) merchant sends it", nil)
	}
}

// lookupBankField finds code in the country's table and reports an unknown or retired code
// at field. It returns false when the bank cannot carry the payout, so that the checks that
// depend on the bank are skipped. retiredHint, when not empty, ends the retired message.
func lookupBankField(ps *problems, country, field, code, retiredHint string) (Bank, bool) {
	b, ok := LookupBank(country, code)
	if !ok {
		name, format := "Colombia", "a 3 or 4 digit"
		if country == "PER" {
			name, format = "Peru", "a 3 digit"
		}
		ps.addf(CodeBankCode, field, code, "bank code %q is not in the %s bank list: it is %s string from that list", code, name, format)
		return Bank{}, false
	}
	if b.Retired {
		ps.addf(CodeBankCode, field, code, "bank code %s is retired and supports no channel%s", code, retiredHint)
		return b, false
	}
	return b, true
}

// bareAddress reports whether s is an email address alone, as net/mail reads one: no display
// name, no angle brackets, nothing around it. The common form, a dot-atom of ASCII on each side
// of one @, is decided without net/mail, which allocates some ten times an address (a create
// reads its beneficiary's twice); anything else goes to net/mail.
func bareAddress(s string) bool {
	if at := strings.IndexByte(s, '@'); at >= 0 && dotAtom(s[:at]) && dotAtom(s[at+1:]) {
		return true
	}
	a, err := mail.ParseAddress(s)
	return err == nil && a.Address == s && a.Name == ""
}

// dotAtom reports whether s is an RFC 5322 dot-atom of ASCII: atext characters in runs
// joined by single dots.
func dotAtom(s string) bool {
	if s == "" || s[0] == '.' || s[len(s)-1] == '.' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '.' {
			if s[i-1] == '.' {
				return false
			}
		} else if !atext[c] {
			return false
		}
	}
	return true
}

// atext is RFC 5322's atext, in ASCII: letters, digits and !#$%&'*+-/=?^_`{|}~.
var atext = func() (t [256]bool) {
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = true, true
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for _, c := range "!#$%&'*+-/=?^_`{|}~" {
		t[c] = true
	}
	return t
}()
