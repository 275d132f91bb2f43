package rules

import (
	"strings"
	"time"
)

// Colombia limits (spec 8) in minor units: a request's amount carries two implied decimals,
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

// Colombia account types (spec 2.4).
const (
	colCurrent   = 1
	colSavings   = 2
	colCash      = 3
	colCellphone = 4
	colKey       = 5
)

// colombiaTime is the time zone of Colombia cash dates (spec 2.3: UTC-5, no daylight saving).
var colombiaTime = time.FixedZone("COT", -5*3600)

// colAccountTypeText is the text form of accountType that Colombia accepts (spec 2.4:
// "numeric code or text"). A text is compared case-insensitively after removing spaces,
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

// colDocType is a row of spec 2.4's document table. The table gives lengths in digits; a
// passport (PAS) may also carry letters, because passports of many countries do. PEP and
// PPT are numbers issued by Migración Colombia, so they are digits only, like the rest.
type colDocType struct {
	name    string
	max     int
	letters bool
}

var colDocTypes = map[int]colDocType{
	1: {"CC", 13, false},
	2: {"CE", 13, false},
	3: {"PAS", 13, true},
	4: {"TI", 13, false},
	5: {"NIT", 13, false},
	6: {"NUIP", 10, false},
	7: {"PEP", 18, false},
	8: {"PPT", 18, false},
}

// colWalletDocTypes are the document types wallets 507 and 551 take (spec 2.4).
var colWalletDocTypes = map[int]bool{1: true, 2: true, 4: true, 8: true}

