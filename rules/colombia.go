package rules

import (
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Colombia limits in minor units: a request's amount carries two implied decimals,
// so 5,000 COP is 500000.
const (
	colWalletMin   = 5_000_00
	colWalletMax   = 10_000_000_00
	colCashMin     = 20_000_00
	colCashMax     = 1_000_000_00
	colBankMin     = 1_000_00 // "other banks"; also applied to cellphone and Bre-B key payouts
	colRealTimeMax = 5_000_000_00
	colKeyMax      = 12_110_000_00
	colCashDays    = 7 // the latest expirationDate, and the default, is today + 7 in UTC-5
	colEmailMax    = 100
)

// Colombia cellphone numbers (the national numbering plan) and Bre-B keys, read
// by the validator and, through Tables, by the requirements schema (rules/requirements).
const (
	colCellphoneDigits = 10
	colCellphonePrefix = '3'
	breBKeyMin         = 5
	breBKeyMax         = 100
)

// Colombia account types.
const (
	colCurrent   = 1
	colSavings   = 2
	colCash      = 3
	colCellphone = 4
	colKey       = 5
)

// colombiaTime is the time zone of Colombia cash dates (UTC-5, no daylight saving).
var colombiaTime = time.FixedZone("COT", -5*3600)

// colAccountTypeText is the text form of accountType that Colombia accepts (a
// numeric code or its text). A text is compared case-insensitively after removing spaces,
// hyphens, underscores and dots, so "Bre-B", "bre_b" and "BREB" are one alias:
//
//	1 current:   CURRENT, CORRIENTE, CHECKING, CURRENT ACCOUNT, CUENTA CORRIENTE
//	2 savings:   SAVINGS, SAVING, AHORROS, AHORRO, SAVINGS ACCOUNT, CUENTA DE AHORROS, CUENTA AHORROS
//	3 cash:      CASH, EFECTIVO
//	4 cellphone: CELLPHONE, CELL PHONE, CELULAR, PHONE, MOBILE, MOVIL, CELLPHONE NUMBER
//	5 Bre-B key: KEY, LLAVE, BRE-B, BREB, BRE-B KEY, LLAVE BRE-B
var colAccountTypeText = map[string]int{
	"CURRENT": colCurrent, "CORRIENTE": colCurrent, "CHECKING": colCurrent,
	"CURRENTACCOUNT": colCurrent, "CUENTACORRIENTE": colCurrent,
	"SAVINGS": colSavings, "SAVING": colSavings, "AHORROS": colSavings, "AHORRO": colSavings,
	"SAVINGSACCOUNT": colSavings, "CUENTADEAHORROS": colSavings, "CUENTAAHORROS": colSavings,
	"CASH": colCash, "EFECTIVO": colCash,
	"CELLPHONE": colCellphone, "CELULAR": colCellphone, "PHONE": colCellphone,
	"MOBILE": colCellphone, "MOVIL": colCellphone, "CELLPHONENUMBER": colCellphone,
	"KEY": colKey, "LLAVE": colKey, "BREB": colKey, "BREBKEY": colKey, "LLAVEBREB": colKey,
}

// colDocType is a row of the Colombia document table. The table gives lengths in digits, so
// every type, passports too, is digits only (1106). Its maximum stands; the minimums are the
// original's published ones, where the rule table gives none: at
// least 6 digits (1502), NUIP exactly 10 and not starting with 0 (1532), PEP at least 7
// (1533), PPT at least 10 (1534). The original's PEP and PPT maximum of 15 and its
// alphanumeric PPT are not adopted: the specification says 18 digits.
type colDocType struct {
	name             string
	min, max         int
	minCode, maxCode string
	noLeadingZero    bool
}

var colDocTypes = map[int]colDocType{
	1: {"CC", 6, 13, CodeCOLDocumentMin, CodeCOLDocumentMax, false},
	2: {"CE", 6, 13, CodeCOLDocumentMin, CodeCOLDocumentMax, false},
	3: {"PAS", 6, 13, CodeCOLDocumentMin, CodeCOLDocumentMax, false},
	4: {"TI", 6, 13, CodeCOLDocumentMin, CodeCOLDocumentMax, false},
	5: {"NIT", 6, 13, CodeCOLDocumentMin, CodeCOLDocumentMax, false},
	6: {"NUIP", 10, 10, CodeNUIP, CodeNUIP, true},
	7: {"PEP", 7, 18, CodePEP, CodePEP, false},
	8: {"PPT", 10, 18, CodePPT, CodePPT, false},
}

// colWalletDocTypes are the document types wallets 507 and 551 take.
var colWalletDocTypes = map[int]bool{1: true, 2: true, 4: true, 8: true}

// checkColombia applies the Colombia rules and limits: banks, wallets, Bre-B keys and cash.
func checkColombia(ps *problems, req *PayoutRequest, m *Merchant, now time.Time, ep Endpoint) Route {
	if ep == EndpointCard {
		ps.add(CodeCountryNotSupported, "country", "the card endpoint takes only Peru payouts with accountType 5: send Colombia payouts to POST /payouts", req.Country)
	}
	if req.Currency != "COP" {
		ps.addf(CodeCurrencyNotAllowed, fieldCurrency, req.Currency, "a Colombia payout is in COP, not %q", req.Currency)
	}
	amount, amountOK := parseAmount(ps, req.Amount)
	if amountOK && amount%100 != 0 {
		ps.add(CodeCOPDecimals, fieldAmount, "the last two digits are decimals and must be 00", req.Amount)
		amountOK = false // the limits below are not checked on an amount that is already wrong
	}
	checkEmail(ps, req.Beneficiary.Email, colEmailMax, "Colombia")
	checkSubMerchant(ps, req, m.Settings.PSP, "")
	docOK := checkColombiaDocument(ps, req.Beneficiary.Document)

	r := Route{Amount: amount}
	ba := &req.Destination.BankAccount
	at, ok := colombiaAccountType(ps, ba.AccountType)
	if !ok {
		return r // which bank and account checks apply depends on the account type
	}
	r.AccountType = at
	c := colCheck{ps: ps, req: req, m: m, amount: amount, amountOK: amountOK, docOK: docOK}
	switch at {
	case colKey:
		r.Channel, r.BankCode = c.key()
	case colCash:
		r.Channel, r.BankCode, r.ClaimUntil = c.cash(now)
	default:
		r.Channel, r.BankCode = c.account(at)
	}
	if at != colCash && ba.ExpirationDate != "" {
		// Only cash reads expirationDate, but a malformed date is refused wherever it is sent.
		if _, err := time.Parse(time.DateOnly, ba.ExpirationDate); err != nil {
			ps.add(CodeDateFormat, fieldExpDate, "must be a date YYYY-MM-DD", ba.ExpirationDate)
		}
	}
	return r
}

// colCheck carries what the destination checks of one Colombia request share.
type colCheck struct {
	ps       *problems
	req      *PayoutRequest
	m        *Merchant
	amount   int64
	amountOK bool // amount is well formed, so its limits are checked
	docOK    bool // the document type is in the table
}

// checkColombiaDocument applies the Colombia document table. It reports whether the type
// is known.
func checkColombiaDocument(ps *problems, d Document) bool {
	t, ok := colDocTypes[d.Type]
	if !ok {
		ps.addf(CodeDocumentType, fieldDocType, d.Type, "must be a Colombia document type 1 to 8 (1 CC, 2 CE, 3 PAS, 4 TI, 5 NIT, 6 NUIP, 7 PEP, 8 PPT)")
		return false
	}
	n := d.Number
	switch {
	case !IsDigits(n):
		ps.addf(CodeDocumentNotNumeric, fieldDocNumber, n, "a %s number has only digits", t.name)
	case len(n) < t.min:
		ps.addf(t.minCode, fieldDocNumber, n, "a %s number has at least %d digits", t.name, t.min)
	case len(n) > t.max:
		ps.addf(t.maxCode, fieldDocNumber, n, "a %s number has at most %d digits", t.name, t.max)
	case t.noLeadingZero && n[0] == '0':
		ps.addf(t.maxCode, fieldDocNumber, n, "a %s number does not start with 0", t.name)
	}
	return true
}

// colombiaAccountType reads accountType as a numeric code 1 to 5 or its text form.
func colombiaAccountType(ps *problems, raw Text) (int, bool) {
	s := string(raw)
	if s == "" {
		ps.add(CodeAccountTypeRequired, fieldAccountType, "is required in Colombia: 1 current, 2 savings, 3 cash, 4 cellphone, 5 Bre-B key, or its text form", nil)
		return 0, false
	}
	if n, ok := colombiaAccountTypeValue(s); ok {
		return n, true
	}
	ps.addf(CodeAccountType, fieldAccountType, s, "must be a Colombia account type: 1 or CURRENT, 2 or SAVINGS, 3 or CASH, 4 or CELLPHONE, 5 or KEY (Bre-B)")
	return 0, false
}

// colombiaAccountTypeValue reads a Colombia accountType, numeric or text.
func colombiaAccountTypeValue(s string) (int, bool) {
	if n, ok := Text(s).Int(); ok && n >= colCurrent && n <= colKey && IsDigits(s) {
		return n, true
	}
	key := strings.Map(func(r rune) rune {
		if r == ' ' || r == '-' || r == '_' || r == '.' {
			return -1
		}
		return r
	}, strings.ToUpper(s))
	n, ok := colAccountTypeText[key]
	return n, ok
}

// key checks a real-time payout by Bre-B key: the key is in accountNumber,
// bankCode is optional and, when sent, must be a bank with the key flag. Wallets 507 and 551
// take accountType 2 or 4 only, so a key to a wallet is refused.
func (c colCheck) key() (Channel, string) {
	ba := &c.req.Destination.BankAccount
	if !c.m.Settings.RealTimeKey {
		c.ps.add(CodeNotEnabled, fieldAccountType, "Bre-B key payouts are not enabled for this merchant (setting realTimeKey: needs prior setup and approval)", string(ba.AccountType))
	}
	if k := string(ba.AccountNumber); k == "" {
		c.ps.add(CodeAccountNumRequired, fieldAccountNumber, "must carry the Bre-B key", nil)
	} else if code, why := breBKeyProblem(k); why != "" {
		c.ps.add(code, fieldAccountNumber, why, k)
	}
	if ba.BankCode != "" {
		if b, ok := lookupBankField(c.ps, "COL", fieldBankCode, ba.BankCode, retiredHint(ba.BankCode)); ok {
			switch {
			case b.Wallet:
				c.walletType(b)
			case !b.KeyRealTime:
				c.ps.addf(CodeNoChannel, fieldBankCode, ba.BankCode, "bank %s does not take Bre-B key payouts; leave bankCode out or send a bank with the key flag", ba.BankCode)
			}
		}
	}
	if c.amountOK {
		checkAmountRange(c.ps, c.amount, colBankMin, colKeyMax, "COP", "a real-time payout by Bre-B key")
	}
	return ChannelRealTimeKey, ba.BankCode
}

// breBKeyProblem says what is wrong with a Bre-B key, with its code, or "" (a key is
// alphanumeric, 5 to 100 characters; a phone number, a national ID number, an email address,
// or an alphanumeric code that starts with @; the original: no accents, no ñ). A phone is 10
// digits starting with 3, optionally after +57.
func breBKeyProblem(k string) (string, string) {
	if n := utf8.RuneCountInString(k); n < breBKeyMin || n > breBKeyMax {
		return CodeBreBKeyLength, "a Bre-B key has 5 to 100 characters"
	}
	for _, r := range k {
		if r > unicode.MaxASCII && unicode.IsLetter(r) {
			return CodeBreBKeyAccents, "a Bre-B key has no accented letters and no ñ"
		}
	}
	switch {
	case isColombiaCellphone(strings.TrimPrefix(k, "+57")):
	case IsDigits(k): // a national ID number
	case k[0] == '@':
		if !isAlnum(k[1:]) {
			return CodeBreBKey, "a Bre-B alias is @ followed by letters and digits only"
		}
	case strings.Contains(k, "@"):
		if !isEmail(k) {
			return CodeBreBKey, "a Bre-B key with @ inside must be an email address"
		}
	default:
		return CodeBreBKey, "a Bre-B key is a cellphone number (10 digits starting with 3, optionally +57), a national ID number (digits), an email address, or an alias starting with @"
	}
	return "", ""
}

// isColombiaCellphone: a Colombian mobile number is 10 digits and starts with 3 (the national
// numbering plan); the country code is not part of accountNumber.
func isColombiaCellphone(s string) bool {
	return len(s) == colCellphoneDigits && s[0] == colCellphonePrefix && IsDigits(s)
}

// checkCellphone reports what is wrong with a Colombia cellphone number: not digits (1109),
// not 10 digits, not starting with 3 (the codes of the bank: wallets 507 and 551 have their
// own, 1506/1507 and 1512/1513; else 1525/1526). where ends the message.
func checkCellphone(ps *problems, num, lengthCode, prefixCode, where string) {
	switch {
	case !IsDigits(num):
		ps.add(CodeAccountNotNumeric, fieldAccountNumber, "a Colombia cellphone number has only digits"+where, num)
	case len(num) != colCellphoneDigits:
		ps.add(lengthCode, fieldAccountNumber, "a Colombia cellphone number has 10 digits"+where, num)
	case num[0] != colCellphonePrefix:
		ps.add(prefixCode, fieldAccountNumber, "a Colombia cellphone number starts with 3"+where, num)
	}
}

// cash checks a cash claim: the merchant's cash setting, bank 099, the
// beneficiary's email for the OTP, the amount range and the claim's last day.
func (c colCheck) cash(now time.Time) (Channel, string, time.Time) {
	ba := &c.req.Destination.BankAccount
	if !c.m.Settings.CashPayouts {
		c.ps.add(CodeNotEnabled, fieldAccountType, "cash payouts are not available for this merchant (setting cashPayouts)", string(ba.AccountType))
	}
	switch ba.BankCode {
	case "":
		c.ps.add(CodeBankCodeRequired, fieldBankCode, "is required in Colombia: cash payouts use 099", nil)
	case colombiaCashBank:
	default:
		c.ps.addf(CodeCashBankCode, fieldBankCode, ba.BankCode, "a cash payout (accountType 3) uses bank code %s, not %s", colombiaCashBank, ba.BankCode)
	}
	if c.req.Beneficiary.Email == "" {
		c.ps.add(CodeEmailRequired, fieldEmail, "is required for a cash payout: the claim's one-time code is sent there", nil)
	}
	if c.amountOK {
		checkAmountRangeCodes(c.ps, c.amount, colCashMin, colCashMax, "COP", "a cash payout", CodeCashBelowMin, CodeCashAboveMax)
	}
	return ChannelCash, colombiaCashBank, cashClaimUntil(c.ps, ba.ExpirationDate, now)
}

// cashClaimUntil checks expirationDate (not the day of sending nor earlier, not later
// than 7 calendar days ahead, 7 days when absent; dates in UTC-5) and returns the end of
// that day: midnight after it in UTC-5, as a UTC instant. The claim is open before it.
func cashClaimUntil(ps *problems, date string, now time.Time) time.Time {
	today, latest := colCashWindow(now)
	day := latest
	if date != "" {
		d, err := time.ParseInLocation(time.DateOnly, date, colombiaTime)
		switch {
		case err != nil:
			ps.add(CodeDateFormat, fieldExpDate, "must be a date YYYY-MM-DD", date)
			return time.Time{}
		case !d.After(today):
			ps.addf(CodeCashExpiration, fieldExpDate, date, "cannot be the day of sending (%s in Colombia, UTC-5) or earlier: the earliest is %s",
				today.Format(time.DateOnly), today.AddDate(0, 0, 1).Format(time.DateOnly))
			return time.Time{}
		case d.After(latest):
			ps.addf(CodeCashExpiration, fieldExpDate, date, "cannot be later than 7 calendar days ahead: the latest is %s in Colombia, UTC-5", latest.Format(time.DateOnly))
			return time.Time{}
		}
		day = d
	}
	return day.AddDate(0, 0, 1).UTC()
}

// colCashWindow is the day of sending in Colombia (UTC-5) and the latest expirationDate a
// cash payout sent now may have: the claim's last day is after today and at most latest.
func colCashWindow(now time.Time) (today, latest time.Time) {
	local := now.In(colombiaTime)
	today = time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, colombiaTime)
	return today, today.AddDate(0, 0, colCashDays)
}

