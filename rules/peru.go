package rules

import (
	"net/url"
	"strings"
	"time"
)

// Peru limits (spec 8) in minor units: 100000 is 1,000.00.
const (
	perCellphoneMax      = 500_00   // accountType 4, PEN only
	perWallet037PhoneMax = 3_000_00 // accountType 4 at wallet 037
	perPENMax            = 30_000_00
	// perUSDMax is this service's counterpart of the 30,000 PEN maximum, which the spec gives
	// in PEN only although Peru payouts may be in USD: 8,000 USD is 30,000 PEN at 3.75 PEN
	// per USD, a round figure near the usual rate, so both currencies have about one ceiling
	// and a USD payout cannot sidestep the PEN limit. A fixed figure keeps validation free of
	// exchange rates.
	perUSDMax = 8_000_00
)

const (
	perEmailMax          = 50
	perExpirationDefault = 15 // minutes of a card session when expirationTime is absent
	perExpirationMin     = 5
	perExpirationMax     = 30
	perCCIDigits         = 20
)

// Peru bank codes with rules of their own (spec 2.5).
const (
	perBank001          = "001"
	perBank002          = "002"
	perBank003          = "003"
	perBankNoRUC        = "004"
	perWalletWithExtras = "037" // description, subMerchantInfo.name and its own maximum
)

// Peru account types (spec 2.5).
const (
	perCurrent   = 1
	perSavings   = 2
	perCellphone = 4
	perCard      = 5
)

// perDocType is a row of spec 2.5's document table with its wire code. The table gives
// lengths in digits; a passport may also carry letters (foreign passports do), the other
// types are digits only.
type perDocType struct {
	min, max int
	letters  bool
	code     string
	message  string
}

var perDocTypes = map[int]perDocType{
	1: {8, 8, false, CodeDNILength, "a DNI has exactly 8 digits (spec 2.5)"},
	2: {7, 12, true, CodePASLength, "a passport (PAS) has 7 to 12 letters or digits (spec 2.5)"},
	3: {8, 12, false, CodeCELength, "a CE has 8 to 12 digits (spec 2.5)"},
	4: {11, 11, false, CodeRUCLength, "a RUC has exactly 11 digits (spec 2.5)"},
}

// checkPeru applies spec 2.5, the Peru rows of spec 8 and, on the card endpoint, spec 4.2.
func checkPeru(ps *problems, req *PayoutRequest, m *Merchant, now time.Time, ep Endpoint) Route {
	currencyOK := req.Currency == "PEN" || req.Currency == "USD"
	if !currencyOK {
		ps.addf(CodeCurrencyNotAllowed, fieldCurrency, req.Currency, "a Peru payout is in PEN or USD (spec 2.5), not %q", req.Currency)
	}
	amount, amountOK := parseAmount(ps, req.Amount)
	checkEmail(ps, req.Beneficiary.Email, perEmailMax, "Peru")
	checkPeruDocument(ps, req.Beneficiary.Document)
	p := perCheck{ps: ps, req: req, m: m, amount: amount, amountOK: amountOK, currencyOK: currencyOK}
	r := Route{Amount: amount}
	if ep == EndpointCard {
		checkSubMerchant(ps, req, m.Settings.PSP, "")
		r.AccountType = perCard
		r.Channel, r.BankCode, r.ExpirationMinutes = p.card()
		return r
	}
	at, sent, ok := peruAccountType(ps, req.Destination.BankAccount.AccountType)
	if !ok {
		checkSubMerchant(ps, req, m.Settings.PSP, "")
		return r // the destination checks depend on the account type
	}
	r.AccountType, r.Channel, r.BankCode = p.transfer(at, sent)
	return r
}

// perCheck carries what the destination checks of one Peru request share.
type perCheck struct {
	ps         *problems
	req        *PayoutRequest
	m          *Merchant
	amount     int64
	amountOK   bool // amount is well formed, so its limits are checked
	currencyOK bool
}

