package rules

import (
	"strings"
	"time"
)

// Peru limits in minor units: 100000 is 1,000.00.
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

// Peru account numbers by bank and cellphone numbers, read by
// the validator and, through Tables, by the requirements schema (rules/requirements).
const (
	per001Digits, per001LongDigits = 18, 20 // a 20-digit 001 account has 00 at digits 9–10
	per002CurrentDigits            = 13     // digit 11 is the currency
	per002SavingsDigits            = 14     // digit 12 is the currency
	per003Digits                   = 13
	per004Digits                   = 10
	perCellphoneDigits             = 9
	perCellphonePrefix             = '9'
)

// Peru bank codes with rules of their own.
const (
	perBank001          = "001"
	perBank002          = "002"
	perBank003          = "003"
	perBankNoRUC        = "004"
	perWalletWithExtras = "037" // description, subMerchantInfo.name and its own maximum
)

// Peru account types.
const (
	perCurrent   = 1
	perSavings   = 2
	perCellphone = 4
	perCard      = 5
)

// perDocType is a row of the Peru document table with its code. The table gives
// lengths in digits, so every type, passports too, is digits only (1106).
type perDocType struct {
	min, max int
	code     string
	message  string
}

var perDocTypes = map[int]perDocType{
	1: {8, 8, CodeDNILength, "a DNI has exactly 8 digits"},
	2: {7, 12, CodePASLength, "a passport (PAS) has 7 to 12 digits"},
	3: {8, 12, CodeCELength, "a CE has 8 to 12 digits"},
	4: {11, 11, CodeRUCLength, "a RUC has exactly 11 digits"},
}

// checkPeru applies the Peru rules and limits and, on the card endpoint, the card checks.
func checkPeru(ps *problems, req *PayoutRequest, m *Merchant, now time.Time, ep Endpoint) Route {
	currencyOK := req.Currency == "PEN" || req.Currency == "USD"
	if !currencyOK {
		ps.addf(CodeCurrencyNotAllowed, fieldCurrency, req.Currency, "a Peru payout is in PEN or USD, not %q", req.Currency)
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
		ps.addf(CodeDocumentType, fieldDocType, d.Type, "must be a Peru document type: 1 DNI, 2 PAS, 3 CE or 4 RUC")
		return
	}
	switch n := d.Number; {
	case !IsDigits(n):
		ps.add(CodeDocumentNotNumeric, fieldDocNumber, "a document number has only digits, a passport's too", n)
	case len(n) < t.min || len(n) > t.max:
		ps.add(t.code, fieldDocNumber, t.message, n)
	}
}

// peruAccountType reads accountType on POST /payouts (an integer, optional):
// 1, 2 or 4; 5 is the card endpoint's. sent is false when it was omitted.
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
		ps.add(CodeCardEndpointOnly, fieldAccountType, "a Peru card payout must use the card endpoint, POST /payouts/card", s)
		return 0, true, false
	}
	ps.add(CodeAccountType, fieldAccountType, "must be a Peru account type: 1 current, 2 savings or 4 cellphone number (5, card, only on the card endpoint)", s)
	return 0, true, false
}

// perCCIPrefix is the first 3 digits of a CCI at the banks whose CCI prefix is not their
// bank code (001 → 011, 004 → 009; 002 and 003 are their own). Every
// other bank's CCI starts with its bank code.
var perCCIPrefix = map[string]string{"001": "011", "002": "002", "003": "003", "004": "009"}

// perCCIPrefixCode is the published code of a CCI that does not start with its bank's prefix.
var perCCIPrefixCode = map[string]string{"001": CodeCCI001, "002": CodeCCI002, "003": CodeCCI003, "004": CodeCCI004}

func cciPrefix(bank string) string {
	if p, ok := perCCIPrefix[bank]; ok {
		return p
	}
	return bank
}

// perBankOfCCI maps a CCI's first 3 digits back to its bank: a bank whose code is the prefix,
// else the bank whose published prefix it is (009 → 004). Prefix 011 is bank 011 (of the
// list), and also 001's prefix: both are group A, so the rail is the same.
var perBankOfCCI = func() map[string]string {
	m := map[string]string{}
	for bank, prefix := range perCCIPrefix {
		m[prefix] = bank
	}
	for _, b := range Banks("PER") {
		if _, special := perCCIPrefix[b.Code]; !special {
			m[b.Code] = b.Code
		}
	}
	return m
}()

// perWalletsCellphoneOnly are the wallets that take only accountType 4 (published
// code 1241: 033, 037, 040; 033 is retired in the bank table).
var perWalletsCellphoneOnly = map[string]bool{"037": true, "040": true}

