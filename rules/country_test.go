package rules_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"payouts/rules"
)

// checkNow is the fixed server clock of the table: 10:00 on 2026-11-21 in Colombia (UTC-5).
var checkNow = time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC)

// colombiaTZ is Colombia's time zone, for the expected end of a cash claim.
var colombiaTZ = time.FixedZone("COT", -5*3600)

// mut changes a valid request into the case of one row.
type mut func(*rules.PayoutRequest)

// validCOL is a Colombia savings-account payout to bank 001 that every merchant may send
// (non-real-time), changed by ms.
func validCOL(ms ...mut) *rules.PayoutRequest {
	r := &rules.PayoutRequest{
		Country: "COL", Amount: "15000000", Currency: "COP", OrderID: "ORD-COL-1",
		Description: "Pago a proveedor",
		Beneficiary: rules.Beneficiary{Name: "Juan", LastName: "Pérez", Email: "juan.perez@gmail.com",
			Document: rules.Document{Type: 1, Number: "1020304050"}},
		Destination: rules.Destination{BankAccount: rules.BankAccount{
			BankCode: "001", AccountType: "2", AccountNumber: "123456789"}},
	}
	for _, m := range ms {
		m(r)
	}
	return r
}

// validPER is a Peru savings-account payout to bank 002 without CCI (non-real-time),
// changed by ms.
func validPER(ms ...mut) *rules.PayoutRequest {
	r := &rules.PayoutRequest{
		Country: "PER", Amount: "100000", Currency: "PEN", OrderID: "ORD-PER-1",
		Beneficiary: rules.Beneficiary{Name: "Ana", LastName: "Quispe", Email: "ana.quispe@gmail.com",
			Document: rules.Document{Type: 1, Number: "45678912"}},
		Destination: rules.Destination{BankAccount: rules.BankAccount{
			BankCode: "002", AccountType: "2", AccountNumber: "19412345678052"}},
	}
	for _, m := range ms {
		m(r)
	}
	return r
}

func amount(a string) mut   { return func(r *rules.PayoutRequest) { r.Amount = json.Number(a) } }
func currency(c string) mut { return func(r *rules.PayoutRequest) { r.Currency = c } }
func email(e string) mut    { return func(r *rules.PayoutRequest) { r.Beneficiary.Email = e } }
func desc(d string) mut     { return func(r *rules.PayoutRequest) { r.Description = d } }
func bank(c string) mut {
	return func(r *rules.PayoutRequest) { r.Destination.BankAccount.BankCode = c }
}
func atype(t string) mut {
	return func(r *rules.PayoutRequest) { r.Destination.BankAccount.AccountType = rules.Text(t) }
}
func acct(n string) mut {
	return func(r *rules.PayoutRequest) { r.Destination.BankAccount.AccountNumber = rules.Text(n) }
}
func cci(c string) mut { return func(r *rules.PayoutRequest) { r.Destination.BankAccount.CCI = c } }
func expDate(d string) mut {
	return func(r *rules.PayoutRequest) { r.Destination.BankAccount.ExpirationDate = d }
}
func doc(t int, n string) mut {
	return func(r *rules.PayoutRequest) { r.Beneficiary.Document = rules.Document{Type: t, Number: n} }
}
func sub(code, name, url string) mut {
	return func(r *rules.PayoutRequest) {
		r.SubMerchantInfo = &rules.SubMerchantInfo{Code: code, Name: name, URL: url}
	}
}
func timeoutURL(u string) mut { return func(r *rules.PayoutRequest) { r.TimeoutURL = u } }
func logo(u string) mut       { return func(r *rules.PayoutRequest) { r.MerchantLogo = u } }
func expTime(t string) mut    { return func(r *rules.PayoutRequest) { r.ExpirationTime = rules.Text(t) } }
func all(ms ...mut) mut {
	return func(r *rules.PayoutRequest) {
		for _, m := range ms {
			m(r)
		}
	}
}
func repeat(s string, n int) string { return strings.Repeat(s, n) }

// perUSDAcct is a bank 002 savings account in USD: digit 12 is 1 (1222).
const perUSDAcct = "19412345678152"

// Destinations other than the bases' bank account.
var (
	colWallet507 = all(bank("507"), atype("4"), acct("3001234567"))
	colPhone     = all(bank("001"), atype("4"), acct("3001234567"))
	colKey       = all(bank(""), atype("5"), acct("@juanperez"))
	colCash      = all(bank("099"), atype("3"), acct(""), amount("30000000"))
	perCCIOnly   = all(bank(""), atype(""), acct(""), cci("00219412345678901253"))
	perPhone     = all(bank("002"), atype("4"), acct("987654321"), amount("20000"))
	perWallet037 = all(bank("037"), atype("4"), acct("987654321"), amount("20000"),
		desc("Bodega Santa Rosa"), sub("", "Bodega Santa Rosa", ""))
	perCard = all(bank(""), atype("5"), acct(""), amount("50000"),
		timeoutURL("https://tienda.pe/pago/timeout"))
)

// Merchant settings of the rows.
var (
	sNone    = rules.Settings{}
	sAll     = rules.AllSettings()
	sRTPhone = rules.Settings{RealTimePhoneAccount: true}
	sKey     = rules.Settings{RealTimeKey: true}
	sCash    = rules.Settings{CashPayouts: true}
	sCard    = rules.Settings{CardPayouts: true}
	sPSP     = rules.Settings{PSP: true}
)

// allBut is every setting on but what off turns off.
func allBut(off func(*rules.Settings)) rules.Settings {
	s := rules.AllSettings()
	off(&s)
	return s
}

// wantErr is one expected error: its code and field path.
type wantErr struct{ code, field string }

// Field paths.
const (
	fAmount   = "amount"
	fCurrency = "currency"
	fDesc     = "description"
	fEmail    = "beneficiary.email"
	fDocType  = "beneficiary.document.type"
	fDocNum   = "beneficiary.document.number"
	fBank     = "destination.bankAccount.bankCode"
	fType     = "destination.bankAccount.accountType"
	fNumber   = "destination.bankAccount.accountNumber"
	fCCI      = "destination.bankAccount.cci"
	fExpDate  = "destination.bankAccount.expirationDate"
	fSub      = "subMerchantInfo"
)

type countryRow struct {
	name string
	req  *rules.PayoutRequest
	// raw edits the request's JSON after marshalling, for what the struct cannot say (a
	// number instead of a string, the TimeoutURL spelling).
	raw func(map[string]any)
	set rules.Settings
	ep  rules.Endpoint
	now time.Time // zero: checkNow
	// On acceptance: the channel, and the route fields that are not zero here.
	channel     rules.Channel
	accountType int
	bankCode    string
	claimUntil  time.Time
	expMinutes  int
	// On rejection: exactly these errors, in any order.
	errs []wantErr
}

