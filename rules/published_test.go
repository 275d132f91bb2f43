package rules_test

import (
	"errors"
	"slices"
	"sort"
	"strings"
	"testing"

	"payouts/rules"
)

// publishedRows are the rows of the original's published COL and PER field rules
// (testdata/published-codes.txt), each named with its spec section, or "wire 5" where the
// specification is silent and the published rule applies, and with its code; pass and fail
// at the boundaries. Where the specification and the published rule disagree, the row says
// "spec wins".
func publishedRows() []countryRow {
	fAdd := "destination.bankAccount.AdittionalAccountInfo"
	col001 := all(bank("001"), atype("2"))
	return []countryRow{
		// ---------------- every country: fields (wire 5, 11xx) ----------------
		{name: "2.1 1101 country MEX is not enabled", req: validCOL(func(r *rules.PayoutRequest) { r.Country = "MEX" }), errs: []wantErr{{rules.CodeCountryNotSupported, "country"}}},
		{name: "2.4 1103 COL amount with a fraction is not numeric", req: validCOL(amount("100000.5")), errs: []wantErr{{rules.CodeAmountNotNumeric, fAmount}}},
		{name: "2.5 1103 PER amount with an exponent refused", req: validPER(amount("1e5")), errs: []wantErr{{rules.CodeAmountNotNumeric, fAmount}}},
		{name: "2.5 1110 PER amount of 10 digits passes the length rule", req: validPER(amount("9999999999")), errs: []wantErr{{rules.CodePERAboveLimit, fAmount}}},
		{name: "2.5 1105 PER document type 5 invalid", req: validPER(doc(5, "12345678")), errs: []wantErr{{rules.CodeDocumentType, fDocType}}},
		{name: "2.5 1107 PER bankCode 999 invalid", req: validPER(bank("999")), errs: []wantErr{{rules.CodeBankCode, fBank}}},
		{name: "2.5 1107 PER retired bankCode 026 invalid", req: validPER(bank("026")), errs: []wantErr{{rules.CodeBankCode, fBank}}},
		{name: "2.5 1108 PER accountType 3 invalid", req: validPER(atype("3")), errs: []wantErr{{rules.CodeAccountType, fType}}},
		{name: "2.5 1109 PER accountNumber not numeric", req: validPER(acct("1941234567805A")), errs: []wantErr{{rules.CodeAccountNotNumeric, fNumber}}},
		{name: "2.4 1109 COL accountNumber not numeric", req: validCOL(acct("12345678A")), errs: []wantErr{{rules.CodeAccountNotNumeric, fNumber}}},
		{name: "4.2 1121 PER card timeoutUrl required", req: validPER(perCard, timeoutURL("")), set: sCard, ep: rules.EndpointCard, errs: []wantErr{{rules.CodeTimeoutURLRequired, "timeoutUrl"}}},
		{name: "4.2 1122 PER accountType 5 goes to the card endpoint", req: validPER(atype("5")), errs: []wantErr{{rules.CodeCardEndpointOnly, fType}}},
		{name: "4.2 1123 PER card merchant without card setting", req: validPER(perCard), set: sNone, ep: rules.EndpointCard, errs: []wantErr{{rules.CodeCardNotEnabled, fType}}},
		{name: "2.5 1023 PER bankCode required without cci", req: validPER(bank("")), errs: []wantErr{{rules.CodeBankCodeRequired, fBank}}},
		{name: "2.4 1024 COL accountType required", req: validCOL(atype("")), errs: []wantErr{{rules.CodeAccountTypeRequired, fType}}},
		{name: "2.5 1025 PER accountNumber required without cci", req: validPER(acct("")), errs: []wantErr{{rules.CodeAccountNumRequired, fNumber}}},
		{name: "2.5 1026 PER cci required without bankCode and accountNumber", req: validPER(bank(""), acct("")), errs: []wantErr{{rules.CodeCCIRequired, fCCI}}},
		{name: "2.4 1032 COL PSP subMerchantInfo.url missing", req: validCOL(sub("S1", "Tienda", "")), set: sPSP, errs: []wantErr{{rules.CodeFieldRequired, fSub + ".url"}}},
		{name: "2.5 1032 PER wallet 037 description missing", req: validPER(perWallet037, desc("")), errs: []wantErr{{rules.CodeFieldRequired, fDesc}}},
		{name: "4.2 1033 PER card email missing", req: validPER(perCard, email("")), set: sCard, ep: rules.EndpointCard, errs: []wantErr{{rules.CodeEmailRequired, fEmail}}},

		// ---------------- Peru documents (spec 2.5; 1106 wire 5) ----------------
		{name: "2.5 1201 DNI of 8 digits accepted", req: validPER(doc(1, "12345678")), channel: rules.ChannelBatch},
		{name: "2.5 1201 DNI of 9 digits refused", req: validPER(doc(1, "123456789")), errs: []wantErr{{rules.CodeDNILength, fDocNum}}},
		{name: "2.5 1202 PAS of 7 digits accepted", req: validPER(doc(2, "1234567")), channel: rules.ChannelBatch},
		{name: "2.5 1202 PAS of 6 digits refused", req: validPER(doc(2, "123456")), errs: []wantErr{{rules.CodePASLength, fDocNum}}},
		{name: "2.5 1202 PAS of 12 digits accepted", req: validPER(doc(2, repeat("1", 12))), channel: rules.ChannelBatch},
		{name: "2.5 1202 PAS of 13 digits refused", req: validPER(doc(2, repeat("1", 13))), errs: []wantErr{{rules.CodePASLength, fDocNum}}},
		{name: "2.5 1106 gap: PAS with letters refused", req: validPER(doc(2, "AB12345")), errs: []wantErr{{rules.CodeDocumentNotNumeric, fDocNum}}},
		{name: "2.5 1203 CE of 8 digits accepted", req: validPER(doc(3, "12345678")), channel: rules.ChannelBatch},
		{name: "2.5 1203 CE of 7 digits refused", req: validPER(doc(3, "1234567")), errs: []wantErr{{rules.CodeCELength, fDocNum}}},
		{name: "2.5 1203 CE of 13 digits refused", req: validPER(doc(3, repeat("3", 13))), errs: []wantErr{{rules.CodeCELength, fDocNum}}},
		{name: "2.5 1204 RUC of 11 digits accepted", req: validPER(doc(4, "20123456789")), channel: rules.ChannelBatch},
		{name: "2.5 1204 RUC of 10 digits refused", req: validPER(doc(4, "2012345678")), errs: []wantErr{{rules.CodeRUCLength, fDocNum}}},

		// ---------------- Peru accounts by bank (spec 2.5 lengths; positions wire 5) ----------------
		{name: "2.5 1205 bank 001 account of 18 digits accepted", req: validPER(bank("001"), acct(repeat("1", 18))), channel: rules.ChannelBatch},
		{name: "2.5 1205 bank 001 account of 17 digits refused", req: validPER(bank("001"), acct(repeat("1", 17))), errs: []wantErr{{rules.CodePER001Account, fNumber}}},
		{name: "2.5 1205 bank 001 account of 21 digits refused", req: validPER(bank("001"), acct(repeat("1", 21))), errs: []wantErr{{rules.CodePER001Account, fNumber}}},
		{name: "wire 5 1244 bank 001 account of 20 digits without 00 at 9-10 refused", req: validPER(bank("001"), acct(repeat("1", 20))), errs: []wantErr{{rules.CodePER001Account20, fNumber}}},
		{name: "2.5 1206 bank 002 current of 13 digits accepted", req: validPER(atype("1"), acct("1941234567012")), channel: rules.ChannelBatch},
		{name: "2.5 1206 bank 002 current of 12 digits refused", req: validPER(atype("1"), acct("194123456701")), errs: []wantErr{{rules.CodePER002Current, fNumber}}},
		{name: "wire 5 1213 bank 002 current PEN has 0 at digit 11", req: validPER(atype("1"), acct("1941234567112")), errs: []wantErr{{rules.CodePER002CurrentPEN, fNumber}}},
		{name: "wire 5 1214 bank 002 current USD has 1 at digit 11", req: validPER(atype("1"), currency("USD"), acct("1941234567012")), errs: []wantErr{{rules.CodePER002CurrentUSD, fNumber}}},
		{name: "wire 5 1214 bank 002 current USD with 1 at digit 11 accepted", req: validPER(atype("1"), currency("USD"), acct("1941234567112")), channel: rules.ChannelBatch},
		{name: "2.5 1223 bank 002 savings of 14 digits accepted", req: validPER(atype("2"), acct("19412345678052")), channel: rules.ChannelBatch},
		{name: "2.5 1223 bank 002 savings of 15 digits refused", req: validPER(atype("2"), acct("194123456780521")), errs: []wantErr{{rules.CodePER002Savings, fNumber}}},
		{name: "wire 5 1221 bank 002 savings PEN has 0 at digit 12", req: validPER(acct("19412345678152")), errs: []wantErr{{rules.CodePER002SavingsPEN, fNumber}}},
		{name: "wire 5 1222 bank 002 savings USD has 1 at digit 12", req: validPER(currency("USD"), acct("19412345678052")), errs: []wantErr{{rules.CodePER002SavingsUSD, fNumber}}},
		{name: "2.5 1207 bank 003 account of 13 digits accepted", req: validPER(bank("003"), acct(repeat("3", 13))), channel: rules.ChannelBatch},
		{name: "2.5 1207 bank 003 account of 14 digits refused", req: validPER(bank("003"), acct(repeat("3", 14))), errs: []wantErr{{rules.CodePER003Account, fNumber}}},
		{name: "2.5 1208 bank 004 account of 10 digits accepted", req: validPER(bank("004"), acct(repeat("4", 10))), channel: rules.ChannelBatch},
		{name: "2.5 1208 bank 004 account of 9 digits refused", req: validPER(bank("004"), acct(repeat("4", 9))), errs: []wantErr{{rules.CodePER004Account, fNumber}}},
		{name: "2.5 1209 another bank's accountNumber is a 20-digit CCI", req: validPER(bank("011"), acct("011"+repeat("1", 17))), channel: rules.ChannelBatch},
		{name: "2.5 1209 another bank's accountNumber of 19 digits refused", req: validPER(bank("011"), acct("011"+repeat("1", 16))), errs: []wantErr{{rules.CodeCCILength, fNumber}}},

		// ---------------- Peru CCI (spec 2.5: 20 digits; prefixes and positions wire 5) ----------------
		{name: "2.5 1209 cci of 20 digits accepted", req: validPER(perCCIOnly), channel: rules.ChannelRealTime},
		{name: "2.5 1209 cci of 21 digits refused", req: validPER(perCCIOnly, cci("002194123456789012531")), errs: []wantErr{{rules.CodeCCILength, fCCI}}},
		{name: "2.5 1210 cci with a space refused", req: validPER(perCCIOnly, cci("0021941234567890125 3")), errs: []wantErr{{rules.CodeCCINotNumeric, fCCI}}},
		{name: "wire 5 1215 bank 001 cci starts with 011", req: validPER(bank("001"), acct(repeat("1", 18)), cci("011"+repeat("1", 17))), channel: rules.ChannelRealTime},
		{name: "wire 5 1215 bank 001 cci starting with 001 refused", req: validPER(bank("001"), acct(repeat("1", 18)), cci("001"+repeat("1", 17))), errs: []wantErr{{rules.CodeCCI001, fCCI}}},
		{name: "wire 5 1216 bank 002 cci starting with 011 refused", req: validPER(atype(""), cci("011"+repeat("1", 17))), errs: []wantErr{{rules.CodeCCI002, fCCI}}},
		{name: "wire 5 1219 bank 003 cci starts with 003", req: validPER(bank("003"), acct(repeat("3", 13)), cci("003"+repeat("1", 17))), channel: rules.ChannelRealTime},
		{name: "wire 5 1219 bank 003 cci starting with 002 refused", req: validPER(bank("003"), acct(repeat("3", 13)), cci("002"+repeat("1", 17))), errs: []wantErr{{rules.CodeCCI003, fCCI}}},
		{name: "wire 5 1220 bank 004 cci starts with 009", req: validPER(bank("004"), acct(repeat("4", 10)), cci("009"+repeat("1", 17))), channel: rules.ChannelRealTime},
		{name: "wire 5 1220 bank 004 cci starting with 004 refused", req: validPER(bank("004"), acct(repeat("4", 10)), cci("004"+repeat("1", 17))), errs: []wantErr{{rules.CodeCCI004, fCCI}}},
		{name: "wire 5 1225 cci-only prefix 009 is bank 004", req: validPER(perCCIOnly, cci("009"+repeat("1", 17))), channel: rules.ChannelRealTime, bankCode: "004"},
		{name: "wire 5 1225 cci-only prefix 001 is no bank (001's CCIs start with 011)", req: validPER(perCCIOnly, cci("001"+repeat("1", 17))), errs: []wantErr{{rules.CodeCCIUnknownBank, fCCI}}},
		{name: "2.5 1971 cci of bank 011 starting with 018 refused", req: validPER(bank("011"), acct("011"+repeat("1", 17)), cci("018"+repeat("1", 17))), errs: []wantErr{{rules.CodeCCIBankMismatch, fCCI}}},
		{name: "wire 5 1217 bank 002 current cci has 00 at digits 7-8", req: validPER(atype("1"), acct("1941234567012"), cci("002194"+"00"+"1234567"+"0"+"1253")), channel: rules.ChannelRealTime},
		{name: "wire 5 1217 bank 002 current cci without 00 at digits 7-8 refused", req: validPER(atype("1"), acct("1941234567012"), cci("002194"+"10"+"1234567"+"0"+"1253")), errs: []wantErr{{rules.CodeCCI002Current, fCCI}}},
		{name: "wire 5 1218 bank 002 savings cci has 1 at digit 7", req: validPER(cci("002194" + "1" + "12345678" + "0" + "1253")), channel: rules.ChannelRealTime},
		{name: "wire 5 1218 bank 002 savings cci without 1 at digit 7 refused", req: validPER(cci("002194" + "2" + "12345678" + "0" + "1253")), errs: []wantErr{{rules.CodeCCI002Savings, fCCI}}},
		{name: "wire 5 1230 bank 002 current cci PEN has 0 at digit 16", req: validPER(atype("1"), acct("1941234567012"), cci("002194"+"00"+"1234567"+"1"+"1253")), errs: []wantErr{{rules.CodeCCI002CurrentPEN, fCCI}}},
		{name: "wire 5 1231 bank 002 current cci USD has 1 at digit 16", req: validPER(atype("1"), currency("USD"), acct("1941234567112"), cci("002194"+"00"+"1234567"+"0"+"1253")), errs: []wantErr{{rules.CodeCCI002CurrentUSD, fCCI}}},
		{name: "wire 5 1232 bank 002 savings cci PEN has 0 at digit 16", req: validPER(cci("002194" + "1" + "12345678" + "1" + "1253")), errs: []wantErr{{rules.CodeCCI002SavingsPEN, fCCI}}},
		{name: "wire 5 1233 bank 002 savings cci USD has 1 at digit 16", req: validPER(currency("USD"), acct(perUSDAcct), cci("002194"+"1"+"12345678"+"0"+"1253")), errs: []wantErr{{rules.CodeCCI002SavingsUSD, fCCI}}},
		{name: "wire 5 1233 bank 002 savings cci USD with 1 at digit 16 accepted", req: validPER(currency("USD"), acct(perUSDAcct), cci("002194"+"1"+"12345678"+"1"+"1253")), channel: rules.ChannelRealTime},

		// ---------------- Peru amounts and cellphones (spec 8; codes wire 5) ----------------
		{name: "8 1224 PER 30,000 PEN accepted", req: validPER(amount("3000000")), channel: rules.ChannelBatch},
		{name: "8 1224 PER above 30,000 PEN refused", req: validPER(amount("3000001")), errs: []wantErr{{rules.CodePERAboveLimit, fAmount}}},
		{name: "8 1224 PER wallet 037 cellphone 3,000 accepted", req: validPER(perWallet037, amount("300000")), channel: rules.ChannelRealTime},
		{name: "2.5 1226 PER cellphone of 9 digits starting with 9 accepted", req: validPER(perPhone, acct("900000000")), channel: rules.ChannelRealTime},
		{name: "2.5 1226 PER cellphone of 10 digits refused", req: validPER(perPhone, acct("9000000000")), errs: []wantErr{{rules.CodePERCellphone, fNumber}}},
		{name: "8 1227 PER cellphone 500 PEN accepted", req: validPER(perPhone, amount("50000")), channel: rules.ChannelRealTime},
		{name: "8 1227 PER cellphone 500.01 PEN refused", req: validPER(perPhone, amount("50001")), errs: []wantErr{{rules.CodePERCellphoneMax, fAmount}}},
		{name: "8 1228 PER cellphone in USD refused", req: validPER(perPhone, currency("USD")), errs: []wantErr{{rules.CodePERCellphonePEN, fCurrency}}},
		{name: "2.5 1229 PER cellphone bankCode required", req: validPER(perPhone, bank("")), errs: []wantErr{{rules.CodePERCellphoneBank, fBank}}},
		{name: "2.5 1242 PER cellphone accountNumber required", req: validPER(perPhone, acct("")), errs: []wantErr{{rules.CodePERCellphoneAccount, fNumber}}},
		{name: "wire 5 1241 PER wallet 037 accountType 2 refused", req: validPER(perWallet037, atype("2")), errs: []wantErr{{rules.CodePERWalletCellphone, fType}, {rules.CodeRealTimeNeedsCCI, fCCI}}},
		{name: "wire 5 1241 PER wallet 040 accountType omitted refused", req: validPER(bank("040"), atype(""), acct("912345678"), cci("040"+repeat("3", 17))), errs: []wantErr{{rules.CodePERWalletCellphone, fType}}},
		{name: "wire 5 1241 PER wallet 040 cellphone accepted", req: validPER(perPhone, bank("040")), channel: rules.ChannelRealTime},
		{name: "wire 5 1241 PER wallet 043 is not in the published list: savings accepted", req: validPER(bank("043"), acct("912345678"), cci("043"+repeat("3", 17))), channel: rules.ChannelRealTime},
		{name: "8 gap: PER cellphone at group B bank 008 refused, not batch", req: validPER(perPhone, bank("008")), errs: []wantErr{{rules.CodeNoChannel, fBank}}},
		{name: "8 PER cellphone at a real-time bank 003 accepted", req: validPER(perPhone, bank("003")), channel: rules.ChannelRealTime},

		// ---------------- Colombia documents (spec 2.4 maximums; minimums wire 5) ----------------
		{name: "wire 5 1502 COL CC of 6 digits accepted", req: validCOL(doc(1, "123456")), channel: rules.ChannelBatch},
		{name: "wire 5 1502 COL CC of 5 digits refused", req: validCOL(doc(1, "12345")), errs: []wantErr{{rules.CodeCOLDocumentMin, fDocNum}}},
		{name: "wire 5 1502 COL NIT of 5 digits refused", req: validCOL(doc(5, "90012")), errs: []wantErr{{rules.CodeCOLDocumentMin, fDocNum}}},
		{name: "2.4 1980 COL CC of 14 digits refused", req: validCOL(doc(1, repeat("1", 14))), errs: []wantErr{{rules.CodeCOLDocumentMax, fDocNum}}},
		{name: "2.4 1106 gap: COL PAS with letters refused", req: validCOL(doc(3, "PA123456")), errs: []wantErr{{rules.CodeDocumentNotNumeric, fDocNum}}},
		{name: "2.4 COL PAS of 13 digits accepted", req: validCOL(doc(3, repeat("3", 13))), channel: rules.ChannelBatch},
		{name: "2.4 1532 COL NUIP of 10 digits accepted", req: validCOL(doc(6, "1234567890")), channel: rules.ChannelBatch},
		{name: "wire 5 1532 COL NUIP of 9 digits refused", req: validCOL(doc(6, "123456789")), errs: []wantErr{{rules.CodeNUIP, fDocNum}}},
		{name: "wire 5 1532 COL NUIP starting with 0 refused", req: validCOL(doc(6, "0123456789")), errs: []wantErr{{rules.CodeNUIP, fDocNum}}},
		{name: "wire 5 1533 COL PEP of 7 digits accepted", req: validCOL(doc(7, "1234567")), channel: rules.ChannelBatch},
		{name: "wire 5 1533 COL PEP of 6 digits refused", req: validCOL(doc(7, "123456")), errs: []wantErr{{rules.CodePEP, fDocNum}}},
		{name: "2.4 1533 spec wins: COL PEP of 16 digits accepted (original: 15)", req: validCOL(doc(7, repeat("7", 16))), channel: rules.ChannelBatch},
		{name: "2.4 1533 COL PEP of 19 digits refused", req: validCOL(doc(7, repeat("7", 19))), errs: []wantErr{{rules.CodePEP, fDocNum}}},
		{name: "wire 5 1534 COL PPT of 10 digits accepted", req: validCOL(doc(8, "1234567890")), channel: rules.ChannelBatch},
		{name: "wire 5 1534 COL PPT of 9 digits refused", req: validCOL(doc(8, "123456789")), errs: []wantErr{{rules.CodePPT, fDocNum}}},
		{name: "2.4 1534 spec wins: COL PPT of 18 digits accepted (original: 15)", req: validCOL(doc(8, repeat("8", 18))), channel: rules.ChannelBatch},
		{name: "2.4 1106 spec wins: COL PPT with letters refused (original: alphanumeric)", req: validCOL(doc(8, "PPT1234567")), errs: []wantErr{{rules.CodeDocumentNotNumeric, fDocNum}}},
		{name: "2.4 1521 spec wins: COL PPT at wallet 507 accepted", req: validCOL(colWallet507, doc(8, "1234567890")), channel: rules.ChannelBatch},
		{name: "2.4 1521 COL NIT at wallet 551 refused", req: validCOL(colWallet507, bank("551"), doc(5, "900123456")), errs: []wantErr{{rules.CodeCOLWalletDocType, fDocType}}},

		// ---------------- Colombia accounts by bank (lengths wire 5: the spec gives none) ----------------
		{name: "wire 5 1522 COL account of 5 digits accepted", req: validCOL(bank("012"), acct("12345")), channel: rules.ChannelBatch},
		{name: "wire 5 1522 COL account of 4 digits refused", req: validCOL(bank("012"), acct("1234")), errs: []wantErr{{rules.CodeCOLAccountNumber, fNumber}}},
		{name: "wire 5 1522 COL account of 18 digits refused", req: validCOL(bank("012"), acct(repeat("1", 18))), errs: []wantErr{{rules.CodeCOLAccountNumber, fNumber}}},
		{name: "wire 5 1511 COL bank 001 account of 9 digits accepted", req: validCOL(col001, acct("123456789")), channel: rules.ChannelBatch},
		{name: "wire 5 1511 COL bank 001 account of 10 digits refused", req: validCOL(col001, acct("1234567890")), errs: []wantErr{{rules.CodeCOL001Account, fNumber}}},
		{name: "wire 5 1509 COL bank 007 account of 11 digits accepted", req: validCOL(bank("007"), acct("12345678901")), channel: rules.ChannelBatch},
		{name: "wire 5 1509 COL bank 007 account of 12 digits refused", req: validCOL(bank("007"), acct("123456789012")), errs: []wantErr{{rules.CodeCOL007Account, fNumber}}},
		{name: "wire 5 1510 COL bank 032 account of 11 digits accepted", req: validCOL(bank("032"), acct("12345678901")), channel: rules.ChannelBatch},
		{name: "wire 5 1510 COL bank 032 account of 12 digits refused", req: validCOL(bank("032"), acct("123456789012")), errs: []wantErr{{rules.CodeCOL032Account, fNumber}}},
		{name: "wire 5 1508 COL bank 051 account of 12 digits accepted", req: validCOL(bank("051"), acct("123456789012")), channel: rules.ChannelBatch},
		{name: "wire 5 1508 COL bank 051 current account of 11 digits refused", req: validCOL(bank("051"), atype("1"), acct("12345678901")), errs: []wantErr{{rules.CodeCOL051Account, fNumber}}},
		{name: "wire 5 1523 COL bank 803 account of 10 digits accepted", req: validCOL(bank("803"), acct("1234567890")), channel: rules.ChannelBatch},
		{name: "wire 5 1523 COL bank 803 account of 9 digits refused", req: validCOL(bank("803"), acct("123456789")), errs: []wantErr{{rules.CodeCOL803Account, fNumber}}},
		{name: "wire 5 1524 COL bank 013 account of 9 digits accepted", req: validCOL(bank("013"), acct("123456789")), channel: rules.ChannelBatch},
		{name: "wire 5 1524 COL bank 013 account of 16 digits accepted", req: validCOL(bank("013"), acct(repeat("1", 16))), channel: rules.ChannelBatch},
		{name: "wire 5 1524 COL bank 013 account of 11 digits refused", req: validCOL(bank("013"), acct("12345678901")), errs: []wantErr{{rules.CodeCOL013Account, fNumber}}},

		// ---------------- Colombia wallets (spec 2.4, 8; codes wire 5) ----------------
		{name: "8 1505 spec wins: COL wallet 507 takes cellphone accountType 4 (original: savings only)", req: validCOL(colWallet507), channel: rules.ChannelBatch},
		{name: "8 1505 COL wallet 507 current account refused", req: validCOL(colWallet507, atype("1")), errs: []wantErr{{rules.CodeCOLWallet507Type, fType}}},
		{name: "8 1514 COL wallet 551 current account refused", req: validCOL(colWallet507, bank("551"), atype("1")), errs: []wantErr{{rules.CodeCOLWallet551Type, fType}}},
		{name: "8 1514 gap: COL Bre-B key at wallet 551 refused", req: validCOL(colKey, bank("551")), set: sKey, errs: []wantErr{{rules.CodeCOLWallet551Type, fType}}},
		{name: "2.4 1506 COL wallet 507 account of 9 digits refused", req: validCOL(colWallet507, acct("300123456")), errs: []wantErr{{rules.CodeCOL507Length, fNumber}}},
		{name: "2.4 1507 COL wallet 507 account starting with 2 refused", req: validCOL(colWallet507, acct("2001234567")), errs: []wantErr{{rules.CodeCOL507Prefix, fNumber}}},
		{name: "2.4 1512 COL wallet 551 account of 11 digits refused", req: validCOL(colWallet507, bank("551"), acct("30012345678")), errs: []wantErr{{rules.CodeCOL551Length, fNumber}}},
		{name: "2.4 1513 COL wallet 551 account starting with 4 refused", req: validCOL(colWallet507, bank("551"), acct("4001234567")), errs: []wantErr{{rules.CodeCOL551Prefix, fNumber}}},
		{name: "8 COL wallet 507 cellphone keeps the batch route without the real-time setting", req: validCOL(colWallet507, atype("4")), set: sNone, channel: rules.ChannelBatch},
		{name: "8 COL wallet 551 cellphone above the real-time maximum keeps the batch route", req: validCOL(colWallet507, bank("551"), amount("600000000")), set: sRTPhone, channel: rules.ChannelBatch},

		// ---------------- Colombia cellphones at banks (spec 8 gap; codes wire 5) ----------------
		{name: "8 1525 COL cellphone of 10 digits at bank 001 real-time", req: validCOL(colPhone), set: sRTPhone, channel: rules.ChannelRealTime},
		{name: "8 1525 COL cellphone of 11 digits refused", req: validCOL(colPhone, acct("30012345678")), set: sRTPhone, errs: []wantErr{{rules.CodeCOLCellphoneLength, fNumber}}},
		{name: "8 1526 COL cellphone starting with 6 refused", req: validCOL(colPhone, acct("6001234567")), set: sRTPhone, errs: []wantErr{{rules.CodeCOLCellphonePrefix, fNumber}}},
		{name: "8 gap: COL cellphone at group B bank 012 refused, not batch", req: validCOL(colPhone, bank("012")), set: sRTPhone, errs: []wantErr{{rules.CodeNoChannel, fBank}}},
		{name: "8 gap: COL cellphone at group D bank 009 refused, not batch", req: validCOL(colPhone, bank("009")), set: sAll, errs: []wantErr{{rules.CodeNoChannel, fBank}}},
		{name: "8 gap: COL cellphone at group F bank 900 refused", req: validCOL(colPhone, bank("900")), set: sAll, errs: []wantErr{{rules.CodeNoChannel, fBank}}},
		{name: "8 gap: COL cellphone at 5,000,000 real-time accepted", req: validCOL(colPhone, amount("500000000")), set: sRTPhone, channel: rules.ChannelRealTime},
		{name: "8 gap: COL cellphone above the real-time maximum refused, not batch", req: validCOL(colPhone, amount("500000100")), set: sRTPhone, errs: []wantErr{{rules.CodeAboveMaximum, fAmount}}},
		{name: "8 gap: COL cellphone at group C bank 040 real-time", req: validCOL(colPhone, bank("040")), set: sRTPhone, channel: rules.ChannelRealTime},

		// ---------------- Colombia cash (spec 8; codes wire 5) ----------------
		{name: "8 1515 COL cash 1,000,000 accepted", req: validCOL(colCash, amount("100000000")), set: sCash, channel: rules.ChannelCash},
		{name: "8 1515 COL cash 1,000,001 refused", req: validCOL(colCash, amount("100000100")), set: sCash, errs: []wantErr{{rules.CodeCashAboveMax, fAmount}}},
		{name: "8 1518 COL cash 20,000 accepted", req: validCOL(colCash, amount("2000000")), set: sCash, channel: rules.ChannelCash},
		{name: "8 1518 COL cash 19,999 refused", req: validCOL(colCash, amount("1999900")), set: sCash, errs: []wantErr{{rules.CodeCashBelowMin, fAmount}}},
		{name: "2.4 1516 COL bank 099 with a current account refused", req: validCOL(bank("099"), atype("1")), errs: []wantErr{{rules.CodeCashAccountType, fType}}},
		{name: "2.4 1517 COL cash at bank 007 refused", req: validCOL(colCash, bank("007")), set: sCash, errs: []wantErr{{rules.CodeCashBankCode, fBank}}},
		{name: "2.3 1519 COL cash expirationDate 2026-11-2 refused", req: validCOL(colCash, expDate("2026-11-2")), set: sCash, errs: []wantErr{{rules.CodeDateFormat, fExpDate}}},
		{name: "2.3 1519 COL expirationDate sent with a bank account is still a date", req: validCOL(expDate("22/11/2026")), errs: []wantErr{{rules.CodeDateFormat, fExpDate}}},
		{name: "8 1520 COL cash expirationDate 8 days ahead refused", req: validCOL(colCash, expDate("2026-11-29")), set: sCash, errs: []wantErr{{rules.CodeCashExpiration, fExpDate}}},

		// ---------------- Colombia Bre-B keys (spec 2.4, 8; 1531 wire 5) ----------------
		{name: "2.4 1530 COL Bre-B key of 5 characters accepted", req: validCOL(colKey, acct("@abcd")), set: sKey, channel: rules.ChannelRealTimeKey},
		{name: "2.4 1530 COL Bre-B key of 4 characters refused", req: validCOL(colKey, acct("@abc")), set: sKey, errs: []wantErr{{rules.CodeBreBKeyLength, fNumber}}},
		{name: "wire 5 1531 COL Bre-B key with ñ refused", req: validCOL(colKey, acct("@muñoz")), set: sKey, errs: []wantErr{{rules.CodeBreBKeyAccents, fNumber}}},
		{name: "wire 5 1531 COL Bre-B email with an accent refused", req: validCOL(colKey, acct("josé@gmail.com")), set: sKey, errs: []wantErr{{rules.CodeBreBKeyAccents, fNumber}}},

		// ---------------- Colombia AdittionalAccountInfo (wire 2, 5: 2025–2027) ----------------
		{name: "wire 5 2025 COL bank account with a cellphone alongside accepted", req: validCOL(addInfo("3001234567")), channel: rules.ChannelBatch},
		{name: "wire 5 2025 COL bank account with another account alongside refused", req: validCOL(addInfo("987654321")), errs: []wantErr{{rules.CodeAdditionalCellphone, fAdd}}},
		{name: "wire 5 2026 COL cellphone with a bank account alongside accepted", req: validCOL(colPhone, addInfo("123456789")), set: sRTPhone, channel: rules.ChannelRealTime},
		{name: "wire 5 2026 COL cellphone with a 10-digit number alongside accepted: it may be an account", req: validCOL(colPhone, addInfo("3109876543")), set: sRTPhone, channel: rules.ChannelRealTime},
		{name: "wire 5 2026 COL cellphone with letters alongside refused", req: validCOL(colPhone, addInfo("cuenta 123")), set: sRTPhone, errs: []wantErr{{rules.CodeAdditionalAccount, fAdd}}},
		{name: "wire 5 2026 COL wallet 507 account (a phone) with a 4-digit account alongside refused", req: validCOL(colWallet507, addInfo("1234")), errs: []wantErr{{rules.CodeAdditionalAccount, fAdd}}},
		{name: "wire 5 2027 COL AdittionalAccountInfo equal to accountNumber refused", req: validCOL(colPhone, addInfo("3001234567")), set: sRTPhone, errs: []wantErr{{rules.CodeAdditionalEquals, fAdd}}},
		{name: "wire 2 COL AdittionalAccountInfo as a JSON number accepted", req: validCOL(), raw: setPath(3001234567, "destination", "bankAccount", "AdittionalAccountInfo"), channel: rules.ChannelBatch},
	}
}