// colAccountRule is a published length rule of one Colombia bank's account numbers (the
// original's codes 1508–1511, 1523, 1524), for accountType 1 and 2, checked after the general 5 to 17 digits
// (1522). It is data, so that the requirements schema (rules/requirements) says the same.
type colAccountRule struct {
	max, min int   // bounds on the length; 0 is none
	only     []int // the lengths allowed, when set
	code     string
	rule     string
}

func (r colAccountRule) ok(n int) bool {
	if r.only != nil {
		return slices.Contains(r.only, n)
	}
	return (r.min == 0 || n >= r.min) && (r.max == 0 || n <= r.max)
}

var colAccountRules = map[string]colAccountRule{
	"001": {max: 9, code: CodeCOL001Account, rule: "at most 9 digits"},
	"007": {max: 11, code: CodeCOL007Account, rule: "at most 11 digits"},
	"013": {only: []int{9, 10, 16}, code: CodeCOL013Account, rule: "9, 10 or 16 digits"},
	"032": {max: 11, code: CodeCOL032Account, rule: "at most 11 digits"},
	"051": {min: 12, code: CodeCOL051Account, rule: "at least 12 digits"},
	"803": {only: []int{10}, code: CodeCOL803Account, rule: "10 digits"},
}

// Colombia account numbers: 5 to 17 digits (the original's 1522; the specification gives no
// length).
const colAccountMin, colAccountMax = 5, 17