func checkPeruDocument(ps *problems, d Document) {
	t, ok := perDocTypes[d.Type]
	if !ok {
		ps.addf(CodeDocumentType, fieldDocType, d.Type, "must be a Peru document type (spec 2.5): 1 DNI, 2 PAS, 3 CE or 4 RUC")
		return
	}
	n := d.Number
	valid := IsDigits(n)
	if t.letters {
		valid = isAlnum(n)
	}
	if !valid || len(n) < t.min || len(n) > t.max {
		ps.add(t.code, fieldDocNumber, t.message, n)
	}
}

// peruAccountType reads accountType on POST /payouts (spec 2.5: an integer, optional):
// 1, 2 or 4; 5 is the card endpoint's (wire 1122). sent is false when it was omitted.
func peruAccountType(ps *problems, raw Text) (at int, sent, ok bool) {
	s := string(raw)
	if s == "" {
		return 0, false, true
	}
	n, isInt := raw.Int()
	switch {
	case !isInt || !IsDigits(s):
	case n == perCurrent || n == perSavings || n == perCellphone:
		return n, true, true
	case n == perCard:
		ps.add(CodeCardEndpointOnly, fieldAccountType, "a Peru card payout must use the card endpoint, POST /payouts/card (spec 4.2)", s)
		return 0, true, false
	}
	ps.add(CodeAccountType, fieldAccountType, "must be a Peru account type (spec 2.5): 1 current, 2 savings or 4 cellphone number (5, card, only on the card endpoint)", s)
	return 0, true, false
}

// transfer checks a bank, wallet or cellphone payout (accountType 1, 2, 4 or omitted) and
// returns its account type after defaults, channel and bank.
func (p perCheck) transfer(at int, atSent bool) (int, Channel, string) {
	ps, req := p.ps, p.req
	ba := &req.Destination.BankAccount
	num := string(ba.AccountNumber)
	cciSent := ba.CCI != ""
	cciOK := IsDigits(ba.CCI) && len(ba.CCI) == perCCIDigits
	if cciSent && !cciOK {
		ps.add(CodeCCIFormat, fieldCCI, "must be 20 digits (spec 2.5)", ba.CCI)
	}

	// Which of bankCode, accountNumber and cci are required (spec 2.5).
	switch {
	case at == perCellphone:
		if ba.BankCode == "" {
			ps.add(CodeBankCodeRequired, fieldBankCode, "is required for a payout by cellphone number, accountType 4 (spec 2.5)", nil)
		}
		if num == "" {
			ps.add(CodeAccountNumRequired, fieldAccountNumber, "must carry the cellphone number for accountType 4 (spec 2.5)", nil)
		}
	case cciSent:
	case ba.BankCode == "" && num == "":
		ps.add(CodeCCIRequired, fieldCCI, "is required when accountNumber and bankCode are not both sent (spec 2.5)", nil)
	case ba.BankCode == "":
		ps.add(CodeBankCodeRequired, fieldBankCode, "is required when cci is absent (spec 2.5)", nil)
	case num == "":
		ps.add(CodeAccountNumRequired, fieldAccountNumber, "is required when cci is absent (spec 2.5)", nil)
	}

	// The bank: bankCode, or the first 3 digits of the CCI when only the CCI is sent.
	code, field := ba.BankCode, fieldBankCode
	if code == "" && cciOK {
		code, field = ba.CCI[:3], fieldCCI
	}
	var b Bank
	bankOK := false
	if code != "" {
		b, bankOK = lookupBankField(ps, "PER", field, code, " (spec 2.5)")
	}
	if bankOK && ba.BankCode != "" && cciOK && ba.CCI[:3] != ba.BankCode {
		ps.addf(CodeCCIBankMismatch, fieldCCI, ba.CCI, "the first 3 digits of a CCI are its bank: %s is not bankCode %s", ba.CCI[:3], ba.BankCode)
	}

	// Spec 8, Peru rule 1: at 003 and 004 an omitted accountType is savings. This service
	// also treats it as savings elsewhere, except at 002, where the account number's length
	// says the type (13 digits current, 14 savings).
	if !atSent {
		at = perSavings
		if bankOK && b.Code == perBank002 && len(num) == 13 {
			at = perCurrent
		}
	}

	if at == perCellphone {
		if num != "" && !isPeruCellphone(num) {
			ps.add(CodePERCellphone, fieldAccountNumber, "a Peru cellphone number has 9 digits and starts with 9 (spec 2.5)", num)
		}
		switch {
		case p.currencyOK && req.Currency != "PEN":
			ps.addf(CodeCurrencyNotAllowed, fieldCurrency, req.Currency, "a payout by cellphone number (accountType 4) is in PEN only (spec 8)")
		case p.amountOK && p.currencyOK && bankOK:
			max, what := int64(perCellphoneMax), "a payout by cellphone number"
			if b.Code == perWalletWithExtras {
				max, what = perWallet037PhoneMax, "a payout by cellphone number to wallet 037"
			}
			checkAmountRange(ps, p.amount, 0, max, "PEN", what)
		}
	} else {
		if num != "" && bankOK {
			p.accountNumber(b, at, num)
		}
		p.checkMax("a Peru payout")
	}

	nameWhy := ""
	if bankOK && b.Code == perWalletWithExtras {
		if strings.TrimSpace(req.Description) == "" {
			ps.add(CodeDescriptionRequired, fieldDescription, "is required for wallet 037: the merchant's commercial name, shown in the payment reference (spec 2.5)", nil)
		}
		nameWhy = "is required for wallet 037: it is the name in the payment reference (spec 2.5)"
	}
	checkSubMerchant(ps, req, p.m.Settings.PSP, nameWhy)
	if bankOK {
		p.noRUC(b)
	}
	if !bankOK {
		return at, "", code
	}
	return at, p.channel(b, at, cciSent, cciOK), b.Code
}