// checkColombia applies spec 2.4 and the Colombia rows of spec 8.
func checkColombia(ps *problems, req *PayoutRequest, m *Merchant, now time.Time, ep Endpoint) Route {
	if ep == EndpointCard {
		ps.add(CodeCardAccountType, "country", "the card endpoint takes only Peru payouts with accountType 5 (spec 4.2): send Colombia payouts to POST /payouts", req.Country)
	}
	if req.Currency != "COP" {
		ps.addf(CodeCurrencyNotAllowed, fieldCurrency, req.Currency, "a Colombia payout is in COP (spec 2.4), not %q", req.Currency)
	}
	amount, amountOK := parseAmount(ps, req.Amount)
	if amountOK && amount%100 != 0 {
		ps.add(CodeCOPDecimals, fieldAmount, "the last two digits are decimals and must be 00 (spec 2.4)", req.Amount)
		amountOK = false // the limits below are not checked on an amount that is already wrong
	}
	checkEmail(ps, req.Beneficiary.Email, colEmailMax, "Colombia")
	checkSubMerchant(ps, req, m.Settings.PSP, "")
	docOK := checkColombiaDocument(ps, req.Beneficiary.Document)

	r := Route{Amount: amount}
	at, ok := colombiaAccountType(ps, req.Destination.BankAccount.AccountType)
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

// checkColombiaDocument applies spec 2.4's document table. It reports whether the type is known.
func checkColombiaDocument(ps *problems, d Document) bool {
	t, ok := colDocTypes[d.Type]
	if !ok {
		ps.addf(CodeDocumentType, fieldDocType, d.Type, "must be a Colombia document type 1 to 8 (spec 2.4: 1 CC, 2 CE, 3 PAS, 4 TI, 5 NIT, 6 NUIP, 7 PEP, 8 PPT)")
		return false
	}
	n := d.Number
	switch {
	case n == "":
		ps.addf(CodeCOLDocumentNumber, fieldDocNumber, n, "a %s number is required (spec 2.4)", t.name)
	case t.letters && !isAlnum(n):
		ps.addf(CodeCOLDocumentNumber, fieldDocNumber, n, "a %s number has only letters and digits (spec 2.4)", t.name)
	case !t.letters && !IsDigits(n):
		ps.addf(CodeCOLDocumentNumber, fieldDocNumber, n, "a %s number has only digits (spec 2.4)", t.name)
	case len(n) > t.max:
		ps.addf(CodeCOLDocumentNumber, fieldDocNumber, n, "a %s number has at most %d characters (spec 2.4)", t.name, t.max)
	}
	return true
}

// colombiaAccountType reads accountType as a numeric code 1 to 5 or its text form.
func colombiaAccountType(ps *problems, raw Text) (int, bool) {
	s := string(raw)
	if s == "" {
		ps.add(CodeAccountTypeRequired, fieldAccountType, "is required in Colombia (spec 2.4): 1 current, 2 savings, 3 cash, 4 cellphone, 5 Bre-B key, or its text form", nil)
		return 0, false
	}
	if n, ok := raw.Int(); ok && n >= colCurrent && n <= colKey && IsDigits(s) {
		return n, true
	}
	key := strings.Map(func(r rune) rune {
		if r == ' ' || r == '-' || r == '_' || r == '.' {
			return -1
		}
		return r
	}, strings.ToUpper(s))
	if n, ok := colAccountTypeText[key]; ok {
		return n, true
	}
	ps.addf(CodeAccountType, fieldAccountType, s, "must be a Colombia account type (spec 2.4): 1 or CURRENT, 2 or SAVINGS, 3 or CASH, 4 or CELLPHONE, 5 or KEY (Bre-B)")
	return 0, false
}

// key checks a real-time payout by Bre-B key (spec 2.4, spec 8): the key is in accountNumber,
// bankCode is optional and, when sent, must be a bank with the key flag.
func (c colCheck) key() (Channel, string) {
	ba := &c.req.Destination.BankAccount
	if !c.m.Settings.RealTimeKey {
		c.ps.add(CodeNotEnabled, fieldAccountType, "Bre-B key payouts are not enabled for this merchant (setting realTimeKey; spec 8: needs prior setup and approval)", string(ba.AccountType))
	}
	if k := string(ba.AccountNumber); k == "" {
		c.ps.add(CodeAccountNumRequired, fieldAccountNumber, "must carry the Bre-B key (spec 2.4)", nil)
	} else if why := breBKeyProblem(k); why != "" {
		c.ps.add(CodeBreBKey, fieldAccountNumber, why, k)
	}
	if ba.BankCode != "" {
		if b, ok := lookupBankField(c.ps, "COL", fieldBankCode, ba.BankCode, retiredHint(ba.BankCode)); ok && !b.KeyRealTime {
			c.ps.addf(CodeNoChannel, fieldBankCode, ba.BankCode, "bank %s does not take Bre-B key payouts (spec 2.4 bank table); leave bankCode out or send a bank with the key flag", ba.BankCode)
		}
	}
	if c.amountOK {
		checkAmountRange(c.ps, c.amount, colBankMin, colKeyMax, "COP", "a real-time payout by Bre-B key")
	}
	return ChannelRealTimeKey, ba.BankCode
}

// breBKeyProblem says what is wrong with a Bre-B key, or "" (spec 2.4: alphanumeric, 5 to 100
// characters; a phone number, a national ID number, an email address, or an alphanumeric code
// that starts with @). A phone is 10 digits starting with 3, optionally after +57.
func breBKeyProblem(k string) string {
	if n := len([]rune(k)); n < 5 || n > 100 {
		return "a Bre-B key has 5 to 100 characters (spec 2.4)"
	}
	switch {
	case isColombiaCellphone(strings.TrimPrefix(k, "+57")):
	case IsDigits(k): // a national ID number
	case k[0] == '@':
		if !isAlnum(k[1:]) {
			return "a Bre-B alias is @ followed by letters and digits only (spec 2.4)"
		}
	case strings.Contains(k, "@"):
		if !isEmail(k) {
			return "a Bre-B key with @ inside must be an email address (spec 2.4)"
		}
	default:
		return "a Bre-B key is a cellphone number (10 digits starting with 3, optionally +57), a national ID number (digits), an email address, or an alias starting with @ (spec 2.4)"
	}
	return ""
}

// isColombiaCellphone: a Colombian mobile number is 10 digits and starts with 3 (the national
// numbering plan); the country code is not part of accountNumber.
func isColombiaCellphone(s string) bool {
	return len(s) == 10 && s[0] == '3' && IsDigits(s)
}

// cash checks a cash claim (spec 8, "Cash"): the merchant's cash setting, bank 099, the
// beneficiary's email for the OTP, the amount range and the claim's last day.
func (c colCheck) cash(now time.Time) (Channel, string, time.Time) {
	ba := &c.req.Destination.BankAccount
	if !c.m.Settings.CashPayouts {
		c.ps.add(CodeNotEnabled, fieldAccountType, "cash payouts are not available for this merchant (spec 2.4: marked not available; setting cashPayouts)", string(ba.AccountType))
	}
	switch ba.BankCode {
	case "":
		c.ps.add(CodeBankCodeRequired, fieldBankCode, "is required in Colombia (spec 2.4): cash payouts use 099", nil)
	case colombiaCashBank:
	default:
		c.ps.addf(CodeCashBankCode, fieldBankCode, ba.BankCode, "a cash payout (accountType 3) uses bank code %s, not %s (spec 2.4 cash sample)", colombiaCashBank, ba.BankCode)
	}
	if c.req.Beneficiary.Email == "" {
		c.ps.add(CodeEmailRequired, fieldEmail, "is required for a cash payout: the claim's one-time code is sent there (spec 2.4, spec 6)", nil)
	}
	if c.amountOK {
		checkAmountRange(c.ps, c.amount, colCashMin, colCashMax, "COP", "a cash payout")
	}
	return ChannelCash, colombiaCashBank, cashClaimUntil(c.ps, ba.ExpirationDate, now)
}

// cashClaimUntil checks expirationDate (spec 8: not the day of sending nor earlier, not later
// than 7 calendar days ahead, 7 days when absent; dates in UTC-5) and returns the end of
// that day: midnight after it in UTC-5, as a UTC instant. The claim is open before it.
func cashClaimUntil(ps *problems, date string, now time.Time) time.Time {
	local := now.In(colombiaTime)
	today := time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, colombiaTime)
	latest := today.AddDate(0, 0, colCashDays)
	day := latest
	if date != "" {
		d, err := time.ParseInLocation(time.DateOnly, date, colombiaTime)
		switch {
		case err != nil:
			ps.add(CodeCashExpiration, fieldExpDate, "must be a date YYYY-MM-DD", date)
			return time.Time{}
		case !d.After(today):
			ps.addf(CodeCashExpiration, fieldExpDate, date, "cannot be the day of sending (%s in Colombia, UTC-5) or earlier: the earliest is %s (spec 8)",
				today.Format(time.DateOnly), today.AddDate(0, 0, 1).Format(time.DateOnly))
			return time.Time{}
		case d.After(latest):
			ps.addf(CodeCashExpiration, fieldExpDate, date, "cannot be later than 7 calendar days ahead: the latest is %s in Colombia, UTC-5 (spec 8)", latest.Format(time.DateOnly))
			return time.Time{}
		}
		day = d
	}
	return day.AddDate(0, 0, 1).UTC()
}