// colWallet is a wallet's codes.
type colWallet struct{ typeCode, lengthCode, prefixCode string }

var colWallets = map[string]colWallet{
	"507": {CodeCOLWallet507Type, CodeCOL507Length, CodeCOL507Prefix},
	"551": {CodeCOLWallet551Type, CodeCOL551Length, CodeCOL551Prefix},
}

// account checks a payout to a bank account, a cellphone number or a wallet (accountType 1,
// 2 or 4) and picks its channel from the bank table.
func (c colCheck) account(at int) (Channel, string) {
	ba := &c.req.Destination.BankAccount
	if ba.BankCode == "" {
		c.ps.add(CodeBankCodeRequired, fieldBankCode, "is required in Colombia except for a Bre-B key payout", nil)
	}
	num := string(ba.AccountNumber)
	if num == "" {
		c.ps.add(CodeAccountNumRequired, fieldAccountNumber, "is required in Colombia except for cash", nil)
	}
	if ba.BankCode == "" {
		if num != "" && at == colCellphone {
			checkCellphone(c.ps, num, CodeCOLCellphoneLength, CodeCOLCellphonePrefix, " (accountType 4)")
		}
		c.additional(at == colCellphone, num)
		return "", ""
	}
	if ba.BankCode == colombiaCashBank {
		c.ps.addf(CodeCashAccountType, fieldAccountType, string(ba.AccountType), "bank %s takes only cash, accountType 3 (retired for every other channel)", colombiaCashBank)
		return "", ba.BankCode
	}
	b, ok := lookupBankField(c.ps, "COL", fieldBankCode, ba.BankCode, retiredHint(ba.BankCode))
	if !ok {
		c.additional(at == colCellphone, num)
		return "", ba.BankCode
	}
	if b.Wallet {
		c.wallet(b, num)
		c.additional(true, num)
		return c.channel(b), b.Code
	}
	c.additional(at == colCellphone, num)
	if c.amountOK {
		checkAmountRange(c.ps, c.amount, colBankMin, 0, "COP", "a Colombia bank payout")
	}
	if at == colCellphone {
		if num != "" {
			checkCellphone(c.ps, num, CodeCOLCellphoneLength, CodeCOLCellphonePrefix, " (accountType 4)")
		}
		return c.cellphoneChannel(b), b.Code
	}
	if num != "" {
		switch r, ok := colAccountRules[b.Code]; {
		case !IsDigits(num):
			c.ps.add(CodeAccountNotNumeric, fieldAccountNumber, "a Colombia bank account number has only digits", num)
		case len(num) < colAccountMin || len(num) > colAccountMax:
			c.ps.addf(CodeCOLAccountNumber, fieldAccountNumber, num, "a Colombia bank account number has %d to %d digits", colAccountMin, colAccountMax)
		case ok && !r.ok(len(num)):
			c.ps.addf(r.code, fieldAccountNumber, num, "a bank %s account number has %s", b.Code, r.rule)
		}
	}
	return c.channel(b), b.Code
}