// transfer checks a bank, wallet or cellphone payout (accountType 1, 2, 4 or omitted) and
// returns its account type after defaults, channel and bank.
func (p perCheck) transfer(at int, atSent bool) (int, Channel, string) {
	ps, req := p.ps, p.req
	ba := &req.Destination.BankAccount
	num := string(ba.AccountNumber)
	cciSent := ba.CCI != ""
	cciOK := false
	switch {
	case !cciSent:
	case !IsDigits(ba.CCI):
		ps.add(CodeCCINotNumeric, fieldCCI, "a CCI has only digits", ba.CCI)
	case len(ba.CCI) != perCCIDigits:
		ps.add(CodeCCILength, fieldCCI, "must be 20 digits", ba.CCI)
	default:
		cciOK = true
	}

	// Which of bankCode, accountNumber and cci are required.
	switch {
	case at == perCellphone:
		if ba.BankCode == "" {
			ps.add(CodePERCellphoneBank, fieldBankCode, "a payout by cellphone number (accountType 4) names its wallet or bank", nil)
		}
		if num == "" {
			ps.add(CodePERCellphoneAccount, fieldAccountNumber, "must carry the cellphone number for accountType 4", nil)
		}
	case cciSent:
	case ba.BankCode == "" && num == "":
		ps.add(CodeCCIRequired, fieldCCI, "is required when accountNumber and bankCode are not both sent", nil)
	case ba.BankCode == "":
		ps.add(CodeBankCodeRequired, fieldBankCode, "is required when cci is absent", nil)
	case num == "":
		ps.add(CodeAccountNumRequired, fieldAccountNumber, "is required when cci is absent", nil)
	}

	// The bank: bankCode, or the one the CCI's first 3 digits name when only the CCI is sent.
	var b Bank
	bankOK := false
	code := ba.BankCode
	switch {
	case code != "":
		b, bankOK = lookupBankField(ps, "PER", fieldBankCode, code, "")
	case cciOK:
		if code = perBankOfCCI[ba.CCI[:3]]; code == "" {
			ps.addf(CodeCCIUnknownBank, fieldCCI, ba.CCI, "the first 3 digits of a CCI name its bank, and %s is no bank of the Peru list", ba.CCI[:3])
		} else {
			b, bankOK = lookupBankField(ps, "PER", fieldCCI, code, ": the first 3 digits of the CCI name it")
		}
	}
	if bankOK && ba.BankCode != "" && cciOK && ba.CCI[:3] != cciPrefix(b.Code) {
		c, ok := perCCIPrefixCode[b.Code]
		if !ok {
			c = CodeCCIBankMismatch
		}
		ps.addf(c, fieldCCI, ba.CCI, "a CCI of bank %s starts with %s, not %s", b.Code, cciPrefix(b.Code), ba.CCI[:3])
	}

	// Wallets 037 and 040 take cellphone payouts only (the original's 1241).
	if bankOK && perWalletsCellphoneOnly[b.Code] && at != perCellphone {
		ps.addf(CodePERWalletCellphone, fieldAccountType, string(ba.AccountType), "wallet %s takes only accountType 4, a cellphone number", b.Code)
	}

	// Spec 8, Peru rule 1: at 003 and 004 an omitted accountType is savings. This service
	// also treats it as savings elsewhere, except at 002, where the account number's length
	// says the type (13 digits current, 14 savings).
	if !atSent {
		at = perSavings
		if bankOK && b.Code == perBank002 && len(num) == per002CurrentDigits {
			at = perCurrent
		}
	}

	if at == perCellphone {
		if num != "" && !isPeruCellphone(num) {
			ps.add(CodePERCellphone, fieldAccountNumber, "a Peru cellphone number has 9 digits and starts with 9", num)
		}
		switch {
		case p.currencyOK && req.Currency != "PEN":
			ps.addf(CodePERCellphonePEN, fieldCurrency, req.Currency, "a payout by cellphone number (accountType 4) is in PEN only")
		case p.amountOK && p.currencyOK && bankOK && b.Code == perWalletWithExtras:
			checkAmountRangeCodes(ps, p.amount, 0, perWallet037PhoneMax, "PEN", "a payout by cellphone number to wallet 037", "", CodePERAboveLimit)
		case p.amountOK && p.currencyOK && bankOK:
			checkAmountRangeCodes(ps, p.amount, 0, perCellphoneMax, "PEN", "a payout by cellphone number", "", CodePERCellphoneMax)
		}
	} else {
		if num != "" && bankOK {
			p.accountNumber(b, at, num)
		}
		if cciOK && bankOK && atSent && b.Code == perBank002 {
			p.cci002(at)
		}
		p.checkMax("a Peru payout")
	}

	nameWhy := ""
	if bankOK && b.Code == perWalletWithExtras {
		if strings.TrimSpace(req.Description) == "" {
			ps.add(CodeFieldRequired, fieldDescription, "wallet 037 needs the merchant's commercial name, shown in the payment reference", nil)
		}
		nameWhy = "wallet 037 needs it: it is the name in the payment reference"
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

// checkMax applies the maximum of "other account types": 30,000 PEN, and this
// service's 8,000 USD.
func (p perCheck) checkMax(what string) {
	if !p.amountOK || !p.currencyOK {
		return
	}
	if p.req.Currency == "USD" {
		checkAmountRangeCodes(p.ps, p.amount, 0, perUSDMax, "USD", what, "", CodePERAboveLimit)
		return
	}
	checkAmountRangeCodes(p.ps, p.amount, 0, perPENMax, "PEN", what, "", CodePERAboveLimit)
}

// noRUC: RUC is not available for accounts at bank 004.
func (p perCheck) noRUC(b Bank) {
	if b.Code == perBankNoRUC && p.req.Beneficiary.Document.Type == 4 {
		p.ps.add(CodeRUCAtBank004, fieldDocType, "RUC (4) is not available for accounts at bank 004", 4)
	}
}

// currencyDigit is the digit that says the currency inside a bank 002 account number or
// CCI: 0 for PEN, 1 for USD.
func (p perCheck) currencyDigit() byte {
	if p.req.Currency == "USD" {
		return '1'
	}
	return '0'
}

// accountNumber applies the Peru account number format by bank code, and the original's
// finer rules where the table gives none: a 20-digit 001 account has 00 at digits
// 9–10 (1244); digit 11 of a 002 current account and digit 12 of a 002 savings account say
// the currency, 0 PEN, 1 USD (1213/1214, 1221/1222).
func (p perCheck) accountNumber(b Bank, at int, num string) {
	ps := p.ps
	if !b.Wallet && !IsDigits(num) {
		ps.add(CodeAccountNotNumeric, fieldAccountNumber, "an account number has only digits", num)
		return
	}
	usd := p.req.Currency == "USD"
	switch {
	case b.Wallet:
		if !isPeruCellphone(num) {
			ps.add(CodePERCellphone, fieldAccountNumber, "a wallet "+b.Code+" account number is a cellphone number: 9 digits starting with 9", num)
		}
	case b.Code == perBank001:
		switch {
		case len(num) != per001Digits && len(num) != per001LongDigits:
			ps.add(CodePER001Account, fieldAccountNumber, "a bank 001 account number has 18 or 20 digits", num)
		case len(num) == per001LongDigits && num[8:10] != "00":
			ps.add(CodePER001Account20, fieldAccountNumber, "digits 9 and 10 of a 20-digit bank 001 account number are 00", num)
		}
	case b.Code == perBank002 && at == perCurrent:
		code := CodePER002CurrentPEN
		if usd {
			code = CodePER002CurrentUSD
		}
		switch {
		case len(num) != per002CurrentDigits:
			ps.add(CodePER002Current, fieldAccountNumber, "a bank 002 current or master account number (accountType 1) has 13 digits (13 current, 14 savings)", num)
		case p.currencyOK && num[per002CurrentDigits-3] != p.currencyDigit():
			ps.addf(code, fieldAccountNumber, num, "digit 11 of a bank 002 current account number is %c for %s", p.currencyDigit(), p.req.Currency)
		}
	case b.Code == perBank002:
		code := CodePER002SavingsPEN
		if usd {
			code = CodePER002SavingsUSD
		}
		switch {
		case len(num) != per002SavingsDigits:
			ps.add(CodePER002Savings, fieldAccountNumber, "a bank 002 savings account number (accountType 2) has 14 digits (13 current, 14 savings)", num)
		case p.currencyOK && num[per002SavingsDigits-3] != p.currencyDigit():
			ps.addf(code, fieldAccountNumber, num, "digit 12 of a bank 002 savings account number is %c for %s", p.currencyDigit(), p.req.Currency)
		}
	case b.Code == perBank003:
		if len(num) != per003Digits {
			ps.add(CodePER003Account, fieldAccountNumber, "a bank 003 account number has 13 digits", num)
		}
	case b.Code == perBankNoRUC:
		if len(num) != per004Digits {
			ps.add(CodePER004Account, fieldAccountNumber, "a bank 004 account number has 10 digits: 3 of agency and 7 of account", num)
		}
	default:
		if len(num) != perCCIDigits {
			ps.addf(CodeCCILength, fieldAccountNumber, num, "for bank %s accountNumber must be the 20-digit CCI", b.Code)
		}
	}
}

// cci002 applies the original's rules of a bank 002 CCI once the account type is sent:
// digits 7–8 are 00 for a current account (1217), digit 7 is 1 for a
// savings account (1218); digit 16 says the currency, 0 PEN, 1 USD (1230–1233: current PEN,
// current USD, savings PEN, savings USD).
func (p perCheck) cci002(at int) {
	cci := p.req.Destination.BankAccount.CCI
	usd := p.req.Currency == "USD"
	var curCode string
	switch {
	case at == perCurrent && cci[6:8] != "00":
		p.ps.add(CodeCCI002Current, fieldCCI, "digits 7 and 8 of a bank 002 current account CCI are 00", cci)
		return
	case at == perSavings && cci[6] != '1':
		p.ps.add(CodeCCI002Savings, fieldCCI, "digit 7 of a bank 002 savings account CCI is 1", cci)
		return
	case at == perCurrent && usd:
		curCode = CodeCCI002CurrentUSD
	case at == perCurrent:
		curCode = CodeCCI002CurrentPEN
	case usd:
		curCode = CodeCCI002SavingsUSD
	default:
		curCode = CodeCCI002SavingsPEN
	}
	if p.currencyOK && cci[15] != p.currencyDigit() {
		p.ps.addf(curCode, fieldCCI, cci, "digit 16 of a bank 002 CCI is %c for %s", p.currencyDigit(), p.req.Currency)
	}
}

// isPeruCellphone: a Peruvian mobile number has 9 digits and starts with 9.
func isPeruCellphone(s string) bool {
	return len(s) == perCellphoneDigits && s[0] == perCellphonePrefix && IsDigits(s)
}

// channel picks the rail: real-time needs the CCI,
// or a cellphone number for accountType 4 (the number is the address); otherwise the
// non-real-time interbank transfer when the bank has it. A cellphone payout never goes as an
// interbank transfer, which needs an account or a CCI: at a bank that is not real-time
// (group B) it is refused.
func (p perCheck) channel(b Bank, at int, cciSent, cciOK bool) Channel {
	switch {
	case b.RealTime && (at == perCellphone || cciOK):
		return ChannelRealTime
	case at == perCellphone:
		p.ps.addf(CodeNoChannel, fieldBankCode, b.Code, "bank %s takes no real-time payouts, and a cellphone payout (accountType 4) goes only real-time: send an account number or a CCI", b.Code)
	case b.Batch:
		return ChannelBatch
	case b.RealTime && !cciSent:
		p.ps.addf(CodeRealTimeNeedsCCI, fieldCCI, nil, "bank %s takes real-time payouts only, and a real-time payout requires cci: send cci, or accountType 4 with a cellphone number", b.Code)
	}
	return "" // a malformed cci was reported already
}

// card checks a card push payment: the card setting, the
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
		ps.add(CodeAccountType, fieldAccountType, "the card endpoint takes accountType 5 (card) only", v)
	}
	if !p.m.Settings.CardPayouts {
		ps.add(CodeCardNotEnabled, fieldAccountType, "card payouts are not enabled for this merchant (setting cardPayouts: needs prior configuration with the account manager)", string(ba.AccountType))
	}
	if req.Beneficiary.Email == "" {
		ps.add(CodeEmailRequired, fieldEmail, "is required for a card payout: the cardholder's email", nil)
	}
	if strings.TrimSpace(req.TimeoutURL) == "" {
		ps.add(CodeTimeoutURLRequired, fieldTimeoutURL, "", nil)
	}
	if logo := strings.TrimSpace(req.MerchantLogo); logo != "" {
		if !LogoURLAllowed(logo) {
			ps.add(CodeLogoNotHTTPS, fieldMerchantLogo, "must be an https URL (or http on 127.0.0.1 or localhost): the card form is served over https", req.MerchantLogo)
		}
	}
	minutes := perExpirationDefault
	if s := strings.TrimSpace(string(req.ExpirationTime)); s != "" {
		n, ok := req.ExpirationTime.Int()
		if !ok || !IsDigits(s) || n < perExpirationMin || n > perExpirationMax {
			ps.add(CodeExpirationTime, fieldExpTime, "must be a whole number of minutes from 5 to 30", string(req.ExpirationTime))
			minutes = 0
		} else {
			minutes = n
		}
	}
	if ba.BankCode != "" {
		if b, ok := lookupBankField(ps, "PER", fieldBankCode, ba.BankCode, ""); ok {
			p.noRUC(b)
		}
	}
	switch {
	case ba.CCI == "":
	case !IsDigits(ba.CCI):
		ps.add(CodeCCINotNumeric, fieldCCI, "a CCI has only digits", ba.CCI)
	case len(ba.CCI) != perCCIDigits:
		ps.add(CodeCCILength, fieldCCI, "must be 20 digits", ba.CCI)
	}
	p.checkMax("a card payout")
	return ChannelCard, ba.BankCode, minutes
}