func addInfo(v string) mut {
	return func(r *rules.PayoutRequest) { r.Destination.BankAccount.AdittionalAccountInfo = rules.Text(v) }
}

// Every published code of the catalogue that the request checks raise
// has a row above or in countryRows; those raised elsewhere are named with their test.
func TestEveryPublishedCodeHasARow(t *testing.T) {
	elsewhere := map[string]string{
		rules.CodeAuthentication:       "api/ and api_e2e_test.go (signature)",
		rules.CodeOrderIDDuplicated:    "e2e_test.go and service tests (idempotency)",
		rules.CodeDenied:               "lifecycle_test.go (sandbox 9998)",
		rules.CodeBankRejected:         "lifecycle_test.go (sandbox 9999)",
		rules.CodeAccountNotFound:      "lifecycle_test.go (sandbox 9996)",
		rules.CodeBankOutOfService:     "lifecycle_test.go (sandbox 9995)",
		rules.CodeCardDeclined:         "lifecycle_test.go (test card 4000000000000002)",
		rules.CodeLinkExpired:          "link_test.go (a link not completed by its expiry)",
		rules.CodeLinkOwnership:        "linkreview_test.go (a payout link's review)",
		rules.CodeDirectoryUnavailable: "directory_test.go and sandbox_e2e_test.go (unknown Bre-B key)",
	}
	seen := map[string]bool{}
	for _, r := range append(countryRows(), publishedRows()...) {
		for _, e := range r.errs {
			seen[e.code] = true
		}
	}
	for _, c := range decodeCases() {
		seen[c.wantCode] = true
	}
	for _, c := range rules.Catalogue {
		if !c.Original || seen[c.Code] {
			continue
		}
		if _, ok := elsewhere[c.Code]; !ok {
			t.Errorf("published code %s (%s) has no test row", c.Code, c.Meaning)
		}
	}
}