// additional checks AdittionalAccountInfo: a cellphone number
// alongside a bank account (2025), or a bank account alongside a cellphone number — accountType
// 4, or any wallet account, which is the holder's phone (2026); never accountNumber itself
// (2027). Cash and Bre-B key payouts do not read it.
func (c colCheck) additional(numIsPhone bool, num string) {
	info := string(c.req.Destination.BankAccount.AdittionalAccountInfo)
	const field = "destination.bankAccount.AdittionalAccountInfo"
	switch {
	case info == "":
	case info == num:
		c.ps.add(CodeAdditionalEquals, field, "must not repeat accountNumber", info)
	case numIsPhone && (!IsDigits(info) || len(info) < colAccountMin || len(info) > colAccountMax):
		c.ps.addf(CodeAdditionalAccount, field, info, "must be a bank account of %d to %d digits: accountNumber is a cellphone number", colAccountMin, colAccountMax)
	case !numIsPhone && !isColombiaCellphone(info):
		c.ps.add(CodeAdditionalCellphone, field, "must be a cellphone number (10 digits starting with 3): accountNumber is a bank account", info)
	}
}

func retiredHint(code string) string {
	if code == colombiaCashBank {
		return ": 099 is accepted only for cash, accountType 3"
	}
	return ""
}

// walletType: wallets 507 and 551 take accountType 2 (savings) or 4 (cellphone) only. The
// specification wins over the original, which publishes savings only.
func (c colCheck) walletType(b Bank) {
	at := string(c.req.Destination.BankAccount.AccountType)
	if n, _ := colombiaAccountTypeValue(at); n != colSavings && n != colCellphone {
		c.ps.addf(colWallets[b.Code].typeCode, fieldAccountType, at, "wallet %s takes only accountType 2 (savings) or 4 (cellphone number)", b.Code)
	}
}