// checkMax applies the maximum of "other account types" (spec 8): 30,000 PEN, and this
// service's 8,000 USD.
func (p perCheck) checkMax(what string) {
	if !p.amountOK || !p.currencyOK {
		return
	}
	if p.req.Currency == "USD" {
		checkAmountRange(p.ps, p.amount, 0, perUSDMax, "USD", what)
		return
	}
	checkAmountRange(p.ps, p.amount, 0, perPENMax, "PEN", what)
}

// noRUC: RUC is not available for accounts at bank 004 (spec 2.5).
func (p perCheck) noRUC(b Bank) {
	if b.Code == perBankNoRUC && p.req.Beneficiary.Document.Type == 4 {
		p.ps.add(CodeRUCAtBank004, fieldDocType, "RUC (4) is not available for accounts at bank 004 (spec 2.5)", 4)
	}
}

// accountNumber applies spec 2.5's account number format by bank code.
func (p perCheck) accountNumber(b Bank, at int, num string) {
	bad := func(msg string) { p.ps.add(CodePERAccountNumber, fieldAccountNumber, msg, num) }
	switch {
	case b.Wallet:
		if !isPeruCellphone(num) {
			bad("a wallet " + b.Code + " account number has 9 digits and starts with 9 (spec 2.5)")
		}
	case b.Code == perBank001:
		if !IsDigits(num) || len(num) != 18 && len(num) != 20 {
			bad("a bank 001 account number has 18 or 20 digits (spec 2.5)")
		}
	case b.Code == perBank002:
		want, kind := 14, "savings (accountType 2)"
		if at == perCurrent {
			want, kind = 13, "current or master (accountType 1)"
		}
		if !IsDigits(num) || len(num) != want {
			p.ps.addf(CodePERAccountNumber, fieldAccountNumber, num, "a bank 002 %s account number has %d digits (spec 2.5: 13 current, 14 savings)", kind, want)
		}
	case b.Code == perBank003:
		if !IsDigits(num) || len(num) != 13 {
			bad("a bank 003 account number has 13 digits (spec 2.5)")
		}
	case b.Code == perBankNoRUC:
		if !IsDigits(num) || len(num) != 10 {
			bad("a bank 004 account number has 10 digits: 3 of agency and 7 of account (spec 2.5)")
		}
	default:
		if !IsDigits(num) || len(num) != perCCIDigits {
			p.ps.addf(CodeAccountNumberCCI, fieldAccountNumber, num, "for bank %s accountNumber must be the 20-digit CCI (spec 2.5)", b.Code)
		}
	}
}