// account checks a payout to a bank account, a cellphone number or a wallet (accountType 1,
// 2 or 4) and picks its channel from the bank table.
func (c colCheck) account(at int) (Channel, string) {
	ba := &c.req.Destination.BankAccount
	if ba.BankCode == "" {
		c.ps.add(CodeBankCodeRequired, fieldBankCode, "is required in Colombia except for a Bre-B key payout (spec 2.4)", nil)
	}
	num := string(ba.AccountNumber)
	if num == "" {
		c.ps.add(CodeAccountNumRequired, fieldAccountNumber, "is required in Colombia except for cash (spec 2.4)", nil)
	}
	if ba.BankCode == "" {
		if num != "" && at == colCellphone && !isColombiaCellphone(num) {
			c.ps.add(CodeCOLCellphone, fieldAccountNumber, "a Colombia cellphone number has 10 digits and starts with 3", num)
		}
		return "", ""
	}
	b, ok := lookupBankField(c.ps, "COL", fieldBankCode, ba.BankCode, retiredHint(ba.BankCode))
	if !ok {
		return "", ba.BankCode
	}
	if b.Wallet {
		c.wallet(b, at, num)
	} else {
		switch {
		case num == "":
		case at == colCellphone && !isColombiaCellphone(num):
			c.ps.add(CodeCOLCellphone, fieldAccountNumber, "a Colombia cellphone number has 10 digits and starts with 3 (accountType 4)", num)
		case at != colCellphone && (!IsDigits(num) || len(num) > 20):
			c.ps.add(CodeCOLAccountNumber, fieldAccountNumber, "a Colombia bank account number has 1 to 20 digits", num)
		}
		if c.amountOK {
			checkAmountRange(c.ps, c.amount, colBankMin, 0, "COP", "a Colombia bank payout")
		}
	}
	return c.channel(b), b.Code
}