// wallet applies the rules of wallets 507 and 551: savings or cellphone
// only, the account is the holder's cellphone number, four document types, its own range.
func (c colCheck) wallet(b Bank, num string) {
	w := colWallets[b.Code]
	c.walletType(b)
	if num != "" {
		checkCellphone(c.ps, num, w.lengthCode, w.prefixCode, " (a wallet "+b.Code+" account is the holder's cellphone number)")
	}
	if t := c.req.Beneficiary.Document.Type; c.docOK && !colWalletDocTypes[t] {
		c.ps.addf(CodeCOLWalletDocType, fieldDocType, t, "wallet %s takes only document types 1 (CC), 2 (CE), 4 (TI) and 8 (PPT)", b.Code)
	}
	if c.amountOK {
		checkAmountRange(c.ps, c.amount, colWalletMin, colWalletMax, "COP", "wallet "+b.Code)
	}
}

// channel picks the rail of an account or wallet payout:
// real-time when the merchant is enabled, the bank has the phone/account flag and the amount
// is within the real-time maximum; else non-real-time when the bank has it.
func (c colCheck) channel(b Bank) Channel {
	enabled := c.m.Settings.RealTimePhoneAccount
	withinRT := !c.amountOK || c.amount <= colRealTimeMax
	switch {
	case b.RealTime && enabled && withinRT:
		return ChannelRealTime
	case b.Batch:
		return ChannelBatch
	case b.RealTime && !enabled:
		c.ps.addf(CodeNotEnabled, fieldBankCode, b.Code, "bank %s takes only real-time payouts by phone/account, and this merchant is not enabled for them (setting realTimePhoneAccount)", b.Code)
	case b.RealTime:
		c.ps.addf(CodeAboveMaximum, fieldAmount, c.amount, "must be at most %s COP: bank %s takes only real-time payouts by phone/account", money(colRealTimeMax), b.Code)
	default:
		c.ps.addf(CodeNoChannel, fieldBankCode, b.Code, "bank %s takes only Bre-B key payouts (accountType 5)", b.Code)
	}
	return ""
}