func countryRows() []countryRow {
	claimDay := func(y int, m time.Month, d int) time.Time { return time.Date(y, m, d+1, 0, 0, 0, 0, colombiaTZ) }
	return []countryRow{
		// ---------------- Colombia: amount, currency (spec 2.4) ----------------
		{name: "2.4 COL valid bank account without real-time setting is batch", req: validCOL(), channel: rules.ChannelBatch, accountType: 2, bankCode: "001"},
		{name: "2.4 COL currency must be COP", req: validCOL(currency("USD")), errs: []wantErr{{rules.CodeCurrencyNotAllowed, fCurrency}}},
		{name: "2.4 COL currency PEN refused", req: validCOL(currency("PEN")), errs: []wantErr{{rules.CodeCurrencyNotAllowed, fCurrency}}},
		{name: "2.4 COL amount is an integer: fraction refused", req: validCOL(amount("150000.00")), errs: []wantErr{{rules.CodeAmountNotNumeric, fAmount}}},
		{name: "2.4 COL amount is an integer: exponent refused", req: validCOL(amount("1.5e7")), errs: []wantErr{{rules.CodeAmountNotNumeric, fAmount}}},
		{name: "2.4 COL amount of 10 digits accepted", req: validCOL(amount("9999999900")), channel: rules.ChannelBatch},
		{name: "2.4 COL amount of 11 digits refused (1110)", req: validCOL(amount("10000000000")), errs: []wantErr{{rules.CodeAmountLength, fAmount}}},
		{name: "2.4 COL amount must end in 00", req: validCOL(amount("15000050")), errs: []wantErr{{rules.CodeCOPDecimals, fAmount}}},
		{name: "2.4 COL amount ending in 01 refused", req: validCOL(amount("15000001")), errs: []wantErr{{rules.CodeCOPDecimals, fAmount}}},

		// ---------------- Colombia: email (spec 2.2, 2.4) ----------------
		{name: "2.2 COL email of 100 characters accepted", req: validCOL(email(repeat("a", 90) + "@gmail.com")), channel: rules.ChannelBatch},
		{name: "2.2 COL email of 101 characters refused", req: validCOL(email(repeat("a", 91) + "@gmail.com")), errs: []wantErr{{rules.CodeEmailTooLong, fEmail}}},
		{name: "2.4 COL email optional outside cash", req: validCOL(email("")), channel: rules.ChannelBatch},
		{name: "2.2 COL dummy email test@ refused", req: validCOL(email("test@gmail.com")), errs: []wantErr{{rules.CodeEmailDummy, fEmail}}},
		{name: "2.2 COL dummy email correo@correo.com refused", req: validCOL(email("correo@correo.com")), errs: []wantErr{{rules.CodeEmailDummy, fEmail}}},
		{name: "2.2 COL dummy email a@a.com refused", req: validCOL(email("A@A.com")), errs: []wantErr{{rules.CodeEmailDummy, fEmail}}},
		{name: "2.2 COL dummy email example.com refused", req: validCOL(email("juan@example.com")), errs: []wantErr{{rules.CodeEmailDummy, fEmail}}},
		{name: "2.2 COL dummy email subdomain of example.org refused", req: validCOL(email("juan@mail.example.org")), errs: []wantErr{{rules.CodeEmailDummy, fEmail}}},
		{name: "2.2 COL dummy email sinemail refused", req: validCOL(email("sinemail@hotmail.com")), errs: []wantErr{{rules.CodeEmailDummy, fEmail}}},
		{name: "2.2 COL dummy email noemail+tag refused", req: validCOL(email("noemail+1@gmail.com")), errs: []wantErr{{rules.CodeEmailDummy, fEmail}}},
		{name: "2.2 COL dummy email no-reply refused", req: validCOL(email("no-reply@tienda.co")), errs: []wantErr{{rules.CodeEmailDummy, fEmail}}},
		{name: "2.2 COL disposable email mailinator refused", req: validCOL(email("juan@mailinator.com")), errs: []wantErr{{rules.CodeEmailDummy, fEmail}}},
		{name: "2.2 COL reserved .test domain refused", req: validCOL(email("juan@tienda.test")), errs: []wantErr{{rules.CodeEmailDummy, fEmail}}},
		{name: "2.2 COL real email with test inside a word accepted", req: validCOL(email("contestador@tienda.co")), channel: rules.ChannelBatch},

		// ---------------- Colombia: PSP (spec 2.4, 2.6) ----------------
		{name: "2.4 COL PSP merchant with full subMerchantInfo accepted", req: validCOL(sub("S1", "Tienda", "https://tienda.co")), set: sPSP, channel: rules.ChannelBatch},
		{name: "2.4 COL PSP merchant needs subMerchantInfo", req: validCOL(), set: sPSP, errs: []wantErr{{rules.CodeFieldRequired, fSub}}},
		{name: "2.4 COL PSP merchant needs subMerchantInfo.code", req: validCOL(sub("", "Tienda", "https://tienda.co")), set: sPSP, errs: []wantErr{{rules.CodeFieldRequired, fSub + ".code"}}},
		{name: "2.4 COL PSP merchant needs subMerchantInfo.name", req: validCOL(sub("S1", "", "https://tienda.co")), set: sPSP, errs: []wantErr{{rules.CodeFieldRequired, fSub + ".name"}}},
		{name: "2.4 COL PSP merchant needs subMerchantInfo.url", req: validCOL(sub("S1", "Tienda", "")), set: sPSP, errs: []wantErr{{rules.CodeFieldRequired, fSub + ".url"}}},
		{name: "2.4 COL non-PSP merchant needs no subMerchantInfo", req: validCOL(), set: sNone, channel: rules.ChannelBatch},

		// ---------------- Colombia: documents (spec 2.4) ----------------
		{name: "2.4 COL CC of 13 digits accepted", req: validCOL(doc(1, repeat("1", 13))), channel: rules.ChannelBatch},
		{name: "2.4 COL CC of 14 digits refused", req: validCOL(doc(1, repeat("1", 14))), errs: []wantErr{{rules.CodeCOLDocumentMax, fDocNum}}},
		{name: "2.4 COL CC with letters refused", req: validCOL(doc(1, "10203A")), errs: []wantErr{{rules.CodeDocumentNotNumeric, fDocNum}}},
		{name: "2.4 COL CE of 13 digits accepted", req: validCOL(doc(2, repeat("2", 13))), channel: rules.ChannelBatch},
		{name: "2.4 COL CE of 14 digits refused", req: validCOL(doc(2, repeat("2", 14))), errs: []wantErr{{rules.CodeCOLDocumentMax, fDocNum}}},
		{name: "2.4 COL PAS with letters refused: the table gives digits (1106)", req: validCOL(doc(3, "AB12345678901")), errs: []wantErr{{rules.CodeDocumentNotNumeric, fDocNum}}},
		{name: "2.4 COL PAS of 14 digits refused", req: validCOL(doc(3, repeat("3", 14))), errs: []wantErr{{rules.CodeCOLDocumentMax, fDocNum}}},
		{name: "2.4 COL PAS with a hyphen refused", req: validCOL(doc(3, "AB-123456")), errs: []wantErr{{rules.CodeDocumentNotNumeric, fDocNum}}},
		{name: "2.4 COL TI of 13 digits accepted", req: validCOL(doc(4, repeat("4", 13))), channel: rules.ChannelBatch},
		{name: "2.4 COL TI of 14 digits refused", req: validCOL(doc(4, repeat("4", 14))), errs: []wantErr{{rules.CodeCOLDocumentMax, fDocNum}}},
		{name: "2.4 COL NIT of 13 digits accepted", req: validCOL(doc(5, repeat("5", 13))), channel: rules.ChannelBatch},
		{name: "2.4 COL NIT of 14 digits refused", req: validCOL(doc(5, repeat("5", 14))), errs: []wantErr{{rules.CodeCOLDocumentMax, fDocNum}}},
		{name: "2.4 COL NIT with check-digit hyphen refused", req: validCOL(doc(5, "900123456-7")), errs: []wantErr{{rules.CodeDocumentNotNumeric, fDocNum}}},
		{name: "2.4 COL NUIP of 10 digits accepted", req: validCOL(doc(6, repeat("6", 10))), channel: rules.ChannelBatch},
		{name: "2.4 COL NUIP of 11 digits refused", req: validCOL(doc(6, repeat("6", 11))), errs: []wantErr{{rules.CodeNUIP, fDocNum}}},
		{name: "2.4 COL PEP of 18 digits accepted", req: validCOL(doc(7, repeat("7", 18))), channel: rules.ChannelBatch},
		{name: "2.4 COL PEP of 19 digits refused", req: validCOL(doc(7, repeat("7", 19))), errs: []wantErr{{rules.CodePEP, fDocNum}}},
		{name: "2.4 COL PEP with letters refused", req: validCOL(doc(7, "PEP123456")), errs: []wantErr{{rules.CodeDocumentNotNumeric, fDocNum}}},
		{name: "2.4 COL PPT of 18 digits accepted", req: validCOL(doc(8, repeat("8", 18))), channel: rules.ChannelBatch},
		{name: "2.4 COL PPT of 19 digits refused", req: validCOL(doc(8, repeat("8", 19))), errs: []wantErr{{rules.CodePPT, fDocNum}}},
		{name: "2.4 COL document type 9 unknown", req: validCOL(doc(9, "123")), errs: []wantErr{{rules.CodeDocumentType, fDocType}}},
		{name: "2.4 COL document type 0 unknown", req: validCOL(doc(0, "123")), errs: []wantErr{{rules.CodeDocumentType, fDocType}}},
		{name: "2.4 COL blank document number refused", req: validCOL(doc(1, "   ")), errs: []wantErr{{rules.CodeDocumentNotNumeric, fDocNum}}},

		// ---------------- Colombia: account types (spec 2.4) ----------------
		{name: "2.4 COL accountType required", req: validCOL(atype("")), errs: []wantErr{{rules.CodeAccountTypeRequired, fType}}},
		{name: "2.4 COL accountType 1 current accepted", req: validCOL(atype("1")), channel: rules.ChannelBatch, accountType: 1},
		{name: "2.4 COL accountType as a JSON number accepted", req: validCOL(), raw: setPath(2, "destination", "bankAccount", "accountType"), channel: rules.ChannelBatch, accountType: 2},
		{name: "2.4 COL accountType text CURRENT", req: validCOL(atype("CURRENT")), channel: rules.ChannelBatch, accountType: 1},
		{name: "2.4 COL accountType text corriente", req: validCOL(atype("corriente")), channel: rules.ChannelBatch, accountType: 1},
		{name: "2.4 COL accountType text Checking", req: validCOL(atype("Checking")), channel: rules.ChannelBatch, accountType: 1},
		{name: "2.4 COL accountType text Cuenta Corriente", req: validCOL(atype("Cuenta Corriente")), channel: rules.ChannelBatch, accountType: 1},
		{name: "2.4 COL accountType text SAVINGS", req: validCOL(atype("SAVINGS")), channel: rules.ChannelBatch, accountType: 2},
		{name: "2.4 COL accountType text ahorros", req: validCOL(atype("ahorros")), channel: rules.ChannelBatch, accountType: 2},
		{name: "2.4 COL accountType text celular", req: validCOL(colPhone, atype("celular")), set: sRTPhone, channel: rules.ChannelRealTime, accountType: 4},
		{name: "2.4 COL accountType text PHONE", req: validCOL(colPhone, atype("PHONE")), set: sRTPhone, channel: rules.ChannelRealTime, accountType: 4},
		{name: "2.4 COL accountType text Bre-B", req: validCOL(colKey, atype("Bre-B")), set: sKey, channel: rules.ChannelRealTimeKey, accountType: 5},
		{name: "2.4 COL accountType text llave", req: validCOL(colKey, atype("llave")), set: sKey, channel: rules.ChannelRealTimeKey, accountType: 5},
		{name: "2.4 COL accountType text EFECTIVO", req: validCOL(colCash, atype("EFECTIVO")), set: sCash, channel: rules.ChannelCash, accountType: 3},
		{name: "2.4 COL accountType 6 refused", req: validCOL(atype("6")), errs: []wantErr{{rules.CodeAccountType, fType}}},
		{name: "2.4 COL accountType 0 refused", req: validCOL(atype("0")), errs: []wantErr{{rules.CodeAccountType, fType}}},
		{name: "2.4 COL accountType text CREDIT refused", req: validCOL(atype("CREDIT")), errs: []wantErr{{rules.CodeAccountType, fType}}},
		{name: "2.4 COL accountType 2.0 refused", req: validCOL(), raw: setPath(json.Number("2.0"), "destination", "bankAccount", "accountType"), errs: []wantErr{{rules.CodeAccountType, fType}}},

		// ---------------- Colombia: bank codes (spec 2.4 bank table) ----------------
		{name: "2.4 COL bankCode required for an account", req: validCOL(bank("")), errs: []wantErr{{rules.CodeBankCodeRequired, fBank}}},
		{name: "2.4 COL unknown bank code refused", req: validCOL(bank("999")), errs: []wantErr{{rules.CodeBankCode, fBank}}},
		{name: "2.4 COL two-digit bank code refused", req: validCOL(bank("01")), errs: []wantErr{{rules.CodeBankCode, fBank}}},
		{name: "2.4 COL retired bank 041 refused", req: validCOL(bank("041")), errs: []wantErr{{rules.CodeBankCode, fBank}}},
		{name: "2.4 COL retired bank 1292 refused", req: validCOL(bank("1292")), errs: []wantErr{{rules.CodeBankCode, fBank}}},
		{name: "2.4 COL bank 099 only for cash: savings refused (1516)", req: validCOL(bank("099")), errs: []wantErr{{rules.CodeCashAccountType, fType}}},
		{name: "2.4 COL 4-digit bank 1559 (group B) accepted", req: validCOL(bank("1559")), set: sRTPhone, channel: rules.ChannelBatch, bankCode: "1559"},
		{name: "2.4 COL group D bank 009 is batch even when real-time is on", req: validCOL(bank("009")), set: sRTPhone, channel: rules.ChannelBatch},
		{name: "2.4 COL group D 4-digit bank 1560 accepted", req: validCOL(bank("1560")), channel: rules.ChannelBatch},
		{name: "2.4 COL group C bank 040 real-time", req: validCOL(bank("040")), set: sRTPhone, channel: rules.ChannelRealTime},
		{name: "2.4 COL group F first code 826 takes keys only", req: validCOL(bank("826")), set: sAll, errs: []wantErr{{rules.CodeNoChannel, fBank}}},
		{name: "2.4 COL group F last code 935 takes keys only", req: validCOL(bank("935")), set: sAll, errs: []wantErr{{rules.CodeNoChannel, fBank}}},
		{name: "2.4 COL 825 is in no group", req: validCOL(bank("825")), errs: []wantErr{{rules.CodeBankCode, fBank}}},
		{name: "2.4 COL 936 is in no group", req: validCOL(bank("936")), errs: []wantErr{{rules.CodeBankCode, fBank}}},

		// ---------------- Colombia: account numbers (spec 2.4) ----------------
		{name: "2.4 COL accountNumber required for an account", req: validCOL(acct("")), errs: []wantErr{{rules.CodeAccountNumRequired, fNumber}}},
		{name: "2.4 COL accountNumber of 17 digits accepted (1522)", req: validCOL(bank("012"), acct(repeat("1", 17))), channel: rules.ChannelBatch},
		{name: "2.4 COL accountNumber of 21 digits refused", req: validCOL(acct(repeat("1", 21))), errs: []wantErr{{rules.CodeCOLAccountNumber, fNumber}}},
		{name: "2.4 COL accountNumber with letters refused (1109)", req: validCOL(acct("12345ABC")), errs: []wantErr{{rules.CodeAccountNotNumeric, fNumber}}},
		{name: "2.4 COL accountNumber as a JSON number accepted", req: validCOL(), raw: setPath(json.Number("123456789"), "destination", "bankAccount", "accountNumber"), channel: rules.ChannelBatch},

		// ---------------- Colombia: other banks (spec 8) ----------------
		{name: "8 COL other banks minimum 1,000 accepted", req: validCOL(amount("100000")), channel: rules.ChannelBatch},
		{name: "8 COL other banks below 1,000 refused", req: validCOL(amount("99900")), errs: []wantErr{{rules.CodeBelowMinimum, fAmount}}},
		{name: "8 COL other banks have no maximum short of 10 digits", req: validCOL(amount("9999999900")), set: sRTPhone, channel: rules.ChannelBatch},

		// ---------------- Colombia: real-time by phone/account (spec 8) ----------------
		{name: "8 COL real-time by account when enabled", req: validCOL(), set: sRTPhone, channel: rules.ChannelRealTime},
		{name: "8 COL real-time by phone/account maximum 5,000,000 accepted", req: validCOL(amount("500000000")), set: sRTPhone, channel: rules.ChannelRealTime},
		{name: "8 COL above real-time maximum falls back to batch", req: validCOL(amount("500000100")), set: sRTPhone, channel: rules.ChannelBatch},
		{name: "8 COL real-time current account", req: validCOL(atype("1")), set: sRTPhone, channel: rules.ChannelRealTime},
		{name: "8 COL cellphone real-time at bank 001", req: validCOL(colPhone), set: sRTPhone, channel: rules.ChannelRealTime, accountType: 4},
		{name: "8 COL gap: cellphone without the real-time setting refused, not batch", req: validCOL(colPhone), errs: []wantErr{{rules.CodeNotEnabled, fType}}},
		{name: "8 COL cellphone must start with 3 (1526)", req: validCOL(colPhone, acct("2001234567")), set: sRTPhone, errs: []wantErr{{rules.CodeCOLCellphonePrefix, fNumber}}},
		{name: "8 COL cellphone must have 10 digits (1525)", req: validCOL(colPhone, acct("300123456")), set: sRTPhone, errs: []wantErr{{rules.CodeCOLCellphoneLength, fNumber}}},
		{name: "8 COL cellphone without bankCode", req: validCOL(colPhone, bank("")), errs: []wantErr{{rules.CodeBankCodeRequired, fBank}}},
		{name: "8 COL group E bank 820 real-time when enabled", req: validCOL(bank("820")), set: sRTPhone, channel: rules.ChannelRealTime},
		{name: "8 COL group E bank 823 needs the real-time setting", req: validCOL(bank("823")), errs: []wantErr{{rules.CodeNotEnabled, fBank}}},
		{name: "8 COL group E bank at real-time maximum accepted", req: validCOL(bank("821"), amount("500000000")), set: sRTPhone, channel: rules.ChannelRealTime},
		{name: "8 COL group E bank above real-time maximum refused", req: validCOL(bank("821"), amount("500000100")), set: sRTPhone, errs: []wantErr{{rules.CodeAboveMaximum, fAmount}}},

		// ---------------- Colombia: wallets 507 and 551 (spec 2.4, 8) ----------------
		{name: "8 COL wallet 507 cellphone accepted", req: validCOL(colWallet507), set: sRTPhone, channel: rules.ChannelRealTime, bankCode: "507"},
		{name: "8 COL wallet 551 savings accepted", req: validCOL(colWallet507, bank("551"), atype("2")), channel: rules.ChannelBatch, bankCode: "551"},
		{name: "8 COL wallet 507 minimum 5,000 accepted", req: validCOL(colWallet507, amount("500000")), channel: rules.ChannelBatch},
		{name: "8 COL wallet 507 below 5,000 refused", req: validCOL(colWallet507, amount("499900")), errs: []wantErr{{rules.CodeBelowMinimum, fAmount}}},
		{name: "8 COL wallet 551 maximum 10,000,000 accepted", req: validCOL(colWallet507, bank("551"), amount("1000000000")), set: sRTPhone, channel: rules.ChannelBatch},
		{name: "8 COL wallet 551 above 10,000,000 refused", req: validCOL(colWallet507, bank("551"), amount("1000000100")), errs: []wantErr{{rules.CodeAboveMaximum, fAmount}}},
		{name: "8 COL wallet 507 accountType 1 refused", req: validCOL(colWallet507, atype("1")), errs: []wantErr{{rules.CodeCOLWallet507Type, fType}}},
		{name: "8 COL wallet 507 cash accountType goes the cash way", req: validCOL(colWallet507, atype("3")), set: sCash, errs: []wantErr{{rules.CodeCashBankCode, fBank}}},
		{name: "2.4 COL wallet 507 account is a cellphone number", req: validCOL(colWallet507, atype("2"), acct("12345678901")), errs: []wantErr{{rules.CodeCOL507Length, fNumber}}},
		{name: "2.4 COL wallet 507 takes document type 2", req: validCOL(colWallet507, doc(2, "123456")), channel: rules.ChannelBatch},
		{name: "2.4 COL wallet 507 takes document type 4", req: validCOL(colWallet507, doc(4, "1000123456")), channel: rules.ChannelBatch},
		{name: "2.4 COL wallet 551 takes document type 8 (spec wins over 1521)", req: validCOL(colWallet507, bank("551"), doc(8, "1234567890")), channel: rules.ChannelBatch},
		{name: "2.4 COL wallet 507 refuses document type 3 (1521)", req: validCOL(colWallet507, doc(3, "12345678")), errs: []wantErr{{rules.CodeCOLWalletDocType, fDocType}}},
		{name: "2.4 COL wallet 551 refuses document type 5", req: validCOL(colWallet507, bank("551"), doc(5, "900123456")), errs: []wantErr{{rules.CodeCOLWalletDocType, fDocType}}},

		// ---------------- Colombia: Bre-B key (spec 2.4, 8) ----------------
		{name: "8 COL Bre-B key alias accepted", req: validCOL(colKey), set: sKey, channel: rules.ChannelRealTimeKey, accountType: 5},
		{name: "8 COL Bre-B key needs the realTimeKey setting", req: validCOL(colKey), set: sRTPhone, errs: []wantErr{{rules.CodeNotEnabled, fType}}},
		{name: "2.4 COL Bre-B key needs no bankCode", req: validCOL(colKey, bank("")), set: sKey, channel: rules.ChannelRealTimeKey},
		{name: "2.4 COL Bre-B key with a key bank accepted", req: validCOL(colKey, bank("012")), set: sKey, channel: rules.ChannelRealTimeKey, bankCode: "012"},
		{name: "2.4 COL Bre-B key at group F bank 900 accepted", req: validCOL(colKey, bank("900")), set: sKey, channel: rules.ChannelRealTimeKey},
		{name: "8 COL gap: Bre-B key at wallet 507 refused, a wallet takes accountType 2 or 4 (1505)", req: validCOL(colKey, bank("507"), doc(5, "900123456")), set: sKey, errs: []wantErr{{rules.CodeCOLWallet507Type, fType}}},
		{name: "2.4 COL Bre-B key at a bank without the key flag refused", req: validCOL(colKey, bank("040")), set: sKey, errs: []wantErr{{rules.CodeNoChannel, fBank}}},
		{name: "2.4 COL Bre-B key at an unknown bank refused", req: validCOL(colKey, bank("999")), set: sKey, errs: []wantErr{{rules.CodeBankCode, fBank}}},
		{name: "2.4 COL Bre-B key must be carried in accountNumber", req: validCOL(colKey, acct("")), set: sKey, errs: []wantErr{{rules.CodeAccountNumRequired, fNumber}}},
		{name: "2.4 COL Bre-B key cellphone accepted", req: validCOL(colKey, acct("3001234567")), set: sKey, channel: rules.ChannelRealTimeKey},
		{name: "2.4 COL Bre-B key cellphone with +57 accepted", req: validCOL(colKey, acct("+573001234567")), set: sKey, channel: rules.ChannelRealTimeKey},
		{name: "2.4 COL Bre-B key +57 with a non-cellphone refused", req: validCOL(colKey, acct("+5712345")), set: sKey, errs: []wantErr{{rules.CodeBreBKey, fNumber}}},
		{name: "2.4 COL Bre-B key national ID accepted", req: validCOL(colKey, acct("1020304050")), set: sKey, channel: rules.ChannelRealTimeKey},
		{name: "2.4 COL Bre-B key email accepted", req: validCOL(colKey, acct("juan.perez@gmail.com")), set: sKey, channel: rules.ChannelRealTimeKey},
		{name: "2.4 COL Bre-B key malformed email refused", req: validCOL(colKey, acct("juan@perez")), set: sKey, errs: []wantErr{{rules.CodeBreBKey, fNumber}}},
		{name: "2.4 COL Bre-B key of 5 characters accepted", req: validCOL(colKey, acct("@abcd")), set: sKey, channel: rules.ChannelRealTimeKey},
		{name: "2.4 COL Bre-B key of 4 characters refused (1530)", req: validCOL(colKey, acct("@abc")), set: sKey, errs: []wantErr{{rules.CodeBreBKeyLength, fNumber}}},
		{name: "2.4 COL Bre-B key of 100 characters accepted", req: validCOL(colKey, acct("@"+repeat("a", 99))), set: sKey, channel: rules.ChannelRealTimeKey},
		{name: "2.4 COL Bre-B key of 101 characters refused (1530)", req: validCOL(colKey, acct("@"+repeat("a", 100))), set: sKey, errs: []wantErr{{rules.CodeBreBKeyLength, fNumber}}},
		{name: "2.4 COL Bre-B alias with a dot refused", req: validCOL(colKey, acct("@juan.perez")), set: sKey, errs: []wantErr{{rules.CodeBreBKey, fNumber}}},
		{name: "2.4 COL Bre-B key without @ or digits refused", req: validCOL(colKey, acct("juanperez")), set: sKey, errs: []wantErr{{rules.CodeBreBKey, fNumber}}},
		{name: "8 COL Bre-B key maximum 12,110,000 accepted", req: validCOL(colKey, amount("1211000000")), set: sKey, channel: rules.ChannelRealTimeKey},
		{name: "8 COL Bre-B key above 12,110,000 refused", req: validCOL(colKey, amount("1211000100")), set: sKey, errs: []wantErr{{rules.CodeAboveMaximum, fAmount}}},
		{name: "8 COL Bre-B key minimum 1,000 accepted", req: validCOL(colKey, amount("100000")), set: sKey, channel: rules.ChannelRealTimeKey},
		{name: "8 COL Bre-B key below 1,000 refused", req: validCOL(colKey, amount("99900")), set: sKey, errs: []wantErr{{rules.CodeBelowMinimum, fAmount}}},

		// ---------------- Colombia: cash (spec 2.4, 8) ----------------
		{name: "8 COL cash without expirationDate is claimable 7 days", req: validCOL(colCash), set: sCash, channel: rules.ChannelCash, accountType: 3, bankCode: "099", claimUntil: claimDay(2026, 11, 28)},
		{name: "8 COL cash needs the cash setting", req: validCOL(colCash), set: allBut(func(s *rules.Settings) { s.CashPayouts = false }), errs: []wantErr{{rules.CodeNotEnabled, fType}}},
		{name: "8 COL cash needs beneficiary.email", req: validCOL(colCash, email("")), set: sCash, errs: []wantErr{{rules.CodeEmailRequired, fEmail}}},
		{name: "2.4 COL cash needs bankCode", req: validCOL(colCash, bank("")), set: sCash, errs: []wantErr{{rules.CodeBankCodeRequired, fBank}}},
		{name: "2.4 COL cash uses bank 099, not 001", req: validCOL(colCash, bank("001")), set: sCash, errs: []wantErr{{rules.CodeCashBankCode, fBank}}},
		{name: "2.4 COL cash accountNumber optional but allowed", req: validCOL(colCash, acct("123")), set: sCash, channel: rules.ChannelCash},
		{name: "8 COL cash minimum 20,000 accepted", req: validCOL(colCash, amount("2000000")), set: sCash, channel: rules.ChannelCash},
		{name: "8 COL cash below 20,000 refused (1518)", req: validCOL(colCash, amount("1999900")), set: sCash, errs: []wantErr{{rules.CodeCashBelowMin, fAmount}}},
		{name: "8 COL cash maximum 1,000,000 accepted", req: validCOL(colCash, amount("100000000")), set: sCash, channel: rules.ChannelCash},
		{name: "8 COL cash above 1,000,000 refused (1515)", req: validCOL(colCash, amount("100000100")), set: sCash, errs: []wantErr{{rules.CodeCashAboveMax, fAmount}}},
		{name: "8 COL cash expirationDate tomorrow accepted", req: validCOL(colCash, expDate("2026-11-22")), set: sCash, channel: rules.ChannelCash, claimUntil: claimDay(2026, 11, 22)},
		{name: "8 COL cash expirationDate 7 days ahead accepted", req: validCOL(colCash, expDate("2026-11-28")), set: sCash, channel: rules.ChannelCash, claimUntil: claimDay(2026, 11, 28)},
		{name: "8 COL cash expirationDate 8 days ahead refused", req: validCOL(colCash, expDate("2026-11-29")), set: sCash, errs: []wantErr{{rules.CodeCashExpiration, fExpDate}}},
		{name: "8 COL cash expirationDate today refused", req: validCOL(colCash, expDate("2026-11-21")), set: sCash, errs: []wantErr{{rules.CodeCashExpiration, fExpDate}}},
		{name: "8 COL cash expirationDate yesterday refused", req: validCOL(colCash, expDate("2026-11-20")), set: sCash, errs: []wantErr{{rules.CodeCashExpiration, fExpDate}}},
		{name: "8 COL cash expirationDate last month refused", req: validCOL(colCash, expDate("2026-10-30")), set: sCash, errs: []wantErr{{rules.CodeCashExpiration, fExpDate}}},
		{name: "8 COL cash expirationDate null means 7 days", req: validCOL(colCash), raw: setPath(nil, "destination", "bankAccount", "expirationDate"), set: sCash, channel: rules.ChannelCash, claimUntil: claimDay(2026, 11, 28)},
		// 22:00 on the 21st in Colombia is 03:00 on the 22nd in UTC: the days are Colombia's.
		{name: "2.3 COL cash dates are in UTC-5: UTC's today is Colombia's tomorrow", req: validCOL(colCash, expDate("2026-11-22")), set: sCash, now: time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC), channel: rules.ChannelCash, claimUntil: claimDay(2026, 11, 22)},
		{name: "2.3 COL cash dates are in UTC-5: 7 days counted from Colombia's today", req: validCOL(colCash, expDate("2026-11-29")), set: sCash, now: time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC), errs: []wantErr{{rules.CodeCashExpiration, fExpDate}}},
		{name: "2.3 COL cash dates are in UTC-5: after 05:00 UTC the day has turned", req: validCOL(colCash, expDate("2026-11-22")), set: sCash, now: time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC), errs: []wantErr{{rules.CodeCashExpiration, fExpDate}}},

		// ---------------- Colombia: endpoint and several errors ----------------
		{name: "4.2 COL on the card endpoint refused", req: validCOL(), set: sAll, ep: rules.EndpointCard, errs: []wantErr{{rules.CodeCountryNotSupported, "country"}}},
		{name: "3 COL every violation is reported together", req: validCOL(currency("USD"), amount("99950"), email("x@example.com"), doc(1, "12A"), bank("041")), set: sPSP,
			errs: []wantErr{{rules.CodeCurrencyNotAllowed, fCurrency}, {rules.CodeCOPDecimals, fAmount}, {rules.CodeEmailDummy, fEmail},
				{rules.CodeFieldRequired, fSub}, {rules.CodeDocumentNotNumeric, fDocNum}, {rules.CodeBankCode, fBank}}},

		// ---------------- Peru: amount, currency (spec 2.5) ----------------
		{name: "2.5 PER valid bank account without cci is batch", req: validPER(), channel: rules.ChannelBatch, accountType: 2, bankCode: "002"},
		{name: "2.5 PER currency USD accepted", req: validPER(currency("USD"), acct(perUSDAcct)), channel: rules.ChannelBatch},
		{name: "2.5 PER currency EUR refused", req: validPER(currency("EUR")), errs: []wantErr{{rules.CodeCurrencyNotAllowed, fCurrency}}},
		{name: "2.5 PER currency COP refused", req: validPER(currency("COP")), errs: []wantErr{{rules.CodeCurrencyNotAllowed, fCurrency}}},
		{name: "2.5 PER amount need not end in 00", req: validPER(amount("100050")), channel: rules.ChannelBatch},
		{name: "2.5 PER amount is an integer: fraction refused", req: validPER(amount("1000.50")), errs: []wantErr{{rules.CodeAmountNotNumeric, fAmount}}},
		{name: "2.5 PER amount of 11 digits refused (1110)", req: validPER(amount("10000000000")), errs: []wantErr{{rules.CodeAmountLength, fAmount}}},

		// ---------------- Peru: email (spec 2.2, 2.5) ----------------
		{name: "2.5 PER email of 50 characters accepted", req: validPER(email(repeat("a", 40) + "@gmail.com")), channel: rules.ChannelBatch},
		{name: "2.5 PER email of 51 characters refused", req: validPER(email(repeat("a", 41) + "@gmail.com")), errs: []wantErr{{rules.CodeEmailTooLong, fEmail}}},
		{name: "2.2 PER dummy email sincorreo refused", req: validPER(email("sincorreo@gmail.com")), errs: []wantErr{{rules.CodeEmailDummy, fEmail}}},
		{name: "2.2 PER dummy email example.net refused", req: validPER(email("ana@example.net")), errs: []wantErr{{rules.CodeEmailDummy, fEmail}}},

		// ---------------- Peru: documents (spec 2.5) ----------------
		{name: "2.5 DNI is 8 digits", req: validPER(doc(1, "12345678")), channel: rules.ChannelBatch},
		{name: "2.5 DNI of 7 digits refused", req: validPER(doc(1, "1234567")), errs: []wantErr{{rules.CodeDNILength, fDocNum}}},
		{name: "2.5 DNI of 9 digits refused", req: validPER(doc(1, "123456789")), errs: []wantErr{{rules.CodeDNILength, fDocNum}}},
		{name: "2.5 DNI with a letter refused (1106)", req: validPER(doc(1, "1234567A")), errs: []wantErr{{rules.CodeDocumentNotNumeric, fDocNum}}},
		{name: "2.5 PAS of 7 accepted", req: validPER(doc(2, "1234567")), channel: rules.ChannelBatch},
		{name: "2.5 gap: PAS with letters refused, the table gives digits (1106)", req: validPER(doc(2, "AB1234567890")), errs: []wantErr{{rules.CodeDocumentNotNumeric, fDocNum}}},
		{name: "2.5 PAS of 6 refused", req: validPER(doc(2, "123456")), errs: []wantErr{{rules.CodePASLength, fDocNum}}},
		{name: "2.5 PAS of 13 refused", req: validPER(doc(2, "1234567890123")), errs: []wantErr{{rules.CodePASLength, fDocNum}}},
		{name: "2.5 CE of 8 digits accepted", req: validPER(doc(3, "12345678")), channel: rules.ChannelBatch},
		{name: "2.5 CE of 12 digits accepted", req: validPER(doc(3, "123456789012")), channel: rules.ChannelBatch},
		{name: "2.5 CE of 7 digits refused", req: validPER(doc(3, "1234567")), errs: []wantErr{{rules.CodeCELength, fDocNum}}},
		{name: "2.5 CE of 13 digits refused", req: validPER(doc(3, "1234567890123")), errs: []wantErr{{rules.CodeCELength, fDocNum}}},
		{name: "2.5 RUC is 11 digits", req: validPER(doc(4, "20123456789")), channel: rules.ChannelBatch},
		{name: "2.5 RUC of 10 digits refused", req: validPER(doc(4, "2012345678")), errs: []wantErr{{rules.CodeRUCLength, fDocNum}}},
		{name: "2.5 RUC of 12 digits refused", req: validPER(doc(4, "201234567890")), errs: []wantErr{{rules.CodeRUCLength, fDocNum}}},
		{name: "2.5 PER document type 5 unknown", req: validPER(doc(5, "12345678")), errs: []wantErr{{rules.CodeDocumentType, fDocType}}},
		{name: "2.5 RUC refused at bank 004", req: validPER(bank("004"), atype(""), acct("1234567890"), doc(4, "20123456789")), errs: []wantErr{{rules.CodeRUCAtBank004, fDocType}}},
		{name: "2.5 RUC refused at bank 004 read from the cci (prefix 009)", req: validPER(perCCIOnly, cci("00912345678901234567"), doc(4, "20123456789")), errs: []wantErr{{rules.CodeRUCAtBank004, fDocType}}},
		{name: "2.5 RUC accepted at bank 003", req: validPER(bank("003"), atype(""), acct("1234567890123"), doc(4, "20123456789")), channel: rules.ChannelBatch},
		{name: "2.5 DNI accepted at bank 004", req: validPER(bank("004"), atype(""), acct("1234567890")), channel: rules.ChannelBatch, accountType: 2},

		// ---------------- Peru: account types (spec 2.5, 8) ----------------
		{name: "2.5 PER accountType 1 current at 002 is 13 digits", req: validPER(atype("1"), acct("1941234567012")), channel: rules.ChannelBatch, accountType: 1},
		{name: "2.5 PER accountType as a JSON number accepted", req: validPER(), raw: setPath(2, "destination", "bankAccount", "accountType"), channel: rules.ChannelBatch, accountType: 2},
		{name: "2.5 PER accountType 3 refused", req: validPER(atype("3")), errs: []wantErr{{rules.CodeAccountType, fType}}},
		{name: "2.5 PER accountType text form refused", req: validPER(atype("SAVINGS")), errs: []wantErr{{rules.CodeAccountType, fType}}},
		{name: "4.2 PER card accountType 5 on POST /payouts refused", req: validPER(atype("5")), set: sAll, errs: []wantErr{{rules.CodeCardEndpointOnly, fType}}},
		{name: "8 PER rule 1: accountType omitted at 003 is savings", req: validPER(bank("003"), atype(""), acct("1234567890123")), channel: rules.ChannelBatch, accountType: 2},
		{name: "8 PER rule 1: accountType omitted at 004 is savings", req: validPER(bank("004"), atype(""), acct("1234567890")), channel: rules.ChannelBatch, accountType: 2},
		{name: "2.5 PER accountType omitted at 002 with 13 digits is current", req: validPER(atype(""), acct("1941234567012")), channel: rules.ChannelBatch, accountType: 1},
		{name: "2.5 PER accountType omitted at 002 with 14 digits is savings", req: validPER(atype("")), channel: rules.ChannelBatch, accountType: 2},
		{name: "2.5 PER accountType omitted elsewhere is savings", req: validPER(bank("005"), atype(""), acct(repeat("0", 17)+"005")), channel: rules.ChannelBatch, accountType: 2},

		// ---------------- Peru: cci, bankCode, accountNumber presence (spec 2.5) ----------------
		{name: "2.5 PER cci alone is enough, bank read from it", req: validPER(perCCIOnly), channel: rules.ChannelRealTime, bankCode: "002", accountType: 2},
		{name: "2.5 PER cci with bankCode and accountNumber accepted", req: validPER(cci("00219412345678901253")), channel: rules.ChannelRealTime},
		{name: "2.5 PER cci required when bankCode and accountNumber are absent", req: validPER(bank(""), acct("")), errs: []wantErr{{rules.CodeCCIRequired, fCCI}}},
		{name: "2.5 PER bankCode required when cci is absent", req: validPER(bank("")), errs: []wantErr{{rules.CodeBankCodeRequired, fBank}}},
		{name: "2.5 PER accountNumber required when cci is absent", req: validPER(acct("")), errs: []wantErr{{rules.CodeAccountNumRequired, fNumber}}},
		{name: "2.5 PER accountNumber optional with cci", req: validPER(acct(""), cci("00219412345678901253")), channel: rules.ChannelRealTime},
		{name: "2.5 PER cci of 19 digits refused", req: validPER(perCCIOnly, cci(repeat("0", 19))), errs: []wantErr{{rules.CodeCCILength, fCCI}}},
		{name: "2.5 PER cci of 21 digits refused", req: validPER(perCCIOnly, cci("002"+repeat("1", 18))), errs: []wantErr{{rules.CodeCCILength, fCCI}}},
		{name: "2.5 PER cci with letters refused (1210)", req: validPER(cci("0021941234567890125A")), errs: []wantErr{{rules.CodeCCINotNumeric, fCCI}}},
		{name: "2.5 PER cci of an unknown bank refused (1225)", req: validPER(perCCIOnly, cci("999"+repeat("1", 17))), errs: []wantErr{{rules.CodeCCIUnknownBank, fCCI}}},
		{name: "2.5 PER cci of a retired bank refused", req: validPER(perCCIOnly, cci("026"+repeat("1", 17))), errs: []wantErr{{rules.CodeBankCode, fCCI}}},
		{name: "2.5 PER cci of another bank than bankCode 002 refused (1216)", req: validPER(atype(""), cci("003"+repeat("1", 17))), errs: []wantErr{{rules.CodeCCI002, fCCI}}},

		// ---------------- Peru: bank codes (spec 2.5 bank table) ----------------
		{name: "2.5 PER unknown bank code refused", req: validPER(bank("999")), errs: []wantErr{{rules.CodeBankCode, fBank}}},
		{name: "2.5 PER 4-digit bank code refused", req: validPER(bank("1559")), errs: []wantErr{{rules.CodeBankCode, fBank}}},
		{name: "2.5 PER retired bank 026 refused", req: validPER(bank("026")), errs: []wantErr{{rules.CodeBankCode, fBank}}},
		{name: "2.5 PER retired bank 049 refused", req: validPER(bank("049")), errs: []wantErr{{rules.CodeBankCode, fBank}}},

		// ---------------- Peru: account number by bank (spec 2.5) ----------------
		{name: "2.5 PER bank 001 account of 18 digits accepted", req: validPER(bank("001"), acct(repeat("1", 18))), channel: rules.ChannelBatch},
		{name: "2.5 PER bank 001 account of 20 digits with 00 at 9-10 accepted (1244)", req: validPER(bank("001"), acct("11111111001111111111")), channel: rules.ChannelBatch},
		{name: "2.5 PER bank 001 account of 19 digits refused", req: validPER(bank("001"), acct(repeat("1", 19))), errs: []wantErr{{rules.CodePER001Account, fNumber}}},
		{name: "2.5 PER bank 002 savings of 13 digits refused", req: validPER(acct("1941234567890")), errs: []wantErr{{rules.CodePER002Savings, fNumber}}},
		{name: "2.5 PER bank 002 current of 14 digits refused", req: validPER(atype("1")), errs: []wantErr{{rules.CodePER002Current, fNumber}}},
		{name: "2.5 PER bank 003 account of 13 digits accepted", req: validPER(bank("003"), acct("1234567890123")), channel: rules.ChannelBatch},
		{name: "2.5 PER bank 003 account of 12 digits refused", req: validPER(bank("003"), acct("123456789012")), errs: []wantErr{{rules.CodePER003Account, fNumber}}},
		{name: "2.5 PER bank 004 account of 10 digits accepted", req: validPER(bank("004"), acct("1234567890")), channel: rules.ChannelBatch},
		{name: "2.5 PER bank 004 account of 11 digits refused", req: validPER(bank("004"), acct("12345678901")), errs: []wantErr{{rules.CodePER004Account, fNumber}}},
		{name: "2.5 PER bank 004 account with letters refused", req: validPER(bank("004"), acct("12345678AB")), errs: []wantErr{{rules.CodeAccountNotNumeric, fNumber}}},
		{name: "2.5 PER other bank account is a 20-digit CCI", req: validPER(bank("011"), acct("011"+repeat("2", 17))), channel: rules.ChannelBatch},
		{name: "2.5 PER other bank account of 19 digits refused", req: validPER(bank("011"), acct(repeat("2", 19))), errs: []wantErr{{rules.CodeCCILength, fNumber}}},
		{name: "2.5 PER wallet account of 9 digits starting with 9 accepted", req: validPER(bank("043"), acct("912345678"), cci("043"+repeat("3", 17))), channel: rules.ChannelRealTime},
		{name: "2.5 PER wallet account starting with 8 refused (1226)", req: validPER(bank("043"), acct("812345678"), cci("043"+repeat("3", 17))), errs: []wantErr{{rules.CodePERCellphone, fNumber}}},
		{name: "2.5 PER wallet account of 10 digits refused", req: validPER(bank("045"), acct("9123456789"), cci("045"+repeat("3", 17))), errs: []wantErr{{rules.CodePERCellphone, fNumber}}},

		// ---------------- Peru: channel (spec 2.5 bank table, 8 rule 2) ----------------
		{name: "8 PER rule 2: cci at a group A bank is real-time", req: validPER(bank("011"), acct(""), cci("011"+repeat("2", 17))), channel: rules.ChannelRealTime},
		{name: "8 PER rule 2: cci at a group B bank is batch", req: validPER(bank("008"), acct(""), cci("008"+repeat("2", 17))), channel: rules.ChannelBatch},
		{name: "8 PER rule 2: group B bank without cci is batch", req: validPER(bank("027"), acct("027"+repeat("2", 17))), channel: rules.ChannelBatch},
		{name: "8 PER rule 2: cci at a group C bank is real-time", req: validPER(bank("030"), acct(""), cci("030"+repeat("2", 17))), channel: rules.ChannelRealTime},
		{name: "8 PER rule 2: group C bank without cci refused", req: validPER(bank("030"), acct("030"+repeat("2", 17))), errs: []wantErr{{rules.CodeRealTimeNeedsCCI, fCCI}}},
		{name: "8 PER rule 2: wallet savings without cci refused", req: validPER(bank("043"), acct("912345678")), errs: []wantErr{{rules.CodeRealTimeNeedsCCI, fCCI}}},

		// ---------------- Peru: cellphone (spec 2.5, 8) ----------------
		{name: "8 PER cellphone at bank 002 is real-time", req: validPER(perPhone), channel: rules.ChannelRealTime, accountType: 4},
		{name: "8 PER cellphone at wallet 043 is real-time", req: validPER(perPhone, bank("043")), channel: rules.ChannelRealTime},
		{name: "8 PER gap: cellphone at a group B bank refused, not batch (spec 8 rule 2)", req: validPER(perPhone, bank("014")), errs: []wantErr{{rules.CodeNoChannel, fBank}}},
		{name: "2.5 PER cellphone needs bankCode even with cci (1229)", req: validPER(perPhone, bank(""), cci("00219412345678901253")), errs: []wantErr{{rules.CodePERCellphoneBank, fBank}}},
		{name: "2.5 PER cellphone needs the number (1242)", req: validPER(perPhone, acct("")), errs: []wantErr{{rules.CodePERCellphoneAccount, fNumber}}},
		{name: "2.5 PER cellphone must start with 9", req: validPER(perPhone, acct("887654321")), errs: []wantErr{{rules.CodePERCellphone, fNumber}}},
		{name: "2.5 PER cellphone must have 9 digits", req: validPER(perPhone, acct("98765432")), errs: []wantErr{{rules.CodePERCellphone, fNumber}}},
		{name: "8 PER cellphone only in PEN (1228)", req: validPER(perPhone, currency("USD")), errs: []wantErr{{rules.CodePERCellphonePEN, fCurrency}}},
		{name: "8 PER cellphone maximum 500 accepted", req: validPER(perPhone, amount("50000")), channel: rules.ChannelRealTime},
		{name: "8 PER cellphone above 500 refused (1227)", req: validPER(perPhone, amount("50001")), errs: []wantErr{{rules.CodePERCellphoneMax, fAmount}}},
		{name: "8 PER cellphone wallet 037 maximum 3,000 accepted", req: validPER(perWallet037, amount("300000")), channel: rules.ChannelRealTime, bankCode: "037"},
		{name: "8 PER cellphone wallet 037 above 3,000 refused (1224)", req: validPER(perWallet037, amount("300001")), errs: []wantErr{{rules.CodePERAboveLimit, fAmount}}},
		{name: "8 PER cellphone wallet 040 maximum is 500 (1227)", req: validPER(perPhone, bank("040"), amount("50001")), errs: []wantErr{{rules.CodePERCellphoneMax, fAmount}}},

		// ---------------- Peru: wallet 037 (spec 2.5) ----------------
		{name: "2.5 PER wallet 037 needs description", req: validPER(perWallet037, desc("")), errs: []wantErr{{rules.CodeFieldRequired, fDesc}}},
		{name: "2.5 PER wallet 037 needs subMerchantInfo.name", req: validPER(perWallet037, func(r *rules.PayoutRequest) { r.SubMerchantInfo = nil }), errs: []wantErr{{rules.CodeFieldRequired, fSub + ".name"}}},
		{name: "2.5 PER wallet 037 for a PSP reports subMerchantInfo once", req: validPER(perWallet037, func(r *rules.PayoutRequest) { r.SubMerchantInfo = nil }), set: sPSP, errs: []wantErr{{rules.CodeFieldRequired, fSub}}},
		{name: "2.5 PER wallet 037 for a PSP with name only", req: validPER(perWallet037), set: sPSP, errs: []wantErr{{rules.CodeFieldRequired, fSub + ".code"}, {rules.CodeFieldRequired, fSub + ".url"}}},
		{name: "2.5 PER other wallets need no description", req: validPER(perPhone, bank("045")), channel: rules.ChannelRealTime},

		// ---------------- Peru: other account types' maximum (spec 8) ----------------
		{name: "8 PER other account types maximum 30,000 PEN accepted", req: validPER(amount("3000000")), channel: rules.ChannelBatch},
		{name: "8 PER other account types above 30,000 PEN refused (1224)", req: validPER(amount("3000001")), errs: []wantErr{{rules.CodePERAboveLimit, fAmount}}},
		{name: "8 PER USD maximum 8,000 accepted", req: validPER(currency("USD"), acct(perUSDAcct), amount("800000")), channel: rules.ChannelBatch},
		{name: "8 PER USD above 8,000 refused (1224)", req: validPER(currency("USD"), acct(perUSDAcct), amount("800001")), errs: []wantErr{{rules.CodePERAboveLimit, fAmount}}},

		// ---------------- Peru: PSP (spec 2.5) ----------------
		{name: "2.5 PER PSP merchant needs subMerchantInfo", req: validPER(), set: sPSP, errs: []wantErr{{rules.CodeFieldRequired, fSub}}},
		{name: "2.5 PER PSP merchant with subMerchantInfo accepted", req: validPER(sub("S1", "Tienda", "https://tienda.pe")), set: sPSP, channel: rules.ChannelBatch},

		// ---------------- Peru: card endpoint (spec 4.2, 8 rule 3) ----------------
		{name: "4.2 PER card accepted with a 15-minute default session", req: validPER(perCard), set: sCard, ep: rules.EndpointCard, channel: rules.ChannelCard, accountType: 5, expMinutes: 15},
		{name: "4.2 PER card needs the cardPayouts setting (1123)", req: validPER(perCard), set: allBut(func(s *rules.Settings) { s.CardPayouts = false }), ep: rules.EndpointCard, errs: []wantErr{{rules.CodeCardNotEnabled, fType}}},
		{name: "4.2 PER card endpoint needs accountType 5", req: validPER(perCard, atype("2")), set: sCard, ep: rules.EndpointCard, errs: []wantErr{{rules.CodeAccountType, fType}}},
		{name: "4.2 PER card endpoint refuses an omitted accountType", req: validPER(perCard, atype("")), set: sCard, ep: rules.EndpointCard, errs: []wantErr{{rules.CodeAccountType, fType}}},
		{name: "4.2 PER card accountType 5 as a JSON number accepted", req: validPER(perCard), raw: setPath(5, "destination", "bankAccount", "accountType"), set: sCard, ep: rules.EndpointCard, channel: rules.ChannelCard},
		{name: "4.2 PER card needs the cardholder's email", req: validPER(perCard, email("")), set: sCard, ep: rules.EndpointCard, errs: []wantErr{{rules.CodeEmailRequired, fEmail}}},
		{name: "4.2 PER card needs timeoutUrl", req: validPER(perCard, timeoutURL("")), set: sCard, ep: rules.EndpointCard, errs: []wantErr{{rules.CodeTimeoutURLRequired, "timeoutUrl"}}},
		{name: "2.1 PER card takes the TimeoutURL spelling", req: validPER(perCard, timeoutURL("")), raw: setPath("https://tienda.pe/t", "TimeoutURL"), set: sCard, ep: rules.EndpointCard, channel: rules.ChannelCard},
		{name: "4.2 PER card merchantLogo https accepted", req: validPER(perCard, logo("https://tienda.pe/logo.png")), set: sCard, ep: rules.EndpointCard, channel: rules.ChannelCard},
		{name: "4.2 PER card merchantLogo over http refused", req: validPER(perCard, logo("http://tienda.pe/logo.png")), set: sCard, ep: rules.EndpointCard, errs: []wantErr{{rules.CodeLogoNotHTTPS, "merchantLogo"}}},
		{name: "8 PER rule 3: expirationTime 5 accepted", req: validPER(perCard, expTime("5")), set: sCard, ep: rules.EndpointCard, channel: rules.ChannelCard, expMinutes: 5},
		{name: "8 PER rule 3: expirationTime 30 accepted", req: validPER(perCard, expTime("30")), set: sCard, ep: rules.EndpointCard, channel: rules.ChannelCard, expMinutes: 30},
		{name: "8 PER rule 3: expirationTime 4 refused", req: validPER(perCard, expTime("4")), set: sCard, ep: rules.EndpointCard, errs: []wantErr{{rules.CodeExpirationTime, "expirationTime"}}},
		{name: "8 PER rule 3: expirationTime 31 refused", req: validPER(perCard, expTime("31")), set: sCard, ep: rules.EndpointCard, errs: []wantErr{{rules.CodeExpirationTime, "expirationTime"}}},
		{name: "8 PER rule 3: expirationTime as a JSON number accepted", req: validPER(perCard), raw: setPath(json.Number("20"), "expirationTime"), set: sCard, ep: rules.EndpointCard, channel: rules.ChannelCard, expMinutes: 20},
		{name: "8 PER rule 3: expirationTime with a fraction refused", req: validPER(perCard), raw: setPath(json.Number("7.5"), "expirationTime"), set: sCard, ep: rules.EndpointCard, errs: []wantErr{{rules.CodeExpirationTime, "expirationTime"}}},
		{name: "8 PER rule 3: expirationTime not a number refused", req: validPER(perCard, expTime("ten")), set: sCard, ep: rules.EndpointCard, errs: []wantErr{{rules.CodeExpirationTime, "expirationTime"}}},
		{name: "4.2 PER card bankCode, cci and accountNumber optional but checked", req: validPER(perCard, bank("002"), cci("00219412345678901253"), acct("anything")), set: sCard, ep: rules.EndpointCard, channel: rules.ChannelCard, bankCode: "002"},
		{name: "4.2 PER card retired bankCode refused", req: validPER(perCard, bank("033")), set: sCard, ep: rules.EndpointCard, errs: []wantErr{{rules.CodeBankCode, fBank}}},
		{name: "4.2 PER card malformed cci refused", req: validPER(perCard, cci("123")), set: sCard, ep: rules.EndpointCard, errs: []wantErr{{rules.CodeCCILength, fCCI}}},
		{name: "2.5 PER card RUC refused at bank 004", req: validPER(perCard, bank("004"), doc(4, "20123456789")), set: sCard, ep: rules.EndpointCard, errs: []wantErr{{rules.CodeRUCAtBank004, fDocType}}},
		{name: "8 PER card maximum 30,000 PEN accepted", req: validPER(perCard, amount("3000000")), set: sCard, ep: rules.EndpointCard, channel: rules.ChannelCard},
		{name: "8 PER card above 30,000 PEN refused", req: validPER(perCard, amount("3000001")), set: sCard, ep: rules.EndpointCard, errs: []wantErr{{rules.CodePERAboveLimit, fAmount}}},
		{name: "8 PER card USD above 8,000 refused", req: validPER(perCard, currency("USD"), amount("800001")), set: sCard, ep: rules.EndpointCard, errs: []wantErr{{rules.CodePERAboveLimit, fAmount}}},
		{name: "3 PER card every violation is reported together", req: validPER(perCard, email(""), timeoutURL(""), expTime("60"), logo("http://x.pe/l.png")), set: sNone, ep: rules.EndpointCard,
			errs: []wantErr{{rules.CodeCardNotEnabled, fType}, {rules.CodeEmailRequired, fEmail}, {rules.CodeTimeoutURLRequired, "timeoutUrl"},
				{rules.CodeLogoNotHTTPS, "merchantLogo"}, {rules.CodeExpirationTime, "expirationTime"}}},
		{name: "3 PER every violation is reported together", req: validPER(currency("EUR"), doc(1, "123"), email("test@gmail.com"), bank("026")),
			errs: []wantErr{{rules.CodeCurrencyNotAllowed, fCurrency}, {rules.CodeDNILength, fDocNum}, {rules.CodeEmailDummy, fEmail}, {rules.CodeBankCode, fBank}}},
	}
}