// Generic and country errors of one request come back together, as 400: an unknown field does not hide a DNI too short.
func TestValidateReportsGenericAndCountryErrorsTogether(t *testing.T) {
	m := &rules.Merchant{ID: "1", Settings: rules.AllSettings()}
	cases := []struct {
		name string
		edit func(map[string]any)
		want []string // code + " " + field, sorted
	}{
		{"unknown field and a short DNI", func(b map[string]any) {
			b["tip"] = 5
			objAt(b, "beneficiary", "document")["number"] = "1234"
		}, []string{"1035 tip", "1201 beneficiary.document.number"}},
		{"wrong type of document.type is not reported twice", func(b map[string]any) {
			objAt(b, "beneficiary", "document")["type"] = "DNI"
		}, []string{"1118 beneficiary.document.type"}},
		{"missing amount and a bad account number", func(b map[string]any) {
			delete(b, "amount")
			objAt(b, "destination", "bankAccount")["accountNumber"] = "12"
		}, []string{"1011 amount", "1223 destination.bankAccount.accountNumber"}},
		{"missing beneficiary hides nothing else of the destination", func(b map[string]any) {
			delete(b, "beneficiary")
			objAt(b, "destination", "bankAccount")["bankCode"] = "999"
		}, []string{"1014 beneficiary", "1107 destination.bankAccount.bankCode"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := rules.Validate(genericBody(tc.edit), m, checkNow, rules.EndpointPayouts)
			var p *rules.Problem
			if !errors.As(err, &p) {
				t.Fatalf("got %v, want a Problem", err)
			}
			if p.Kind != rules.KindInvalid {
				t.Errorf("kind %v, want KindInvalid (400): a generic error is there", p.Kind)
			}
			var got []string
			for _, e := range p.Errors {
				got = append(got, e.Code+" "+e.Field)
			}
			sort.Strings(got)
			sort.Strings(tc.want)
			if !slices.Equal(got, tc.want) {
				t.Errorf("errors %q, want %q (%v)", got, tc.want, p)
			}
		})
	}
	// Country errors alone stay 401.
	_, _, err := rules.Validate(genericBody(func(b map[string]any) { objAt(b, "beneficiary", "document")["number"] = "1234" }), m, checkNow, rules.EndpointPayouts)
	var p *rules.Problem
	if !errors.As(err, &p) || p.Kind != rules.KindRejected || p.Code() != rules.CodeDNILength {
		t.Fatalf("country error alone: %v, want KindRejected 1201", err)
	}
}