// cellphoneChannel is the rail of a cellphone payout (accountType 4) to a bank: only the
// real-time phone/account channel. A phone number is no account for a batch transfer, so
// the payout is refused at a bank without that channel (groups B, D, F), for a merchant
// without the setting, or above the real-time maximum. Wallets are not here: their
// account is the phone, and they keep their batch route.
func (c colCheck) cellphoneChannel(b Bank) Channel {
	switch {
	case !b.RealTime:
		c.ps.addf(CodeNoChannel, fieldBankCode, b.Code, "bank %s has no real-time phone/account channel: a cellphone payout (accountType 4) goes only real-time; send a bank account, or a Bre-B key", b.Code)
	case !c.m.Settings.RealTimePhoneAccount:
		c.ps.add(CodeNotEnabled, fieldAccountType, "cellphone payouts (accountType 4) go real-time by phone/account, and this merchant is not enabled for it (setting realTimePhoneAccount)", string(c.req.Destination.BankAccount.AccountType))
	case c.amountOK && c.amount > colRealTimeMax:
		c.ps.addf(CodeAboveMaximum, fieldAmount, c.amount, "must be at most %s COP: a cellphone payout (accountType 4) goes only real-time by phone/account", money(colRealTimeMax))
	default:
		return ChannelRealTime
	}
	return ""
}