// setPath returns a raw edit that sets the value at a JSON path (nil sets JSON null).
func setPath(v any, path ...string) func(map[string]any) {
	return func(m map[string]any) {
		for _, k := range path[:len(path)-1] {
			m = m[k].(map[string]any)
		}
		m[path[len(path)-1]] = v
	}
}

// rowBody marshals a row's request and applies its raw edit.
func rowBody(t *testing.T, r countryRow) []byte {
	t.Helper()
	b, err := json.Marshal(r.req)
	if err != nil {
		t.Fatal(err)
	}
	if r.raw == nil {
		return b
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	r.raw(m)
	if b, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	return b
}

func TestCountryRules(t *testing.T) {
	seen := map[string]bool{}
	for _, tc := range append(countryRows(), publishedRows()...) {
		if seen[tc.name] {
			t.Errorf("two rows are named %q", tc.name)
		}
		seen[tc.name] = true
		t.Run(tc.name, func(t *testing.T) {
			req, err := rules.DecodePayoutRequest(rowBody(t, tc))
			if err != nil {
				t.Fatalf("DecodePayoutRequest: %v", err)
			}
			at := tc.now
			if at.IsZero() {
				at = checkNow
			}
			m := &rules.Merchant{ID: "1", Name: "Tienda", Settings: tc.set}
			route, err := rules.Check(req, m, at, tc.ep)
			if tc.errs == nil {
				if err != nil {
					t.Fatalf("Check: got %v, want acceptance", err)
				}
				checkRoute(t, tc, route, req)
				return
			}
			var p *rules.Problem
			if !errors.As(err, &p) {
				t.Fatalf("Check: got %v (%T), want a *rules.Problem", err, err)
			}
			if p.Kind != rules.KindRejected {
				t.Errorf("Problem.Kind = %v, want KindRejected", p.Kind)
			}
			t.Log(p)
			var got, want []string
			for _, e := range p.Errors {
				if e.Kind != rules.KindRejected {
					t.Errorf("error %v has kind %v, want KindRejected", e, e.Kind)
				}
				if e.Message == "" {
					t.Errorf("error %s at %s has no message", e.Code, e.Field)
				}
				got = append(got, e.Code+" "+e.Field)
			}
			for _, w := range tc.errs {
				want = append(want, w.code+" "+w.field)
			}
			sort.Strings(got)
			sort.Strings(want)
			if !slices.Equal(got, want) {
				t.Errorf("errors:\n got  %q\n want %q\n(%v)", got, want, p)
			}
		})
	}
}

func checkRoute(t *testing.T, tc countryRow, r rules.Route, req *rules.PayoutRequest) {
	t.Helper()
	if r.Channel != tc.channel {
		t.Errorf("Channel = %q, want %q", r.Channel, tc.channel)
	}
	if want, _ := req.Amount.Int64(); r.Amount != want {
		t.Errorf("Amount = %d, want %d", r.Amount, want)
	}
	if tc.accountType != 0 && r.AccountType != tc.accountType {
		t.Errorf("AccountType = %d, want %d", r.AccountType, tc.accountType)
	}
	if tc.bankCode != "" && r.BankCode != tc.bankCode {
		t.Errorf("BankCode = %q, want %q", r.BankCode, tc.bankCode)
	}
	if !tc.claimUntil.IsZero() && !r.ClaimUntil.Equal(tc.claimUntil) {
		t.Errorf("ClaimUntil = %v, want %v", r.ClaimUntil, tc.claimUntil)
	}
	if tc.channel != rules.ChannelCash && !r.ClaimUntil.IsZero() {
		t.Errorf("ClaimUntil = %v on a %s payout", r.ClaimUntil, r.Channel)
	}
	if tc.expMinutes != 0 && r.ExpirationMinutes != tc.expMinutes {
		t.Errorf("ExpirationMinutes = %d, want %d", r.ExpirationMinutes, tc.expMinutes)
	}
}

// Check with an amount the decoder never lets through (above zero).
func TestCheckAmountZero(t *testing.T) {
	for _, req := range []*rules.PayoutRequest{validCOL(amount("0")), validPER(amount("0"))} {
		_, err := rules.Check(req, &rules.Merchant{}, checkNow, rules.EndpointPayouts)
		var p *rules.Problem
		if !errors.As(err, &p) || p.Code() != rules.CodeAmountNotNumeric {
			t.Errorf("%s amount 0: got %v, want code %s", req.Country, err, rules.CodeAmountNotNumeric)
		}
	}
}

// The examples of the README: one valid request per destination kind, accepted for a
// merchant with every setting on.
func TestExamples(t *testing.T) {
	want := map[string]struct {
		ep      rules.Endpoint
		channel rules.Channel
	}{
		"col-bank-account.json":         {rules.EndpointPayouts, rules.ChannelBatch},
		"col-wallet-507.json":           {rules.EndpointPayouts, rules.ChannelRealTime},
		"col-cellphone-realtime.json":   {rules.EndpointPayouts, rules.ChannelRealTime},
		"col-breb-key.json":             {rules.EndpointPayouts, rules.ChannelRealTimeKey},
		"col-cash.json":                 {rules.EndpointPayouts, rules.ChannelCash},
		"per-bank-account.json":         {rules.EndpointPayouts, rules.ChannelBatch},
		"per-cci.json":                  {rules.EndpointPayouts, rules.ChannelRealTime},
		"per-cellphone-wallet-037.json": {rules.EndpointPayouts, rules.ChannelRealTime},
		"per-card.json":                 {rules.EndpointCard, rules.ChannelCard},
	}
	files, err := filepath.Glob(filepath.Join("testdata", "examples", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, f := range files {
		name := filepath.Base(f)
		found[name] = true
		t.Run(name, func(t *testing.T) {
			w, ok := want[name]
			if !ok {
				t.Fatalf("no expectation for example %s", name)
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			req, err := rules.DecodePayoutRequest(b)
			if err != nil {
				t.Fatalf("DecodePayoutRequest: %v", err)
			}
			r, err := rules.Check(req, &rules.Merchant{ID: "1", Settings: rules.AllSettings()}, checkNow, w.ep)
			if err != nil {
				t.Fatalf("Check: %v", err)
			}
			if r.Channel != w.channel {
				t.Errorf("Channel = %q, want %q", r.Channel, w.channel)
			}
		})
	}
	for name := range want {
		if !found[name] {
			t.Errorf("example %s is missing from testdata/examples", name)
		}
	}
}

// The bank tables of both countries (banks.go), row by row.
func TestBankTables(t *testing.T) {
	type flags struct{ key, rt, batch, retired bool }
	groups := []struct {
		country, group string
		codes          []string
		want           flags
	}{
		{"COL", "A", strings.Fields("001 002 006 007 013 019 023 032 051 052 059 061 062 063 066 069 283 292 507 551 801 808"), flags{key: true, rt: true, batch: true}},
		{"COL", "B", strings.Fields("012 047 053 058 070 289 303 805 809 819 1559 1561"), flags{key: true, batch: true}},
		{"COL", "C", strings.Fields("040 803 822"), flags{rt: true, batch: true}},
		{"COL", "D", strings.Fields("009 031 042 060 064 065 067 071 083 084 086 087 088 089 090 121 342 370 550 560 637 683 685 812 814 824 1053 1291 1558 1560"), flags{batch: true}},
		{"COL", "E", strings.Fields("820 821 823"), flags{rt: true}},
		{"COL", "F", bankCodeRange(826, 935), flags{key: true}},
		{"COL", "Retired", strings.Fields("041 099 298 1062 1063 1069 1283 1292"), flags{retired: true}},
		{"PER", "A", strings.Fields("001 002 003 004 005 006 007 011 018 019 020 021 023 024 028 032 034 047"), flags{rt: true, batch: true}},
		{"PER", "B", strings.Fields("008 014 016 017 022 027"), flags{batch: true}},
		{"PER", "C", strings.Fields("030 031 035 036 037 038 039 040 041 043 044 045 046"), flags{rt: true}},
		{"PER", "Retired", strings.Fields("026 029 033 042 048 049"), flags{retired: true}},
	}
	count := map[string]int{}
	for _, g := range groups {
		for _, c := range g.codes {
			count[g.country]++
			b, ok := rules.LookupBank(g.country, c)
			if !ok {
				t.Errorf("%s bank %s (group %s) is missing", g.country, c, g.group)
				continue
			}
			got := flags{b.KeyRealTime, b.RealTime, b.Batch, b.Retired}
			if got != g.want || b.Group != g.group {
				t.Errorf("%s bank %s: group %s %+v, want group %s %+v", g.country, c, b.Group, got, g.group, g.want)
			}
		}
	}
	for country, n := range count {
		if got := len(rules.Banks(country)); got != n {
			t.Errorf("%s has %d banks, want %d", country, got, n)
		}
	}
	if n := count["COL"]; n != 22+12+3+30+3+110+8 {
		t.Errorf("the Colombia test table has %d codes", n)
	}
	wallets := map[string][]string{"COL": {"507", "551"}, "PER": {"037", "040", "043", "045"}}
	for country, codes := range wallets {
		for _, b := range rules.Banks(country) {
			if b.Wallet != slices.Contains(codes, b.Code) {
				t.Errorf("%s bank %s: Wallet = %v", country, b.Code, b.Wallet)
			}
		}
	}
	for _, c := range []string{"825", "936", "99", "0001", ""} {
		if _, ok := rules.LookupBank("COL", c); ok {
			t.Errorf("COL bank %q should not exist", c)
		}
	}
	if _, ok := rules.LookupBank("MEX", "001"); ok {
		t.Error("MEX has no bank table")
	}
}

func bankCodeRange(from, to int) []string {
	var codes []string
	for c := from; c <= to; c++ {
		codes = append(codes, fmt.Sprintf("%03d", c))
	}
	return codes
}

// Every Code* constant of codes.go is in the Catalogue exactly once, and the Catalogue is in
// code order with nothing else in it.
func TestCatalogueHasEveryCode(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "codes.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	consts := map[string]string{} // value → name
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if !strings.HasPrefix(n.Name, "Code") || i >= len(vs.Values) {
					continue
				}
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					t.Errorf("%s is not a string literal", n.Name)
					continue
				}
				v, _ := strconv.Unquote(lit.Value)
				if other, dup := consts[v]; dup {
					t.Errorf("%s and %s are both %q", other, n.Name, v)
				}
				consts[v] = n.Name
			}
		}
	}
	if len(consts) == 0 {
		t.Fatal("no Code constants found in codes.go")
	}
	inCatalogue := map[string]int{}
	prev := 0
	for _, c := range rules.Catalogue {
		inCatalogue[c.Code]++
		n, err := strconv.Atoi(c.Code)
		if err != nil || len(c.Code) != 4 {
			t.Errorf("catalogue code %q is not 4 digits", c.Code)
		}
		if n <= prev {
			t.Errorf("catalogue code %s is out of order (after %d)", c.Code, prev)
		}
		prev = n
		if _, ok := consts[c.Code]; !ok {
			t.Errorf("catalogue code %s has no Code constant", c.Code)
		}
		if c.Meaning == "" || c.Status < 200 || c.Status > 599 {
			t.Errorf("catalogue code %s: status %d, meaning %q", c.Code, c.Status, c.Meaning)
		}
	}
	for v, name := range consts {
		if inCatalogue[v] != 1 {
			t.Errorf("%s (%s) is in the Catalogue %d times, want once", name, v, inCatalogue[v])
		}
	}
}