// The original's published full sample sends empty strings for unused optional fields and
// accountType as a numeric string: both are normal input.
func TestValidateAcceptsTheOriginalsEmptyStringsAndStringAccountType(t *testing.T) {
	body := `{"country": "PER", "amount": 100000, "currency": "PEN", "orderId": "ORD-WIRE-1", "description": "",
	  "beneficiary": {"customerId": "", "userName": "", "name": "Ana", "lastName": "Quispe", "email": "",
	    "phoneNumber": "", "document": {"type": 1, "number": "45678912"}},
	  "destination": {"bankAccount": {"bankCode": "002", "accountType": "1", "accountNumber": "1941234567012",
	    "alias": "", "cbu": "", "cci": "", "clabe": "", "AdittionalAccountInfo": ""}}}`
	req, route, err := rules.Validate([]byte(body), &rules.Merchant{ID: "1"}, checkNow, rules.EndpointPayouts)
	if err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if route.AccountType != 1 || route.Channel != rules.ChannelBatch || req.Destination.BankAccount.CCI != "" {
		t.Fatalf("route %+v", route)
	}
	col := strings.NewReplacer(`"PER"`, `"COL"`, `"PEN"`, `"COP"`, `"002"`, `"001"`, `"1941234567012"`, `"123456789"`, `"45678912"`, `"1020304050"`).Replace(body)
	if _, route, err = rules.Validate([]byte(col), &rules.Merchant{ID: "1"}, checkNow, rules.EndpointPayouts); err != nil || route.AccountType != 1 {
		t.Fatalf("Colombia with empty strings: %v %+v", err, route)
	}
}