func retiredHint(code string) string {
	if code == colombiaCashBank {
		return " (spec 2.4): 099 is accepted only for cash, accountType 3"
	}
	return " (spec 2.4)"
}

// wallet applies the rules of wallets 507 and 551 (spec 2.4, spec 8): savings or cellphone
// only, the account is the holder's cellphone number, four document types, its own range.
func (c colCheck) wallet(b Bank, at int, num string) {
	if at != colSavings && at != colCellphone {
		c.ps.addf(CodeCOLWalletAccount, fieldAccountType, string(c.req.Destination.BankAccount.AccountType), "wallet %s takes only accountType 2 (savings) or 4 (cellphone number) (spec 8)", b.Code)
	}
	if num != "" && !isColombiaCellphone(num) {
		c.ps.addf(CodeCOLCellphone, fieldAccountNumber, num, "a wallet %s account is the holder's cellphone number: 10 digits starting with 3 (spec 2.4)", b.Code)
	}
	if t := c.req.Beneficiary.Document.Type; c.docOK && !colWalletDocTypes[t] {
		c.ps.addf(CodeCOLWalletDocType, fieldDocType, t, "wallet %s takes only document types 1 (CC), 2 (CE), 4 (TI) and 8 (PPT) (spec 2.4)", b.Code)
	}
	if c.amountOK {
		checkAmountRange(c.ps, c.amount, colWalletMin, colWalletMax, "COP", "wallet "+b.Code)
	}
}

// channel picks the rail of an account, cellphone or wallet payout (spec 2.4 bank table, spec
// 8): real-time when the merchant is enabled, the bank has the phone/account flag and the
// amount is within the real-time maximum; else non-real-time when the bank has it.
func (c colCheck) channel(b Bank) Channel {
	enabled := c.m.Settings.RealTimePhoneAccount
	withinRT := !c.amountOK || c.amount <= colRealTimeMax
	switch {
	case b.RealTime && enabled && withinRT:
		return ChannelRealTime
	case b.Batch:
		return ChannelBatch
	case b.RealTime && !enabled:
		c.ps.addf(CodeNotEnabled, fieldBankCode, b.Code, "bank %s takes only real-time payouts by phone/account, and this merchant is not enabled for them (setting realTimePhoneAccount; spec 8)", b.Code)
	case b.RealTime:
		c.ps.addf(CodeAboveMaximum, fieldAmount, c.amount, "must be at most %s COP: bank %s takes only real-time payouts by phone/account (spec 8)", money(colRealTimeMax), b.Code)
	default:
		c.ps.addf(CodeNoChannel, fieldBankCode, b.Code, "bank %s takes only Bre-B key payouts (accountType 5) (spec 2.4 bank table)", b.Code)
	}
	return ""
}