// isPeruCellphone: a Peruvian mobile number has 9 digits and starts with 9 (spec 2.5).
func isPeruCellphone(s string) bool {
	return len(s) == 9 && s[0] == '9' && IsDigits(s)
}

// channel picks the rail (spec 2.5 bank table, spec 8 Peru rule 2): real-time needs the CCI,
// or a cellphone number for accountType 4 (the number is the address); otherwise the
// non-real-time interbank transfer when the bank has it.
func (p perCheck) channel(b Bank, at int, cciSent, cciOK bool) Channel {
	switch {
	case b.RealTime && (at == perCellphone || cciOK):
		return ChannelRealTime
	case b.Batch:
		return ChannelBatch
	case b.RealTime && !cciSent:
		p.ps.addf(CodeRealTimeNeedsCCI, fieldCCI, nil, "bank %s takes real-time payouts only, and a real-time payout requires cci (spec 8, Peru rule 2): send cci, or accountType 4 with a cellphone number", b.Code)
	}
	return "" // a malformed cci was reported already
}

// card checks a card push payment (spec 4.2, contract section 6): the card setting, the
// cardholder's email, timeoutUrl, an https logo and the session length. bankCode, cci and
// accountNumber are optional; bankCode and cci are checked when sent, accountNumber is not
// (the card number is entered in the form, never sent here).
func (p perCheck) card() (Channel, string, int) {
	ps, req := p.ps, p.req
	ba := &req.Destination.BankAccount
	if n, ok := ba.AccountType.Int(); !ok || n != perCard || !IsDigits(string(ba.AccountType)) {
		var v any
		if ba.AccountType != "" {
			v = string(ba.AccountType)
		}
		ps.add(CodeCardAccountType, fieldAccountType, "the card endpoint takes accountType 5 (card) only (spec 4.2)", v)
	}
	if !p.m.Settings.CardPayouts {
		ps.add(CodeNotEnabled, fieldAccountType, "card payouts are not enabled for this merchant (setting cardPayouts; spec 4.2: needs prior configuration with the account manager)", string(ba.AccountType))
	}
	if req.Beneficiary.Email == "" {
		ps.add(CodeEmailRequired, fieldEmail, "is required for a card payout: the cardholder's email (spec 4.2)", nil)
	}
	if strings.TrimSpace(req.TimeoutURL) == "" {
		ps.add(CodeTimeoutURLRequired, fieldTimeoutURL, "is required for a card payout (spec 2.1, 4.2)", nil)
	}
	if logo := strings.TrimSpace(req.MerchantLogo); logo != "" {
		if u, err := url.Parse(logo); err != nil || u.Scheme != "https" || u.Host == "" {
			ps.add(CodeLogoNotHTTPS, fieldMerchantLogo, "must be an https URL: the card form is served over https", req.MerchantLogo)
		}
	}
	minutes := perExpirationDefault
	if s := strings.TrimSpace(string(req.ExpirationTime)); s != "" {
		n, ok := req.ExpirationTime.Int()
		if !ok || !IsDigits(s) || n < perExpirationMin || n > perExpirationMax {
			ps.add(CodeExpirationTime, fieldExpTime, "must be a whole number of minutes from 5 to 30 (spec 8, Peru rule 3)", string(req.ExpirationTime))
			minutes = 0
		} else {
			minutes = n
		}
	}
	if ba.BankCode != "" {
		if b, ok := lookupBankField(ps, "PER", fieldBankCode, ba.BankCode, " (spec 2.5)"); ok {
			p.noRUC(b)
		}
	}
	if ba.CCI != "" && (!IsDigits(ba.CCI) || len(ba.CCI) != perCCIDigits) {
		ps.add(CodeCCIFormat, fieldCCI, "must be 20 digits (spec 2.5)", ba.CCI)
	}
	p.checkMax("a card payout")
	return ChannelCard, ba.BankCode, minutes
}
